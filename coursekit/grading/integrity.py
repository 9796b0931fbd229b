"""Static checks on student code: delegation to forbidden modules, and tampering.

Both run on source text, outside the student's kernel, so student code cannot switch them
off. They are deliberately simple: a match names the cell and the construct, and a TA can
read the code to confirm.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# Constructs that change how later cells or the checks run. Legitimate lab code never needs
# them; a submission that uses one is flagged for a TA instead of being graded.
TAMPERING = {
    "input_transformers_cleanup": "installs an IPython input transformer",
    "input_transformers_post": "installs an IPython input transformer",
    "input_transformer_manager": "changes IPython's input transformers",
    "ast_transformers": "installs an IPython AST transformer",
    "register_magic_function": "defines a magic",
    "settrace": "installs a trace function",
    "setprofile": "installs a profile function",
    "coursekit.grading": "touches the grading code",
    "gc.get_objects": "walks the interpreter's objects",
    "gc.get_referrers": "walks the interpreter's objects",
}

# What a notebook may use of the grading code: the grade() its checks cells call.
GRADING_API = {"coursekit.grading", "coursekit.grading.grade"}

# Constructs that hide which code runs, so that neither scan can read it (a forbidden module
# imported by a computed name, a reference fetched through a function's globals). Lab code
# never needs them; calls are matched by their bare name, so `model.eval()` or
# `torch.compile` are fine, and so is a function of the student's own called `eval`.
OBSCURING_CALLS = {"__import__": "imports by a computed name", "exec": "runs code from a string",
                   "eval": "runs code from a string"}
OBSCURING_ATTRIBUTES = {"__globals__", "__code__", "__closure__", "__subclasses__",
                        "__getattribute__"}
OBSCURING_MODULES = {"marshal": "loads compiled code", "pkgutil": "resolves names from text",
                     "runpy": "runs modules by name", "ctypes": "uses ctypes"}
# importlib.reload is an everyday habit; these import a module whose name is computed.
IMPORTLIB_BY_NAME = ("importlib.import_module", "importlib.util", "importlib.machinery",
                     "importlib.__import__")
MODULE_TABLE_EDITS = {"pop", "update", "setdefault", "clear", "__setitem__", "__delitem__"}


DELEGATION = "uses what this exercise asks you to build yourself"


def delegation_message(findings: list["Finding"]) -> str:
    """The reason a check fails for delegation, the same in the notebook and at grading."""
    return (f"{DELEGATION}: " + "; ".join(str(f) for f in findings)
            + " (the whole answer cell is scanned: try your code out in a cell after the checks)")


@dataclass(frozen=True)
class Finding:
    cell: str
    what: str

    def __str__(self) -> str:
        return f"{self.cell}: {self.what}"


def _parse(source: str) -> ast.AST | None:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        source = TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 — IPython missing or odd input: parse the raw text
        pass
    try:
        return ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError):
        return None  # nor can the kernel compile it: the cell fails where it runs


_NAME_TEXT = re.compile(r"[A-Za-z_][\w.]*")


def _prose(tree: ast.AST) -> set[int]:
    """Ids of the string constants that are prose, never a name to look up: docstrings and
    other strings standing alone as statements."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Constant, ast.JoinedStr))}


def _dotted_names(tree: ast.AST, strings: bool = True) -> list[str]:
    """Every module path and attribute chain the code names, with import aliases resolved;
    with ``strings``, also its text constants that read as a name (literal pieces joined
    first, so ``"back" + "ward"`` reads as ``backward``) and the attributes ``getattr`` is
    asked for. Docstrings and text with spaces ("as torch.amp.GradScaler does") are prose:
    they never count, as the README promises."""
    aliases: dict[str, str] = {}
    names: list[str] = []
    prose = _prose(tree) if strings else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.append(alias.name)
                aliases[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.append(full)
                aliases[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = []
            current: ast.AST = node
            while isinstance(current, ast.Attribute):
                parts.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name):
                parts.append(aliases.get(current.id, current.id))
            names.append(".".join(reversed(parts)))
            names.append("." + node.attr)
        elif isinstance(node, ast.Name):
            names.append(aliases.get(node.id, node.id))
        elif strings and id(node) not in prose:
            text = _folded(node)
            if text is not None and _NAME_TEXT.fullmatch(text):
                names.append(text)
            if isinstance(node, ast.Call) and _looks_up_attributes(node.func):
                for arg in node.args[1:] if _is_name(node.func, "getattr", "hasattr") else node.args:
                    text = _folded(arg)
                    if text is not None:
                        names += ["." + part for part in text.split(".")]
    return names


def _is_name(node: ast.AST, *ids: str) -> bool:
    return isinstance(node, ast.Name) and node.id in ids


def _looks_up_attributes(func: ast.AST) -> bool:
    """``getattr``/``hasattr``, or ``operator.attrgetter``/``methodcaller`` (by any path)."""
    return _is_name(func, "getattr", "hasattr", "attrgetter", "methodcaller") or (
        isinstance(func, ast.Attribute) and func.attr in ("attrgetter", "methodcaller"))


def _folded(node: ast.AST) -> str | None:
    """The text of a string literal, of literals added together, of an f-string without
    variables, or of ``"".join`` over literals; None for anything computed at run time."""
    pieces = []
    todo = [node]
    while todo:  # a chain of additions is as deep as it is long: walked, not recursed
        node = todo.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            todo += [node.right, node.left]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            pieces.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            parts = [_folded(v.value if isinstance(v, ast.FormattedValue) else v)
                     for v in node.values]
            if any(p is None for p in parts):
                return None
            pieces.append("".join(parts))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "join" and len(node.args) == 1
                and isinstance(node.args[0], (ast.List, ast.Tuple))):
            glue = _folded(node.func.value)
            parts = [_folded(e) for e in node.args[0].elts]
            if glue is None or any(p is None for p in parts):
                return None
            pieces.append(glue.join(parts))
        else:
            return None
    return "".join(pieces)


