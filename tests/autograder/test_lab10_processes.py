"""lab10_distributed graded for real (release, sandboxed kernels with the grading monitor, the
SQLite gradebook): the ranks a check forks in the kernel stay watched and never outlive it.

* the solution keeps full marks: gloo's loopback works in the sandbox;
* a ring all-reduce that calls ``dist.all_reduce`` inside a rank (a forked child of the
  kernel) is seen by the inherited monitor and loses the exercise's points;
* student code that forks a process of its own is refused and flagged for a TA;
* a two-stage step that deadlocks (both ranks wait to receive) loses that exercise only;
* afterwards no process of the class run is left: no kernel, no rank.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from autograder.demo import demo_class
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
LAB = "lab10_distributed"

pytestmark = pytest.mark.slow

RING_VIA_ALL_REDUCE = '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    dist.all_reduce(tensor)
'''

DEADLOCK = '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """Both ranks first wait for the other: nobody ever sends."""
    other = 1 - dist.get_rank()
    dist.recv(torch.empty(hidden_shape, dtype=torch.float64), src=other)
    return None
'''

FORKS = '''import os
import multiprocessing

for start in (os.fork, lambda: multiprocessing.get_context("fork").Process(target=print).start()):
    try:
        pid = start()
        if pid == 0:
            os._exit(0)
        print("started a process")
    except RuntimeError as error:
        print("refused:", error)
'''


def _processes_under(root: Path) -> list[str]:
    """Command lines of running processes that name a path under ``root`` (kernels and the
    ranks forked from them carry the kernel's connection file there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(root) in cmdline:
            found.append(f"{entry.name}: {cmdline[:200]}")
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab10")
    (root / "course").mkdir()
    for name in ("course.toml", "nbgrader_config.py"):
        shutil.copy(REPO / "course" / name, root / "course" / name)
    shutil.copytree(REPO / "solutions" / LAB, root / "solutions" / LAB)
    course = manifest.load_course(root)
    lab = course.lab(LAB)
    from autograder.publish.release import write_release
    write_release(course, lab)
    demo = demo_class.demo_lab(course, lab)
    hands = {
        "honest": demo.notebook(),
        "ring_cheat": demo.notebook({"ring_all_reduce": RING_VIA_ALL_REDUCE}),
        "deadlock": demo.notebook({"two_stage": DEADLOCK}),
        "forks": demo_class._insert_after(demo.notebook(), "setup", FORKS),
    }
    for student, nb in hands.items():
        demo_class._write(nb, course.submitted_dir / student / LAB, lab.notebook)
    runtime_root = root / "rt"
    runtime_root.mkdir()
    previous, tempfile.tempdir = tempfile.tempdir, str(runtime_root)  # kernels' runtime folders
    try:
        run = autograde(course, labs=[LAB], jobs=2, overrides=Overrides(cell_timeout_s=90),
                        progress=False, log=lambda message: None)
    finally:
        tempfile.tempdir = previous
    return {o.student: o for o in run.outcomes}, demo, runtime_root


def _cell(outcome, gid):
    (cell,) = [c for c in outcome.cells if c.grade_id == f"{gid}_check"]
    return cell


def test_solution_keeps_full_marks_in_the_sandbox(graded):
    outcomes, demo, _ = graded
    honest = outcomes["honest"]
    assert honest.score == pytest.approx(demo.max_score), honest.reasons
    assert not honest.flagged, honest.reasons


def test_a_collective_called_inside_a_rank_is_seen_and_charged(graded):
    outcomes, demo, _ = graded
    cheat = outcomes["ring_cheat"]
    ring = _cell(cheat, "ring_all_reduce")
    assert ring.score == 0.0
    assert any("torch.distributed.all_reduce" in check.message for check in ring.checks)
    assert cheat.score == pytest.approx(demo.max_score - ring.max_score)


def test_student_code_that_forks_is_refused_and_flagged(graded):
    outcomes, demo, _ = graded
    forks = outcomes["forks"]
    assert forks.flagged
    assert any("os.fork from student code" in reason for reason in forks.reasons), forks.reasons
    assert forks.score == pytest.approx(demo.max_score)  # the honest answers keep their points


def test_a_deadlock_costs_only_its_exercise(graded):
    outcomes, demo, _ = graded
    deadlock = outcomes["deadlock"]
    cell = _cell(deadlock, "two_stage")
    assert cell.score == 0.0
    assert deadlock.score == pytest.approx(demo.max_score - cell.max_score)


def test_no_process_is_left_behind(graded):
    _, _, runtime_root = graded
    assert _processes_under(runtime_root) == []
