"""Benchmarks of the grading pipeline (``make bench``; figures are printed with ``-s``).

* harness cost per notebook: ``Grader.grade`` (sandbox, monitor, assemble, driving the checks,
  judging, writing) against plain nbclient executing the same notebook as JupyterLab would
  (checks and references in the kernel), both running every cell; goal ≤ 1.2×;
* a class of 20 submissions of lab01, ``--jobs 2`` against ``--jobs 1``; goal ≥ 1.7× on two
  cores;
* a stress run of many gradings at once (``COURSEKIT_STRESS_RUNS``, default 200; the issue
  asks for 1,000) with zero failed gradings: no port collisions (IPC transport), no database
  locks (one writer).
"""
from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import demo_class, manifest, sandbox
from autograder.autograde import Grader, Overrides, autograde, prepare_lab
from autograder.collect import FOUND, Submission
from autograder.gradebook import load_outcomes, open_gradebook
from autograder.release import write_release

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "course_fixture"
REPEATS = int(os.environ.get("COURSEKIT_BENCH_REPEATS", "5"))
STRESS_RUNS = int(os.environ.get("COURSEKIT_STRESS_RUNS", "200"))


def _course(tmp: Path, lab_id: str | None) -> manifest.Course:
    """A private course tree: the fixture course, or the real course's ``lab_id``."""
    root = tmp / "tree"
    if lab_id is None:
        shutil.copytree(FIXTURE, root)
    else:
        (root / "course").mkdir(parents=True)
        shutil.copy(REPO / "course" / "course.toml", root / "course" / "course.toml")
        shutil.copytree(REPO / "solutions" / lab_id, root / "solutions" / lab_id)
        shutil.copytree(REPO / "tests" / "mutants", root / "tests" / "mutants")
    shutil.copy(REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    course = manifest.load_course(root)
    write_release(course, course.lab(lab_id) if lab_id else course.labs[0])
    return course


def _plain_nbclient(nb, cwd: Path, env: dict) -> float:
    copy = nbformat.from_dict(nb)
    started = time.perf_counter()
    NotebookClient(copy, timeout=600, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute(env=env)
    return time.perf_counter() - started


# Every lab of the course (COURSEKIT_BENCH_LABS=lab03_functions,lab07_tensorflow for some).
BENCH_LABS = [lab.id for lab in manifest.load_course(REPO).labs
              if lab.id in os.environ.get("COURSEKIT_BENCH_LABS", lab.id).split(",")]


@pytest.mark.benchmark
@pytest.mark.parametrize("lab_id", [None, *BENCH_LABS], ids=["fixture", *BENCH_LABS])
def test_harness_cost_per_notebook_against_plain_nbclient(tmp_path, lab_id):
    course = _course(tmp_path, lab_id)
    lab = course.lab(lab_id) if lab_id else course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    nb = demo.notebook()
    folder = tmp_path / "sub"
    folder.mkdir()
    nbformat.write(nb, str(folder / lab.notebook))
    context = prepare_lab(course, lab)
    status = sandbox.probe(course)
    grader = Grader(course, status, Overrides(memory_mb=4096), all_cells=True)
    sub = Submission("bench", lab.id, FOUND, folder, folder / lab.notebook, nb)
    # Plain nbclient runs the notebook as JupyterLab would: grade() checks in the kernel
    # against the reference there (student mode). The grader drives the same checks from
    # outside, with the reference in its own process, the sandbox and the monitor.
    env = {k: v for k, v in os.environ.items() if k != "COURSEKIT_MODE"}
    env.update(OMP_NUM_THREADS="1", MPLBACKEND="Agg", COURSEKIT_SEED="1", **course.kernel_env())
    plain, ours = [], []
    for _ in range(REPEATS):  # interleaved, so drifting machine load hits both alike
        plain.append(_plain_nbclient(nb, folder, env))
        started = time.perf_counter()
        outcome = asyncio.run(grader.grade(sub, context))
        ours.append(time.perf_counter() - started)
        assert outcome.score == pytest.approx(outcome.auto_max_score), outcome.reasons
    ratio = statistics.median(ours) / statistics.median(plain)
    print(f"\n[{lab.id}] plain nbclient {statistics.median(plain):.2f}s, coursekit grader "
          f"{statistics.median(ours):.2f}s per notebook (median of {REPEATS}; sandbox: "
          f"{status.kind}; every cell run) → {ratio:.2f}× (goal ≤ 1.2×)")
    grader.all_cells = False
    started = time.perf_counter()
    asyncio.run(grader.grade(sub, context))
    print(f"[{lab.id}] default grading (exploration cells skipped): "
          f"{time.perf_counter() - started:.2f}s")


def _class(course: manifest.Course, lab: manifest.Lab, n: int, folder: Path) -> None:
    nb = demo_class.demo_lab(course, lab).notebook()
    for index in range(n):
        target = folder / f"student{index:04d}" / lab.id
        target.mkdir(parents=True)
        nbformat.write(nb, str(target / lab.notebook))


@pytest.mark.benchmark
def test_class_of_twenty_jobs_two_against_one(tmp_path):
    lab_id = os.environ.get("COURSEKIT_BENCH_LAB", "lab01_graphs")
    course = _course(tmp_path, lab_id)
    lab = course.lab(lab_id)
    _class(course, lab, 20, course.submitted_dir)
    seconds = {}
    for jobs in (1, 2):
        url = f"sqlite:///{tmp_path / f'jobs{jobs}.db'}"
        run = autograde(course, labs=[lab_id], jobs=jobs, db_url=url, progress=False,
                        log=lambda m: None)
        assert len(run.outcomes) == 20
        assert all(o.score == pytest.approx(o.auto_max_score) for o in run.outcomes)
        seconds[jobs] = run.seconds
    speedup = seconds[1] / seconds[2]
    print(f"\n[{lab_id}] 20 submissions: --jobs 1 {seconds[1]:.1f}s, --jobs 2 {seconds[2]:.1f}s "
          f"→ {speedup:.2f}× (goal ≥ 1.7× on {os.cpu_count()} cores)")


@pytest.mark.benchmark
def test_stress_many_parallel_gradings_fail_none(tmp_path):
    course = _course(tmp_path, None)
    lab = course.labs[0]
    _class(course, lab, STRESS_RUNS, course.submitted_dir)
    jobs = int(os.environ.get("COURSEKIT_STRESS_JOBS", "4"))
    run = autograde(course, jobs=jobs, progress=True, log=lambda m: None)
    gradebook = open_gradebook(course.default_db_url)
    try:
        stored = load_outcomes(gradebook)
    finally:
        gradebook.close()
    failed = [o for o in run.outcomes if o.score != pytest.approx(o.auto_max_score)]
    print(f"\n{STRESS_RUNS} gradings, {jobs} at a time, in {run.seconds:.0f}s "
          f"({run.seconds / STRESS_RUNS:.2f}s each): {len(failed)} failed, "
          f"{len(stored)} stored")
    assert not failed, [(o.student, o.reasons) for o in failed[:5]]
    assert len(stored) == STRESS_RUNS
