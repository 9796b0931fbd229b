"""The assignment exchange on one machine, end to end: nbgrader's own exchange apps (what the
formgrader's Release and Collect buttons and a student's Assignment List run) around
coursekit's commands, on the course's real configuration (``course/nbgrader_config.py`` for
the instructor, ``course/student/nbgrader_config.py`` for the student).

release → the student fetches, answers, submits → collect → ``coursekit autograde`` →
``coursekit feedback`` → release feedback → the student fetches the page with the score.
nbgrader names a student by the account they run under, so the student here is this process's
own user.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.demo import demo_class
from coursekit.course import REPO_ROOT
from conftest import NBGRADER, TEST_LIMITS, exchange_users, make_fixture_course
from machine_load import scaled
from nbgrader.api import Gradebook
from nbgrader.utils import get_username, parse_utc

pytestmark = pytest.mark.slow
LAB = "labfx"


def _run(args: list[str], cwd, env) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=scaled(600))
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_release_fetch_submit_collect_grade_and_feedback_through_the_exchange(tmp_path):
    course = make_fixture_course(tmp_path / "tree")
    users = exchange_users(course, tmp_path)
    instructor, student, nbgrader = users.instructor, users.student, NBGRADER
    coursekit = [sys.executable, "-m", "coursekit.cli"]
    desk = tmp_path / "student-desk"
    desk.mkdir()
    me = get_username()

    # Release (the formgrader's button) puts coursekit's student notebook in the exchange.
    _run(nbgrader + ["release_assignment", LAB], course.course_dir, instructor)
    # The student fetches it (Assignment List), answers every exercise and submits.
    _run(nbgrader + ["fetch_assignment", LAB], desk, student)
    fetched = desk / LAB / f"{LAB}.ipynb"
    released = nbformat.read(str(course.release_notebook(LAB)), as_version=4)
    assert nbformat.read(str(fetched), as_version=4).cells == released.cells
    demo = demo_class.demo_lab(course, course.lab(LAB))
    nbformat.write(demo.notebook(), str(fetched))
    _run(nbgrader + ["submit", LAB], desk, student)

    # Collect, then coursekit grades what came through the exchange.
    _run(nbgrader + ["collect", LAB], course.course_dir, instructor)
    collected = course.submitted_dir / me / LAB
    assert (collected / f"{LAB}.ipynb").is_file() and (collected / "timestamp.txt").is_file()
    limits = ["--cell-timeout", str(TEST_LIMITS.cell_timeout_s),
              "--memory-mb", str(TEST_LIMITS.memory_mb)]
    graded = _run(coursekit + ["autograde", "--root", str(course.root), "--no-progress",
                               *limits], course.root, instructor)
    assert "graded 1 notebook(s)" in graded, graded
    # The gradebook keeps when the exchange says it was handed in (nbgrader's lateness).
    with Gradebook(course.default_db_url, "deep-learning-software") as gradebook:
        assert gradebook.find_submission(LAB, me).timestamp == \
            parse_utc((collected / "timestamp.txt").read_text().strip())

    # Feedback: coursekit writes the page beside the exchange's files; nbgrader hands it back.
    _run(coursekit + ["feedback", "--root", str(course.root)], course.root, instructor)
    page = course.feedback_dir / me / LAB / f"{LAB}.html"
    assert (page.parent / "timestamp.txt").read_text() == \
        (collected / "timestamp.txt").read_text()
    _run(nbgrader + ["release_feedback", LAB], course.course_dir, instructor)
    _run(nbgrader + ["fetch_feedback", LAB], desk, student)
    pages = list((desk / LAB / "feedback").glob(f"*/{LAB}.html"))
    assert len(pages) == 1, list((desk / LAB).rglob("*"))
    text = pages[0].read_text(encoding="utf-8")
    assert text == page.read_text(encoding="utf-8")
    auto = demo.max_score
    assert f"Autograded: <b>{auto:.2f} / {auto:g}</b> points" in text, text[:2000]


def test_assignment_list_fetches_and_submits_in_the_folder_jupyterlab_serves(tmp_path,
                                                                             monkeypatch):
    """``make lab`` starts JupyterLab in the course tree and serves ``work/``: Assignment
    List's Fetch lands in ``work/`` (recorded as the release for ``coursekit fetch``), Submit
    refuses a notebook still as released, and hands in the one the student saved there."""
    from coursekit.student.fetch import fetch
    from coursekit.student.server import StudentAssignmentList
    course = make_fixture_course(tmp_path / "tree")
    shutil.copytree(REPO_ROOT / "course" / "student", course.course_dir / "student")
    base = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    _run([sys.executable, "-m", "nbgrader", "release_assignment", LAB], course.course_dir,
         {**base, "HOME": str(tmp_path / "instructor-home"),
          "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]})
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(course.course_dir / "student"))
    monkeypatch.setenv("HOME", str(tmp_path / "student-home"))
    monkeypatch.chdir(course.root)               # where `make lab` starts the server
    work = course.root / "work"
    work.mkdir()
    manager = StudentAssignmentList()
    manager.root_dir = str(work)                 # `jupyter lab work/`

    assert manager.fetch_assignment("deep-learning-software", LAB)["success"]
    notebook = work / LAB / f"{LAB}.ipynb"
    assert notebook.is_file() and not (course.root / LAB).exists()
    listed = manager.list_assignments("deep-learning-software")["value"]
    assert [a["path"] for a in listed if a["status"] == "fetched"] == [LAB]
    done, _ = fetch(course, [], every=True)
    assert not (done[0].copied or done[0].updated or done[0].kept), done[0].report()

    refused = manager.submit_assignment("deep-learning-software", LAB)
    assert not refused["success"] and "still the lab as it was released" in refused["value"]

    demo = demo_class.demo_lab(course, course.lab(LAB))
    nbformat.write(demo.notebook(), str(notebook))
    assert manager.submit_assignment("deep-learning-software", LAB)["success"]
    inbound = list((course.course_dir / "exchange").glob(f"*/inbound/*+{LAB}+*/{LAB}.ipynb"))
    assert len(inbound) == 1
    assert inbound[0].read_bytes() == notebook.read_bytes()
