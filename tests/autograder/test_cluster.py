"""``coursekit autograde --cluster``: grading on Dask workers, with real worker processes.

A ``LocalCluster`` of separate worker processes grades part of the demo class with the
outcomes a local run gets; this repository's own course (which has no check packages of its
own) grades its whole demo class on real ``dask scheduler`` and ``dask worker`` processes, a
worker killed mid-run, with every score the local ``coursekit demo`` run gave; a worker killed by PID in the middle of a notebook costs nothing
(its submission is graded on another worker, stored once, and the retry is recorded); an
unreachable scheduler and a scheduler that dies mid-run end with a clear message and exit 3,
keeping what was stored.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from autograder.demo import demo_class
from autograder.pipeline import gradebook as gb
from coursekit import course as manifest
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import FORKED
from autograder.demo.run import DEMO_LAB, demo_limits
from conftest import TEST_LIMITS, make_fixture_course
from coursekit.cli import main as cli
from machine_load import scaled
from test_demo_command import repo_demo  # noqa: F401 — the fixture, used by name

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                                        "(pip install -e '.[scale]')")
pytestmark = pytest.mark.slow
# eve loops until her cell times out: a long task to kill a worker in the middle of.
STUDENTS = ["ada_full", "ben_partial", "eve_loop", "fay_crash", "max_missing", "uma_reference",
            "vic_monitor"]
# The repository's demo class on a cluster: a student of each way a grading can end (full,
# partial, no answer, a loop cut by the clock, a crashed and an exhausted kernel, a hand-in
# that never reaches a kernel, a zip, a flagged one). All twenty-one took two minutes more.
REPO_DEMO_STUDENTS = ["ada_full", "ben_partial", "cleo_untouched", "eve_loop", "fay_crash",
                      "gus_memory", "lea_corrupt", "oli_zip", "vic_monitor"]


@pytest.fixture
def demo(tmp_path):
    course = make_fixture_course(tmp_path / "course_tree")
    lab = demo_class.demo_lab(course, course.labs[0])
    students = {s.id: s for s in demo_class.build_class(lab, course.submitted_dir)}
    return course, lab, students


def _rows(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(select(func.count()).select_from(
                gb.OutcomeRow.__table__)).scalar()
    finally:
        engine.dispose()


def _kill_a_busy_worker(address: str, stop: threading.Event, killed: list) -> None:
    """Once a worker has been grading for a while, SIGKILL its process."""
    client = distributed.Client(address, timeout=scaled(30), set_as_default=False)
    try:
        pids = client.run(os.getpid)
        busy_since: dict[str, float] = {}
        while not stop.is_set():
            for worker, keys in client.processing().items():
                keys = [key for key in keys if str(key).startswith("grade-")]
                if not keys:
                    busy_since.pop(worker, None)
                    continue
                started = busy_since.setdefault(worker, time.monotonic())
                if time.monotonic() - started > 2.0:
                    os.kill(pids[worker], signal.SIGKILL)
                    killed.append((worker, list(keys)))
                    return
            time.sleep(0.2)
    finally:
        client.close()


def test_a_cluster_grades_like_a_local_run_and_survives_a_killed_worker(demo):
    course, lab, students = demo
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        stop, killed = threading.Event(), []
        killer = threading.Thread(target=_kill_a_busy_worker,
                                  args=(cluster.scheduler_address, stop, killed))
        killer.start()
        logged: list[str] = []
        try:
            run = autograde(course, students=STUDENTS, overrides=TEST_LIMITS, progress=False,
                            cluster=cluster.scheduler_address, log=logged.append)
        finally:
            stop.set()
            killer.join()
    assert killed, "no worker was killed: the test did not test a fault"
    assert any(line.startswith(f"cluster: {cluster.scheduler_address}, 2 worker(s)") and
               "; dashboard: " in line for line in logged), logged
    outcomes = {o.student: o for o in run.outcomes}
    assert sorted(outcomes) == sorted(STUDENTS)
    for student in STUDENTS:
        assert students[student].expect(lab).problems(outcomes[student]) == [], outcomes[student]
    # Each worker keeps its pre-warmed kernels from one task to the next, and forks from them.
    assert all(o.sandbox.endswith(FORKED) for o in run.outcomes if o.status == "graded"), [
        o.sandbox for o in run.outcomes]
    retried = [o for o in run.outcomes if any("retried by the cluster" in r for r in o.reasons)]
    assert retried, (killed, [(o.student, o.reasons) for o in run.outcomes])
    # The summary names each worker's count and the retries.
    summary = [line for line in logged if line.startswith("cluster summary: ")]
    assert len(summary) == 1, logged
    counts = re.findall(r"tcp://[\d.:]+ \(pid \d+\) (\d+)", summary[0])
    assert sum(map(int, counts)) == len(STUDENTS), summary
    assert summary[0].endswith(f"; {len(retried)} submission(s) retried after a worker died")
    # Graded exactly once each: one row, one write in the history.
    assert _rows(course.default_db_url) == len(STUDENTS)
    gradebook = gb.open_gradebook(course.default_db_url)
    try:
        for student in STUDENTS:
            assert len(gb.history(gradebook, student=student)) == 1
    finally:
        gradebook.close()
    # The graded notebook came back from the worker to where a local run leaves it.
    assert (course.root / outcomes["ada_full"].notebook_file).is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_is_a_clear_error(demo, capsys):
    course, _, _ = demo
    address = f"tcp://127.0.0.1:{_free_port()}"
    code = cli(["autograde", "--root", str(course.root), "--no-progress", "--cluster", address,
                "--student", "ada_full"])
    assert code == 3
    err = capsys.readouterr().err
    assert f"cannot reach the Dask scheduler at {address}" in err and "Traceback" not in err
    assert _rows(course.default_db_url) == 0


def test_a_scheduler_that_dies_mid_run_keeps_what_was_graded(demo, tmp_path):
    course, _, _ = demo
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    scheduler = subprocess.Popen([os.path.join(bin_dir, "dask"), "scheduler", "--host",
                                  "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([os.path.join(bin_dir, "dask"), "worker", address, "--nthreads",
                               "1", "--nworkers", "1", "--no-dashboard"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    grader = None
    try:
        grader = subprocess.Popen(
            [sys.executable, "-m", "coursekit.cli", "autograde", "--root", str(course.root),
             "--no-progress", "--cluster", address, "--cell-timeout", "10",
             *[a for s in STUDENTS for a in ("--student", s)]],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while _stored(course) < 1:
            assert time.monotonic() < deadline and grader.poll() is None, grader.communicate()
            time.sleep(0.5)
        scheduler.send_signal(signal.SIGKILL)
        out, err = grader.communicate(timeout=scaled(300))
    finally:
        for process in (grader, worker, scheduler):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert grader.returncode == 3, (out, err)
    assert "went away" in err or "lost the Dask scheduler" in err, err
    assert "Traceback" not in err, err
    stored = _stored(course)
    assert 1 <= stored < len(STUDENTS)

    # The same command again, on a new cluster, grades only the rest.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        run = autograde(course, students=STUDENTS, overrides=TEST_LIMITS, progress=False,
                        only_changed=True, cluster=cluster.scheduler_address,
                        log=lambda message: None)
    assert len(run.unchanged) == stored and len(run.outcomes) == len(STUDENTS) - stored
    assert _stored(course) == len(STUDENTS)


def _stored(course) -> int:
    if not (course.course_dir / "gradebook.db").exists():
        return 0
    try:
        return _rows(course.default_db_url)
    except Exception:  # noqa: BLE001 — the grader is creating the tables right now
        return 0


# Nightly tier: the LocalCluster test above proves the same rule with separate worker processes.
@pytest.mark.nightly
def test_this_repositorys_demo_class_grades_on_real_dask_processes_as_locally(repo_demo,  # noqa: F811 — the imported fixture
                                                                             tmp_path):
    """The README's course, on a cluster as the README starts one: each student's score
    equals the local run's, though a worker process is killed in the middle."""
    shared = Path(repo_demo["root"])
    root = tmp_path / "tree"
    for part in ("course/course.toml", "course/nbgrader_config.py", "solutions", "notebooks",
                 "course/submitted"):
        source, target = shared / part, root / part
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    course = manifest.load_course(root)
    assert not course.check_path, "the repository's course has no check packages of its own"
    lab = course.lab(DEMO_LAB)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "2",
                               "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    stop, killed = threading.Event(), []
    try:
        _wait_for_workers(address, 2)
        killer = threading.Thread(target=_kill_a_busy_worker, args=(address, stop, killed))
        killer.start()
        try:
            run = autograde(course, labs=[DEMO_LAB], students=REPO_DEMO_STUDENTS,
                            overrides=demo_limits(lab), progress=False, cluster=address,
                            log=lambda message: None)
        finally:
            stop.set()
            killer.join()
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
    assert killed, "no worker was killed: the test did not test a fault"
    here = {o.student: o for o in run.outcomes}
    assert sorted(here) == sorted(REPO_DEMO_STUDENTS)
    assert not [o for o in run.outcomes if o.status == "error"], [
        (o.student, o.reasons) for o in run.outcomes if o.status == "error"]
    expected = {s.id: s.expect for s in demo_class.STUDENTS}
    demo = demo_class.demo_lab(course, lab)
    for student in REPO_DEMO_STUDENTS:
        local, expect = repo_demo["scores"][student], expected[student](demo)
        if expect.score is not None:   # a score the class was built to give: equal to the last
            assert here[student].score == pytest.approx(local, abs=1e-6), (student,
                                                                           here[student].reasons)
        else:   # a range (a loop cut by the clock): the range the local run met too
            assert expect.problems(here[student]) == [], (student, here[student].reasons)


def _wait_for_workers(address: str, count: int) -> None:
    """Until ``count`` workers have joined (however slowly a busy machine starts them)."""
    client = distributed.Client(address, timeout=300, set_as_default=False)
    try:
        client.wait_for_workers(count, timeout=600)
    finally:
        client.close()
