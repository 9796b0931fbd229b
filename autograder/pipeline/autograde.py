"""Autograde: grade a class from one long-lived process.

Per submission (``Grader.grade``): collect → assemble → execute in the sandbox (the monitor
in the kernel reports delegation and tampering as the code runs) → score → store. Kernels of up to ``jobs`` submissions run at the same time (one
asyncio loop drives them all; each kernel is its own sandboxed process), while this process
judges the payloads and is the only writer of the gradebook. Whatever goes wrong with one
submission becomes that submission's recorded outcome; the class run goes on.

Ordering rules that matter:

* the executed notebook is written to ``course/autograded/<student>/<lab>/`` after its kernel
  has stopped (the kernel can write to that folder, so it must not get the last word), and
  nothing there is deleted when a kernel dies;
* gradebook writes happen as each submission finishes, so an interrupted run keeps what was
  graded.

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
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from coursekit.notebook import kernels
from coursekit.grading.integrity import DELEGATION
from coursekit.grading.kernel import PRELOAD_CHECKS_ENV, PRELOAD_ENV
from coursekit.grading.seeds import fresh_seed, public_seed

from coursekit.notebook import cells as lab_cells
from autograder.pipeline import gradebook as gb
from coursekit.notebook import monitoring
from autograder.pipeline.annotate import annotate
from autograder.isolation import forked
from autograder.isolation import graded_folder
from autograder.isolation import sandbox
from autograder.isolation import untrusted_tree
from coursekit.notebook.assemble import Assembled, assemble, release_cell_ids, release_code_sources
from coursekit.notebook.cells import ANSWER, CHECKS, LabNotebook
from autograder.pipeline.collect import (Submission, SubmissionStatus, collect, student_entries,
                                        submitted_at)
from autograder.pipeline.gradebook import OutcomeStatus
from coursekit.notebook.execute import CellStatus
from coursekit.notebook.monitored_run import RunPlan, run_monitored
from autograder.pipeline.gradebook import Outcome
from coursekit.course import Course, Lab, ManifestError
from autograder.publish.release import release_notebook
from coursekit.notebook.score import score_notebook

NOT_ON_ROSTER = ("flagged for a TA: {student} is not on the course's roster (the gradebook's "
                 "students with a name or email); check who handed this in")
FORKED = " + a kernel forked from a pre-warmed one"   # added to an outcome's sandbox
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

    def _outcome(self, sub: Submission, context: LabContext, status: OutcomeStatus) -> Outcome:
        return Outcome(sub.student, sub.lab, status, context.source.max_score,
                       context.source.auto_max_score, reasons=list(sub.notes),
                       sandbox=self.status.kind if self.status.sandboxed else self.status.warning)

    async def grade(self, sub: Submission, context: LabContext) -> Outcome:
        """Grade one submission; never raises (a grader error is an outcome too)."""
        outcome = await self._grade_or_explain(sub, context)
        outcome.graded_at = time.time()
        return outcome

    async def _grade_or_explain(self, sub: Submission, context: LabContext) -> Outcome:
        try:
            return await self._grade(sub, context)
        except Exception as error:  # noqa: BLE001 — one student's failure never stops the class
            import traceback

            from coursekit.notebook.safe_text import failure
            # The student and the TA read one line; the traceback goes to a file for whoever
            # fixes the grader.
            outcome = self._outcome(sub, context, OutcomeStatus.ERROR)
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
            outcome.reasons.append(reason)
            try:
                outcome.cells = score_notebook(context.source, None, None,
                                               seed_of=self.seeds(), zero_reason=reason)
            except Exception:  # noqa: BLE001 — the outcome is stored, with no check rows
                outcome.cells = []
            return outcome

    async def _grade(self, sub: Submission, context: LabContext) -> Outcome:
        seed_of = self.seeds()
        if sub.status != SubmissionStatus.FOUND:
            outcome = self._outcome(sub, context, OutcomeStatus(sub.status))
            outcome.cells = score_notebook(context.source, None, None, seed_of=seed_of,
                                           zero_reason=sub.notes[0] if sub.notes else str(sub.status))
            return outcome
        workdir = self.course.autograded_dir / sub.student / sub.lab
        assembled = assemble(context.source, context.release, sub.nb)
        outcome = self._outcome(sub, context, OutcomeStatus.GRADED)
        outcome.reasons += assembled.notes
        target = workdir / context.lab.notebook
        outcome.notebook_file = str(target.relative_to(self.course.root))

        cell_timeout, time_limit, memory_mb = self.limits(context.lab)
        limits = kernels.Limits(memory_mb=memory_mb, cpu_s=int(time_limit) + 60)
        preload = {PRELOAD_ENV: context.source.setup_imports,
                   PRELOAD_CHECKS_ENV: ",".join(context.source.check_names)}
        zygote = (await self.zygotes.lease(sub.lab, {**self.kernel_env(Path("/tmp")), **preload})
                  if self.zygotes is not None else None)
        if zygote is not None:  # fresh folders inside the slot; the work is moved out after
            rundir, runtime = zygote.fresh_folders()
            outcome.sandbox += FORKED
        else:
            rundir, runtime = workdir, kernels.runtime_dir()
        plan = RunPlan(assembled.nb,
                       frozenset() if self.all_cells
                       else frozenset(assembled.exploration_cells(context.release_ids)),
                       _calls_at(context.source, assembled), seed_of, context.targets,
                       tuple(self.course.check_path), context.source.setup_imports,
                       tuple(context.source.check_names), cell_timeout, time_limit, memory_mb)
        try:
            outcome.reasons += await asyncio.to_thread(graded_folder.prepare, rundir,
                                                       sub.folder, sub.path)
            km = (forked.kernel_manager(zygote, workdir=rundir, runtime_dir=runtime,
                                        limits=limits, status=self.status)
                  if zygote is not None else
                  sandbox.kernel_manager(self.course, workdir=rundir, runtime_dir=runtime,
                                         status=self.status, limits=limits))
            ran = await run_monitored(plan, km, cwd=rundir, env=self.kernel_env(runtime),
                                      runtime=runtime)
        finally:
            try:
                await asyncio.to_thread(kernels.remove_tree, runtime)
            finally:  # whatever the student left, the slot is given back
                if zygote is not None:
                    note = await self.zygotes.release(
                        zygote, lambda: asyncio.to_thread(_move_out, rundir, workdir))
                    if note:   # the slot's business, not the student's: said beside the sandbox
                        outcome.sandbox += f"; {note}"
        execution = ran.execution
        if ran.noticed:
            outcome.status, outcome.flagged = OutcomeStatus.FLAGGED, True
            outcome.reasons.append(f"{MONITORED}: " + "; ".join(ran.noticed))
        outcome.reasons += execution.problems()
        outcome.reasons += await asyncio.to_thread(graded_folder.trim, workdir,
                                                   context.lab.notebook)
        for index, placed in enumerate(assembled.placed):
            run = execution.cells.get(index)
            if placed.role == ANSWER and run is not None and run.status == CellStatus.ERROR:
                outcome.reasons.append(f"the answer in {placed.label} raised {run.raised}")
        outcome.cells = score_notebook(context.source, assembled, execution, seed_of=seed_of,
                                       forbidden=ran.forbidden)
        annotate(assembled, outcome.cells, execution.drives)
        await asyncio.to_thread(graded_folder.place_notebook, assembled.nb, workdir,
                                context.lab.notebook)
        for cell in outcome.cells:
            for check in cell.checks:
                if check.message.startswith(DELEGATION):
                    outcome.reasons.append(f"{check.check}: {check.message}")
        return outcome


def _calls_at(source: LabNotebook, assembled: Assembled) -> dict[int, list]:
    """``{index in the assembled notebook: grade calls}`` of every checks cell present."""
    found = {}
    for cell in source.with_role(CHECKS):
        index = assembled.index_of(cell.grade_id)
        if index is not None:
            found[index] = cell.calls
    return found


def _move_out(rundir: Path, workdir: Path) -> None:
    """Move a forked kernel's working folder to the submission's graded folder (one rename:
    both are on the course's file system), so the slot's next student never sees it."""
    if workdir.exists():
        kernels.remove_tree(workdir)
    workdir.parent.mkdir(parents=True, exist_ok=True)
    if rundir.exists():
        os.rename(rundir, workdir)


@dataclass
class ClassRun:
    outcomes: list[Outcome]
    status: sandbox.SandboxStatus
    seconds: float
    db_url: str
    run_id: str = ""
    unchanged: list[tuple[str, str]] = field(default_factory=list)  # kept from a past run
    kernels: str = ""   # how kernels were started (forked, or fresh and why)
    refused: dict[str, str] = field(default_factory=dict)   # hand-in name -> why not graded


def lab_fingerprint(course: Course, lab: Lab) -> str:
    """A hash of what grading a lab depends on besides the hand-in: the lab's source notebook
    and the grading code (coursekit, autograder and the course's own check packages). When it
    changes, every submission of the lab is graded again."""
    import hashlib

    import coursekit
    digest = hashlib.sha256(course.source_notebook(lab).read_bytes())
    folders = [Path(coursekit.__file__).parent, Path(__file__).parent, *course.check_path]
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def submission_hash(sub: Submission, lab_print: str) -> str:
    """What was handed in (the notebook as collected, the files beside it that grading
    copies in, and what collection noticed), together with the lab's fingerprint."""
    import hashlib
    digest = hashlib.sha256(lab_print.encode())
    digest.update(f"{sub.status}\0{sub.notes}\0".encode())
    if sub.nb is not None:
        digest.update(nbformat.writes(sub.nb).encode())
    for name, blocks in handed_in_files(sub):
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            for block in blocks:
                digest.update(block)
        except OSError:
            digest.update(b"\0unreadable")
    return digest.hexdigest()


def _hash_or_nothing(sub: Submission, lab_print: str) -> str:
    """:func:`submission_hash`, or "" (graded again next time) when one hand-in cannot be
    hashed: one student's files never stop the class's run."""
    try:
        return submission_hash(sub, lab_print)
    except Exception:  # noqa: BLE001 — grading it will say what is wrong, if anything
        return ""


def handed_in_files(sub: Submission):
    """``(relative path, bytes)`` of each file handed in beside the notebook, as grading
    takes them (:func:`graded_folder.handed_in`: no link followed, bounded), a block at a
    time."""
    if sub.folder is None:
        return
    entries, _ = graded_folder.handed_in(sub.folder, sub.path)
    root = untrusted_tree.open_folder(sub.folder)
    try:
        for entry in entries:
            if entry.kind == untrusted_tree.FILE:
                yield entry.path, untrusted_tree.chunks(root, entry.path)
    finally:
        os.close(root)


async def grade_all(grader: Grader, submissions: list[Submission],
                    contexts: dict[str, LabContext], *, jobs: int, on_done=None) -> list[Outcome]:
    """Grade ``submissions`` with at most ``jobs`` kernels at a time, in one event loop.

    With ``grader.fork_kernels``, each kernel is forked from a pre-warmed one
    (:mod:`.forked`); room for two labs' worth of them, so a class's labs can follow one
    another without waiting for a start."""
    semaphore = asyncio.Semaphore(max(1, jobs))
    if grader.fork_kernels:
        grader.zygotes = forked.ZygotePool(grader.course, grader.status, 2 * max(1, jobs))

    async def one(sub: Submission) -> Outcome:
        async with semaphore:
            outcome = await grader.grade(sub, contexts[sub.lab])
        if on_done is not None:
            try:
                on_done(outcome)
            except Exception as error:  # noqa: BLE001 — gather would drop the whole class
                from coursekit.notebook.safe_text import failure
                outcome.status = OutcomeStatus.ERROR
                outcome.reasons.append(f"the grader failed after grading this submission "
                                       f"({failure(error)})")
        return outcome

    try:
        return list(await asyncio.gather(*(one(sub) for sub in submissions)))
    finally:
        if grader.zygotes is not None:
            await grader.zygotes.close()


def autograde(course: Course, *, labs: list[str] | None = None,
              students: list[str] | None = None, db_url: str | None = None,
              submitted_dir: Path | None = None, jobs: int = 1, no_sandbox: bool = False,
              overrides: Overrides | None = None, progress: bool = True,
              all_cells: bool = False, only_changed: bool = False,
              cluster: str | None = None, fork_kernels: bool = True,
              log=print) -> ClassRun:
    """Grade every (filtered) submission of the class and store the results.

    ``only_changed``: keep a stored outcome whose hand-in and lab are unchanged since it was
    graded (by content hash), so a run that was stopped goes on where it stopped.
    ``cluster``: a Dask scheduler's address; the submissions are graded on its workers
    (:mod:`autograder.pipeline.cluster`) instead of ``jobs`` local kernels.
    ``fork_kernels``: fork each kernel from a pre-warmed one where this machine and the lab
    allow it (:mod:`autograder.isolation.forked`); where not, kernels start fresh and ``kernels`` in
    the result says why.
    """
    import uuid

    from tqdm import tqdm

    started = time.monotonic()
    run_id = f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    course.enable_checks()
    selected = course.select(labs)
    contexts = {lab.id: prepare_lab(course, lab) for lab in selected}
    status = sandbox.probe(course, disabled=no_sandbox)
    if status.sandboxed and status.enforcement.drop_uid:
        unreadable = sandbox.unreadable_by_kernels(course)
        if unreadable:
            raise ManifestError(
                f"the sandboxed kernels run as an unprivileged user, who cannot read "
                f"{len(unreadable)} file(s) of the grading code, e.g. {unreadable[0]}: every "
                f"check would fail and every student get zero. Nothing was graded. Make it "
                f"readable by all (chmod -R o+rX on the folder), then grade again")
    where = " on this machine; each cluster worker probes its own" if cluster else ""
    if status.sandboxed:
        log(f"sandbox{where}: {status.kind} (no network; only each submission's folder "
            f"visible)")
    else:
        log("\n" + status.warning + "\n")
    uncompiled = monitoring.compiled_warning()
    if uncompiled:
        log(uncompiled)
    url = db_url or course.default_db_url
    gradebook = gb.open_gradebook(url)
    try:
        for context in contexts.values():
            gb.register_lab(gradebook, context.lab, context.source)
        submissions = collect(course, selected, {k: c.identifying_ids for k, c in contexts.items()},
                              submitted_dir, students)
        refused = {} if students else student_entries(submitted_dir
                                                      or course.submitted_dir).refused
        on_roster = gb.roster(gradebook)
        prints = {lab.id: lab_fingerprint(course, lab) for lab in selected}
        hashes = {(sub.student, sub.lab): _hash_or_nothing(sub, prints[sub.lab])
                  for sub in submissions}
        unchanged: list[tuple[str, str]] = []
        if only_changed:
            stored = gb.stored_hashes(gradebook, [lab.id for lab in selected])
            unchanged = [key for key, digest in hashes.items() if stored.get(key) == digest]
            submissions = [sub for sub in submissions if (sub.student, sub.lab) not in unchanged]
        grader = Grader(course, status, overrides or Overrides(), all_cells,
                        fork_kernels=fork_kernels)
        bar = tqdm(total=len(submissions), desc="grading", unit="notebook",
                   disable=not progress, file=sys.stderr, dynamic_ncols=True)

        def done(outcome: Outcome) -> None:
            import dataclasses

            from coursekit.notebook.safe_text import failure, printable
            outcome.reasons = [printable(reason) for reason in outcome.reasons]  # printed too
            outcome.run_id = run_id
            outcome.submission_hash = hashes.get((outcome.student, outcome.lab), "")
            outcome.submitted_at = submitted_at(submitted_dir or course.submitted_dir,
                                                outcome.student, outcome.lab)
            if on_roster is not None and outcome.student not in on_roster:
                outcome.flagged = True
                outcome.status = OutcomeStatus.FLAGGED if outcome.status == OutcomeStatus.GRADED else outcome.status
                outcome.reasons.append(NOT_ON_ROSTER.format(student=outcome.student))
            try:
                gb.record(gradebook, outcome)
            except Exception as error:  # noqa: BLE001 — store at least the outcome and why
                outcome.status = OutcomeStatus.ERROR
                outcome.reasons.append(
                    f"the grade could not be stored ({failure(error)}): a problem of the "
                    f"grader; regrade with `coursekit autograde --student {outcome.student} "
                    f"--lab {outcome.lab}`")
                outcome.cells = [dataclasses.replace(cell, checks=[], note="",
                                                     score=None if cell.score is None else 0.0)
                                 for cell in outcome.cells]
                try:
                    gb.record(gradebook, outcome)
                except Exception as again:  # noqa: BLE001 — the class run goes on
                    log(f"coursekit: {outcome.student}/{outcome.lab} could not be stored in "
                        f"the gradebook: {failure(again)}")
            bar.set_postfix_str(f"{outcome.student}/{outcome.lab}", refresh=False)
            bar.update(1)

        if cluster:
            from autograder.pipeline.cluster import grade_on_cluster
            outcomes = grade_on_cluster(cluster, grader, submissions, contexts, on_done=done,
                                        no_sandbox=no_sandbox, log=log)
        else:
            outcomes = asyncio.run(grade_all(grader, submissions, contexts, jobs=jobs,
                                             on_done=done))
        bar.close()
    finally:
        gradebook.close()
    return ClassRun(outcomes, status, time.monotonic() - started, url, run_id, unchanged,
                    kernels=_kernels_used(grader, cluster), refused=refused)


def _kernels_used(grader: Grader, cluster: str | None) -> str:
    """How kernels were started, in words, with each lab that could not fork and why."""
    if cluster:
        return ("forked from a pre-warmed kernel per slot on each worker that can fork (root, "
                "bubblewrap 0.8), fresh on the others" if grader.fork_kernels else
                "fresh kernels on the cluster's workers (forking switched off)")
    if grader.zygotes is None:
        return "fresh kernels (forking switched off)"
    fallbacks = grader.zygotes.fallbacks
    troubles = grader.zygotes.troubles()
    said = "forked from a pre-warmed kernel per job slot"
    if fallbacks:
        why = "; ".join(f"{lab}: {reason}" for lab, reason in sorted(fallbacks.items()))
        said += f", but fresh for {why}"
    return f"{said}; {troubles}" if troubles else said
