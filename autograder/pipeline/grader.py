"""One submission through the grading pipeline (:class:`Grader`): assemble the hand-in with
the instructor's cells → run it under the monitor in a sandboxed (or forked) kernel
(:mod:`coursekit.notebook.run_plan`) → judge every check → annotate the graded notebook
→ one :class:`~autograder.pipeline.gradebook.Outcome`. A class run
(:mod:`autograder.pipeline.autograde`) and a cluster worker
(:mod:`autograder.pipeline.cluster`) call it.

NOTE [exploration cells]: by the lab conventions (``solutions/README.md``) an answer is
self-contained given the setup cells and the earlier answer cells, and the instructor's demo
and exploration cells (no nbgrader metadata: plots, timings, prints) only *use* the student's
functions. Grading therefore runs the setup, answer and checks cells and every cell the
student added, and skips the instructor's exploration cells (known by their release cell id,
edited or not): in lab01 they are 90% of the run time (device timings, training curves).
``--all-cells`` runs every cell instead, as "Run all" in JupyterLab would.
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.isolation import forked, graded_folder, sandbox
from autograder.pipeline.annotate import annotate
from autograder.pipeline.collect import Submission, SubmissionStatus
from autograder.pipeline.gradebook import Outcome, OutcomeStatus
from autograder.publish.release import release_notebook
from coursekit.course import Course, Lab
from coursekit.grading.integrity import DELEGATION
from coursekit.grading.kernel import PRELOAD_CHECKS_ENV, PRELOAD_ENV
from coursekit.grading.seeds import fresh_seed, public_seed
from coursekit.notebook import cells as lab_cells
from coursekit.notebook import kernels, monitoring
from coursekit.notebook.assemble import (Assembled, assemble, release_cell_ids,
                                         release_code_sources)
from coursekit.notebook.cells import ANSWER, CHECKS, LabNotebook
from coursekit.notebook.drive import ChecksToDrive
from coursekit.notebook.execute import CellStatus
from coursekit.notebook.monitored_run import run_monitored
from coursekit.notebook.run_plan import KernelSettings, RunPlan
from coursekit.notebook.score import score_notebook

FORKED = " + a kernel forked from a pre-warmed one"   # added to an outcome's sandbox
# Fresh kernels that may each meet a uid an earlier student spoiled before one runs the
# submission: uids are handed out in turn, and one is marked spoiled when it is met.
SPOILED_UID_RETRIES = 2
MONITORED = ("flagged for a TA: while it was graded, the grading monitor saw the submission try "
             "to change how notebooks run or are graded")


@dataclass
class Overrides:
    """Limits that replace the manifest's for one run (the demo shortens them)."""

    cell_timeout_s: float | None = None
    time_limit_s: float | None = None
    memory_mb: int | None = None


@dataclass
class LabContext:
    """Everything about a lab that every submission of it needs, computed once."""

    lab: Lab
    source: LabNotebook
    release: LabNotebook
    release_sources: set[str]
    release_ids: set[str]
    identifying_ids: set[str]
    targets: list[dict]


def prepare_lab(course: Course, lab: Lab) -> LabContext:
    source = lab_cells.load(course.source_notebook(lab))
    release = lab_cells.split(release_notebook(course, lab, source.nb))
    return LabContext(lab, source, release, release_code_sources(release),
                      release_cell_ids(release), source.identifying_ids,
                      monitoring.targets(source.check_names))