def _matches(name: str, pattern: str) -> bool:
    if pattern.startswith("."):  # ".backward": any attribute of that name
        return name == pattern
    return name == pattern or name.startswith(pattern + ".") or (
        # a string that mentions the module, e.g. importlib.import_module("coursekit.autograd")
        pattern in name and "." in pattern)


def find_forbidden(cells: dict[str, str], forbid: tuple[str, ...]) -> list[Finding]:
    """Uses of the ``forbid`` patterns (module prefixes, or ``.attr``) in ``{cell: source}``."""
    findings = []
    for cell, source in cells.items():
        tree = _parse(source)
        if tree is None:
            continue
        names = _dotted_names(tree)
        for pattern in forbid:
            if any(_matches(n, pattern) for n in names):
                findings.append(Finding(cell, f"uses {pattern.lstrip('.')}"
                                              f"{'()' if pattern.startswith('.') else ''}"))
    return findings


def find_tampering(cells: dict[str, str]) -> list[Finding]:
    """Constructs from :data:`TAMPERING` in ``{cell: source}``, code that hides what it runs
    (:data:`OBSCURING_CALLS` and friends), and edits of ``sys.modules`` (reading it is fine)."""
    findings = []
    for cell, source in cells.items():
        tree = _parse(source)
        # Code, not text: a string that mentions "coursekit.grading" changes nothing by itself
        # (computed imports are flagged on their own).
        names = _dotted_names(tree, strings=False) if tree is not None else []
        for pattern, what in TAMPERING.items():
            hit = any((n == pattern or n.startswith(pattern + ".") or n.endswith("." + pattern)
                       or n == "." + pattern) and n not in GRADING_API for n in names)
            if hit:
                findings.append(Finding(cell, f"{what} ({pattern})"))
        if tree is not None:
            findings += [Finding(cell, what) for what in _obscuring(tree)]
    return findings


def _obscuring(tree: ast.AST) -> list[str]:
    found: list[str] = []
    own = _defined_names(tree)
    names = set(_dotted_names(tree, strings=False))
    if any(n.startswith(IMPORTLIB_BY_NAME) for n in names):
        found.append("imports by a computed name (importlib)")
    if "grade" in own:
        found.append("defines its own grade(), which the checks cells would call")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in OBSCURING_CALLS and node.func.id not in own:
            found.append(f"{OBSCURING_CALLS[node.func.id]} ({node.func.id})")
        elif isinstance(node, ast.Attribute) and node.attr in OBSCURING_ATTRIBUTES:
            found.append(f"reaches into a function's or class's internals ({node.attr})")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                top = module.split(".")[0]
                if top in OBSCURING_MODULES:
                    found.append(f"{OBSCURING_MODULES[top]} ({top})")
        if _edits_module_table(node):
            found.append("edits the module table (sys.modules)")
        if _edits_namespace(node):
            found.append("changes Python's builtins or the notebook's globals")
    return list(dict.fromkeys(found))


def _defined_names(tree: ast.AST) -> set[str]:
    """Names the code binds itself: functions, classes, assignments, imports, parameters."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            # Importing the real grade() again is what the setup cell does: not a definition.
            names.update(a.asname or a.name for a in node.names
                         if not (node.module == "coursekit.grading" and a.name == "grade"
                                 and a.asname in (None, "grade")))
    return names


_NAMESPACES = {"builtins", "__builtins__"}


def _is_namespace(node: ast.AST) -> bool:
    """``builtins``, ``__builtins__``, ``globals()``, ``vars(builtins)``, ``builtins.__dict__``."""
    if isinstance(node, ast.Name):
        return node.id in _NAMESPACES
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id == "globals" or (
            node.func.id == "vars" and len(node.args) == 1 and _is_namespace(node.args[0]))
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return _is_namespace(node.value)
    return False


def _edits_namespace(node: ast.AST) -> bool:
    """An assignment into builtins or the globals (``builtins.print = f``,
    ``globals()["grade"] = f``, ``setattr(builtins, ...)``, ``globals().update(...)``);
    reading them (``builtins.sum``, ``name in globals()``) is fine."""
    if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return _is_namespace(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("setattr", "delattr") and node.args:
        return _is_namespace(node.args[0])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in MODULE_TABLE_EDITS and _is_namespace(node.func.value)
    return False


def _is_sys_modules(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "modules"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def _edits_module_table(node: ast.AST) -> bool:
    """``sys.modules[...] = x``, ``del sys.modules[...]``, ``sys.modules.pop(...)``, or a new
    ``sys.modules``; ``"numpy" in sys.modules`` only reads it."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return _is_sys_modules(node.value)
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return _is_sys_modules(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in MODULE_TABLE_EDITS and _is_sys_modules(node.func.value)
    return False
