"""The student side is one package: ``coursekit``, which the student build ships whole. Nothing
in it imports the instructor's side (``autograder``): a student's ``validate``, ``fetch`` and
JupyterLab extension must work where ``autograder`` is not installed at all."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_nothing_in_coursekit_imports_the_instructors_side():
    crossings = [f"{path.relative_to(REPO)}:{line}: import {module}"
                 for path in sorted((REPO / "coursekit").rglob("*.py"))
                 for line, module in _imports(path)
                 if module == "autograder" or module.startswith("autograder.")]
    assert crossings == []


def test_the_students_jupyter_configuration_names_only_the_student_side():
    config = (REPO / "course" / "student" / "jupyter_server_config.py").read_text()
    assert "autograder" not in config.replace("# ", "")
    assert '"coursekit.student.server": True' in config
