"""`coursekit validate`: the student's self-check lists every visible check and tells the
truth in its exit status (unlike `nbgrader validate`)."""
from __future__ import annotations


import nbformat
import pytest

from autograder.demo import demo_class
from coursekit.cli import main as cli


def _write(nb, folder, name="labfx.ipynb"):
    path = folder / name
    nbformat.write(nb, str(path))
    return path


@pytest.mark.slow
def test_validate_passes_a_correct_notebook_and_fails_the_untouched_release(
        fixture_course, tmp_path, capsys):
    demo = demo_class.demo_lab(fixture_course, fixture_course.labs[0])
    good = _write(demo.notebook(), fixture_course.release_dir / "labfx", "mine.ipynb")
    assert cli(["validate", str(good)]) == 0
    out = capsys.readouterr().out
    assert "✓ labfx.relu" in out and "✓ labfx.linear_grads" in out
    assert "2/2 visible checks passed" in out

    untouched = fixture_course.release_notebook("labfx")
    assert cli(["validate", str(untouched)]) == 1
    out = capsys.readouterr().out
    assert "✗ labfx.relu" in out and "0.00/2.00 points" in out
    assert "NotImplementedError: relu: replace this line" in out
    assert "not ready to submit" in out


@pytest.mark.slow
def test_validate_fails_on_a_partly_wrong_answer_and_names_the_case(fixture_course, capsys):
    demo = demo_class.demo_lab(fixture_course, fixture_course.labs[0])
    wrong = demo.mutants["linear_grads"][0][1]  # forgets to sum grad_b
    path = _write(demo.notebook({"linear_grads": wrong}), fixture_course.release_dir / "labfx",
                  "partly.ipynb")
    assert cli(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "✓ labfx.relu" in out and "✗ labfx.linear_grads" in out
    assert "grad_b" in out and "hint:" in out
    assert "2.00/3.00 points" in out  # grad_x and grad_w pass in both trials: 4 of 6 cases


@pytest.mark.slow
def test_validate_fails_delegation_to_a_forbidden_module(fixture_course, capsys):
    demo = demo_class.demo_lab(fixture_course, fixture_course.labs[0])
    cheat = "import torch\n\ndef relu(x):\n    return torch.relu(torch.tensor(x)).numpy()\n"
    path = _write(demo.notebook({"relu": cheat}), fixture_course.release_dir / "labfx",
                  "torch.ipynb")
    assert cli(["validate", str(path)]) == 1
    assert "uses what this exercise asks you to build yourself" in capsys.readouterr().out


def test_validate_exit_codes_for_missing_and_unreadable_files(tmp_path, capsys):
    assert cli(["validate", str(tmp_path / "nope.ipynb")]) == 2
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{ not json")
    assert cli(["validate", str(broken)]) == 2
    assert "cannot validate" in capsys.readouterr().err


@pytest.mark.slow
def test_validate_without_any_checks_is_a_failure(tmp_path, capsys):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    path = _write(nb, tmp_path, "plain.ipynb")
    assert cli(["validate", str(path)]) == 1
    assert "no visible checks" in capsys.readouterr().out


@pytest.mark.slow
def test_validate_finds_the_lab_of_a_renamed_copy_by_its_graded_cells(tmp_path, capsys):
    """Every lab shares ids like ``intro`` and ``setup``; the graded cells decide the lab."""
    from coursekit import course as manifest

    course = manifest.load_course()
    release = nbformat.read(str(course.release_notebook(course.lab("lab03_functions"))), 4)
    path = _write(release, tmp_path, "lab03_b.ipynb")  # outside any course tree
    assert cli(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "lab03.sigmoid" in out and "lab00." not in out


@pytest.mark.slow
def test_validate_reads_the_code_for_early_warnings_without_failing_honest_work(fixture_course,
                                                                              capsys):
    """Text scans are early, friendly warnings: grading judges what runs, so exec'ing a
    harmless string warns but costs nothing."""
    demo = demo_class.demo_lab(fixture_course, fixture_course.labs[0])
    nb = demo.notebook()
    nb.cells.append(nbformat.v4.new_code_cell('exec("print(1)")'))
    path = _write(nb, fixture_course.release_dir / "labfx", "exec.ipynb")
    assert cli(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "may be flagged for a TA at grading" in out and "exec" in out


@pytest.mark.slow
def test_validate_names_a_broken_answer_first_and_lists_written_answers(fixture_course, capsys):
    """A syntax error in an answer is said first, with its cell, instead of the NameErrors it
    causes later; every written answer is listed with its points, answered or not."""
    demo = demo_class.demo_lab(fixture_course, fixture_course.labs[0])
    first = demo.answers[0]
    nb = demo.notebook({first.grade_id: "def relu(x):\n    return x +\n"})
    path = _write(nb, fixture_course.release_dir / "labfx", "broken.ipynb")
    assert cli(["validate", str(path), "--all"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "raised SyntaxError" in lines[1] and f"the cell '{first.grade_id}'" in lines[1]
    assert "written answer [why_sum]" in out and "graded by a person" in out
    assert "NOT ANSWERED YET" in out and "written answer still blank" in out
