"""Benchmarks of the grading pipeline (``make bench``; figures are printed with ``-s``).

* harness cost per notebook: ``Grader.grade`` as ``coursekit autograde`` runs it (sandbox,
  monitor, assemble, kernel start, driving visible and hidden checks, judging, writing;
  exploration cells skipped) against its **floor**: the same cells, hidden checks included,
  in a kernel that is already started and has already imported the lab's frameworks (the
  setup imports the grading kernel preloads); goal ≤ 1.2×. Measured for fresh kernels and
  for kernels forked from a pre-warmed one (``autograder.isolation.forked``; the zygote's own start,
  once per job slot and lab, is printed apart), with the plain kernel start beside them,
  and the floor again under a profile function that does nothing (CPython 3.11's own cost of
  any profile function: the part of the monitor's cost no profile function can avoid), set
  for the whole notebook or only while its checks cells run;
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

from autograder.demo import demo_class
from autograder.isolation import forked, sandbox
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Grader, Overrides, prepare_lab
from autograder.pipeline.collect import Submission, SubmissionStatus
from autograder.pipeline.gradebook import load_outcomes, open_gradebook
from autograder.publish.release import write_release
from coursekit import course as manifest
from coursekit.notebook.cells import CHECKS, PLAIN, LabNotebook

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


# A profile function that does nothing, in C (``slice`` takes three arguments): what any
# profile function costs in CPython 3.11, which then runs every instruction unspecialized and
# makes a frame object for every call (NOTE [Cost] in coursekit/grading/monitor.py).
NO_OP_PROFILE = "import sys, threading\nsys.setprofile(slice)\nthreading.setprofile(slice)\n"
NO_PROFILE = "\nimport sys, threading\nsys.setprofile(None)\nthreading.setprofile(None)\n"


def _floor(source: LabNotebook, cwd: Path, env: dict,
           profiled: str = "") -> tuple[float, float]:
    """(the kernel start with the setup imports, the graded cells after it), in plain nbclient.

    The graded cells are every code cell of the instructor's source but the exploration
    cells: the setup, the answers, and the checks with their hidden tests, which run in the
    kernel against the reference (student mode). ``profiled``: with :data:`NO_OP_PROFILE`
    set after the imports (``"all"``), or only while a checks cell runs (``"checks"``: what
    a profile function set only while the grader drives a check would cost at least).
    """
    nb = nbformat.from_dict(source.nb)
    client = NotebookClient(nb, timeout=600, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}})
    started = time.perf_counter()
    with client.setup_kernel(env=env):
        client.execute_cell(nbformat.v4.new_code_cell(source.setup_imports), 0)
        if profiled == "all":
            client.execute_cell(nbformat.v4.new_code_cell(NO_OP_PROFILE), 0)
        imported = time.perf_counter()
        for cell in source.cells:
            if cell.role != PLAIN and nb.cells[cell.index].cell_type == "code":
                run = nb.cells[cell.index]
                if profiled == "checks" and cell.role == CHECKS:
                    run = nbformat.v4.new_code_cell(NO_OP_PROFILE + run.source + NO_PROFILE)
                client.execute_cell(run, cell.index)
        return imported - started, time.perf_counter() - imported


# Every lab of the course (COURSEKIT_BENCH_LABS=lab03_functions,lab07_tensorflow for some).
BENCH_LABS = [lab.id for lab in manifest.load_course(REPO).labs
              if lab.id in os.environ.get("COURSEKIT_BENCH_LABS", lab.id).split(",")]


@pytest.mark.benchmark
@pytest.mark.parametrize("lab_id", [None, *BENCH_LABS], ids=["fixture", *BENCH_LABS])
def test_harness_cost_per_notebook_against_its_floor(tmp_path, lab_id):
    course = _course(tmp_path, lab_id)
    lab = course.lab(lab_id) if lab_id else course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    nb = demo.notebook()
    folder = tmp_path / "sub"
    folder.mkdir()
    nbformat.write(nb, str(folder / lab.notebook))
    context = prepare_lab(course, lab)
    status = sandbox.probe(course)
    sub = Submission("bench", lab.id, SubmissionStatus.FOUND, folder, folder / lab.notebook, nb)
    env = {k: v for k, v in os.environ.items() if k != "COURSEKIT_MODE"}
    env.update(OMP_NUM_THREADS="1", MPLBACKEND="Agg", COURSEKIT_SEED="1", **course.kernel_env())
    fresh = Grader(course, status, Overrides(memory_mb=4096))
    forking = Grader(course, status, Overrides(memory_mb=4096), fork_kernels=True)

    async def graded(grader: Grader) -> float:
        began = time.perf_counter()
        outcome = await grader.grade(sub, context)
        assert outcome.score == pytest.approx(outcome.auto_max_score), outcome.reasons
        return time.perf_counter() - began

    async def run() -> dict[str, list[float]]:
        forking.zygotes = forked.ZygotePool(course, status, 1)
        times: dict[str, list[float]] = {"start": [], "floor": [], "fresh": [], "forked": [],
                                         "no-op": [], "no-op in checks": []}
        try:
            zygote_start = await graded(forking)   # the zygote's start: once per slot and lab
            for _ in range(REPEATS):  # interleaved, so drifting machine load hits all alike
                warm, cells = await asyncio.to_thread(_floor, context.source, folder, env)
                times["start"].append(warm)
                times["floor"].append(cells)
                for profiled, column in (("all", "no-op"), ("checks", "no-op in checks")):
                    _, cells = await asyncio.to_thread(_floor, context.source, folder, env,
                                                       profiled)
                    times[column].append(cells)
                times["fresh"].append(await graded(fresh))
                times["forked"].append(await graded(forking))
            times["zygote"] = [zygote_start]
            return times
        finally:
            await forking.zygotes.close()

    times = {name: statistics.median(values) for name, values in asyncio.run(run()).items()}
    why = forking.zygotes.fallbacks.get(lab.id)
    print(f"\n[{lab.id}] floor {times['floor']:.2f}s; fresh kernels {times['fresh']:.2f}s per "
          f"notebook → {times['fresh'] / times['floor']:.2f}×; forked kernels "
          f"{times['forked']:.2f}s → {times['forked'] / times['floor']:.2f}× (goal ≤ 1.2×)"
          + (f" [NOT FORKED: {why}]" if why else
             f"; forked/fresh {times['forked'] / times['fresh']:.2f}×; the slot's first "
             f"notebook, zygote start included, {times['zygote']:.2f}s")
          + f"; the floor under a C profile function that does nothing {times['no-op']:.2f}s "
          f"→ {times['no-op'] / times['floor']:.2f}× (CPython 3.11's own cost of any profile "
          f"function), set only while the checks cells run "
          f"{times['no-op in checks'] / times['floor']:.2f}×"
          + f"; plain kernel start with the lab's imports {times['start']:.2f}s (median of "
          f"{REPEATS}; sandbox: {status.kind})")


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
