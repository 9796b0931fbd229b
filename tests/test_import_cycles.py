"""The grading pipeline flows one way (issue 25): no module of ``autograder/`` or
``coursekit/notebook/`` imports another that imports it back, directly or around a loop,
counting the imports inside functions (a late import hides a loop; it does not remove it).

(``coursekit.autograd`` and ``coursekit.grading`` are left out: their loops go through their
own package's ``__init__``, which re-exports their API.)"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECKED = ("autograder", "coursekit.notebook")


def _modules() -> dict[str, Path]:
    found = {}
    for package in ("autograder", "coursekit"):
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The repository's modules that ``name`` imports anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    wanted = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            wanted += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            wanted += [f"{base}.{alias.name}" for alias in node.names] + [base]
    found = set()
    for target in wanted:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def _loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return loops


def test_the_pipeline_modules_import_one_way():
    modules = _modules()
    checked = {name: path for name, path in modules.items() if name.startswith(CHECKED)}
    graph = {name: {m for m in _imports(name, path, modules) if m in checked}
             for name, path in checked.items()}
    assert _loops(graph) == []


def test_a_loop_is_found():
    """The test above can fail: a late import back is a loop."""
    assert _loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
