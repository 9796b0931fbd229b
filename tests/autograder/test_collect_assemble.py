"""Collect (which file is whose lab) and assemble (what is graded), on real notebooks."""
from __future__ import annotations

import copy
import os
import zipfile

import nbformat
import pytest

from autograder.demo import demo_class
from autograder.pipeline import collect
from coursekit.notebook import cells as lab_cells
from coursekit.notebook.assemble import SOURCE, STUDENT, assemble


@pytest.fixture
def demo(fixture_course):
    return demo_class.demo_lab(fixture_course, fixture_course.labs[0])


@pytest.fixture
def classdir(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    return folder


def _ids(demo):
    return demo.source.identifying_ids


def _collect(demo, folder):
    return collect.collect(demo.course, [demo.lab], {demo.lab.id: _ids(demo)}, folder)


def test_renamed_and_nested_notebooks_are_matched_by_cell_ids(demo, classdir):
    (classdir / "ann" / "deep").mkdir(parents=True)
    nbformat.write(demo.notebook(), str(classdir / "ann" / "deep" / "x.ipynb"))
    (sub,) = _collect(demo, classdir)
    assert sub.status == collect.SubmissionStatus.FOUND and sub.path.name == "x.ipynb"
    assert "renamed" in sub.notes[0]


def test_the_newest_of_two_copies_wins_and_the_choice_is_recorded(demo, classdir):
    folder = classdir / "bob"
    folder.mkdir()
    for name, stamp in (("labfx.ipynb", 2_000_000_000), ("labfx (1).ipynb", 1_000_000_000)):
        nbformat.write(demo.notebook(), str(folder / name))
        os.utime(folder / name, (stamp, stamp))
    (sub,) = _collect(demo, classdir)
    assert sub.path.name == "labfx.ipynb"
    assert "2 notebooks belong to labfx" in sub.notes[-1] and "labfx (1).ipynb" in sub.notes[-1]


def test_a_notebook_sharing_only_ungraded_cell_ids_is_not_taken(demo, classdir):
    """Every lab has cells such as ``intro`` and ``setup``: another lab's notebook carries
    them too, and must not be graded as this lab's."""
    other = demo.notebook()
    graded = demo.source.identifying_ids
    other.cells = [c for c in other.cells
                   if c.metadata.get("nbgrader", {}).get("grade_id") not in graded]
    assert any(c.metadata.get("nbgrader", {}).get("grade_id") for c in other.cells)
    (classdir / "dee").mkdir()
    nbformat.write(other, str(classdir / "dee" / "lab99.ipynb"))
    (sub,) = _collect(demo, classdir)
    assert sub.status == collect.SubmissionStatus.MISSING


def test_a_notebook_of_another_lab_is_not_taken(demo, classdir):
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    (classdir / "cat").mkdir()
    nbformat.write(other, str(classdir / "cat" / "labfx.ipynb"))
    (sub,) = _collect(demo, classdir)
    assert sub.status == collect.SubmissionStatus.MISSING and "labfx.ipynb" in sub.notes[0]


def test_corrupt_json_is_an_outcome_with_a_reason(demo, classdir):
    (classdir / "dan").mkdir()
    (classdir / "dan" / "labfx.ipynb").write_text('{"cells": [')
    (sub,) = _collect(demo, classdir)
    assert sub.status == collect.SubmissionStatus.CORRUPT and "not valid JSON" in sub.notes[0]


def test_zip_submissions_unpack_safely(demo, tmp_path):
    classdir = tmp_path / "class"
    classdir.mkdir()
    with zipfile.ZipFile(classdir / "eve.zip", "w") as zf:
        zf.writestr("lab/labfx.ipynb", nbformat.writes(demo.notebook()))
        zf.writestr("../../escape.txt", "outside")
        zf.writestr("/etc/evil.txt", "absolute")
    (sub,) = _collect(demo, classdir)
    assert sub.status == collect.SubmissionStatus.FOUND
    assert not (tmp_path / "escape.txt").exists()
    assert not list(demo.course.work_dir.rglob("evil.txt"))
    (tmp_path / "class" / "bad.zip").write_bytes(b"not a zip")
    subs = {s.student: s for s in _collect(demo, classdir)}
    assert subs["bad"].status == collect.SubmissionStatus.CORRUPT and "cannot be unpacked" in subs["bad"].notes[0]


def test_a_student_id_is_the_hand_ins_name_exactly_or_none():
    assert collect.student_id("ann.lee@uni.edu.zip") == "ann.lee@uni.edu"
    assert collect.student_id("ada_") == "ada_"
    for name in ("Ann Lee (2).zip", "../../x", ".hidden", "a/b", "é", "x" * 101, ""):
        assert collect.student_id(name) is None, name


def test_assemble_restores_edited_checks_and_keeps_answers_and_added_cells(demo):
    release = lab_cells.split(demo.release)
    nb = demo.notebook({"relu": "def relu(x):\n    return x * (x > 0)\n"})
    checks = next(c for c in nb.cells
                  if lab_cells.nbgrader_meta(c).get("grade_id") == "relu_check")
    checks.source = "pass"
    nb.cells.insert(4, nbformat.v4.new_code_cell("helper = 1"))
    assembled = assemble(demo.source, release, nb)
    by_id = {p.grade_id: p for p in assembled.placed if p.grade_id}
    assert by_id["relu_check"].origin == SOURCE
    assert "BEGIN HIDDEN TESTS" in by_id["relu_check"].cell.source
    assert by_id["relu"].origin == STUDENT and "x * (x > 0)" in by_id["relu"].cell.source
    assert any(p.cell.source == "helper = 1" for p in assembled.placed)
    assert any("'relu_check' (cell 7) was edited" in n for n in assembled.notes), \
        assembled.notes


def test_assemble_reinserts_a_deleted_checks_cell_after_its_answer(demo):
    release = lab_cells.split(demo.release)
    nb = demo.notebook()
    nb.cells = [c for c in nb.cells
                if lab_cells.nbgrader_meta(c).get("grade_id") != "linear_grads_check"]
    assembled = assemble(demo.source, release, nb)
    order = [p.grade_id for p in assembled.placed if p.grade_id]
    assert order.index("linear_grads_check") == order.index("linear_grads") + 1
    assert any("'linear_grads_check' was deleted" in n for n in assembled.notes)


def test_a_duplicated_grade_id_runs_as_the_students_own_cell(demo):
    release = lab_cells.split(demo.release)
    nb = demo.notebook()
    fake = copy.deepcopy(next(c for c in nb.cells
                              if lab_cells.nbgrader_meta(c).get("grade_id") == "relu_check"))
    fake["id"] = "fake"
    fake.source = "print('I am a checks cell')"
    nb.cells.insert(2, fake)
    assembled = assemble(demo.source, release, nb)
    own = assembled.placed[2]
    assert own.origin == STUDENT and "nbgrader" not in own.cell.metadata
    assert sum(p.grade_id == "relu_check" for p in assembled.placed) == 1
