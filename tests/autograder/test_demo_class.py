"""Every demo student gets the score and the recorded reason they were built to show.

The class is the one `coursekit demo` grades, generated from the fixture lab's release and
graded for real: sandboxed kernels, the SQLite gradebook, feedback and exports.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from autograder.demo import demo_class
from autograder.pipeline.gradebook import open_gradebook
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
STUDENTS = [s.id for s in demo_class.STUDENTS]


@pytest.mark.slow
@pytest.mark.parametrize("student", STUDENTS)
def test_demo_student_gets_the_expected_outcome(graded_class, student):
    outcome = graded_class.outcomes()[student]
    expect = demo_class.expectations(graded_class.demo)[student]
    assert expect.problems(outcome) == [], (outcome.score, outcome.status, outcome.reasons,
                                            [c.message for c in outcome.checks])


@pytest.mark.slow
def test_the_whole_class_is_graded_once_each(graded_class):
    outcomes = graded_class.outcomes()
    assert sorted(outcomes) == sorted(STUDENTS)
    assert graded_class.sandboxed, "bubblewrap is installed here: the class must run sandboxed"
    assert all(o.sandbox.startswith("bubblewrap") for o in outcomes.values())


@pytest.mark.slow
def test_partial_credit_is_split_inside_a_checks_cell(graded_class):
    outcome = graded_class.outcomes()["ben_partial"]
    last = [c for c in outcome.checks if c.cell == "linear_grads_check"]
    assert 0 < sum(c.score for c in last) < sum(c.max_score for c in last)


@pytest.mark.slow
def test_stderr_and_warnings_in_the_checks_cell_cost_nothing(graded_class):
    course = graded_class.course
    nb = nbformat.read(str(course.autograded_dir / "nia_stderr" / "labfx" / "labfx.ipynb"), 4)
    checks = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
              and c.cell_type == "code"]
    assert all(any(o.get("name") == "stderr" for o in c.outputs) for c in checks)
    assert graded_class.outcomes()["nia_stderr"].score == graded_class.demo.max_score


@pytest.mark.parametrize("lab_id, gid", sorted(demo_class.STDERR_UNSCRIPTED))
def test_stderr_wrapper_loses_the_torchscript_cases_of_a_scripted_answer(lab_id, gid):
    course = manifest.load_course(REPO)
    demo = demo_class.demo_lab(course, course.lab(lab_id))
    answer = next(a for a, _ in demo.function_answers() if a.grade_id == gid)
    assert "torch.jit.script" in demo.solution(gid), "no longer scripted: drop it from the table"
    expect = demo_class.expectations(demo)["nia_stderr"]
    share = demo_class.STDERR_UNSCRIPTED[(lab_id, gid)]
    assert expect.score == pytest.approx(demo.max_score - share * demo.points_of(answer))
    assert expect.reason == "TorchScript"


@pytest.mark.slow
def test_crash_keeps_the_notebook_and_the_checks_before_it(graded_class):
    course = graded_class.course
    path = course.autograded_dir / "fay_crash" / "labfx" / "labfx.ipynb"
    assert path.exists(), "the crashed student's graded notebook must be kept"
    nb = nbformat.read(str(path), 4)
    first_checks = next(c for c in nb.cells
                        if c.metadata.get("nbgrader", {}).get("grade_id") == "relu_check")
    assert any("coursekit: 2.00/2 points" in o.get("text", "") for o in first_checks.outputs)
    outcome = graded_class.outcomes()["fay_crash"]
    assert outcome.score == graded_class.demo.checks[0].points


@pytest.mark.slow
def test_snooping_student_is_blocked_by_the_sandbox(graded_class):
    course = graded_class.course
    nb = nbformat.read(str(course.autograded_dir / "tom_snoops" / "labfx" / "labfx.ipynb"), 4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs)
    assert "READ" not in text
    for target in ("gradebook.db", ".secret", "solutions/labfx/labfx.ipynb"):
        assert f"blocked: ../../../{target}" in text or f"blocked: ../../../../{target}" in text


@pytest.mark.slow
def test_tampering_is_flagged_in_the_nbgrader_gradebook(graded_class):
    gradebook = open_gradebook(graded_class.db_url)
    try:
        flagged = {}
        for student in ("pat_transformer", "vic_monitor", "ada_full"):
            notebook = gradebook.find_submission_notebook("labfx", "labfx", student)
            flagged[student] = notebook.flagged
            grade = gradebook.find_grade("relu_check", "labfx", "labfx", student)
            assert grade.auto_score == (0.0 if student == "pat_transformer" else 2.0)
    finally:
        gradebook.close()
    # Cheating that gains nothing scores 0; what the monitor refused is flagged for a TA.
    assert flagged == {"pat_transformer": False, "vic_monitor": True, "ada_full": False}


@pytest.mark.slow
def test_written_answers_wait_for_a_human(graded_class):
    gradebook = open_gradebook(graded_class.db_url)
    try:
        grade = gradebook.find_grade("why_sum", "labfx", "labfx", "ada_full")
        assert grade.needs_manual_grade and grade.auto_score is None
    finally:
        gradebook.close()


@pytest.mark.slow
def test_results_json_of_every_student_is_gradescope_shaped(graded_class):
    results = graded_class.course.exports_dir / "results"
    for student in STUDENTS:
        data = json.loads((results / student / "labfx" / "results.json").read_text())
        assert set(data) >= {"score", "tests"}
        for test in data["tests"]:
            assert set(test) == {"name", "score", "max_score", "output", "visibility"}
            assert test["visibility"] in ("visible", "after_published")
            assert (test["visibility"] == "after_published") == test["name"].endswith("(hidden)")
        assert abs(data["score"] - sum(t["score"] for t in data["tests"])) < 1e-6
