"""Assemble: the notebook that is actually graded, built from a submission and the source.

Rules (the student's work is kept, the instructor's cells are the instructor's):

* checks, setup and locked cells come from the instructor's source (keyed by grade_id), with
  the hidden tests in place; a checks cell the student edited is restored and the fact noted;
* a deleted checks (or setup, or locked) cell is re-inserted after the source cell that
  precedes it — normally the answer cell it checks — and noted;
* answer cells (by grade_id), written answers, and every cell the student added are kept as
  the student left them; cells with an unknown or duplicated grade_id count as added cells
  (their nbgrader metadata is dropped, so they can never pose as checks).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from nbformat import NotebookNode

from . import cells as lab_cells
from .cells import ANSWER, CHECKS, RESTORED_ROLES, LabCell, LabNotebook

SOURCE, STUDENT = "source", "student"


@dataclass
class Placed:
    """One cell of the assembled notebook and where it came from."""

    cell: NotebookNode
    origin: str                       # SOURCE (restored) or STUDENT
    role: str
    grade_id: str | None = None
    student_index: int | None = None  # position in the student's notebook

    @property
    def label(self) -> str:
        """How messages name this cell: the student's cell number, and its grade_id."""
        where = (f"cell {self.student_index + 1}" if self.student_index is not None
                 else "a restored cell")
        return f"{where} ({self.grade_id})" if self.grade_id else where


@dataclass(frozen=True)
class Assembled:
    """The notebook to grade (``nb``: never run in place, see ``run_plan``), where each
    of its cells came from, and what assembling it changed (``notes``, for the student)."""

    nb: NotebookNode
    placed: list[Placed]
    notes: list[str] = field(default_factory=list)

    def index_of(self, grade_id: str) -> int | None:
        for index, placed in enumerate(self.placed):
            if placed.grade_id == grade_id:
                return index
        return None

    def student_code(self, release_sources: set[str], upto: int | None = None,
                     since: int = 0) -> dict[str, str]:
        """``{label: source}`` of the student's own code cells in ``[since, upto)``, leaving
        out cells identical to a cell of the release (untouched instructor code)."""
        stop = len(self.placed) if upto is None else upto
        found = {}
        for placed in self.placed[since:stop]:
            if (placed.origin == STUDENT and placed.cell.cell_type == "code"
                    and _normal(placed.cell.source) not in release_sources):
                found[placed.label] = placed.cell.source
        return found

    def exploration_cells(self, release_ids: set[str]) -> set[int]:
        """Indices of the instructor's demo and exploration cells (no nbgrader role, a cell id
        from the release), which grading does not need to run: see :mod:`.autograde`."""
        return {index for index, placed in enumerate(self.placed)
                if placed.origin == STUDENT
                and lab_cells.is_exploration(placed.cell, placed.role, release_ids)}


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def release_code_sources(release: LabNotebook) -> set[str]:
    return {_normal(c.source) for c in release.cells if c.cell.cell_type == "code"}


def release_cell_ids(release: LabNotebook) -> set[str]:
    return {c.cell.get("id") for c in release.cells if c.cell.get("id")}


def _fresh(cell: NotebookNode) -> NotebookNode:
    cell = copy.deepcopy(cell)
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    _runnable(cell.metadata, ("tags", _is_text_list), drop=("execution",))
    return cell


def _runnable(metadata: dict, *kept, drop: tuple[str, ...] = ()) -> None:
    """Remove, in place, metadata the kernel runner (nbclient) reads and would trip over:
    ``kept`` pairs ``(key, is_valid)`` are removed when not valid, ``drop`` keys always
    (``execution`` holds timings nbclient rewrites). Collect has checked that cells are cells;
    what sits inside their metadata is still the student's, and never graded."""
    for key, is_valid in kept:
        if key in metadata and not is_valid(metadata[key]):
            del metadata[key]
    for key in drop:
        metadata.pop(key, None)


def _is_text_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_object(value) -> bool:
    return isinstance(value, dict)