@dataclass
class Grader:
    """Grades submissions of a course; one instance per class run."""

    course: Course
    status: sandbox.SandboxStatus
    overrides: Overrides = field(default_factory=Overrides)
    all_cells: bool = False
    fork_kernels: bool = False
    zygotes: forked.ZygotePool | None = None   # while grade_all runs with fork_kernels

    @staticmethod
    def seeds():
        """Seeds for one grading of one submission: public for visible checks, fresh for
        hidden ones (the same for every call of a check within this grading)."""
        drawn: dict[str, int] = {}
        return lambda check, hidden: (drawn.setdefault(check, fresh_seed()) if hidden
                                      else public_seed(check))

    def kernel_env(self, runtime: Path) -> dict[str, str]:
        """The kernel's environment: no secret, no seed, no student id (see coursekit.grading.seeds)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8", "HOME": str(runtime), "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "COURSEKIT_MODE": "grade",
        }
        env.update(self.course.kernel_env())
        return env

    def limits(self, lab: Lab) -> tuple[float, float, int]:
        o = self.overrides
        return (o.cell_timeout_s or lab.cell_timeout_s, o.time_limit_s or lab.time_limit_s,
                o.memory_mb or lab.memory_mb)

    def _outcome(self, sub: Submission, context: LabContext, status: OutcomeStatus, *,
                 reasons: tuple[str, ...] = (), cells=(), sandbox: str = "",
                 **more) -> Outcome:
        """The outcome of ``sub``: collecting's notes first, then ``reasons``; the sandbox's
        name (or its warning), then ``sandbox``."""
        return Outcome(sub.student, sub.lab, status, context.source.max_score,
                       context.source.auto_max_score, cells=tuple(cells),
                       reasons=(*sub.notes, *reasons),
                       sandbox=(self.status.kind if self.status.sandboxed
                                else self.status.warning) + sandbox, **more)

    async def grade(self, sub: Submission, context: LabContext) -> Outcome:
        """Grade one submission; never raises (a grader error is an outcome too)."""
        outcome = await self._grade_or_explain(sub, context)
        return dataclasses.replace(outcome, graded_at=time.time())

    async def _grade_or_explain(self, sub: Submission, context: LabContext) -> Outcome:
        try:
            return await self._grade(sub, context)
        except Exception as error:  # noqa: BLE001 — one student's failure never stops the class
            import traceback

            from coursekit.notebook.safe_text import failure
            # The student and the TA read one line; the traceback goes to a file for whoever
            # fixes the grader.
            try:
                details = await asyncio.to_thread(
                    graded_folder.write_error_details, self.course.autograded_dir,
                    sub.student, sub.lab, "".join(traceback.format_exception(error)))
                where = f"; details in {details.relative_to(self.course.root)}"
            except OSError:
                where = ""
            reason = (f"the grader failed on this submission ({failure(error)}): a problem of "
                      f"the grader, not of the work handed in; regrade it with `coursekit "
                      f"autograde --student {sub.student} --lab {sub.lab}`{where}")
            try:
                cells = score_notebook(context.source, None, None, seed_of=self.seeds(),
                                       zero_reason=reason)
            except Exception:  # noqa: BLE001 — the outcome is stored, with no check rows
                cells = []
            return self._outcome(sub, context, OutcomeStatus.ERROR, reasons=(reason,),
                                 cells=cells)

    async def _grade(self, sub: Submission, context: LabContext) -> Outcome:
        seed_of = self.seeds()
        if sub.status != SubmissionStatus.FOUND:
            return self._outcome(sub, context, OutcomeStatus(sub.status), cells=score_notebook(
                context.source, None, None, seed_of=seed_of,
                zero_reason=sub.notes[0] if sub.notes else str(sub.status)))
        workdir = self.course.autograded_dir / sub.student / sub.lab
        assembled = assemble(context.source, context.release, sub.nb)
        reasons = list(assembled.notes)
        sandbox_notes = ""
        target = workdir / context.lab.notebook

        cell_timeout, time_limit, memory_mb = self.limits(context.lab)
        limits = kernels.Limits(memory_mb=memory_mb, cpu_s=int(time_limit) + 60)
        preload = {PRELOAD_ENV: context.source.setup_imports,
                   PRELOAD_CHECKS_ENV: ",".join(context.source.check_names)}
        zygote = (await self.zygotes.lease(sub.lab, {**self.kernel_env(Path("/tmp")), **preload})
                  if self.zygotes is not None else None)
        if zygote is not None:  # fresh folders inside the slot; the work is moved out after
            rundir, runtime = zygote.fresh_folders()
            sandbox_notes += FORKED
        else:
            rundir, runtime = workdir, kernels.runtime_dir()
        plan = RunPlan(assembled.nb,
                       frozenset() if self.all_cells
                       else frozenset(assembled.exploration_cells(context.release_ids)),
                       _checks_at(context.source, assembled), seed_of)
        kernel = KernelSettings(context.targets, tuple(self.course.check_path),
                                context.source.setup_imports, tuple(context.source.check_names),
                                cell_timeout, time_limit, memory_mb)
        try:
            reasons += await asyncio.to_thread(graded_folder.prepare, rundir, sub.folder,
                                               sub.path)
            for attempt in range(1 + SPOILED_UID_RETRIES):
                km = (forked.kernel_manager(zygote, workdir=rundir, runtime_dir=runtime,
                                            limits=limits, status=self.status)
                      if zygote is not None else
                      sandbox.kernel_manager(self.course, workdir=rundir, runtime_dir=runtime,
                                             status=self.status, limits=limits))
                ran = await run_monitored(plan, kernel, km, cwd=rundir,
                                          env=self.kernel_env(runtime), runtime=runtime)
                if not _refused_on_a_spoiled_uid(km, ran) or attempt == SPOILED_UID_RETRIES:
                    break
                # An earlier student left keys in that uid's keyrings that cannot be cleared,
                # so the kernel refused to run there (coursekit.grading.keyrings) before any
                # of this student's code ran; the uid is never leased again. Run on another.
                await asyncio.to_thread(kernels.remove_tree, runtime)
                runtime = kernels.runtime_dir()
        finally:
            try:
                await asyncio.to_thread(kernels.remove_tree, runtime)
            finally:  # whatever the student left, the slot is given back
                if zygote is not None:
                    note = await self.zygotes.release(
                        zygote, lambda: asyncio.to_thread(_move_out, rundir, workdir))
                    if note:   # the slot's business, not the student's: said beside the sandbox
                        sandbox_notes += f"; {note}"
        execution = ran.execution
        if ran.noticed:
            reasons.append(f"{MONITORED}: " + "; ".join(ran.noticed))
        reasons += execution.problems()
        reasons += await asyncio.to_thread(graded_folder.trim, workdir, context.lab.notebook)
        for index, placed in enumerate(assembled.placed):
            run = execution.cells.get(index)
            if placed.role == ANSWER and run is not None and run.status == CellStatus.ERROR:
                reasons.append(f"the answer in {placed.label} raised {run.raised}")
        cells = score_notebook(context.source, assembled, execution, seed_of=seed_of,
                               forbidden=ran.forbidden)
        annotated = annotate(ran.notebook, assembled, cells, execution.drives)
        await asyncio.to_thread(graded_folder.place_notebook, annotated, workdir,
                                context.lab.notebook)
        reasons += [f"{check.check}: {check.message}" for cell in cells for check in cell.checks
                    if check.message.startswith(DELEGATION)]
        return self._outcome(sub, context,
                             OutcomeStatus.FLAGGED if ran.noticed else OutcomeStatus.GRADED,
                             reasons=tuple(reasons), cells=cells, sandbox=sandbox_notes,
                             flagged=bool(ran.noticed),
                             notebook_file=str(target.relative_to(self.course.root)))


def _checks_at(source: LabNotebook, assembled: Assembled) -> dict[int, ChecksToDrive]:
    """``{index in the assembled notebook: its grade calls}`` of every checks cell present,
    its drives kept under its grade id (a grade id is present once: see assemble)."""
    found = {}
    for cell in source.with_role(CHECKS):
        index = assembled.index_of(cell.grade_id)
        if index is not None:
            found[index] = ChecksToDrive(cell.grade_id, tuple(cell.calls))
    return found


def _refused_on_a_spoiled_uid(km, ran) -> bool:
    """Whether a fresh kernel exited at start because its sandbox uid's keyrings could not be
    emptied (the sandbox marks the uid spoiled then), before any cell ran. Student code that
    exits with the same code itself is not run again: a second run would meet the same hidden
    inputs, which the first could have written down and answered with what checks forbid."""
    confinement = getattr(km, "confinement", None)
    return (confinement is not None and confinement.spoiled and not ran.execution.drives
            and all(run.status in (CellStatus.NOT_RUN, CellStatus.SKIPPED)
                    for run in ran.execution.cells.values()))


def _move_out(rundir: Path, workdir: Path) -> None:
    """Move a forked kernel's working folder to the submission's graded folder (one rename:
    both are on the course's file system), so the slot's next student never sees it."""
    if workdir.exists():
        kernels.remove_tree(workdir)
    workdir.parent.mkdir(parents=True, exist_ok=True)
    if rundir.exists():
        os.rename(rundir, workdir)
