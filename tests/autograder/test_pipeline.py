"""The pipeline around the demo class: re-runs, other databases, feedback, exports, the
sandbox itself, and grading without it."""
from __future__ import annotations

import asyncio
import csv
import json
import shutil
import sys

import nbformat
import pytest
from sqlalchemy import create_engine, func, select

from coursekit.notebook import kernels
from autograder.demo import demo_class
from autograder.pipeline import gradebook as gb
from autograder.isolation import sandbox
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import FORKED
from coursekit.notebook.execute import run_notebook
from autograder.publish.feedback import render
from coursekit.cli import main as cli
from conftest import TEST_LIMITS

# The demo class's limits, on the command line (longer on a busy machine).
LIMITS = ["--cell-timeout", str(TEST_LIMITS.cell_timeout_s),
          "--time-limit", str(TEST_LIMITS.time_limit_s)]


def _row_counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {table.name: connection.execute(select(func.count()).select_from(table)).scalar()
                    for table in (gb.OutcomeRow.__table__, gb.CheckRow.__table__)}
    finally:
        engine.dispose()


def _scores(url: str, students=None) -> dict[str, float]:
    gradebook = gb.open_gradebook(url)
    try:
        return {o.student: round(o.score, 6) for o in gb.load_outcomes(gradebook,
                                                                        students=students)}
    finally:
        gradebook.close()


@pytest.mark.slow
def test_regrading_is_idempotent_and_filters_by_student(graded_class, test_limits):
    course, url = graded_class.course, graded_class.db_url
    before_counts, before = _row_counts(url), _scores(url)
    nbgrader_grades = _nbgrader_grade_count(url)
    again = ["ada_full", "ben_partial", "lea_corrupt"]
    run = autograde(course, students=again, jobs=2, overrides=test_limits, progress=False,
                    log=lambda m: None)
    assert sorted(o.student for o in run.outcomes) == again
    assert _row_counts(url) == before_counts
    assert _nbgrader_grade_count(url) == nbgrader_grades
    assert _scores(url) == before


def _nbgrader_grade_count(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.exec_driver_sql("select count(*) from grade").scalar()
    finally:
        engine.dispose()


@pytest.mark.slow
def test_db_option_writes_to_another_sqlalchemy_url(graded_class, tmp_path, capsys):
    other = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    default_counts = _row_counts(graded_class.db_url)
    root = ["--root", str(graded_class.course.root)]
    assert cli(["autograde", "--db", other, "--student", "ada_full", "--student", "max_missing",
                "--jobs", "2", *LIMITS, "--no-progress", *root]) == 0
    out = capsys.readouterr().out
    assert "ada_full" in out and "max_missing" in out and other in out
    assert "kernels: forked from a pre-warmed kernel per job slot\n" in out
    assert _scores(other) == {"ada_full": graded_class.demo.max_score, "max_missing": 0.0}
    assert _row_counts(graded_class.db_url) == default_counts
    assert cli(["export", "--db", other, "--out", str(tmp_path / "out"), *root]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "grades.csv")))
    assert {r["student"] for r in rows} == {"ada_full", "max_missing"}


@pytest.mark.slow
def test_feedback_never_shows_hidden_test_source_or_tracebacks(graded_class):
    pages = list((graded_class.course.feedback_dir).rglob("*.html"))
    assert len(pages) == len(demo_class.STUDENTS)
    for page in pages:
        html = page.read_text()
        for leak in ("BEGIN HIDDEN TESTS", "hidden=True", "Traceback", "grade(\"",
                     "File \"/", "ipykernel"):
            assert leak not in html, (page, leak)
    assert "infinite loop?" in (graded_class.course.feedback_dir / "eve_loop" / "labfx"
                                / "labfx.html").read_text()


def test_feedback_escapes_student_text():
    outcome = gb.StoredOutcome(
        "mallory", "labfx", "graded", 0.0, 6.0, 5.0, False, "bubblewrap + prlimit",
        ["graded '<img src=x onerror=alert(1)>.ipynb': renamed"],
        "", [gb.StoredCheck("relu_check", "checks", "labfx.relu", False, 0.0, 1.0,
                            "raised ValueError: <script>alert('x')</script>")])
    html = render(outcome, "Fixture lab")
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


@pytest.mark.slow
def test_grades_csv_has_one_row_per_student_lab_and_check_with_totals(graded_class):
    rows = list(csv.DictReader(open(graded_class.course.exports_dir / "grades.csv")))
    per_student = {}
    for row in rows:
        per_student.setdefault(row["student"], []).append(row)
    assert sorted(per_student) == sorted(s.id for s in demo_class.STUDENTS)
    outcomes = graded_class.outcomes()
    for student, student_rows in per_student.items():
        # relu (visible, hidden), linear_grads (visible, hidden), the written answer
        assert [(r["check"], r["visibility"]) for r in student_rows] == [
            ("labfx.relu", "visible"), ("labfx.relu", "after_published"),
            ("labfx.linear_grads", "visible"), ("labfx.linear_grads", "after_published"),
            ("why_sum (written)", "manual")]
        auto = sum(float(r["score"]) for r in student_rows if r["score"])
        assert abs(auto - outcomes[student].score) < 1e-3
        assert {r["lab_auto_score"] for r in student_rows} == {f"{outcomes[student].score:.4f}"}
        assert {r["lab_max_score"] for r in student_rows} == {"6"}


