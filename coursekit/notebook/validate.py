"""Validate: the student's offline self-check of one notebook.

Runs the notebook top to bottom in grade mode with public seeds only (no secret: hidden
checks are the grader's), then judges every *visible* ``grade(...)`` call exactly as the
grader does, and lists each with pass/fail, points and message. Unlike ``nbgrader validate``
the exit status says the truth: non-zero when any visible check fails or cannot run.
"""
from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from coursekit.grading.integrity import delegation_message, find_tampering
from coursekit.grading.seeds import public_seed

from . import cells as lab_cells
from . import kernels, monitoring
from .cells import ANSWER, CHECKS, PLAIN, WRITTEN, LabNotebook
from .drive import ChecksToDrive
from .execute import CellStatus
from .monitored_run import run_monitored
from .run_plan import KernelSettings, RunPlan
from ..course import Course, Lab, ManifestError, find_root, load_course
from .score import CellScore, delegation, explain_dependencies, missing_reason, score_checks_cell

PASS, FAIL = "✓", "✗"


@dataclass
class Validation:
    notebook: Path
    cells: list[CellScore] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    tampering: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    broken_answers: list[str] = field(default_factory=list)  # answer cells that raised
    written: list[tuple[str, float, bool]] = field(default_factory=list)  # id, points, answered
    skipped: int = 0

    @property
    def checks(self):
        return [check for cell in self.cells for check in cell.checks]

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks) and not self.tampering

    def report(self) -> str:
        lines = [f"coursekit validate {self.notebook.name} (visible checks, public seeds; "
                 f"hidden checks run only at grading)"]
        # An answer that does not run explains the checks that follow it: say it first.
        lines += [f"{FAIL} {broken}" for broken in self.broken_answers]
        for cell in self.cells:
            for check in cell.checks:
                mark = PASS if check.passed else FAIL
                lines.append(f"{mark} {check.check}  [{cell.grade_id}]  "
                             f"{check.score:.2f}/{check.max_score:.2f} points  "
                             f"({check.cases_passed}/{check.cases} cases)")
                if not check.passed:
                    details = check.message.splitlines()
                    if details and details[0] == f"{check.cases_passed}/{check.cases} cases passed":
                        details = details[1:]  # the header above says it already
                    lines += [f"      {line}" for line in details]
        for grade_id, points, answered in self.written:
            lines.append(f"{'✎' if answered else FAIL} written answer [{grade_id}]  {points:g} "
                         f"points, graded by a person: "
                         + ("answered" if answered else "NOT ANSWERED YET"))
        lines += [f"! {problem}" for problem in self.problems + self.tampering]
        lines += [f"? {warning}" for warning in self.warnings]
        if not self.checks:
            lines.append(f"{FAIL} no visible checks found in this notebook")
        if self.skipped:
            lines.append(f"(the lab's {self.skipped} exploration cells were not run: grading "
                         f"does not run them either)")
        passed = sum(c.passed for c in self.checks)
        blank = sum(not answered for _, _, answered in self.written)
        lines.append(f"{passed}/{len(self.checks)} visible checks passed"
                     + ("" if self.ok else " — not ready to submit")
                     + (f"; {blank} written answer{'s' * (blank != 1)} still blank" if blank
                        else ""))
        return "\n".join(lines)


def _course_and_lab(path: Path, nb, course: Course | None = None
                    ) -> tuple[Course | None, Lab | None]:
    """The notebook's course (``course``, else the one around its folder) and lab."""
    if course is None:
        try:
            course = load_course(find_root(path.parent))
        except ManifestError:
            return None, None
    ids = {lab_cells.nbgrader_meta(c).get("grade_id") for c in nb.cells} - {None}
    for lab in course.labs:
        if lab.id == path.stem.split(" ")[0] or lab.id in path.stem:
            return course, lab
    scored = []
    for lab in course.labs:
        release = course.release_notebook(lab)
        if release.exists():
            scored.append((len(ids & lab_cells.load(release).identifying_ids), lab))
    best = max(scored, key=lambda item: item[0], default=(0, None))
    return course, best[1] if best[0] else None


def _release_ids(course: Course | None, lab: Lab | None) -> set[str] | None:
    """Cell ids of the release (None when it cannot be found): cells with these ids are the
    instructor's, the others were added by the student."""
    if course is None or lab is None:
        return None
    path = course.release_notebook(lab)
    if not path.exists():
        return None
    return {c.get("id") for c in lab_cells.read_notebook(path).cells if c.get("id")}


def _release_sources(course: Course | None, lab: Lab | None) -> set[str]:
    """The release's own cell texts (a written answer still equal to one is unanswered)."""
    if course is None or lab is None or not course.release_notebook(lab).exists():
        return {"YOUR ANSWER HERE"}
    release = lab_cells.read_notebook(course.release_notebook(lab))
    return {c.source.strip() for c in release.cells} | {"YOUR ANSWER HERE"}


def _drive_keys(notebook: LabNotebook) -> dict[int, str]:
    """The key each checks cell's drives are kept under: its grade id, and for a copy of a
    checks cell (a student's notebook, not assembled, may hold two) its cell number too."""
    keys: dict[int, str] = {}
    for cell in notebook.with_role(CHECKS):
        key = cell.grade_id or ""
        keys[cell.index] = (key if key not in keys.values()
                            else f"{key} (cell {cell.index + 1})")
    return keys


class KernelUnavailable(RuntimeError):
    """The notebook's kernel cannot be started where it must run: the message says why."""


