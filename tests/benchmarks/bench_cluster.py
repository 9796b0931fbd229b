"""Benchmarks of grading on a Dask cluster (``make bench``; figures printed with ``-s``).

* overhead: a ``LocalCluster`` of 2 single-threaded worker processes against ``--jobs 2`` on
  the same class of ``COURSEKIT_CLUSTER_CLASS`` (default 40) submissions of the fixture lab;
  goal ≤ 1.10× (10 % overhead);
* faults at volume: ``COURSEKIT_CLUSTER_VOLUME`` (default 1,000, as the issue asks; set it
  lower on a busy machine) submissions through the cluster with 2 worker processes killed by
  PID in the middle: graded, lost and duplicated counts, and notebooks per second.

Both print ratios and counts; nothing here is asserted on time.
"""
from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from autograder.demo import demo_class
from autograder.pipeline import gradebook as gb
from coursekit import course as manifest
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
from autograder.publish.release import write_release

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.benchmark

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "course_fixture"
CLASS = int(os.environ.get("COURSEKIT_CLUSTER_CLASS", "40"))
VOLUME = int(os.environ.get("COURSEKIT_CLUSTER_VOLUME", "1000"))
LIMITS = Overrides(cell_timeout_s=10, time_limit_s=120, memory_mb=2048)


def _class(tmp: Path, size: int) -> manifest.Course:
    """The fixture course with ``size`` honest and partial hand-ins (copies of two students)."""
    root = tmp / "tree"
    shutil.copytree(FIXTURE, root)
    shutil.copy(REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    course = manifest.load_course(root)
    write_release(course, course.labs[0])
    lab = demo_class.demo_lab(course, course.labs[0])
    models = tmp / "models"
    demo_class.build_class(lab, models)
    for index in range(size):
        model = ("ada_full", "ben_partial")[index % 2]
        shutil.copytree(models / model, course.submitted_dir / f"s{index:04d}")
    return course


def _rows(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(select(func.count()).select_from(
                gb.OutcomeRow.__table__)).scalar()
    finally:
        engine.dispose()


def test_cluster_overhead_against_local_jobs(tmp_path):
    course = _class(tmp_path, CLASS)
    quiet = {"progress": False, "log": lambda message: None, "overrides": LIMITS}
    started = time.monotonic()
    local = autograde(course, jobs=2, db_url=f"sqlite:///{tmp_path / 'local.db'}", **quiet)
    local_s = time.monotonic() - started
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        started = time.monotonic()
        remote = autograde(course, cluster=cluster.scheduler_address,
                           db_url=f"sqlite:///{tmp_path / 'cluster.db'}", **quiet)
        cluster_s = time.monotonic() - started
    scores = {(o.student, o.score) for o in local.outcomes}
    print(f"\n{CLASS} submissions: --jobs 2 {local_s:.1f} s, LocalCluster(2 workers × 1 thread) "
          f"{cluster_s:.1f} s: {cluster_s / local_s:.2f}× (goal ≤ 1.10×); same scores: "
          f"{scores == {(o.student, o.score) for o in remote.outcomes}}")


def test_volume_through_the_cluster_with_two_worker_kills(tmp_path):
    course = _class(tmp_path, VOLUME)
    url = f"sqlite:///{tmp_path / 'volume.db'}"
    kills: list[int] = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        client = distributed.Client(cluster.scheduler_address, set_as_default=False)
        done = threading.Event()

        def kill_twice():
            # At a third and at two thirds of the run, SIGKILL a worker busy with a submission.
            for share in (1 / 3, 2 / 3):
                while not done.is_set() and _stored(url) < VOLUME * share:
                    time.sleep(0.5)
                pids = client.run(os.getpid)
                busy = [w for w, keys in client.processing().items()
                        if any(str(k).startswith("grade-") for k in keys)]
                if done.is_set() or not busy:
                    return
                os.kill(pids[busy[0]], signal.SIGKILL)
                kills.append(pids[busy[0]])

        killer = threading.Thread(target=kill_twice)
        killer.start()
        started = time.monotonic()
        try:
            run = autograde(course, cluster=cluster.scheduler_address, db_url=url,
                            progress=False, log=lambda message: None, overrides=LIMITS)
        finally:
            done.set()
            killer.join()
            client.close()
        seconds = time.monotonic() - started
    gradebook = gb.open_gradebook(url)
    try:
        writes = len(gb.history(gradebook))
    finally:
        gradebook.close()
    retried = sum(any("retried by the cluster" in r for r in o.reasons) for o in run.outcomes)
    print(f"\n{VOLUME} submissions, {len(kills)} worker kills: {len(run.outcomes)} graded, "
          f"{VOLUME - _rows(url)} lost, {writes - _rows(url)} duplicated writes, {retried} "
          f"retried; {VOLUME / seconds:.2f} notebooks/s on 2 single-threaded workers")


def _stored(url: str) -> int:
    try:
        return _rows(url)
    except Exception:  # noqa: BLE001 — the tables are being created
        return 0
