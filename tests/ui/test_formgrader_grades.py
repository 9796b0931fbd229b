"""The formgrader in a real browser on a term with a due date: the submission list labels a
late hand-in with its penalty, its graded page shows the raw score, the penalty and the score
after it, Manage Assignments shows the due date coursekit reads, and "Download grades" gives the very file ``coursekit export --format canvas``
writes (or, while the roster cannot name a graded student, what to do about it).

A small class of its own (the fixture lab, two students graded for real in the sandbox by
``coursekit autograde``), the lab due 2027-03-01T23:59:00+01:00 with 10% per started day.
"""
from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import LAB, REPO, grade_ui, pipeline_module

pytestmark = pytest.mark.browser

COURSEKIT = [sys.executable, "-m", "coursekit.cli"]
NBGRADER = str(Path(sys.executable).parent / "nbgrader")
STAMPS = {"ann_on_time": "2027-03-01 20:00:00.000000 UTC",
          "ben_late": "2027-03-03 10:00:00.000000 UTC"}     # 1 day 11 h late: 20%


@pytest.fixture(scope="module")
def late_term(tmp_path_factory, artifacts):
    from autograder.demo import demo_class
    from coursekit.course import load_course
    fixtures = pipeline_module("pipeline_fixtures", "conftest.py")
    root = tmp_path_factory.mktemp("late_term") / "class"
    fixtures.make_fixture_course(root)
    shutil.copy(REPO / "course" / "jupyter_server_config.py", root / "course")
    with open(root / "course" / "course.toml", "a", encoding="utf-8") as toml:
        toml.write("due = 2027-03-01T23:59:00+01:00\nlate = { per_day = 0.1 }\n")
    course = load_course(root)
    demo = demo_class.demo_lab(course, course.labs[0])
    for student, stamp in STAMPS.items():
        demo_class._full(demo, course.submitted_dir / student)
        (course.submitted_dir / student / LAB / "timestamp.txt").write_text(stamp)
    limits = fixtures.TEST_LIMITS
    subprocess.run(COURSEKIT + ["autograde", "--root", str(root), "--no-progress",
                                "--cell-timeout", str(limits.cell_timeout_s),
                                "--time-limit", str(limits.time_limit_s)],
                   check=True, capture_output=True)
    with grade_ui(root, artifacts / "late-term-jupyterlab.log", root.parent / "home") as lab:
        yield root, lab


def test_formgrader_shows_lateness_and_downloads_the_lms_file(late_term, page, artifacts):
    root, lab = late_term
    lab.log_in(page)
    page.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
    page.wait_for_function("typeof models !== 'undefined' && models.loaded === true")
    late_label = page.locator("#main-table tr", has_text="ben_late").locator(
        ".coursekit-status", has_text="late −1.00")
    late_label.wait_for()
    assert "late by 1 day 11 h" in late_label.get_attribute("title")
    assert "10% per started day late" in late_label.get_attribute("title")
    on_time = page.locator("#main-table tr", has_text="ann_on_time")
    assert "needs manual grading" in on_time.inner_text()       # the written answer
    assert "late" not in on_time.inner_text().replace("ann_on_time", "")
    page.screenshot(path=artifacts / "late-term-submissions.png", full_page=True)

    page.goto(f"{lab.url}/formgrader/gradebook/{LAB}/{LAB}")
    link = page.locator("a.name-shown", has_text="ben_late")
    link.first.wait_for(state="attached")
    page.goto(lab.url + link.first.get_attribute("href"))
    said = " ".join(page.locator("#coursekit-lateness").inner_text().split())
    assert "late by 1 day 11 h" in said and "−1.00 of 5.00 points" in said
    assert "4.00 / 6 after the penalty" in said
    page.screenshot(path=artifacts / "late-term-graded-page.png", full_page=True)

    # Manage Assignments shows the due date coursekit reads (course.toml's, in UTC), the
    # policy in its tooltip, and says where to change it instead of nbgrader's pencil.
    page.goto(f"{lab.url}/formgrader/manage_assignments")
    row = page.locator("#main-table tr", has_text=LAB)
    row.locator(".coursekit-due-note").wait_for()
    assert row.locator(".duedate").inner_text().strip() == "2027-03-01 22:59:00 UTC"
    assert row.locator(".duedate").get_attribute("title") == "10% per started day late"
    assert "course/course.toml" in row.locator(".coursekit-due-note").get_attribute("title")
    assert row.locator(".edit .glyphicon-pencil").count() == 0
    page.screenshot(path=artifacts / "late-term-assignments.png", full_page=True)

    download = page.locator("#coursekit-download-canvas")   # in every list page's menu
    download.wait_for()
    refused = page.request.get(lab.url + download.get_attribute("href"))
    assert refused.status == 409
    assert "ann_on_time, ben_late" in refused.text() and "nbgrader db student import" \
        in refused.text()

    with open(root / "course" / "roster.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["id", "first_name", "last_name", "lms_user_id"],
                                      ["ann_on_time", "Ann", "On Time", "ann.o"],
                                      ["ben_late", "Ben", "=Late()", "ben.l"]])
    subprocess.run([NBGRADER, "db", "student", "import", "roster.csv"],
                   cwd=root / "course", check=True, capture_output=True)
    with page.expect_download() as started:
        download.click()
    downloaded = Path(started.value.path()).read_bytes()
    subprocess.run(COURSEKIT + ["export", "--format", "canvas", "--root", str(root)],
                   check=True, capture_output=True)
    assert downloaded == (root / "course" / "exports" / "canvas.csv").read_bytes()
    rows = list(csv.reader(downloaded.decode("utf-8").splitlines()))
    assert rows[2:] == [["'=Late(), Ben", "", "", "ben.l", "", "4"],   # by last name
                        ["On Time, Ann", "", "", "ann.o", "", "5"]]