class KernelPlace:
    """Where :func:`validate` runs a notebook's kernel: here, this machine's own, as its
    user, in the notebook's folder (a student validating their own work). The grader's
    sandbox is another place (``autograder.isolation.validation``)."""

    def open(self, course: Course | None, path: Path, runtime: Path, limits: kernels.Limits
             ) -> tuple[object, Path, dict[str, str]]:
        """``(kernel manager, working folder, environment)`` for a kernel of ``path``."""
        env = dict(os.environ)
        if course is not None:
            for key, value in course.kernel_env().items():
                env[key] = value + (os.pathsep + env[key] if key == "PYTHONPATH" and env.get(key)
                                    else "")
        km = kernels.local_kernel_manager(runtime_dir=runtime, limits=limits
                                          if sys.platform.startswith("linux") else None)
        return km, path.parent, env

    def close(self, workdir: Path) -> None:
        """After the run (the notebook's own folder is the student's: nothing to remove)."""


def validate(path: Path, *, timeout: float | None = None, all_cases: bool = False,
             course: Course | None = None, place: KernelPlace | None = None) -> Validation:
    """Run and judge ``path`` (see the module docstring).

    ``course``: the course to judge it in (default: the one around the notebook's folder).
    ``place``: where its kernel runs (default: here, :class:`KernelPlace`); a place that
    cannot start one raises KernelUnavailable.
    """
    place = place or KernelPlace()
    path = Path(path).resolve()
    nb = nbformat.read(str(path), as_version=4)
    course, lab = _course_and_lab(path, nb, course)
    if course is not None:
        course.enable_checks()
    notebook = lab_cells.split(nb, path)
    cell_timeout = timeout or (lab.cell_timeout_s if lab else 120)
    time_limit = max(cell_timeout, lab.time_limit_s if lab else 600)
    memory = lab.memory_mb if lab else 6144
    runtime = kernels.runtime_dir()
    try:
        km, workdir, env = place.open(course, path, runtime,
                                      kernels.Limits(memory_mb=memory, cpu_s=int(time_limit) + 60))
    except BaseException:
        kernels.remove_tree(runtime)
        raise
    env.update({"COURSEKIT_MODE": "grade", "MPLBACKEND": "Agg"})
    release_ids = _release_ids(course, lab)
    # Run what the grader runs: without the instructor's exploration cells (see
    # autograder.pipeline.grader), when the release tells which cells those are.
    skip = {index for index, cell in enumerate(nb.cells) if release_ids is not None
            and lab_cells.is_exploration(cell, lab_cells.role_of(cell), release_ids)}
    # The release's setup imports and check warm-ups, run before the monitor (as grading
    # does): never code from the notebook being validated, which may be anybody's.
    release = (lab_cells.load(course.release_notebook(lab))
               if course is not None and lab is not None else None)
    keys = _drive_keys(notebook)
    visible = {c.index: ChecksToDrive(keys[c.index], tuple(call for call in c.calls
                                                           if not call.hidden))
               for c in notebook.cells if c.role == CHECKS}
    checks = [call.check for planned in visible.values() for call in planned.calls]
    plan = RunPlan(nb, frozenset(skip), visible, lambda name, hidden: public_seed(name))
    kernel = KernelSettings(monitoring.targets(checks) if course is not None else [],
                            tuple(course.check_path) if course else (),
                            release.setup_imports if release else "",
                            tuple(release.check_names) if release else (), cell_timeout,
                            time_limit, memory)
    try:
        ran = asyncio.run(run_monitored(plan, kernel, km, cwd=workdir, env=env, runtime=runtime))
    finally:
        kernels.remove_tree(runtime)
        place.close(workdir)
    execution, seen = ran.execution, ran.forbidden
    result = Validation(path, problems=execution.problems(), skipped=len(skip))
    stubs = _release_sources(course, lab)
    for cell in notebook.cells:
        run = execution.cells.get(cell.index)
        if cell.role == ANSWER and run is not None and run.status == CellStatus.ERROR:
            result.broken_answers.append(f"the answer in {run.label} raised {run.raised}"
                                         " — the checks after it cannot pass until it runs")
        elif cell.role == WRITTEN:
            text = cell.source.strip()
            result.written.append((cell.grade_id or "", cell.points,
                                   bool(text) and text not in stubs))
    result.tampering += [f"grading would flag this notebook for a TA: {note}"
                         for note in ran.noticed]

    # As the grader does: the student's code is the answer cells and the cells the student
    # added (only known when the release is at hand).
    def students(c) -> bool:
        return c.cell.cell_type == "code" and (c.role == ANSWER or (
            c.role == PLAIN and release_ids is not None and c.cell.get("id") not in release_ids))

    # Early, friendly warnings from reading the code; grading itself judges what runs.
    result.warnings += [f"this code may be flagged for a TA at grading: {finding}"
                        for finding in find_tampering({f"cell {c.index + 1}": c.source
                                                       for c in notebook.cells if students(c)})]
    previous = -1
    for cell in notebook.cells:
        if cell.role != CHECKS:
            continue
        covered = {f"cell {c.index + 1}" + (f" ({c.grade_id})" if c.grade_id else ""): c.source
                   for c in notebook.cells[previous + 1:cell.index] if students(c)}
        previous = cell.index
        forbidden = {key: message for key, message in seen.items() if not key[1]}
        for check, found in delegation(cell.calls, covered).items():
            if (check, False) not in forbidden:
                result.warnings.append(f"{check}: {delegation_message(found)}")
        result.cells.append(score_checks_cell(
            cell, execution.drives.get(keys[cell.index]), seed_of=lambda name, hidden: public_seed(name),
            reason_if_missing=missing_reason(execution, cell.index),
            forbidden=forbidden, include_hidden=False, max_failures=10**6 if all_cases else 5))
    explain_dependencies(result.cells)
    return result
