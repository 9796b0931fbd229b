"""A PostgreSQL gradebook a team shares, on a real server (initdb + pg_ctl, thrown away after).

End to end (autograde, feedback, export) on ``--db postgresql+psycopg://...``; two graders at
once on one gradebook (real processes): no crash, no duplicate row, the later result kept and
the fact recorded; and re-runs that grade only what changed, on the embedded SQLite default.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys

import nbformat
import pytest
from sqlalchemy import create_engine, func, select

import postgres_server
from autograder.demo import demo_class
from autograder.pipeline import gradebook as gb
from conftest import TEST_LIMITS, make_fixture_course
from coursekit.cli import main as cli
from machine_load import scaled

pytestmark = pytest.mark.slow
STUDENTS = ["ada_full", "ben_partial", "max_missing", "uma_reference"]
LIMITS = ["--cell-timeout", str(TEST_LIMITS.cell_timeout_s), "--time-limit",
          str(TEST_LIMITS.time_limit_s), "--memory-mb", str(TEST_LIMITS.memory_mb)]


server = pytest.fixture(scope="module", name="server")(postgres_server.running)


@pytest.fixture
def demo(tmp_path):
    course = make_fixture_course(tmp_path / "course_tree")
    lab = demo_class.demo_lab(course, course.labs[0])
    students = {s.id: s for s in demo_class.build_class(lab, course.submitted_dir)}
    return course, lab, students


def _only(students: list[str]) -> list[str]:
    return [arg for student in students for arg in ("--student", student)]


def _count(url: str, table) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(select(func.count()).select_from(table)).scalar()
    finally:
        engine.dispose()


def test_autograde_feedback_and_export_on_postgresql(server, demo, tmp_path, capsys):
    course, lab, students = demo
    url = server.create_database("end_to_end")
    root = ["--root", str(course.root), "--db", url]
    assert cli(["autograde", "--jobs", "2", "--no-progress", *_only(STUDENTS), *LIMITS,
                *root]) == 0
    assert url in capsys.readouterr().out
    gradebook = gb.open_gradebook(url)
    try:
        stored = {o.student: o for o in gb.load_outcomes(gradebook)}
    finally:
        gradebook.close()
    assert sorted(stored) == sorted(STUDENTS)
    for student in STUDENTS:
        assert students[student].expect(lab).problems(stored[student]) == [], stored[student]
    assert cli(["feedback", *root]) == 0
    assert (course.feedback_dir / "ada_full" / lab.lab.id).is_dir()
    assert cli(["export", "--out", str(tmp_path / "out"), *root]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "grades.csv")))
    assert {r["student"] for r in rows} == set(STUDENTS)
    for row in rows:
        assert float(row["lab_auto_score"]) == pytest.approx(stored[row["student"]].score)


def test_two_graders_at_once_on_one_postgresql_gradebook(server, demo):
    """Two `coursekit autograde` processes grade the same students on one gradebook at the
    same time: both finish, each submission has one row, and every write is in the history,
    the kept result being the one graded last."""
    course, lab, students = demo
    url = server.create_database("two_graders")
    command = [sys.executable, "-m", "coursekit.cli", "autograde", "--root", str(course.root),
               "--db", url, "--regrade", "--no-progress", "--jobs", "1", *LIMITS,
               *_only(STUDENTS)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    graders = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True) for _ in range(2)]
    outputs = [grader.communicate(timeout=scaled(600))[0] for grader in graders]
    assert [grader.returncode for grader in graders] == [0, 0], outputs

    assert _count(url, gb.OutcomeRow.__table__) == len(STUDENTS)
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            submissions = connection.exec_driver_sql(
                "select count(*) from submitted_assignment").scalar()
            students_rows = connection.exec_driver_sql("select count(*) from student").scalar()
    finally:
        engine.dispose()
    assert submissions == len(STUDENTS) and students_rows == len(STUDENTS)
    gradebook = gb.open_gradebook(url)
    try:
        for student in STUDENTS:
            writes = gb.history(gradebook, student=student)
            assert len(writes) == 2 and len({w.run_id for w in writes}) == 2, writes
            kept = gradebook.db.execute(select(gb.OutcomeRow).where(
                gb.OutcomeRow.student == student)).scalar_one()
            assert kept.graded_at == max(w.graded_at for w in writes)
            second = writes[1].event
            assert second.startswith("stored; replaced the result of run") or \
                second.startswith("not stored: run"), second
    finally:
        gradebook.close()


def test_a_rerun_grades_only_what_changed(demo, capsys):
    course, lab, students = demo
    root = ["--root", str(course.root), "--no-progress", *LIMITS, *_only(STUDENTS)]
    assert cli(["autograde", "--jobs", "2", *root]) == 0
    first = capsys.readouterr().out
    assert f"graded {len(STUDENTS)} notebook(s)" in first

    # Nothing changed: nothing is graded again, and the outcomes stay.
    assert cli(["autograde", *root]) == 0
    out = capsys.readouterr().out
    assert "graded 0 notebook(s)" in out and f"{len(STUDENTS)} submission(s) unchanged" in out

    # ben hands in again: only ben is graded.
    path = next((course.submitted_dir / "ben_partial").rglob("*.ipynb"))
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("one more note"))
    nbformat.write(nb, str(path))
    assert cli(["autograde", *root]) == 0
    out = capsys.readouterr().out
    assert "graded 1 notebook(s)" in out and "ben_partial" in out

    # --regrade grades everyone; still one row each.
    assert cli(["autograde", "--regrade", "--jobs", "2", *root]) == 0
    assert f"graded {len(STUDENTS)} notebook(s)" in capsys.readouterr().out
    assert _count(course.default_db_url, gb.OutcomeRow.__table__) == len(STUDENTS)
    gradebook = gb.open_gradebook(course.default_db_url)
    try:
        assert [w.event for w in gb.history(gradebook, student="ben_partial")][-1].startswith(
            "stored; replaced the result of run")
    finally:
        gradebook.close()


def test_an_older_sqlite_gradebook_gains_the_new_columns(tmp_path):
    """A gradebook made before coursekit stored hashes and runs opens and records."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    gb.open_gradebook(url).close()
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE coursekit_outcome")
        connection.exec_driver_sql(
            "CREATE TABLE coursekit_outcome (id INTEGER PRIMARY KEY, student VARCHAR(128) NOT "
            "NULL, lab VARCHAR(128) NOT NULL, status VARCHAR(32) NOT NULL, score FLOAT NOT NULL, "
            "max_score FLOAT NOT NULL, auto_max_score FLOAT NOT NULL, flagged BOOLEAN NOT NULL, "
            "sandbox TEXT NOT NULL, reasons TEXT NOT NULL, notebook_file TEXT)")
    engine.dispose()
    gradebook = gb.open_gradebook(url)
    try:
        gradebook.update_or_create_assignment("labx")
        assert gb.record(gradebook, gb.Outcome("zoe", "labx", "missing", 1.0, 1.0,
                                               submission_hash="abc", run_id="r1"))
        assert gb.stored_hashes(gradebook, ["labx"]) == {("zoe", "labx"): "abc"}
    finally:
        gradebook.close()