@pytest.mark.slow
def test_sandbox_hides_course_and_solutions_and_cuts_the_network(fixture_course, tmp_path):
    status = sandbox.probe(fixture_course)
    assert status.sandboxed, status.warning
    secret = fixture_course.secret()
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "mine.txt").write_text("my own file")
    paths = {"gradebook": str(fixture_course.course_dir / "course.toml"),
             "secret": str(fixture_course.course_dir / ".secret"),
             "solutions": str(fixture_course.source_notebook("labfx")),
             "repo": str(fixture_course.root)}
    probe = ("import json, os, socket\nresult = {}\n"
             f"for name, path in {paths!r}.items():\n"
             "    result[name] = os.path.exists(path) and (os.path.isfile(path) or "
             "bool(os.listdir(path)) and 'course.toml' in str(os.listdir(path + '/course')))\n"
             "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
             "    result['network'] = True\nexcept OSError:\n    result['network'] = False\n"
             "result['own file'] = open('mine.txt').read()\n"
             "open('written.txt', 'w').write('ok')\n"
             "result['environ has course secret'] = any("
             f"{secret!r} in v for v in os.environ.values())\n"
             "print(json.dumps(result))")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(probe)])
    runtime = kernels.runtime_dir()
    try:
        km = sandbox.kernel_manager(fixture_course, workdir=workdir, runtime_dir=runtime,
                                    limits=kernels.Limits(memory_mb=2048, cpu_s=60),
                                    status=status)
        execution = asyncio.run(run_notebook(nb, km, cwd=workdir, env={"PATH": "/usr/bin:/bin"},
                                             cell_timeout=60, time_limit=120))
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    assert execution.cells[0].status == "ok", execution
    result = json.loads(nb.cells[0].outputs[0]["text"])
    assert result == {"gradebook": False, "secret": False, "solutions": False, "repo": False,
                      "network": False, "own file": "my own file",
                      "environ has course secret": False}
    assert (workdir / "written.txt").read_text() == "ok"


@pytest.mark.slow
def test_fresh_kernels_on_request_grade_the_same(graded_class, tmp_path, capsys):
    root = ["--root", str(graded_class.course.root)]
    scores = {}
    for flag in ("--fresh-kernels", None):
        url = f"sqlite:///{tmp_path / f'{flag}.db'}"
        assert cli(["autograde", "--db", url, "--student", "ada_full", *LIMITS,
                    "--no-progress", *root, *([flag] if flag else [])]) == 0
        out = capsys.readouterr().out
        gradebook = gb.open_gradebook(url)
        try:
            (outcome,) = gb.load_outcomes(gradebook)
        finally:
            gradebook.close()
        assert outcome.sandbox.endswith(FORKED) is (flag is None), outcome.sandbox
        assert ("kernels: fresh kernels (forking switched off)" in out) is (flag is not None)
        scores[flag] = (outcome.score, outcome.reasons)
    assert scores["--fresh-kernels"] == scores[None] == (graded_class.demo.max_score, [])


def test_grading_without_the_sandbox_says_so_loudly_everywhere(graded_class, tmp_path, capsys):
    other = f"sqlite:///{tmp_path / 'unsandboxed.db'}"
    root = ["--root", str(graded_class.course.root)]
    assert cli(["autograde", "--no-sandbox", "--db", other, "--student", "ada_full",
                *LIMITS, "--no-progress", *root]) == 0
    out = capsys.readouterr().out
    assert "SANDBOX UNAVAILABLE" in out
    gradebook = gb.open_gradebook(other)
    try:
        (outcome,) = gb.load_outcomes(gradebook)
    finally:
        gradebook.close()
    assert "SANDBOX UNAVAILABLE" in outcome.sandbox
    assert outcome.score == graded_class.demo.max_score
    assert "but fresh for labfx: kernels are not sandboxed" in out
    assert "SANDBOX UNAVAILABLE" in render(outcome, "Fixture lab")
    from autograder.publish.export import results_json
    assert "SANDBOX UNAVAILABLE" in results_json(outcome)["output"]


@pytest.mark.slow
def test_a_grader_installed_without_a_compiler_says_so(graded_class, tmp_path, capsys,
                                                       monkeypatch):
    """The monitor's compiled module is optional at install; without it the instructor is
    told what is weaker and how to fix it, and grading goes on."""
    from coursekit.notebook.monitoring import UNCOMPILED
    root = ["--root", str(graded_class.course.root)]
    args = ["autograde", "--student", "ada_full", *LIMITS, "--no-progress", *root]
    assert cli([*args, "--db", f"sqlite:///{tmp_path / 'compiled.db'}"]) == 0
    assert "compiled module" not in capsys.readouterr().out      # this install has it
    monkeypatch.setitem(sys.modules, "coursekit.grading._fast_profile", None)
    assert cli([*args, "--db", f"sqlite:///{tmp_path / 'uncompiled.db'}"]) == 0
    assert UNCOMPILED in capsys.readouterr().out


def test_hidden_seeds_are_fresh_for_every_grading_and_stable_within_one():
    from autograder.pipeline.grader import Grader
    first, second = Grader.seeds(), Grader.seeds()
    assert first("lab.x", True) == first("lab.x", True)        # visible and hidden calls agree
    assert first("lab.x", True) != second("lab.x", True)       # a regrade draws anew
    assert first("lab.x", False) == second("lab.x", False)     # visible seeds are public