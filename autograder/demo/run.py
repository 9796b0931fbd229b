"""``coursekit demo``: release → collect → autograde → feedback → export on the demo class.

The class (see :mod:`.demo_class`) is generated from the current release of lab01_graphs
(else the manifest's first lab, or ``--lab``) into ``course/submitted/`` — only the demo students' entries are
replaced, anything else there is left alone and not graded. The demo shortens the limits so
the infinite-loop student costs seconds, not minutes, and prints the grade table next to what
each student is meant to show; it exits non-zero if any outcome is not the expected one.
"""
from __future__ import annotations

import time

from autograder.demo import demo_class
from autograder.isolation import sandbox
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
from autograder.pipeline.summary import grade_table
from autograder.publish.export import export
from autograder.publish.feedback import write_feedback
from autograder.publish.release import write_release
from coursekit.course import Course, Lab


def demo_limits(lab: Lab) -> Overrides:
    """Shorter limits than the lab's, so the infinite-loop student costs seconds: a quarter of
    the lab's cell timeout (30 s for the default 120 s; a lab whose setup is slow under the
    grading monitor, such as TensorFlow's import, states a longer timeout in course.toml).
    Less memory, so the memory bomb fails fast: 4 GiB below the lab's limit (2 GiB for the
    default 6 GiB; a lab whose kernel maps more, such as lab11's torch, TensorFlow and JAX
    together, states a larger limit in course.toml)."""
    return Overrides(cell_timeout_s=lab.cell_timeout_s / 4, time_limit_s=300,
                     memory_mb=max(2048, lab.memory_mb - 4096))


DEMO_LAB = "lab01_graphs"  # the lab the demo class hands in, when the manifest has it


def run_demo(course: Course, *, lab_id: str | None = None, jobs: int = 2,
             db_url: str | None = None, progress: bool = True, log=print) -> int:
    if not course.labs:
        log("coursekit demo: course/course.toml lists no labs yet")
        return 2
    if lab_id is None:
        lab_id = DEMO_LAB if DEMO_LAB in {lab.id for lab in course.labs} else course.labs[0].id
    lab = course.lab(lab_id)
    started = time.monotonic()
    log(f"1/5 release   {lab.id}: " + (", ".join(
        str(p.relative_to(course.root)) for p in write_release(course, lab)) or "up to date"))
    status = sandbox.probe(course)
    demo = demo_class.demo_lab(course, lab, sandboxed=status.sandboxed)
    students = demo_class.build_class(demo, course.submitted_dir)
    ids = [s.id for s in students]
    log(f"2/5 collect   {len(students)} demo students written to "
        f"{course.submitted_dir.relative_to(course.root)}/ (generated from the release)")
    log(f"3/5 autograde {len(students)} notebooks, {jobs} at a time")
    run = autograde(course, labs=[lab.id], students=ids, db_url=db_url, jobs=jobs,
                    overrides=demo_limits(lab), progress=progress, log=lambda m: log("    " + m))
    feedback = write_feedback(course, db_url, students=ids, labs=[lab.id])
    log(f"4/5 feedback  {len(feedback)} pages under "
        f"{course.feedback_dir.relative_to(course.root)}/<student>/{lab.id}/")
    exported = export(course, db_url, students=ids, labs=[lab.id])
    log(f"5/5 export    {exported[0].relative_to(course.root)} and {len(exported) - 1} "
        f"results.json under {course.exports_dir.relative_to(course.root)}/results/")
    expected = demo_class.expectations(demo)
    shows = {s.id: s.shows for s in students}
    marks, failures = {}, []
    for outcome in run.outcomes:
        problems = expected[outcome.student].problems(outcome)
        marks[(outcome.student, outcome.lab)] = ("✓ " if not problems else "✗ ") + \
            shows[outcome.student]
        failures += [f"{outcome.student}: {p}" for p in problems]
    log("")
    log(grade_table(sorted(run.outcomes, key=lambda o: o.student), expected=marks))
    log("")
    log(f"demo class graded in {run.seconds:.0f}s ({time.monotonic() - started:.0f}s in all); "
        f"gradebook {run.db_url}")
    if not run.status.sandboxed:
        log("\n" + run.status.warning)
    if failures:
        log("\nNOT as expected:\n  " + "\n  ".join(failures))
        return 1
    log(f"all {len(run.outcomes)} demo students got the outcome they were built to show ✓")
    return 0
