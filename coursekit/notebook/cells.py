"""What each cell of a lab notebook is, read from its nbgrader metadata.

The roles follow ``solutions/README.md``:

========== ============================================= =================================
role       nbgrader metadata                             grading
========== ============================================= =================================
setup      code, locked, not solution, not grade         restored from the source
answer     code, solution, not grade                     the student's; scanned for delegation
checks     code, grade, not solution (locked), points    restored from the source; scored
written    markdown, solution, grade, points             graded by hand
locked     markdown (or code) locked, not grade          restored from the source
plain      no nbgrader metadata                          the student's (demos, exploration)
========== ============================================= =================================

A checks cell covers every answer cell since the previous checks cell. Its ``grade(...)``
calls are read from the *instructor's* source with :mod:`ast`, never from a submission.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

SETUP, ANSWER, CHECKS, WRITTEN, LOCKED, PLAIN = "setup", "answer", "checks", "written", "locked", "plain"
RESTORED_ROLES = (SETUP, CHECKS, LOCKED)  # roles whose source always comes from the instructor


@dataclass(frozen=True)
class GradeCall:
    """One literal ``grade("<check>", impl, hidden=...)`` call in a checks cell."""

    check: str
    hidden: bool
    line: int

    @property
    def key(self) -> tuple[str, bool]:
        return (self.check, self.hidden)


@dataclass
class LabCell:
    """One cell of a lab notebook with its role."""

    index: int
    role: str
    cell: NotebookNode
    grade_id: str | None = None
    points: float = 0.0
    calls: list[GradeCall] = field(default_factory=list)

    @property
    def source(self) -> str:
        return self.cell.source


def nbgrader_meta(cell: NotebookNode) -> dict:
    """A cell's nbgrader metadata; empty when a submission mangled it into something that is
    not a dict, or gave it a grade_id that is not a string (such a cell is the student's)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("grade_id", ""), str):
        return {}
    return meta


def role_of(cell: NotebookNode) -> str:
    meta = nbgrader_meta(cell)
    if not meta or not meta.get("grade_id"):
        return PLAIN
    solution, graded, locked = (bool(meta.get(k)) for k in ("solution", "grade", "locked"))
    if cell.cell_type == "markdown":
        if solution and graded:
            return WRITTEN
        return LOCKED if locked else PLAIN
    if cell.cell_type != "code":
        return PLAIN
    if graded and not solution:
        return CHECKS
    if solution:
        return ANSWER
    return SETUP if locked else PLAIN


def is_exploration(cell: NotebookNode, role: str, release_ids: set[str]) -> bool:
    """Whether ``cell`` (playing ``role``) is one of the instructor's demo and exploration
    cells, which neither grading nor validation runs (NOTE [exploration cells] in
    ``autograder.pipeline.grader``): a code cell with no nbgrader role whose cell id is one
    of the release's (``release_ids``)."""
    return cell.cell_type == "code" and role == PLAIN and cell.get("id") in release_ids


def grade_calls(source: str) -> list[GradeCall]:
    """The ``grade`` calls in ``source`` whose check name and ``hidden`` flag are literals.

    Calls are found by name (``grade(...)`` or ``<anything>.grade(...)``); a call whose name
    or flag is not a literal cannot be matched with a payload and is ignored here (the
    release step rejects such checks cells).
    """
    tree = _parsed(source)
    if tree is None:
        return []
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else None)
        if name != "grade" or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        hidden = False
        for keyword in node.keywords:
            if keyword.arg == "hidden":
                if not isinstance(keyword.value, ast.Constant):
                    break
                hidden = bool(keyword.value.value)
        else:
            calls.append(GradeCall(first.value, hidden, node.lineno))
    return sorted(calls, key=lambda c: c.line)


def _parsed(source: str) -> ast.Module | None:
    """``source`` parsed, or None for anything Python cannot parse: a syntax error, a NUL
    byte (ValueError before Python 3.12), or nesting too deep for the parser."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def non_literal_grade_calls(source: str) -> int:
    """How many ``grade(...)`` calls in ``source`` :func:`grade_calls` cannot read."""
    tree = _parsed(source)
    if tree is None:
        return 0
    total = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "grade")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "grade")))
    return total - len(grade_calls(source))


@dataclass
class LabNotebook:
    """A lab notebook (usually the instructor's source) split into roles."""

    path: Path | None
    nb: NotebookNode
    cells: list[LabCell]

    def by_id(self) -> dict[str, LabCell]:
        return {c.grade_id: c for c in self.cells if c.grade_id}

    def with_role(self, *roles: str) -> list[LabCell]:
        return [c for c in self.cells if c.role in roles]

    @property
    def identifying_ids(self) -> set[str]:
        """Grade ids of the answer, checks and written cells: unique to this lab (the release
        lint checks it), unlike shared ids such as ``intro`` or ``setup``, so a notebook that
        carries one of them belongs to this lab whatever its file is called."""
        return {c.grade_id for c in self.with_role(ANSWER, CHECKS, WRITTEN) if c.grade_id}

    @property
    def check_names(self) -> list[str]:
        """The checks its ``grade(...)`` calls name, each once, in notebook order."""
        return list(dict.fromkeys(call.check for cell in self.with_role(CHECKS)
                                  for call in cell.calls))

    @property
    def setup_imports(self) -> str:
        """The first setup cell up to its last top-level import (with the environment it sets
        before importing): what a grading kernel imports before its monitor
        (:mod:`coursekit.grading.kernel`). "" when there is none or it does not parse."""
        setup = self.with_role(SETUP)
        if not setup or not isinstance(setup[0].source, str):
            return ""
        source = setup[0].source
        try:
            body = ast.parse(source).body
        except SyntaxError:
            return ""
        imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
        if not imports:
            return ""
        return "\n".join(source.splitlines()[:imports[-1].end_lineno]) + "\n"

    def covered_answers(self, checks: LabCell) -> list[LabCell]:
        """The answer cells a checks cell covers: those since the previous checks cell."""
        covered: list[LabCell] = []
        for cell in self.cells:
            if cell.index >= checks.index:
                break
            if cell.role == CHECKS:
                covered = []
            elif cell.role == ANSWER:
                covered.append(cell)
        return covered

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.with_role(CHECKS, WRITTEN))

    @property
    def auto_max_score(self) -> float:
        return sum(c.points for c in self.with_role(CHECKS))


def read_notebook(path: Path) -> NotebookNode:
    return nbformat.read(str(path), as_version=4)


def split(nb: NotebookNode, path: Path | None = None) -> LabNotebook:
    """Give every cell of ``nb`` its role (see the module docstring)."""
    cells = []
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        role = role_of(cell)
        lab_cell = LabCell(index, role, cell, meta.get("grade_id") or None,
                           float(meta.get("points", 0) or 0) if role in (CHECKS, WRITTEN) else 0.0)
        if role == CHECKS:
            lab_cell.calls = grade_calls(cell.source)
        cells.append(lab_cell)
    return LabNotebook(path, nb, cells)


def load(path: Path) -> LabNotebook:
    return split(read_notebook(path), path)
