"""Release: generate the student notebook ``notebooks/<lab>/<lab>.ipynb`` from ``solutions/``.

nbgrader's own preprocessors do the work (lock cells, replace solutions with stubs, clear
outputs, compute checksums, strip hidden tests), configured by ``course/nbgrader_config.py``.
What this step adds:

* the stub names its exercise: ``raise NotImplementedError("<grade_id>: replace this line ...")``;
* byte-stable output (sorted keys, no timestamps, no execution metadata), so
  ``coursekit release --check`` can compare the committed release with a fresh one;
* a lint of the source that stops a broken lab before students see it (duplicate ids,
  unknown checks, points that disagree with the manifest, tampering-like code in cells
  students receive).
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from coursekit.course import Course, Lab
from coursekit.notebook import cells as lab_cells

IGNORED_NAMES = {".ipynb_checkpoints", "__pycache__", ".DS_Store"}


class ReleaseError(Exception):
    """The source notebook of a lab cannot be released; the message lists every problem."""


# --------------------------------------------------------------------------- configuration

def nbgrader_config(course: Course) -> Config:
    """``course/nbgrader_config.py`` as a traitlets Config (empty if the file is absent)."""
    path = course.course_dir / "nbgrader_config.py"
    if not path.exists():
        return Config()
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def _preprocessors(config: Config) -> list:
    # Imported here: nbgrader pulls in a lot, and `coursekit validate` never needs it.
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearHiddenTests,
        ClearMarkScheme,
        ClearOutput,
        ClearSolutions,
        ComputeChecksums,
        LockCells,
    )

    class ExerciseStub(ClearSolutions):
        """ClearSolutions whose code stub may say ``{exercise}``: the answer cell's grade_id."""

        def preprocess_cell(self, cell, resources, cell_index):
            template = dict(self.code_stub)
            exercise = lab_cells.nbgrader_meta(cell).get("grade_id") or "this exercise"
            self.code_stub = {lang: stub.replace("{exercise}", exercise)
                              for lang, stub in template.items()}
            try:
                return super().preprocess_cell(cell, resources, cell_index)
            finally:
                self.code_stub = template

    # The order is nbgrader's (GenerateAssignment): checksums are computed on the full cells,
    # then hidden tests are stripped and checksums computed again on what students get.
    # The database step (SaveCells) is left out: the gradebook is filled by
    # `autograder.pipeline.gradebook` when grading, from the source.
    chain = [LockCells, ExerciseStub, ClearOutput, CheckCellMetadata, ComputeChecksums,
             ClearHiddenTests, ClearMarkScheme, ComputeChecksums, CheckCellMetadata]
    if "code_stub" not in config.get("ClearSolutions", {}):
        config = copy.deepcopy(config)
        config.ClearSolutions.code_stub = {
            "python": 'raise NotImplementedError("{exercise}: replace this line with your '
                      'implementation")'}
    return [cls(config=config) for cls in chain]


# --------------------------------------------------------------------------- generation

def release_notebook(course: Course, lab: Lab | str, source: NotebookNode | None = None,
                     config: Config | None = None) -> NotebookNode:
    """The student version of ``lab``'s source notebook, in memory."""
    nb = copy.deepcopy(source if source is not None
                       else lab_cells.read_notebook(course.source_notebook(lab)))
    resources: dict = {}
    for preprocessor in _preprocessors(config if config is not None else nbgrader_config(course)):
        nb, resources = preprocessor.preprocess(nb, resources)
    for cell in nb.cells:
        # Timing and UI state from the author's session would make every release differ.
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            cell.metadata.pop(key, None)
    return nb


def render(nb: NotebookNode) -> str:
    """Stable text of a notebook: sorted keys, one-space indent, trailing newline."""
    return nbformat.writes(nb, version=4).rstrip("\n") + "\n"


def release_files(course: Course, lab: Lab) -> dict[str, bytes]:
    """Every file of the lab's release, by path relative to ``notebooks/``."""
    files = {f"{lab.id}/{lab.notebook}": render(release_notebook(course, lab)).encode()}
    folder = course.source_dir / lab.id
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_dir() or IGNORED_NAMES & set(relative.parts):
            continue
        if path.suffix == ".ipynb":  # only the lab notebook is released (other notebooks
            continue                 # in the folder would carry solutions)
        files[f"{lab.id}/{relative.as_posix()}"] = path.read_bytes()
    return files


# --------------------------------------------------------------------------- lint

