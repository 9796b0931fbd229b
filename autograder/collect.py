"""Collect: find each student's notebook for each lab, however it was handed in.

A class is a folder with one entry per student: a folder ``<student>/`` or an archive
``<student>.zip``. Inside, notebooks may sit anywhere, under any name. A notebook belongs to a
lab when it carries the grade ids of that lab's graded cells (answers, checks, written answers), so a renamed copy (``lab01 (1).ipynb``,
``Copy of lab01.ipynb``) is found; when several match, the one with the most of the lab's ids
wins, then the newest, and the choice is recorded. A file that is not valid notebook JSON is
a recorded outcome ("corrupt"), as is a lab with no notebook at all ("missing").
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from . import cells as lab_cells
from .manifest import Course, Lab

FOUND, MISSING, CORRUPT = "found", "missing", "corrupt"
MAX_UNPACKED_BYTES = 512 * 2**20
SKIPPED_PARTS = {".ipynb_checkpoints", "__MACOSX", "__pycache__"}


@dataclass
class Submission:
    """One student's hand-in for one lab."""

    student: str
    lab: str
    status: str
    folder: Path | None = None       # the folder the notebook sits in (other files travel along)
    path: Path | None = None
    nb: NotebookNode | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class _Candidate:
    path: Path
    nb: NotebookNode | None
    error: str
    mtime: float


def student_id(name: str) -> str:
    """A student id from a folder or archive name: safe for paths and the gradebook."""
    return re.sub(r"[^A-Za-z0-9_.@+-]+", "_", _stem(name)).strip("._") or "student"


