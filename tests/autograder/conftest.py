"""Shared fixtures of the pipeline tests: a fixture course, and one graded demo class.

Grading the demo class is the expensive part (about twenty real, sandboxed kernels), so it
happens once per test run: under pytest-xdist the first worker grades it while the others
wait on a file lock, then every worker reads the same gradebook.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from autograder.demo import demo_class
from coursekit import course as manifest
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
from autograder.publish.bundle import build_bundle
from autograder.publish.export import export
from autograder.publish.feedback import write_feedback
from autograder.pipeline.gradebook import load_outcomes, open_gradebook
from autograder.publish.release import write_release
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "course_fixture"
# Short limits keep the infinite-loop student cheap; the fixture lab's cells take milliseconds
# on an idle machine, and as many times longer on a busy one as machine_load measures.
TEST_LIMITS = Overrides(cell_timeout_s=scaled(10), time_limit_s=scaled(120), memory_mb=2048)


def make_fixture_course(target: Path) -> manifest.Course:
    """A copy of the fixture course at ``target``, with the real nbgrader config, released."""
    shutil.copytree(FIXTURE, target)
    shutil.copy(REPO / "course" / "nbgrader_config.py", target / "course" / "nbgrader_config.py")
    course = manifest.load_course(target)
    for lab in course.labs:
        write_release(course, lab)
    return course


BEFORE_ANY_REVEAL = date(2000, 1, 1)


def _build_unrevealed_bundle(root: Path) -> dict:
    built = build_bundle(manifest.load_course(REPO), root, today=BEFORE_ANY_REVEAL)
    return {"labs": list(built.labs), "held_back": built.held_back, "stubbed": built.stubbed}


@pytest.fixture
def unrevealed_build(once) -> tuple[Path, dict]:
    """This repository's student bundle with nothing revealed (read only: copy it to change
    it), and what the build reported. Built once per test run: a build records every lab's
    visible checks (about a minute), and every test of a bundle before any reveal needs the
    same one."""
    info = once("unrevealed-bundle-build", _build_unrevealed_bundle)
    return Path(info.pop("root")), info


@pytest.fixture
def unrevealed_bundle(unrevealed_build, tmp_path) -> tuple[Path, dict]:
    """A copy of :func:`unrevealed_build` in the test's own folder, which it may write to."""
    out = tmp_path / "students"
    shutil.copytree(unrevealed_build[0], out, symlinks=True)
    return out, unrevealed_build[1]


@dataclass
class ExchangeUsers:
    """An instructor and a student of a fixture course sharing nbgrader's exchange on this
    machine, each with a home of their own, as ``make grade-ui`` and ``make lab`` start them."""

    instructor: dict
    student: dict

    def run(self, args: list[str], cwd, env: dict) -> str:
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=scaled(600))
        assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr


NBGRADER = [sys.executable, "-m", "nbgrader"]


def exchange_users(course: manifest.Course, homes: Path) -> ExchangeUsers:
    student_config = course.course_dir / "student"
    student_config.mkdir()
    shutil.copy(REPO / "course" / "student" / "nbgrader_config.py", student_config)
    # An activated environment, as `make grade-ui` gives nbgrader (it runs `alembic` by name).
    base = {**{k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")},
            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    return ExchangeUsers(instructor={**base, "HOME": str(homes / "instructor-home")},
                         student={**base, "HOME": str(homes / "student-home"),
                                  "JUPYTER_CONFIG_PATH": str(student_config)})


@pytest.fixture
def test_limits() -> Overrides:
    return TEST_LIMITS


@pytest.fixture
def fixture_course(tmp_path) -> manifest.Course:
    return make_fixture_course(tmp_path / "course_tree")


@dataclass
class GradedClass:
    course: manifest.Course
    demo: demo_class.DemoLab
    db_url: str
    sandboxed: bool
    seconds: float

    def outcomes(self):
        gradebook = open_gradebook(self.db_url)
        try:
            return {o.student: o for o in load_outcomes(gradebook)}
        finally:
            gradebook.close()


def once_per_run(tmp_path_factory, name: str, build) -> dict:
    """Run ``build(folder) -> dict`` once per test run, even across xdist workers; every
    caller gets the folder's path and what ``build`` returned (JSON)."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's basetemp is a child of the run's folder, which they share.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root, done = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            done.write_text(json.dumps(build(root)))
        info = json.loads(done.read_text())
    info["root"] = str(root)
    return info


@pytest.fixture(scope="session")
def once(tmp_path_factory):
    """``once(name, build)``: :func:`once_per_run` for test modules."""
    return lambda name, build: once_per_run(tmp_path_factory, name, build)


def _grade_demo_class(root: Path) -> dict:
    course = make_fixture_course(root)
    demo = demo_class.demo_lab(course, course.labs[0])
    demo_class.build_class(demo, course.submitted_dir)
    run = autograde(course, jobs=2, overrides=TEST_LIMITS, progress=False,
                    log=lambda message: None)
    write_feedback(course)
    export(course)
    return {"sandboxed": run.status.sandboxed, "seconds": run.seconds}


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory) -> GradedClass:
    info = once_per_run(tmp_path_factory, "graded_class", _grade_demo_class)
    root = Path(info["root"])
    course = manifest.load_course(root)
    demo = demo_class.demo_lab(course, course.labs[0], sandboxed=info["sandboxed"])
    return GradedClass(course, demo, course.default_db_url, info["sandboxed"], info["seconds"])