def lint(course: Course, lab: Lab, source: NotebookNode | None = None) -> list[str]:
    """Problems that make ``lab``'s source unfit to release (empty when it is fine)."""
    from coursekit.grading import get_check
    from coursekit.grading.integrity import find_tampering

    path = course.source_notebook(lab)
    if source is None:
        if not path.exists():
            return [f"{path} does not exist"]
        try:
            source = lab_cells.read_notebook(path)
        except Exception as error:  # noqa: BLE001 — any unreadable file is a lint finding
            return [f"{path} cannot be read: {error}"]
    course.enable_checks()
    notebook = lab_cells.split(source, path)
    problems = []
    seen: set[str] = set()
    for cell in notebook.cells:
        gid = cell.grade_id
        if gid and gid in seen:
            problems.append(f"grade_id {gid!r} is used by more than one cell")
        if gid:
            seen.add(gid)
        if cell.role == lab_cells.CHECKS:
            where = f"checks cell {gid!r} (cell {cell.index + 1})"
            if cell.points <= 0:
                problems.append(f"{where} has no points")
            if not cell.calls:
                problems.append(f"{where} makes no grade(\"<check>\", impl) call")
            if lab_cells.non_literal_grade_calls(cell.source):
                problems.append(f"{where}: every grade() call needs a literal check name and a "
                                f"literal hidden= flag (the grader reads them from the source)")
            for call in cell.calls:
                try:
                    get_check(call.check)
                except KeyError:
                    problems.append(f"{where} calls unknown check {call.check!r}")
            if not notebook.covered_answers(cell):
                problems.append(f"{where} has no answer cell before it")
        if cell.role == lab_cells.ANSWER and "BEGIN SOLUTION" not in cell.source:
            problems.append(f"answer cell {gid!r} has no ### BEGIN SOLUTION region")
    for other in course.labs:
        other_path = course.source_notebook(other)
        if other.id == lab.id or not other_path.exists():
            continue
        try:
            shared = notebook.identifying_ids & lab_cells.load(other_path).identifying_ids
        except Exception:  # noqa: BLE001 — the other lab's own lint reports its file
            continue
        if shared:
            problems.append(f"graded cell ids {sorted(shared)} are also in {other.id}: the "
                            f"grader recognises a lab's notebook by them, so they must be unique")
    total = notebook.max_score
    if abs(total - lab.points) > 1e-9:
        problems.append(f"graded cells add up to {total:g} points but course.toml says "
                        f"{lab.points:g} for {lab.id}")
    try:
        released = release_notebook(course, lab, source)
    except Exception as error:  # noqa: BLE001 — nbgrader's own complaints
        problems.append(f"nbgrader cannot release it: {error}")
        return problems
    editable = {f"cell {index + 1}": cell.source for index, cell in enumerate(released.cells)
                if cell.cell_type == "code"
                and lab_cells.role_of(cell) in (lab_cells.ANSWER, lab_cells.PLAIN)}
    for finding in find_tampering(editable):
        problems.append(f"{finding} — students get this cell, and the grader would flag "
                        f"every submission for it")
    return problems


# --------------------------------------------------------------------------- write / check

@dataclass
class Difference:
    path: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


def _lint_or_raise(course: Course, lab: Lab) -> None:
    problems = lint(course, lab)
    if problems:
        raise ReleaseError(f"{lab.id} cannot be released:\n" + "\n".join(
            f"  - {p}" for p in problems))


def write_release(course: Course, lab: Lab) -> list[Path]:
    """Write ``notebooks/<lab>/``; returns the files that changed."""
    _lint_or_raise(course, lab)
    changed = []
    for relative, data in release_files(course, lab).items():
        target = course.release_dir / relative
        if target.exists() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        changed.append(target)
    return changed


def check_release(course: Course, lab: Lab) -> list[Difference]:
    """How ``notebooks/<lab>/`` differs from what ``solutions/<lab>/`` generates."""
    _lint_or_raise(course, lab)
    expected = release_files(course, lab)
    differences = []
    for relative, data in expected.items():
        target = course.release_dir / relative
        if not target.exists():
            differences.append(Difference(relative, "missing (run `coursekit release "
                                                    f"{lab.id}`)"))
        elif target.read_bytes() != data:
            differences.append(Difference(relative, _describe_change(target.read_bytes(), data)))
    folder = course.release_dir / lab.id
    if folder.exists():
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(course.release_dir).as_posix()
            if path.is_file() and relative not in expected and not (
                    IGNORED_NAMES & set(path.relative_to(folder).parts)):
                differences.append(Difference(relative, "not generated from solutions/ "
                                                        "(delete it or add it to solutions/)"))
    return differences


def _describe_change(old: bytes, new: bytes) -> str:
    try:
        old_nb, new_nb = json.loads(old), json.loads(new)
    except ValueError:
        return "content differs"
    if not isinstance(old_nb, dict) or "cells" not in old_nb:
        return "content differs"
    old_cells, new_cells = old_nb.get("cells", []), new_nb.get("cells", [])
    if len(old_cells) != len(new_cells):
        return f"has {len(old_cells)} cells, solutions/ generates {len(new_cells)}"
    for index, (a, b) in enumerate(zip(old_cells, new_cells)):
        if a != b:
            gid = (b.get("metadata", {}).get("nbgrader", {}) or {}).get("grade_id")
            label = f"cell {index + 1}" + (f" ({gid})" if gid else "")
            return f"{label} differs from what solutions/ generates"
    return "notebook metadata or formatting differs"