def student_entries(submitted_dir: Path) -> dict[str, Path]:
    """``{student: folder or zip}`` in the class folder."""
    entries: dict[str, Path] = {}
    if not submitted_dir.exists():
        return entries
    for entry in sorted(submitted_dir.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir() or (entry.is_file() and entry.suffix.lower() == ".zip"):
            sid = student_id(entry.name)
            if sid in entries and _stem(entries[sid].name) == _stem(entry.name):
                # alice/ and alice.zip are one student's two hand-ins: the folder wins.
                if entry.is_dir():
                    entries[sid] = entry
                continue
            if sid in entries:
                # Two names that make the same id ("victim" and "victim_"): neither may
                # replace the other, so this one gets an id of its own.
                sid = _free_id(sid, entries)
            entries[sid] = entry
    return entries


def _stem(name: str) -> str:
    """A hand-in's name without ``.zip``: alice/ and alice.zip are the same student's."""
    return name[:-4] if name.lower().endswith(".zip") else name


def _free_id(sid: str, taken: dict[str, Path]) -> str:
    n = 2
    while f"{sid}-{n}" in taken:
        n += 1
    return f"{sid}-{n}"


def unpack(archive: Path, target: Path) -> Path:
    """Extract ``archive`` into ``target`` (fresh), refusing paths that escape it."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    total = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = Path(info.filename)
            if info.is_dir() or name.is_absolute() or ".." in name.parts:
                continue
            total += info.file_size
            if total > MAX_UNPACKED_BYTES:
                raise ValueError(f"{archive.name} unpacks to more than "
                                 f"{MAX_UNPACKED_BYTES // 2**20} MB")
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(destination, "wb") as dst:
                shutil.copyfileobj(src, dst)
            stamp = time.mktime(info.date_time + (0, 0, -1))
            os.utime(destination, (stamp, stamp))
    return target


def _candidates(folder: Path) -> list[_Candidate]:
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        if SKIPPED_PARTS & set(path.relative_to(folder).parts) or not path.is_file():
            continue
        if _links_out(path, folder):
            continue
        mtime = path.stat().st_mtime
        try:
            nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
            found.append(_Candidate(path, nb, "", mtime))
        except (ValueError, UnicodeDecodeError, KeyError, AttributeError, TypeError) as error:
            found.append(_Candidate(path, None, _json_problem(path, error), mtime))
    return found


def _links_out(path: Path, folder: Path) -> bool:
    """Is ``path`` a symlink, or reached through one? A hand-in keeps only its own files: a
    link could hand in another student's notebook, or the course's secrets."""
    here = path
    while here != folder:
        if here.is_symlink():
            return True
        here = here.parent
    return False


def _json_problem(path: Path, error: Exception) -> str:
    try:
        json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError as json_error:
        return f"not valid JSON ({json_error})"
    return f"not a readable notebook ({type(error).__name__}: {str(error)[:200]})"


def _ids(nb: NotebookNode) -> set[str]:
    return {lab_cells.nbgrader_meta(c).get("grade_id") for c in nb.cells} - {None, ""}


def _looks_like(path: Path, lab: Lab) -> bool:
    """Does a file name suggest ``lab`` (for corrupt files, whose ids cannot be read)?"""
    name = path.stem.lower()
    short = lab.id.split("_")[0].lower()
    return lab.id.lower() in name or short in name


def match(folder: Path, lab: Lab, lab_ids: set[str], candidates: list[_Candidate],
          student: str) -> Submission:
    """The submission for ``lab`` among ``candidates`` (see the module docstring)."""
    scored = [(len(_ids(c.nb) & lab_ids), c) for c in candidates if c.nb is not None]
    scored = [(n, c) for n, c in scored if n > 0]
    if scored:
        scored.sort(key=lambda item: (item[0], item[1].mtime,
                                      item[1].path.name == lab.notebook), reverse=True)
        best = scored[0][1]
        sub = Submission(student, lab.id, FOUND, best.path.parent, best.path, best.nb)
        shown = best.path.relative_to(folder).as_posix()
        if best.path.name != lab.notebook:
            sub.notes.append(f"graded {shown!r}: renamed, recognised by its cell ids")
        if len(scored) > 1:
            others = ", ".join(repr(c.path.relative_to(folder).as_posix()) for _, c in scored[1:])
            sub.notes.append(f"{len(scored)} notebooks belong to {lab.id}: graded {shown!r} "
                             f"(most cells of the lab, then newest); ignored {others}")
        return sub
    unreadable = [c for c in candidates if c.nb is None]
    # A corrupt file's ids cannot be read: its name decides, or it is the only suspect.
    corrupt = [c for c in unreadable if _looks_like(c.path, lab)] or unreadable
    if corrupt:
        bad = corrupt[0]
        return Submission(student, lab.id, CORRUPT, bad.path.parent, bad.path, None,
                          [f"{bad.path.relative_to(folder).as_posix()!r} is {bad.error}"])
    looked = ", ".join(repr(c.path.relative_to(folder).as_posix()) for c in candidates)
    why = f"no notebook for {lab.id} in the submission"
    return Submission(student, lab.id, MISSING, None, None, None,
                      [why + (f" (found only {looked})" if looked else " (no notebooks at all)")])


def collect(course: Course, labs: list[Lab], lab_ids: dict[str, set[str]],
            submitted_dir: Path | None = None,
            students: list[str] | None = None) -> list[Submission]:
    """One :class:`Submission` per student × lab, students in name order.

    Args:
        lab_ids: ``{lab: grade ids of its graded cells}`` (``LabNotebook.identifying_ids``).
        students: only these (ids as :func:`student_id` makes them).
    """
    submitted_dir = submitted_dir or course.submitted_dir
    submissions = []
    for sid, entry in student_entries(submitted_dir).items():
        if students and sid not in students:
            continue
        folder = entry
        if entry.is_file():
            try:
                folder = unpack(entry, course.work_dir / "unpacked" / sid)
            except (zipfile.BadZipFile, ValueError, OSError) as error:
                for lab in labs:
                    submissions.append(Submission(sid, lab.id, CORRUPT, None, entry, None,
                                                  [f"{entry.name!r} cannot be unpacked: {error}"]))
                continue
        candidates = _candidates(folder)
        for lab in labs:
            submissions.append(match(folder, lab, lab_ids[lab.id], candidates, sid))
    return submissions
