"""Deadlines, late policy and extensions, on a class graded for real (sandboxed kernels, the
real gradebook), with the exchange's timestamps written as nbgrader's exchange writes them.

The lab is due 2027-03-01T23:59:00+01:00 (22:59:00 UTC), 10% of the points per started day
late, at most 50%. The fixture lab has 6 points: 5 autograded, 1 for a written answer (not
graded by hand here, so a full hand-in's raw score is 5)
"""
from __future__ import annotations

import csv
import json
import subprocess
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from autograder.demo import demo_class
from autograder.pipeline import gradebook as gb
from autograder.publish.extensions import grant, load_extensions
from autograder.publish.lateness import LATE, NOT_HANDED_IN, NOT_KNOWN, ON_TIME, lateness
from coursekit import course as manifest
from coursekit.cli import main as cli
from coursekit.course import LatePolicy, ManifestError
from conftest import TEST_LIMITS, make_fixture_course

pytestmark = pytest.mark.slow
LIMITS = ["--cell-timeout", str(TEST_LIMITS.cell_timeout_s),
          "--time-limit", str(TEST_LIMITS.time_limit_s), "--no-progress"]
DUE = 'due = 2027-03-01T23:59:00+01:00\nlate = { per_day = 0.1, cap = 0.5 }\n'
# student -> (how they hand in, the exchange's timestamp.txt or None for a copied hand-in)
CLASS = {
    "ada_early": (demo_class._full, "2027-03-01 22:58:59.999999 UTC"),
    "bo_at_due": (demo_class._full, "2027-03-01 22:59:00.000000 UTC"),
    "cy_late": (demo_class._full, "2027-03-02 22:59:00.500000 UTC"),      # 1 day 0.5 s
    "di_extended": (demo_class._full, "2027-03-02 22:59:00.500000 UTC"),  # 2 days' extension
    "fay_copied": (demo_class._full, None),
    "gus_very_late": (demo_class._partial, "2027-03-31 10:00:00.000000 UTC"),
}


def _with_due(root: Path, text: str = DUE) -> None:
    toml = root / "course" / "course.toml"
    toml.write_text(toml.read_text() + text)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term") / "course_tree"
    course = make_fixture_course(root)
    _with_due(root)
    course = manifest.load_course(root)
    demo = demo_class.demo_lab(course, course.labs[0])
    for student, (build, stamp) in CLASS.items():
        folder = course.submitted_dir / student
        build(demo, folder)
        if stamp is not None:
            (folder / "labfx" / "timestamp.txt").write_text(stamp)
    grant(course, "di_extended", "labfx", days=2, reason='doctor\'s "note", line\nbreak')
    assert cli(["autograde", "--jobs", "2", *LIMITS, "--root", str(root)]) == 0
    assert cli(["feedback", "--root", str(root)]) == 0
    assert cli(["export", "--root", str(root)]) == 0
    return course


