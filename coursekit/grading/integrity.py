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
    "__builtins__": "changes Python's builtins",
    "builtins": "changes Python's builtins",
    "coursekit.grading": "touches the grading code",
    "ctypes": "uses ctypes",
    "gc.get_objects": "walks the interpreter's objects",
    "gc.get_referrers": "walks the interpreter's objects",
}

# What a notebook may use of the grading code: the grade() its checks cells call.
GRADING_API = {"coursekit.grading", "coursekit.grading.grade"}

# Constructs that hide which code runs, so that neither scan can read it (a forbidden module
# imported by a computed name, a reference fetched through a function's globals). Lab code
# never needs them; they are matched exactly, so `model.eval()` or `torch.compile` are fine.
OBSCURING_CALLS = {"__import__": "imports by a computed name", "exec": "runs code from a string",
                   "eval": "runs code from a string", "globals": "reads the module's globals"}
OBSCURING_ATTRIBUTES = {"__globals__", "__code__", "__closure__", "__subclasses__",
                        "__getattribute__"}
OBSCURING_MODULES = {"importlib": "imports by a computed name", "base64": "decodes hidden code",
                     "marshal": "loads compiled code"}
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
    except SyntaxError:
        return None


def _dotted_names(tree: ast.AST) -> list[str]:
    """Every module path and attribute chain the code names, with import aliases resolved."""
    aliases: dict[str, str] = {}
    names: list[str] = []
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.append(node.value)
    return names


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
        names = _dotted_names(tree) if tree is not None else []
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
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in OBSCURING_CALLS:
            found.append(f"{OBSCURING_CALLS[node.func.id]} ({node.func.id})")
        elif isinstance(node, ast.Attribute) and node.attr in OBSCURING_ATTRIBUTES:
            found.append(f"reaches into a function's or class's internals ({node.attr})")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                top = module.split(".")[0]
                if top in OBSCURING_MODULES:
                    found.append(f"{OBSCURING_MODULES[top]} ({top})")
        elif _name_in_pieces(node):
            # "back" + "ward": a name spelled in pieces, so no scan can read it
            found.append(f"builds a name from pieces of text ({node.left.value!r} + ...)")
        if _edits_module_table(node):
            found.append("edits the module table (sys.modules)")
    return list(dict.fromkeys(found))


def _name_in_pieces(node: ast.AST) -> bool:
    """Two string literals added into something shaped like a name or a dotted path; text
    for people (``"loss: " + "nan"``) has spaces or punctuation and is left alone."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    sides = (node.left, node.right)
    if not all(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides):
        return False
    return re.fullmatch(r"[A-Za-z_][\w.]*", node.left.value + node.right.value) is not None


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
