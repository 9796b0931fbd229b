"""The formgrader's lists, messages and pages without a browser: coursekit's API
(autograder/ui/formgrader.py) on the graded demo class plus a lab nobody handed in, called as
the formgrader's handlers call it (one instance per request). These hold where Chromium is
missing; test_browser.py clicks the same in a real one.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from autograder.demo import demo_class

from .conftest import LAB, NOBODYS_LAB, add_a_lab_nobody_handed_in, graded_class_copy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def class_root(tmp_path_factory) -> Path:
    root = graded_class_copy(tmp_path_factory, "lists")
    add_a_lab_nobody_handed_in(root)
    return root


@pytest.fixture
def api(class_root, monkeypatch):
    """A new API on the class, as each formgrader request gets one."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.ui.formgrader import CoursekitAPI
    # as `make grade-ui` runs it: nbgrader runs `alembic` by name
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep
                       + os.environ["PATH"])
    config = PyFileConfigLoader("nbgrader_config.py",
                                path=str(class_root / "course")).load_config()
    return lambda: CoursekitAPI(CourseDirectory(config=config), Authenticator(config=config),
                                config=config)


def test_each_lab_counts_and_lists_its_own_hand_ins(api):
    counts = {a["name"]: a["num_submissions"] for a in api().get_assignments()}
    assert counts == {LAB: len(demo_class.STUDENTS), NOBODYS_LAB: 0}
    assert api().get_submissions(NOBODYS_LAB) == []
    rows = api().get_submissions(LAB)
    assert len(rows) == len(demo_class.STUDENTS)
    assert all(row["autograded"] for row in rows)


def test_each_submission_carries_what_coursekit_found(api):
    rows = {row["student"]: row for row in api().get_submissions(LAB)}
    found = {student: row["coursekit"] for student, row in rows.items()}
    assert {s for s, f in found.items() if f["flagged"]} == {"uma_reference", "vic_monitor"}
    assert any("gc.get_objects" in reason for reason in found["vic_monitor"]["reasons"])
    assert (found["max_missing"]["status"], found["lea_corrupt"]["status"]) == ("missing",
                                                                                "corrupt")
    # nbgrader's needs_manual_grade is set by a flag too; only a written answer counts here
    assert rows["vic_monitor"]["needs_manual_grade"]
    assert found["ada_full"]["written_to_grade"]
    assert not found["max_missing"]["written_to_grade"]
    assert api().get_submission(LAB, "vic_monitor")["coursekit"]["flagged"]


def test_a_newer_hand_in_from_the_exchange_needs_autograding_again(api, class_root):
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc
    stamp = class_root / "course" / "submitted" / "ada_full" / LAB / "timestamp.txt"
    graded_at, newer = "2026-01-05 10:00:00.000000 UTC", "2026-01-06 09:30:00.000000 UTC"
    assert stamp.parent.is_dir()    # the demo class hands in as the exchange collects
    try:
        stamp.write_text(graded_at)
        with Gradebook(f"sqlite:///{class_root}/course/gradebook.db",
                       "deep-learning-software") as gradebook:
            gradebook.update_or_create_submission(LAB, "ada_full", timestamp=graded_at)
        assert "ada_full" in api().get_autograded_students(LAB)
        stamp.write_text(newer)   # Collect brought a newer hand-in
        assert "ada_full" not in api().get_autograded_students(LAB)
        row = api().get_submission(LAB, "ada_full")
        assert not row["autograded"] and row["timestamp"] == parse_utc(newer).isoformat()
    finally:
        stamp.unlink(missing_ok=True)
        with Gradebook(f"sqlite:///{class_root}/course/gradebook.db",
                       "deep-learning-software") as gradebook:
            gradebook.find_submission(LAB, "ada_full").timestamp = None
            gradebook.db.commit()


def test_release_feedback_that_reaches_nobody_fails_and_says_why(api):
    one = api().release_feedback(LAB, "ada_full")
    assert not one["success"]
    assert "not handed in through the exchange" in " ".join(one["error"].split())
    assert "ada_full" in one["error"]
    every = api().release_feedback(LAB)
    assert not every["success"] and "max_missing" in every["error"]
    nobody = api().release_feedback(NOBODYS_LAB)
    assert not nobody["success"] and "no feedback for labfy" in nobody["error"]


def test_the_formgraders_own_templates_render(api):
    """coursekit's templates, in the formgrader's template environment: the page of a hand-in
    without a notebook (nbgrader's own imports a file that does not exist), Manage
    Submissions with coursekit's instructions, and coursekit.js on every page."""
    from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
    from nbgrader.server_extensions.formgrader import handlers

    from autograder.ui.formgrader import STATIC, TEMPLATES
    nbgrader = FileSystemLoader(handlers.template_path)
    env = Environment(loader=ChoiceLoader([FileSystemLoader(str(TEMPLATES)), nbgrader,
                                           PrefixLoader({"nbgrader": nbgrader})]))
    resources = {"base_url": "", "notebook_id": LAB, "assignment_id": LAB, "index": 11,
                 "total": 22, "submission_id": "x", "student": "lea_corrupt",
                 "notebook_path": "", "filename": "autograded/lea_corrupt/labfx/labfx.ipynb"}
    page = env.get_template("formgrade_404.tpl").render(
        resources=resources, outcome=api().outcome("lea_corrupt", LAB))
    assert "graded this hand-in as <b>corrupt</b>" in page and "not valid JSON" in page
    listing = env.get_template("manage_submissions.tpl").render(
        base_url="", assignment_id=LAB, course_dir="/course")
    assert "coursekit autograde" in listing and "nbgrader autograde" not in listing
    assert "/formgrader/coursekit/coursekit.js" in listing
    assert (STATIC / "coursekit.js").is_file()


def test_mathjax_is_served_with_a_configuration_and_fonts_the_server_ships():
    import jupyter_server_mathjax

    from autograder.ui.formgrader import MATHJAX
    static = Path(jupyter_server_mathjax.__file__).parent / "static"
    for config in MATHJAX.split("config=")[1].split(","):
        assert (static / "config" / f"{config}.js").is_file(), config
    # coursekit_formgrade's MathJax configuration asks for these fonts
    assert (static / "jax" / "output" / "HTML-CSS" / "fonts" / "STIX-Web").is_dir()
