"""Grading refuses to start when its kernels could not read the grading code.

Kernels run as an unprivileged uid of their own (sandbox.py). A check package the instructor
keeps unreadable to others (a umask of 077, a folder copied from a private home) made every
check fail in the kernel with "was grading code replaced?", and every honest student got
zero. Now ``coursekit autograde`` says which file, grades nobody and stores nothing.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.demo import demo_class
from autograder.isolation import sandbox
from conftest import make_fixture_course
from machine_load import scaled

pytestmark = pytest.mark.slow


def test_a_check_package_the_kernels_cannot_read_stops_grading_before_anyone_is_graded(
        tmp_path):
    course = make_fixture_course(tmp_path / "tree")
    status = sandbox.probe(course)
    if not (status.sandboxed and status.enforcement.drop_uid):
        pytest.skip("kernels run as the grader's own user here: they read what it reads")
    demo = demo_class.demo_lab(course, course.labs[0])
    demo_class.build_class(demo, course.submitted_dir)
    (program,) = [p for p in course.check_path[0].rglob("*.py") if p.name != "__init__.py"][:1]
    program.chmod(0o600)
    done = subprocess.run([sys.executable, "-m", "coursekit.cli", "autograde", "--root",
                           str(course.root), "--no-progress"], capture_output=True, text=True,
                          timeout=scaled(300))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cannot read 1 file(s) of the grading code, e.g. {program}" in done.stderr
    assert "Nothing was graded" in done.stderr and "Traceback" not in done.stderr
    assert not (course.course_dir / "gradebook.db").exists()

    program.chmod(0o644)   # readable again: the same command grades
    assert sandbox.unreadable_by_kernels(course) == []
