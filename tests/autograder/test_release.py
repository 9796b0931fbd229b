"""Release: every manifest lab releases cleanly, byte-stable, and `--check` catches drift."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.publish import release
from coursekit import course as manifest
from coursekit.cli import main as cli
from coursekit.notebook import cells as lab_cells

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
LABS = [lab.id for lab in COURSE.labs]


def _copy_lab(tmp_path: Path, lab_id: str) -> manifest.Course:
    """A course tree holding only ``lab_id``'s source, so a release can be written freely."""
    root = tmp_path / "tree"
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / "course" / "course.toml", root / "course" / "course.toml")
    shutil.copy(REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    shutil.copytree(REPO / "solutions" / lab_id, root / "solutions" / lab_id)
    return manifest.load_course(root)


@pytest.mark.parametrize("lab_id", LABS)
def test_lab_source_passes_the_release_lint(lab_id):
    assert release.lint(COURSE, COURSE.lab(lab_id)) == []


@pytest.mark.parametrize("lab_id", LABS)
def test_release_is_byte_stable_and_strips_solutions_and_hidden_tests(lab_id):
    lab = COURSE.lab(lab_id)
    first, second = release.release_files(COURSE, lab), release.release_files(COURSE, lab)
    assert first == second
    text = first[f"{lab_id}/{lab.notebook}"].decode()
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    assert "hidden=True" not in text
    nb = nbformat.reads(text, as_version=4)
    for cell in lab_cells.split(nb).with_role(lab_cells.ANSWER):
        if cell.cell.cell_type == "code":
            assert (f'raise NotImplementedError("{cell.grade_id}: replace this line with your '
                    f'implementation")') in cell.source
    assert all(c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("lab_id", LABS)
def test_release_check_reports_drift(tmp_path, lab_id, capsys):
    course = _copy_lab(tmp_path, lab_id)
    root = ["--root", str(course.root)]
    assert cli(["release", lab_id, "--check", *root]) == 1
    assert "missing" in capsys.readouterr().out
    assert cli(["release", lab_id, *root]) == 0
    assert cli(["release", lab_id, "--check", *root]) == 0
    target = course.release_notebook(lab_id)
    data = json.loads(target.read_text())
    index = next(i for i, c in enumerate(data["cells"]) if c["cell_type"] == "code")
    data["cells"][index]["source"] = ["# edited by hand\n"]
    target.write_text(json.dumps(data, indent=1))
    (target.parent / "stray.txt").write_text("not from solutions/")
    capsys.readouterr()
    assert cli(["release", lab_id, "--check", *root]) == 1
    out = capsys.readouterr().out
    assert f"cell {index + 1}" in out and "stray.txt" in out
    assert cli(["release", lab_id, *root]) == 0  # regenerating repairs the notebook
    (target.parent / "stray.txt").unlink()
    assert cli(["release", lab_id, "--check", *root]) == 0


@pytest.mark.parametrize("lab_id", LABS)
def test_committed_release_matches_solutions(lab_id, capsys):
    """CI's guard, through the command itself: `coursekit release --check` on the repository."""
    status = cli(["release", lab_id, "--check", "--root", str(REPO)])
    assert status == 0, "run `coursekit release` and commit notebooks/:\n" + capsys.readouterr().out


def test_manifest_points_match_the_graded_cells():
    for lab in COURSE.labs:
        source = lab_cells.load(COURSE.source_notebook(lab))
        assert source.max_score == lab.points, lab.id


def test_lint_names_every_problem(fixture_course):
    lab = fixture_course.labs[0]
    nb = lab_cells.read_notebook(fixture_course.source_notebook(lab))
    checks = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                  == "relu_check")
    checks.source = 'grade("labfx.nope", relu)\nname = "labfx.relu"\ngrade(name, relu)'
    plain = next(c for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata)
    plain.source = "get_ipython().input_transformers_cleanup.append(lambda l: l)"
    problems = "\n".join(release.lint(fixture_course, lab, nb))
    assert "unknown check 'labfx.nope'" in problems
    assert "literal check name" in problems
    assert "input transformer" in problems
    with pytest.raises(release.ReleaseError):
        fixture_course.source_notebook(lab).write_text(nbformat.writes(nb))
        release.write_release(fixture_course, lab)


def test_release_with_no_labs_is_a_no_op(tmp_path, capsys):
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "course.toml").write_text('[course]\nname = "empty"\n')
    assert cli(["release", "--root", str(tmp_path)]) == 0
    assert "no labs" in capsys.readouterr().out


def test_lint_refuses_a_graded_cell_id_that_another_lab_uses(tmp_path):
    course = _copy_lab(tmp_path, "lab01_graphs")
    shutil.copytree(REPO / "solutions" / "lab02_autograd", course.root / "solutions" / "lab02_autograd")
    path = course.source_notebook(course.lab("lab02_autograd"))
    nb = nbformat.read(str(path), 4)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.metadata["nbgrader"]["grade_id"] = "numpy_graph_grads"  # lab01's first answer
    nbformat.write(nb, str(path))
    problems = release.lint(course, course.lab("lab02_autograd"))
    assert any("['numpy_graph_grads'] are also in lab01_graphs" in p for p in problems), problems
