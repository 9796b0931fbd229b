"""The grader's file work on a student's folder, attacked with what a student can leave there:
links to files the grader may write, trees deeper than Python's recursion limit and than
PATH_MAX, names of 255 bytes that are not UTF-8, FIFOs, and more entries than a walk looks
at. Root-owned canaries outside the folder must never change, and the walk must end."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from autograder.isolation import graded_folder, untrusted_tree


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path):
    """pytest removes old temporary folders with shutil.rmtree, which recurses once per
    level: the trees made here are deeper than that can go."""
    yield
    subprocess.run(["rm", "-rf", "--", str(tmp_path)], check=False)


@pytest.fixture
def canary(tmp_path):
    """A file outside the student's folder that only the grader's user may write."""
    path = tmp_path / "outside" / "canary.txt"
    path.parent.mkdir()
    path.write_text("untouched")
    path.chmod(0o600)
    return path


def _unchanged(canary) -> bool:
    info = canary.stat()
    return canary.read_text() == "untouched" and stat.S_IMODE(info.st_mode) == 0o600


def _deep(folder, levels: int, name: str = "d") -> None:
    """A chain of ``levels`` folders below ``folder``, made by descriptor, as a student's
    loop of mkdir and chdir would make it (far beyond PATH_MAX for long names)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)


def test_placing_a_file_replaces_a_link_left_under_its_name(tmp_path, canary):
    student = tmp_path / "autograded" / "mal" / "labfx"
    student.mkdir(parents=True)
    os.symlink(canary, student / "labfx.ipynb")
    os.symlink(canary.parent, student / "sub")
    untrusted_tree.place(b"graded", student, "labfx.ipynb", staging=student.parent)
    assert (student / "labfx.ipynb").read_bytes() == b"graded"
    assert not (student / "labfx.ipynb").is_symlink()
    assert _unchanged(canary)
    # Nothing is left behind in the grader's own folder.
    assert sorted(p.name for p in student.parent.iterdir()) == ["labfx"]


def test_placing_a_file_replaces_a_folder_of_links_left_under_its_name(tmp_path, canary):
    student = tmp_path / "mal" / "labfx"
    (student / "labfx.ipynb").mkdir(parents=True)
    os.symlink(canary, student / "labfx.ipynb" / "x")
    untrusted_tree.place(b"graded", student, "labfx.ipynb", staging=student.parent)
    assert (student / "labfx.ipynb").read_bytes() == b"graded"
    assert _unchanged(canary)


def test_a_linked_student_folder_is_refused_not_followed(tmp_path, canary):
    os.symlink(canary.parent, tmp_path / "labfx")
    with pytest.raises(OSError):
        untrusted_tree.place(b"graded", tmp_path / "labfx", "canary.txt", staging=tmp_path)
    assert _unchanged(canary)


def test_a_walk_never_follows_a_link_and_ends_below_any_depth(tmp_path, canary):
    student = tmp_path / "work"
    student.mkdir()
    os.symlink(canary.parent, student / "outside")
    os.symlink(canary, student / "canary.txt")
    _deep(student, sys.getrecursionlimit() + 200)
    listing = untrusted_tree.walk(student)
    kinds = {e.path: e.kind for e in listing.entries}
    assert kinds["outside"] == kinds["canary.txt"] == untrusted_tree.LINK
    assert not any(e.path.startswith("outside/") for e in listing.entries)
    assert listing.too_deep == ["/".join(["d"] * (untrusted_tree.MAX_DEPTH + 1))]


def test_trimming_removes_trees_beyond_path_max_links_and_fifos_but_keeps_the_rest(
        tmp_path, canary):
    student = tmp_path / "autograded" / "mal" / "labfx"
    student.mkdir(parents=True)
    long = "x" * 255   # the longest name there is: 40 of them go beyond PATH_MAX
    _deep(student, 60, long)
    _deep(student, sys.getrecursionlimit() + 200)
    os.symlink(canary, student / "grader-error.txt")
    os.symlink(canary, student / "labfx.grader-error.txt")
    os.mkfifo(student / "pipe")
    odd = os.fsdecode(b"\xff\xfe-not-utf8")
    (student / odd).write_text("mine")
    (student / "notes.txt").write_text("mine")
    notes = graded_folder.trim(student, keep="labfx.ipynb")
    left = sorted(p.name for p in student.iterdir())
    assert left == sorted([long, "d", odd, "notes.txt"])
    assert not any(p.is_symlink() for p in student.iterdir())
    assert any("nested over" in note for note in notes)
    assert any("link(s) or special file(s)" in note for note in notes)
    assert all(note.isprintable() for note in notes)
    assert _unchanged(canary)


def test_a_folder_with_more_entries_than_a_walk_looks_at_is_emptied(tmp_path, monkeypatch):
    monkeypatch.setattr(untrusted_tree, "MAX_ENTRIES", 500)
    student = tmp_path / "work"
    student.mkdir()
    for i in range(20):
        (student / f"d{i}").mkdir()
        for j in range(40):
            (student / f"d{i}" / f"f{j}").touch()
    (student / "labfx.ipynb").write_text("{}")
    notes = graded_folder.trim(student, keep="labfx.ipynb")
    assert [p.name for p in student.iterdir()] == ["labfx.ipynb"]
    assert "all of them but the graded notebook were deleted" in notes[0]


def test_copying_a_hand_in_leaves_links_fifos_and_deep_trees_behind(tmp_path, canary):
    handed = tmp_path / "submitted" / "mal" / "labfx"
    handed.mkdir(parents=True)
    (handed / "labfx.ipynb").write_text("{}")
    (handed / "data.csv").write_text("1,2")
    (handed / "sub").mkdir()
    (handed / "sub" / "more.txt").write_text("x")
    (handed / ".ipynb_checkpoints").mkdir()
    (handed / ".ipynb_checkpoints" / "old.ipynb").write_text("{}")
    os.symlink(canary, handed / "secret.txt")
    os.symlink(canary.parent, handed / "outside")
    os.mkfifo(handed / "pipe")
    _deep(handed, 50)
    work = tmp_path / "work"
    notes = graded_folder.prepare(work, handed, handed / "labfx.ipynb")
    copied = sorted(str(p.relative_to(work)) for p in work.rglob("*")
                    if len(p.relative_to(work).parts) < 4)
    assert copied == ["d", "d/d", "d/d/d", "data.csv", "sub", "sub/more.txt"]
    assert not any(p.is_symlink() for p in work.rglob("*"))
    assert notes == [f"1 folder(s) handed in, nested over {untrusted_tree.MAX_DEPTH} deep, "
                     f"were left out"]


def test_reading_a_file_through_a_link_or_a_linked_folder_is_refused(tmp_path, canary):
    folder = tmp_path / "hand-in"
    folder.mkdir()
    os.symlink(canary, folder / "a.ipynb")
    os.symlink(canary.parent, folder / "sub")
    os.mkfifo(folder / "b.ipynb")
    root = untrusted_tree.open_folder(folder)
    try:
        for path in ("a.ipynb", "sub/canary.txt", "b.ipynb"):
            with pytest.raises(OSError):
                untrusted_tree.read_file(root, path, 1000)
    finally:
        os.close(root)