def assemble(source: LabNotebook, release: LabNotebook, submitted: NotebookNode) -> Assembled:
    """Build the notebook to grade from the ``submitted`` one (see the module docstring)."""
    source_by_id = source.by_id()
    release_by_id = release.by_id()
    placed: list[Placed] = []
    notes: list[str] = []
    chosen = _chosen_copies(submitted, release_by_id)
    for index, cell in enumerate(submitted.cells):
        gid = lab_cells.nbgrader_meta(cell).get("grade_id") or None
        original = source_by_id.get(gid) if gid else None
        if original is None or chosen.get(gid) != index:
            if original is not None:
                notes.append(f"cell {index + 1} repeats the id {gid!r} of another cell; "
                             f"it was run as a cell of your own")
            own = _fresh(cell)
            own.metadata.pop("nbgrader", None)
            placed.append(Placed(own, STUDENT, lab_cells.PLAIN, None, index))
            continue
        if original.role in RESTORED_ROLES:
            released = release_by_id.get(gid)
            if released is not None and _normal(cell.source) != _normal(released.source):
                kind = "checks" if original.role == CHECKS else "read-only"
                notes.append(f"the {kind} cell {gid!r} (cell {index + 1}) was edited; it was "
                             f"graded with the original")
            placed.append(Placed(_fresh(original.cell), SOURCE, original.role, gid, index))
        else:
            mine = _fresh(cell)
            mine.metadata["nbgrader"] = copy.deepcopy(original.cell.metadata.get("nbgrader", {}))
            placed.append(Placed(mine, STUDENT, original.role, gid, index))
    _reinsert_deleted(source, placed, notes)
    for cell in source.with_role(ANSWER):
        if cell.grade_id not in {p.grade_id for p in placed}:
            notes.append(f"the answer cell {cell.grade_id!r} is missing from the submission")
    nb = copy.deepcopy(submitted)
    nb.cells = [p.cell for p in placed]
    _runnable(nb.metadata, ("kernelspec", _is_object), ("language_info", _is_object))
    _unique_ids(nb)
    return Assembled(nb, placed, notes)


def _chosen_copies(submitted: NotebookNode, release_by_id: dict[str, LabCell]) -> dict[str, int]:
    """For each grade_id, the index of the copy that plays the part: the first copy left as
    released when there is one (a pasted, edited copy elsewhere must not move the original),
    else the first copy."""
    copies: dict[str, list[int]] = {}
    for index, cell in enumerate(submitted.cells):
        gid = lab_cells.nbgrader_meta(cell).get("grade_id")
        if gid:
            copies.setdefault(gid, []).append(index)
    chosen = {}
    for gid, indices in copies.items():
        released = release_by_id.get(gid)
        same = [i for i in indices if released is not None
                and _normal(submitted.cells[i].source) == _normal(released.source)]
        chosen[gid] = (same or indices)[0]
    return chosen


def _reinsert_deleted(source: LabNotebook, placed: list[Placed], notes: list[str]) -> None:
    present = {p.grade_id for p in placed if p.grade_id}
    for cell in source.cells:
        if cell.role not in RESTORED_ROLES or cell.grade_id in present:
            continue
        anchor = _preceding_present(source, cell, placed)
        position = 0 if anchor is None else anchor + 1
        placed.insert(position, Placed(_fresh(cell.cell), SOURCE, cell.role, cell.grade_id))
        present.add(cell.grade_id)
        kind = "checks" if cell.role == CHECKS else "read-only"
        notes.append(f"the {kind} cell {cell.grade_id!r} was deleted; it was put back "
                     f"and graded")


def _preceding_present(source: LabNotebook, cell: LabCell, placed: list[Placed]) -> int | None:
    """Index in ``placed`` of the nearest source cell before ``cell`` that is present."""
    positions = {p.grade_id: i for i, p in enumerate(placed) if p.grade_id}
    for earlier in reversed(source.cells[:cell.index]):
        if earlier.grade_id in positions:
            return positions[earlier.grade_id]
    return None


def _unique_ids(nb: NotebookNode) -> None:
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        cell_id = cell.get("id")
        if cell_id is None:
            continue
        if cell_id in seen:
            cell["id"] = f"ck{index:04d}"
        seen.add(cell["id"])
