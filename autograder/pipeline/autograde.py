"""Autograde: grade a class from one long-lived process.

Per submission, :class:`autograder.pipeline.grader.Grader` (assemble → run under the monitor
→ judge → annotate); this module collects the class, skips what is unchanged since the last
run, grades the rest and stores each outcome as it is done. Kernels of up to ``jobs`` submissions run at the same time (one
asyncio loop drives them all; each kernel is its own sandboxed process), while this process
judges the payloads and is the only writer of the gradebook. Whatever goes wrong with one
submission becomes that submission's recorded outcome; the class run goes on.

Ordering rules that matter:

* the executed notebook is written to ``course/autograded/<student>/<lab>/`` after its kernel
  has stopped (the kernel can write to that folder, so it must not get the last word), and
  nothing there is deleted when a kernel dies;
* gradebook writes happen as each submission finishes, so an interrupted run keeps what was
  graded.
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.isolation import forked, graded_folder, sandbox
from autograder.pipeline import gradebook as gb
from autograder.pipeline.collect import Submission, collect, student_entries, submitted_at
from autograder.pipeline.gradebook import Outcome, OutcomeStatus
from autograder.pipeline.grader import Grader, LabContext, Overrides, prepare_lab
from coursekit.course import Course, Lab, ManifestError
from coursekit.notebook import monitoring

NOT_ON_ROSTER = ("flagged for a TA: {student} is not on the course's roster (the gradebook's "
                 "students with a name or email); check who handed this in")
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
    for name, blocks in graded_folder.handed_in_files(sub.folder, sub.path):
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


async def grade_all(grader: Grader, submissions: list[Submission],
                    contexts: dict[str, LabContext], *, jobs: int, on_done=None) -> list[Outcome]:
    """Grade ``submissions`` with at most ``jobs`` kernels at a time, in one event loop;
    ``on_done`` stores each outcome as it is made and returns it as stored.

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
                outcome = on_done(outcome)
            except Exception as error:  # noqa: BLE001 — gather would drop the whole class
                from coursekit.notebook.safe_text import failure
                outcome = outcome.with_reason(f"the grader failed after grading this "
                                              f"submission ({failure(error)})",
                                              status=OutcomeStatus.ERROR)
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

        def done(outcome: Outcome) -> Outcome:
            """The class run's part of ``outcome`` (its run, the hand-in's hash and time, the
            roster), stored; returns the outcome as stored."""
            from coursekit.notebook.safe_text import failure, printable
            outcome = dataclasses.replace(
                outcome, reasons=tuple(printable(reason) for reason in outcome.reasons),
                run_id=run_id, submission_hash=hashes.get((outcome.student, outcome.lab), ""),
                submitted_at=submitted_at(submitted_dir or course.submitted_dir,
                                          outcome.student, outcome.lab))
            if on_roster is not None and outcome.student not in on_roster:
                outcome = outcome.with_reason(
                    NOT_ON_ROSTER.format(student=outcome.student), flagged=True,
                    status=(OutcomeStatus.FLAGGED if outcome.status == OutcomeStatus.GRADED
                            else outcome.status))
            try:
                gb.record(gradebook, outcome)
            except Exception as error:  # noqa: BLE001 — store at least the outcome and why
                outcome = outcome.with_reason(
                    f"the grade could not be stored ({failure(error)}): a problem of the "
                    f"grader; regrade with `coursekit autograde --student {outcome.student} "
                    f"--lab {outcome.lab}`", status=OutcomeStatus.ERROR,
                    cells=tuple(dataclasses.replace(cell, checks=[], note="",
                                                    score=None if cell.score is None else 0.0)
                                for cell in outcome.cells))
                try:
                    gb.record(gradebook, outcome)
                except Exception as again:  # noqa: BLE001 — the class run goes on
                    log(f"coursekit: {outcome.student}/{outcome.lab} could not be stored in "
                        f"the gradebook: {failure(again)}")
            bar.set_postfix_str(f"{outcome.student}/{outcome.lab}", refresh=False)
            bar.update(1)
            return outcome

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