def _rows(course) -> dict[str, dict]:
    with open(course.exports_dir / "grades.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def _stamps(course) -> dict[str, datetime | None]:
    gradebook = gb.open_gradebook(course.default_db_url)
    try:
        return {o.student: o.submitted_at for o in gb.load_outcomes(gradebook)}
    finally:
        gradebook.close()


def test_penalty_is_the_policys_exact_share_of_the_raw_points_beside_them(term):
    rows = _rows(term)
    assert rows["ada_early"]["lab_total"] == "5.0000"
    for student in ("ada_early", "bo_at_due", "di_extended", "fay_copied"):
        assert (rows[student]["late_penalty"], rows[student]["lab_final"]) == ("0.0000",
                                                                              "5.0000"), student
    assert rows["cy_late"]["lab_total"] == "5.0000"           # the raw score stays
    assert rows["cy_late"]["late_penalty"] == "1.0000"        # 2 started days: 20% of 5
    assert rows["cy_late"]["lab_final"] == "4.0000"
    assert rows["cy_late"]["lateness"].startswith("late by 1 day 1 s (handed in 2027-03-02 "
                                                  "22:59:00 UTC, due 2027-03-01 22:59:00 UTC)")
    gus = rows["gus_very_late"]
    assert (gus["lab_total"], gus["late_penalty"]) == ("4.0000", "2.0000")   # the 50% cap
    assert rows["bo_at_due"]["lateness"].startswith("on time")
    assert "with an extension of 2 days" in rows["di_extended"]["lateness"]
    assert rows["fay_copied"]["lateness"].startswith("lateness not known")
    result = json.loads((term.exports_dir / "results" / "cy_late" / "labfx"
                         / "results.json").read_text())
    assert result["score"] == 4.0
    assert result["extra_data"]["raw_score"] == 5.0
    assert result["extra_data"]["late_penalty"] == 1.0


def test_feedback_says_how_late_and_the_penalty_beside_the_raw_score(term):
    page = (term.feedback_dir / "cy_late" / "labfx" / "labfx.html").read_text()
    assert "Autograded: <b>5.00 / 5</b>" in page
    assert "late by 1 day 1 s" in page and "−1.00</b> of 5.00 points" in page
    assert "score after the penalty: <b>4.00 / 6</b>" in page
    assert "10% per started day late, at most 50%" in page
    on_time = (term.feedback_dir / "ada_early" / "labfx" / "labfx.html").read_text()
    assert "on time (handed in 2027-03-01 22:58:59 UTC" in on_time and "penalty" not in on_time
    extended = (term.feedback_dir / "di_extended" / "labfx" / "labfx.html").read_text()
    assert "extension of 2 days" in extended and "doctor" not in extended   # the TA's note


def test_exchange_timestamps_survive_a_regrade(term):
    before = _stamps(term)
    assert before["cy_late"] == datetime(2027, 3, 2, 22, 59, 0, 500000)
    assert before["fay_copied"] is None
    assert cli(["autograde", "--regrade", "--student", "cy_late", "--student", "fay_copied",
                *LIMITS, "--root", str(term.root)]) == 0
    assert _stamps(term) == before


def test_an_extension_counts_at_once_and_a_later_one_replaces_it(term, tmp_path):
    extensions = term.course_dir / "extensions.toml"
    before = extensions.read_text()
    try:
        _extend_cy_late(term, tmp_path)
    finally:
        extensions.write_text(before)   # the other tests' class keeps its extensions


def _extend_cy_late(term, tmp_path):
    out = ["--root", str(term.root), "--out", str(tmp_path)]
    assert cli(["extend", "labfx", "cy_late", "--days", "1", "--root", str(term.root)]) == 0
    assert cli(["export", *out]) == 0
    rows = list(csv.DictReader(open(tmp_path / "grades.csv", newline="", encoding="utf-8")))
    cy = next(r for r in rows if r["student"] == "cy_late")
    assert cy["late_penalty"] == "0.5000"       # still 0.5 s late: one started day
    assert cli(["extend", "labfx", "cy_late", "--days", "1", "--hours", "1",
                "--root", str(term.root)]) == 0
    assert cli(["export", *out]) == 0
    rows = list(csv.DictReader(open(tmp_path / "grades.csv", newline="", encoding="utf-8")))
    cy = next(r for r in rows if r["student"] == "cy_late")
    assert (cy["late_penalty"], cy["lab_final"]) == ("0.0000", "5.0000")
    assert "extension of 1 day 1 h" in cy["lateness"]


def test_the_policies_in_words_and_in_shares():
    day = 86_400
    tenth = LatePolicy(per_day=Decimal("0.1"), cap=Decimal("0.5"))
    assert [tenth.share(s) for s in (0, 1, day, day + 1, 3 * day, 30 * day)] == [
        0, Decimal("0.1"), Decimal("0.1"), Decimal("0.2"), Decimal("0.3"), Decimal("0.5")]
    assert LatePolicy(no_credit=True).share(1) == 1 and LatePolicy().share(10 * day) == 0
    outcome = gb.StoredOutcome("ann", "labfx", "graded", 3.3, 6.0, 6.0, False, "bubblewrap",
                               [], "", [], submitted_at=datetime(2027, 3, 5))
    lab = manifest.Lab("labfx", "t", 6, 1, 1, 1, due=datetime(2027, 3, 1),
                       late=LatePolicy(per_day=Decimal("0.1")))
    late = lateness(lab, outcome, {})
    assert late.status == LATE and late.penalty == pytest.approx(1.32, abs=1e-12)  # 40% of 3.3
    missing = gb.StoredOutcome("ann", "labfx", "missing", 0.0, 6.0, 6.0, False, "", [], "", [])
    assert lateness(lab, missing, {}).status == NOT_HANDED_IN
    assert lateness(lab, gb.StoredOutcome("ann", "labfx", "graded", 6.0, 6.0, 6.0, False, "",
                                          [], "", []), {}).status == NOT_KNOWN
    early = gb.StoredOutcome("ann", "labfx", "graded", 6.0, 6.0, 6.0, False, "", [], "", [],
                             submitted_at=datetime(2027, 2, 1))
    assert lateness(lab, early, {}).status == ON_TIME


@pytest.mark.parametrize("text, says", [
    ('due = 2027-03-01T23:59:00\n', "with its UTC offset"),
    ('due = "next friday"\n', "with its UTC offset"),
    ('due = 2027-03-01\n', "with its UTC offset"),
    ('late = { per_day = 10 }\n', "between 0 and 1"),
    ('late = { per_day = 0.1, cap = "half" }\n', "between 0 and 1"),
    ('late = "harsh"\n', "is not a late policy"),
    ('late = { cap = 0.5 }\n', "is not a late policy"),
])
def test_a_malformed_due_date_or_policy_is_a_clear_error(tmp_path, capsys, text, says):
    root = tmp_path / "course_tree"
    make_fixture_course(root)
    _with_due(root, text)
    with pytest.raises(ManifestError, match=says):
        manifest.load_course(root)
    assert cli(["export", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert says in err and "course.toml" in err and "Traceback" not in err


@pytest.mark.parametrize("block, says", [
    ('student = "../x"\nlab = "labfx"\ndays = 1', "is not a student id"),
    ('student = "ann,\\nbob"\nlab = "labfx"\ndays = 1', "is not a student id"),
    ('student = "ann"\nlab = "lab99"\ndays = 1', "no lab 'lab99'"),
    ('student = "ann"\nlab = "labfx"\ndays = 0', "gives no time"),
    ('student = "ann"\nlab = "labfx"\ndays = -2', "is not a number of days"),
    ('student = "ann"\nlab = "labfx"\nweeks = 1', "unknown key(s) weeks"),
])
def test_a_malformed_extension_is_a_clear_error(fixture_course, capsys, block, says):
    path = fixture_course.course_dir / "extensions.toml"
    path.write_text(f"[[extension]]\n{block}\n")
    with pytest.raises(ManifestError, match=says.replace("(", r"\(").replace(")", r"\)")):
        load_extensions(fixture_course)
    assert cli(["feedback", "--root", str(fixture_course.root)]) == 2
    err = capsys.readouterr().err
    assert says in err and "extension #1" in err and "Traceback" not in err


def test_extend_refuses_a_bad_student_id_and_writes_nothing(fixture_course, capsys):
    for student in ("../x", "ann\nbob", 'a"b'):
        assert cli(["extend", "labfx", student, "--days", "1",
                    "--root", str(fixture_course.root)]) == 2
    assert "is not a student id" in capsys.readouterr().err
    assert not (fixture_course.course_dir / "extensions.toml").exists()
    reason = 'said "late"\n= ]] [[extension]] \x7f \\'
    grant(fixture_course, "ann", "labfx", hours=5, reason=reason)
    assert load_extensions(fixture_course) == {("ann", "labfx"): (
        datetime(2027, 1, 1, 5) - datetime(2027, 1, 1))}


# --------------------------------------------------------------------------- LMS files

ROSTER = [
    # id, first_name, last_name, email, lms_user_id
    ("ada_early", "Ada", "Lovelace, Countess", "ada@uni.example", "ada.l"),
    ("bo_at_due", '=HYPERLINK("http://evil.example","x")', "Bo", "bo@uni.example",
     "@SUM(1+1)"),
    ("cy_late", "Cy", "Late\nLine", "-cy@uni.example", "cy.l"),
    ("di_extended", "Di", "+Ext", "di@uni.example", "di.e"),
    ("fay_copied", "Fay", "Copied", "fay@uni.example", "fay.c"),
    ("gus_very_late", "Gus", "Very", "gus@uni.example", "gus.v"),
]


def _import_roster(course, rows) -> None:
    path = course.course_dir / "roster.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "first_name", "last_name", "email", "lms_user_id"])
        writer.writerows(rows)
    nbgrader = Path(__import__("sys").executable).parent / "nbgrader"
    subprocess.run([str(nbgrader), "db", "student", "import", "roster.csv"],
                   cwd=course.course_dir, check=True, capture_output=True)


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_lms_export_needs_every_graded_student_on_the_roster(term, tmp_path, capsys):
    _import_roster(term, ROSTER[:-1])
    assert cli(["export", "--format", "canvas", "--root", str(term.root),
                "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "gus_very_late" in err and "nbgrader db student import" in err
    assert "Traceback" not in err and not list(tmp_path.iterdir())   # nothing written
    assert cli(["export", "--format", "blackboard", "--root", str(term.root)]) == 2
    assert "choose canvas or moodle" in capsys.readouterr().err


def test_canvas_and_moodle_files_name_students_by_lms_login_and_are_formula_free(term,
                                                                                   tmp_path):
    _import_roster(term, ROSTER)
    assert cli(["export", "--format", "canvas", "--format", "moodle", "--root",
                str(term.root), "--out", str(tmp_path)]) == 0
    canvas = _read(tmp_path / "canvas.csv")
    column = "Fixture lab: ReLU and a linear layer by hand (labfx)"
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column]
    assert canvas[1] == ["Points Possible", "", "", "", "", "6"]
    by_login = {row[3]: row for row in canvas[2:]}
    assert by_login["cy.l"][0] == "Late\nLine, Cy" and by_login["cy.l"][5] == "4"
    assert by_login["ada.l"][0] == "Lovelace, Countess, Ada" and by_login["ada.l"][5] == "5"
    assert by_login["'@SUM(1+1)"][0] == "Bo, =HYPERLINK(\"http://evil.example\",\"x\")"
    assert by_login["di.e"][0] == "'+Ext, Di" and by_login["gus.v"][5] == "2"
    moodle = _read(tmp_path / "moodle.csv")
    assert moodle[0] == ["username", "Email address", column]
    rows = {row[0]: row for row in moodle[1:]}
    assert rows["cy.l"] == ["cy.l", "'-cy@uni.example", "4"]
    assert rows["'@SUM(1+1)"][2] == "5"
    for table in (canvas, moodle):
        for row in table:
            for cell in row:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
