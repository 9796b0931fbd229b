"""`coursekit fetch`: students work on copies in work/, and a later release never conflicts.

The end-to-end test is the one a class lives through, with real git: the instructor's
repository, a student's clone, the student's edits in JupyterLab's place, a new release,
`git pull`, and fetch again.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import nbformat
import pytest

from coursekit import course as manifest
from coursekit.student.fetch import FetchError, fetch, fetch_lab, find_lab, work_folder
from autograder.publish.release import write_release
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
DAY = date(2027, 3, 1)
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=folder, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True, timeout=scaled(60))


def coursekit(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coursekit.cli", *args], cwd=folder,
                          capture_output=True, text=True, timeout=scaled(120),
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def answer(path: Path, text: str) -> None:
    """What a student does in JupyterLab: write into a cell, save (with outputs)."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.source += f"\n{text}\n"
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    nbformat.write(nb, path)


def rerelease(course: manifest.Course, new_text: str) -> None:
    """The instructor fixes the lab's introduction and releases it again."""
    lab = course.labs[0]
    nb = nbformat.read(course.source_notebook(lab), as_version=4)
    nb.cells[0].source += f"\n\n{new_text}"
    nbformat.write(nb, course.source_notebook(lab))
    write_release(course, lab)


def test_a_later_release_never_conflicts_with_a_students_edited_copy(fixture_course, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    instructor = fixture_course
    shutil.copy(REPO / ".gitignore", instructor.root / ".gitignore")  # the repository's own
    assert git(instructor.root, "init", "-q", "-b", "main").returncode == 0
    git(instructor.root, "add", ".")
    assert git(instructor.root, "commit", "-q", "-m", "labfx released").returncode == 0
    student = tmp_path / "student"
    assert git(tmp_path, "clone", "-q", str(instructor.root), str(student)).returncode == 0

    first = coursekit(student, "fetch", "--all")
    assert first.returncode == 0, first.stderr
    assert "copied to work/labfx/" in first.stdout
    mine = student / "work" / "labfx" / "labfx.ipynb"
    answer(mine, "# my answer")
    (mine.parent / ".ipynb_checkpoints").mkdir()
    shutil.copy(mine, mine.parent / ".ipynb_checkpoints" / "labfx-checkpoint.ipynb")
    my_bytes = mine.read_bytes()
    assert git(student, "status", "--porcelain").stdout == ""  # nothing of work/ is tracked

    rerelease(instructor, "**Update:** a clearer statement.")
    git(instructor.root, "add", ".")
    assert git(instructor.root, "commit", "-q", "-m", "labfx released again").returncode == 0
    pull = git(student, "pull", "-q", "--no-rebase")
    assert pull.returncode == 0, pull.stdout + pull.stderr
    release = student / "notebooks" / "labfx" / "labfx.ipynb"
    assert "a clearer statement" in release.read_text()

    again = coursekit(student, "fetch", "labfx")
    assert again.returncode == 0, again.stderr
    assert mine.read_bytes() == my_bytes  # the student's work is untouched
    (beside,) = [p for p in (student / "work").iterdir() if p.name.startswith("labfx.release-")]
    assert (beside / "labfx.ipynb").read_bytes() == release.read_bytes()
    assert not (beside / ".ipynb_checkpoints").exists()
    assert "Your work is kept as it is" in again.stdout
    assert f"beside it, in work/{beside.name}/" in again.stdout
    assert "work/labfx/ stays the notebook you work in and hand in" in again.stdout

    third = coursekit(student, "fetch", "labfx")  # nothing new: the same folder is named again
    assert f"still beside it, in work/{beside.name}/" in third.stdout
    assert sorted(p.name for p in (student / "work").iterdir()) == [".fetched.json", "labfx",
                                                                      beside.name]
    assert git(student, "status", "--porcelain").stdout == ""


def test_work_done_in_the_release_itself_moves_to_work_and_git_gets_the_release_back(
        fixture_course, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    # The class repository as `coursekit bundle` makes it: the releases, no solutions/.
    class_repo = tmp_path / "class"
    shutil.copytree(fixture_course.root, class_repo, ignore=shutil.ignore_patterns("solutions"))
    shutil.copy(REPO / ".gitignore", class_repo / ".gitignore")
    git(class_repo, "init", "-q", "-b", "main")
    git(class_repo, "add", ".")
    assert git(class_repo, "commit", "-q", "-m", "labfx").returncode == 0
    student = tmp_path / "student"
    assert git(tmp_path, "clone", "-q", str(class_repo), str(student)).returncode == 0
    in_release = student / "notebooks" / "labfx" / "labfx.ipynb"
    answer(in_release, "# answered in notebooks/, before fetch existed")
    mine = in_release.read_bytes()

    run = coursekit(student, "fetch", "--all")
    assert run.returncode == 0, run.stderr
    assert "Your version is now in work/labfx/" in run.stdout
    assert "git checkout -- notebooks/labfx/" in run.stdout
    copy = student / "work" / "labfx" / "labfx.ipynb"
    assert copy.read_bytes() == mine
    assert git(student, "checkout", "--", "notebooks/labfx/").returncode == 0

    released = class_repo / "notebooks" / "labfx" / "labfx.ipynb"
    nb = nbformat.read(released, as_version=4)
    nb.cells[0].source += "\n\nSecond release."
    nbformat.write(nb, released)
    git(class_repo, "commit", "-q", "-am", "labfx again")
    assert git(student, "pull", "-q", "--no-rebase").returncode == 0
    again = coursekit(student, "fetch", "labfx")
    assert copy.read_bytes() == mine  # recorded as the student's work, so never replaced
    assert "Your work is kept as it is" in again.stdout and "git checkout" not in again.stdout


@pytest.fixture
def course(fixture_course) -> manifest.Course:
    return fixture_course


def test_a_copy_the_student_has_not_changed_follows_the_release(course):
    lab = course.labs[0]
    done = fetch_lab(course, lab, today=DAY)
    assert done.copied == ["labfx.ipynb"] and not done.kept
    copy = work_folder(course, lab) / "labfx.ipynb"
    (copy.parent / "notes.txt").write_text("the student's own file")
    rerelease(course, "Second release.")
    done = fetch_lab(course, lab, today=DAY)
    assert done.updated == ["labfx.ipynb"] and not done.kept and done.beside is None
    assert copy.read_bytes() == course.release_notebook(lab).read_bytes()
    assert (copy.parent / "notes.txt").read_text() == "the student's own file"
    assert "updated in work/labfx/ to the new release" in done.report()
    assert fetch_lab(course, lab, today=DAY).report() == (
        "✓ labfx: work/labfx/ is up to date with the release")


def test_an_edited_copy_is_kept_and_each_new_release_lands_beside_it_once(course):
    lab = course.labs[0]
    fetch_lab(course, lab, today=DAY)
    copy = work_folder(course, lab) / "labfx.ipynb"
    answer(copy, "x = 1")
    mine = copy.read_bytes()
    assert fetch_lab(course, lab, today=DAY).report() == (
        "✓ labfx: work/labfx/ is up to date with the release")  # the release did not change
    rerelease(course, "Second release.")
    second = fetch_lab(course, lab, today=DAY)
    assert second.kept == ["labfx.ipynb"] and second.beside_is_new
    assert second.beside == Path("work") / f"labfx.release-{DAY.isoformat()}"
    rerelease(course, "Third release, the same day.")
    third = fetch_lab(course, lab, today=DAY)
    assert third.beside == Path("work") / f"labfx.release-{DAY.isoformat()}-2"
    assert (course.root / third.beside / "labfx.ipynb").read_bytes() == (
        course.release_notebook(lab).read_bytes())
    assert copy.read_bytes() == mine
    # Starting over is deleting the copy: the next fetch copies the release afresh.
    copy.unlink()
    assert fetch_lab(course, lab, today=DAY).copied == ["labfx.ipynb"]


def test_without_a_record_a_differing_copy_counts_as_the_students(course):
    lab = course.labs[0]
    fetch_lab(course, lab, today=DAY)
    (course.root / "work" / ".fetched.json").write_text("not json")
    copy = work_folder(course, lab) / "labfx.ipynb"
    rerelease(course, "Second release.")
    before = copy.read_bytes()
    assert fetch_lab(course, lab, today=DAY).kept == ["labfx.ipynb"]
    assert copy.read_bytes() == before
    assert json.loads((course.root / "work" / ".fetched.json").read_text()) == {"labfx": {}}


def test_unknown_and_unreleased_labs_say_what_to_do(course):
    with pytest.raises(FetchError, match=r"no lab 'lab9'.*labs: labfx"):
        fetch(course, ["lab9"])
    shutil.rmtree(course.release_dir / "labfx")
    with pytest.raises(FetchError, match=r"labfx is not released yet.*`git pull`"):
        fetch(course, ["labfx"])
    assert fetch(course, [], every=True) == ([], ["labfx"])


def test_a_lab_may_be_named_by_its_number():
    course = manifest.load_course(REPO)
    assert find_lab(course, "lab02").id == "lab02_autograd"
    assert find_lab(course, "lab02_autograd").id == "lab02_autograd"


def test_the_command_needs_a_lab_or_all(course):
    run = coursekit(course.root, "fetch")
    assert run.returncode == 2 and "name a lab" in run.stderr


def test_make_lab_fetches_then_opens_work():
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert recipe.index("coursekit fetch --all") < recipe.index("jupyter lab work/")
    assert "/work/" in (REPO / ".gitignore").read_text().splitlines()

