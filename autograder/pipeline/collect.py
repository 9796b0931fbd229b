"""Collect: find each student's notebook for each lab, however it was handed in.

A class is a folder with one entry per student: a folder ``<student>/`` or an archive
``<student>.zip``. Inside, notebooks may sit anywhere, under any name. A notebook belongs to a
lab when it carries the grade ids of that lab's graded cells (answers, checks, written answers), so a renamed copy (``lab01 (1).ipynb``,
``Copy of lab01.ipynb``) is found; when several match, the one with the most of the lab's ids
wins, then the newest, and the choice is recorded. A file that is not valid notebook JSON is
a recorded outcome ("corrupt"), as is a lab with no notebook at all ("missing").

NOTE [one hand-in never stops the class]: every file is read here once, and checked for
everything the later steps rely on (UTF-8, JSON, depth, the shape of a notebook: a list of
cells, each with a known cell_type, text source and object metadata). A file that fails says
why in its outcome, in words a TA can act on ("nbformat_minor is 'x', expected an integer");
a zip member that cannot be unpacked (an unknown compression method, a damaged entry) is
left out and named. Lone surrogates, which no file or database can store, are replaced in
the notebook right away. Whatever else goes wrong with one student's hand-in becomes that
student's "error" outcome; the others are collected as usual.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from coursekit.notebook import cells as lab_cells
from coursekit.course import Course, Lab
from autograder.isolation import untrusted_tree
from autograder.pipeline.receipts import SLACK as RECEIPT_SLACK
from autograder.pipeline.receipts import read_receipt
from coursekit.caps import (MAX_CANDIDATE_BYTES, MAX_CANDIDATES, MAX_FOLDER_DEPTH,
                            MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, MAX_MEMBERS, MAX_NOTEBOOK_BYTES,
                            MAX_UNPACKED_BYTES)
from coursekit.notebook.safe_text import printable, without_surrogates
from coursekit.status import Status


class SubmissionStatus(Status):
    """What collecting found of a student's hand-in for a lab (``Submission.status``)."""

    FOUND = "found"
    MISSING = "missing"
    CORRUPT = "corrupt"
    ERROR = "error"


KEPT_CELL_METADATA = ("nbgrader", "tags", "editable", "deletable")
KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")
CELL_TYPES = ("code", "markdown", "raw")
SKIPPED_PARTS = {".ipynb_checkpoints", "__MACOSX", "__pycache__"}


@dataclass
class Submission:
    """One student's hand-in for one lab."""

    student: str
    lab: str
    status: SubmissionStatus
    folder: Path | None = None       # the folder the notebook sits in (other files travel along)
    path: Path | None = None
    nb: NotebookNode | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class _Candidate:
    path: Path
    error: str           # why it cannot be graded; empty when it was read
    mtime: float
    notes: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)   # its grade ids; empty when unreadable


class NotANotebook(ValueError):
    """A file that cannot be graded as a notebook; the message says why, for the student."""


# A student id is a folder or archive name as it stands: safe in a path, a URL and the
# gradebook, and never derived from another name (see student_entries).
_ID = re.compile(r"[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]{0,99}")


def student_id(name: str) -> str | None:
    """The student id a folder or archive name stands for (``ann`` for ``ann/`` and
    ``ann.zip``), or None when the name is not a valid id as it is."""
    stem = _stem(name)
    return stem if _ID.fullmatch(stem) else None


def id_problem(name: str) -> str:
    """Why ``name`` is no student id, in words a TA can act on."""
    shown = _name(name)
    return (f"{shown} is not a student id, so it was not graded: an id is 1 to 100 letters, "
            f"digits and _ . @ + - (not starting with '.'); rename the folder or archive to the "
            f"student's id")


@dataclass
class Entries:
    """The class folder's hand-ins: ``{student: folder or zip}``, and the names refused
    (``{name: why}``), which are never graded and never mapped onto another id."""

    students: dict[str, Path] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)


def student_entries(submitted_dir: Path) -> Entries:
    """The hand-ins in the class folder: one folder or ``.zip`` per student, named by the
    student's id exactly. A name that is not an id is refused with the reason, whatever
    other names there are; ``ann/`` and ``ann.zip`` are one student's two hand-ins, and the
    folder is graded."""
    found = Entries()
    if not submitted_dir.exists():
        return found
    for entry in untrusted_tree.walk(submitted_dir, max_depth=0).entries:
        path = submitted_dir / entry.path
        is_zip = entry.kind == untrusted_tree.FILE and entry.path.lower().endswith(".zip")
        if entry.path.startswith(".") or not (entry.kind == untrusted_tree.FOLDER or is_zip):
            continue   # links, stray files and hidden entries are no hand-in
        sid = student_id(entry.path)
        if sid is None:
            found.refused[entry.path] = id_problem(entry.path)
        elif sid in found.students:
            folder, archive = sorted((found.students[sid], path),
                                     key=lambda p: p.suffix.lower() == ".zip")
            found.students[sid] = folder
            found.refused[archive.name] = (f"{_name(archive.name)} was not graded: "
                                           f"{_name(folder.name)} is the same student's "
                                           f"hand-in and is graded (a folder before an "
                                           f"archive)")
        else:
            found.students[sid] = path
    return found


# What nbgrader's exchange writes beside a hand-in it collected
# (``submitted/<student>/<lab>/timestamp.txt``): when the student submitted it.
TIMESTAMP = "timestamp.txt"
TIMESTAMP_BYTES = 100   # "2026-11-27 10:00:00.123456 UTC" and some room


def submitted_at(submitted_dir: Path, student: str, lab: str) -> datetime | None:
    """When ``student`` handed ``lab`` in through the exchange (UTC, naive, as nbgrader's
    gradebook stores it), or None for a hand-in from elsewhere.

    The student's server wrote ``timestamp.txt``; the exchange's collector wrote a receipt of
    when the hand-in's files last changed (:mod:`.receipts`, by :mod:`.verified_collect`). The stated time stands
    when it is within a few seconds of the receipt's; otherwise (a time set back or forward,
    or none stated) the receipt's time does. A ``timestamp.txt`` that is a link, too long or not a time counts as
    none. Read without following a link: the student wrote what the exchange collected."""
    if student_id(student) is None or student_id(lab) is None:
        return None
    stated = _stated_time(submitted_dir, student, lab)
    received = read_receipt(submitted_dir.parent, submitted_dir, student, lab)
    if received is not None and (stated is None or abs(received - stated) > RECEIPT_SLACK):
        return received
    return stated


def _stated_time(submitted_dir: Path, student: str, lab: str) -> datetime | None:
    from nbgrader.utils import parse_utc
    try:
        root = untrusted_tree.open_folder(submitted_dir)
    except OSError:
        return None
    try:
        text = untrusted_tree.read_file(root, f"{student}/{lab}/{TIMESTAMP}", TIMESTAMP_BYTES)
        return parse_utc(text.decode("ascii").strip())
    except (OSError, ValueError, OverflowError):   # UnicodeDecodeError is a ValueError
        return None
    finally:
        os.close(root)


def _stem(name: str) -> str:
    """A hand-in's name without ``.zip``: alice/ and alice.zip are the same student's."""
    return name[:-4] if name.lower().endswith(".zip") else name


def _shown(value: object, limit: int = 60) -> str:
    """A value quoted in a message: its repr, cut short and printable."""
    text = repr(value)
    return printable(text if len(text) <= limit else text[: limit - 1] + "…")


def _name(path: Path | str) -> str:
    """A file name quoted in a message (a name's bytes need not be UTF-8)."""
    return _shown(str(path) if isinstance(path, str) else path.as_posix(), 200)


# --------------------------------------------------------------------------- archives

class ArchiveError(ValueError):
    """An archive that cannot be unpacked at all; the message says why."""


def unpack(archive: Path, target: Path) -> tuple[Path, dict[str, str]]:
    """Extract ``archive`` into ``target`` (fresh), refusing paths that escape it.

    Returns the folder and ``{member name: why it was left out}`` for members that could not
    be extracted (an unknown compression method, encryption, a damaged entry, a path nested
    too deep or too long): the rest of the hand-in is still graded. Raises
    :class:`ArchiveError` (or :class:`zipfile.BadZipFile`) when the archive as a whole cannot
    be read or unpacks to more than ``MAX_UNPACKED_BYTES``.
    """
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    total = 0
    left_out: dict[str, str] = {}
    with zipfile.ZipFile(archive) as zf:
        members = zf.infolist()
        if len(members) > MAX_MEMBERS:
            raise ArchiveError(f"it holds {len(members):,} files, more than the "
                               f"{MAX_MEMBERS:,} a hand-in may have")
        for info in members:
            name = Path(info.filename)
            if info.is_dir() or name.is_absolute() or ".." in name.parts or not name.parts:
                continue
            if len(name.parts) > MAX_FOLDER_DEPTH:
                left_out[info.filename] = (f"it sits {len(name.parts) - 1} folders deep, more "
                                           f"than {MAX_FOLDER_DEPTH}")
                continue
            total += info.file_size
            if total > MAX_UNPACKED_BYTES:
                raise ArchiveError(f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB")
            try:
                total = _extract(zf, info, target / name, total)
            except ArchiveError:
                raise
            except Exception as error:  # noqa: BLE001 — one bad member never stops the rest
                left_out[info.filename] = _member_problem(info, error)
                # What was written before a damaged entry failed its check is not the file.
                if (target / name).is_file() and not (target / name).is_symlink():
                    (target / name).unlink()
    return target, left_out


def _extract(zf: zipfile.ZipFile, info: zipfile.ZipInfo, destination: Path, total: int) -> int:
    """Write one member, counting what it really unpacks to: its header may lie."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    declared = info.file_size
    with zf.open(info) as src, open(destination, "wb") as dst:
        written = 0
        while chunk := src.read(2**20):
            written += len(chunk)
            if total - declared + written > MAX_UNPACKED_BYTES:
                raise ArchiveError(f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB")
            dst.write(chunk)
    try:
        stamp = time.mktime(info.date_time + (0, 0, -1))
        os.utime(destination, (stamp, stamp))
    except (OverflowError, ValueError, OSError):
        pass  # a nonsense date: the file keeps the time it was unpacked
    return total - declared + written


def _member_problem(info: zipfile.ZipInfo, error: Exception) -> str:
    if isinstance(error, NotImplementedError):
        return (f"it uses compression method {info.compress_type}, which cannot be read "
                f"(re-zip it with the standard method, deflate)")
    if isinstance(error, RuntimeError) and "encrypted" in str(error):
        return "it is encrypted (hand it in without a password)"
    if isinstance(error, OSError) and not isinstance(error, zipfile.BadZipFile):
        return f"it cannot be written here ({printable(error.strerror or error, 120)})"
    return f"it is damaged ({type(error).__name__}: {printable(error, 120)})"


# --------------------------------------------------------------------------- notebooks

def parse_submitted(handle, size: int, name: str) -> tuple[NotebookNode, list[str]]:
    """The notebook in the open file ``handle`` (``size`` bytes, named ``name``) as nbformat
    v4, with notes about what was repaired; or :class:`NotANotebook` saying what is wrong
    (see the NOTE in the module docstring).

    Outputs are dropped: grading runs the notebook again, and a mangled output must not matter.
    """
    if size > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(f"too large to grade ({size / 2**20:.0f} MB, more than the "
                           f"{MAX_NOTEBOOK_BYTES // 2**20} MB a notebook may have)")
    raw = handle.read(MAX_NOTEBOOK_BYTES + 1)
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(f"too large to grade (more than the {MAX_NOTEBOOK_BYTES // 2**20} "
                           f"MB a notebook may have)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotANotebook(f"not UTF-8 text (byte 0x{raw[error.start]:02x} at offset "
                           f"{error.start})") from None
    if text.count("{") + text.count("[") > MAX_JSON_CONTAINERS:
        raise NotANotebook(f"not a notebook: over {MAX_JSON_CONTAINERS:,} JSON objects and "
                           f"lists")
    try:
        data = json.loads(text)
    except RecursionError:
        raise NotANotebook(f"not a notebook: JSON nested too deeply to read (a notebook "
                           f"nests at most {MAX_JSON_DEPTH} levels)") from None
    except ValueError as error:
        raise NotANotebook(f"not valid JSON ({printable(error, 200)})") from None
    depth = _depth(data)
    if depth > MAX_JSON_DEPTH:
        raise NotANotebook(f"not a notebook: JSON nested {depth} levels deep, expected at "
                           f"most {MAX_JSON_DEPTH}")
    data, replaced = without_surrogates(_essentials(data))
    notes = [f"{_name(name)}: {replaced} piece(s) of text held characters that are not "
             f"valid Unicode (lone surrogates); they were replaced with \ufffd"] if replaced else []
    return _as_v4(data), notes


def _essentials(data):
    """What grading reads of a v4 notebook, before anything walks all of it again: cells
    (their type, source, id, attachments and the metadata nbgrader and JupyterLab keep) and
    the notebook's kernel and language. The rest (outputs, widget state, any metadata of a
    tool's) is dropped: grading runs the notebook again, and nothing else of it is read."""
    if not (isinstance(data, dict) and data.get("nbformat") == 4
            and isinstance(data.get("cells"), list)):
        return data   # an older format or no notebook: _as_v4 converts it or says why
    metadata = data.get("metadata")
    kept = {key: data[key] for key in ("nbformat", "nbformat_minor") if key in data}
    kept["metadata"] = ({key: metadata[key] for key in KEPT_NOTEBOOK_METADATA if key in metadata}
                        if isinstance(metadata, dict) else metadata)
    kept["cells"] = [_cell_essentials(cell) for cell in data["cells"]]
    return kept


def _cell_essentials(cell):
    if not isinstance(cell, dict):
        return cell
    kept = {key: cell[key] for key in ("cell_type", "source", "id", "attachments") if key in cell}
    metadata = cell.get("metadata", {})
    kept["metadata"] = ({key: metadata[key] for key in KEPT_CELL_METADATA if key in metadata}
                        if isinstance(metadata, dict) else metadata)
    return kept


def _depth(value) -> int:
    """How deep JSON containers nest in ``value`` (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1)
                         for child in (item.values() if isinstance(item, dict) else item)
                         if isinstance(child, (list, dict)))
    return deepest


def _as_v4(data) -> NotebookNode:
    """A parsed notebook file as nbformat v4, or :class:`NotANotebook`."""
    if not isinstance(data, dict):
        raise NotANotebook(f"not a notebook: the file holds a JSON {_json_kind(data)}, "
                           f"expected an object with 'cells'")
    if "nbformat" not in data:
        raise NotANotebook("not a notebook: it has no 'nbformat' field")
    major, minor = data["nbformat"], data.get("nbformat_minor", 0)
    if type(major) is not int:
        raise NotANotebook(f"not a notebook: nbformat is {_shown(major)}, expected an "
                           f"integer (4)")
    if type(minor) is not int:
        raise NotANotebook(f"not a notebook: nbformat_minor is {_shown(minor)}, expected an "
                           f"integer")
    if major == 4:
        _check_v4(data)
        return nbformat.versions[4].to_notebook_json(data)
    if major not in (1, 2, 3):
        raise NotANotebook(f"nbformat {_shown(major)} is not a notebook format this grader "
                           f"reads (expected 4)")
    try:
        nb = nbformat.convert(nbformat.versions[major].to_notebook_json(data, minor=minor), 4)
        _check_v4(nb)
        return nbformat.versions[4].to_notebook_json(nb)
    except NotANotebook:
        raise
    except Exception as error:  # noqa: BLE001 — an old format nbformat cannot convert
        raise NotANotebook(f"an old notebook format (v{major}) that cannot be converted to v4 "
                           f"({type(error).__name__}: {printable(error, 120)})") from None


def _check_v4(nb: dict) -> None:
    """Check, in place, the parts of a v4 notebook that grading reads; repair the harmless."""
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise NotANotebook(f"not a notebook: 'cells' is {_shown(cells)}, expected a list")
    metadata = nb.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise NotANotebook(f"not a notebook: its metadata is {_shown(metadata)}, expected "
                           f"an object")
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            raise NotANotebook(f"cell {number} is {_shown(cell)}, expected a cell (an object "
                               f"with cell_type and source)")
        kind = cell.get("cell_type")
        if not (isinstance(kind, str) and kind in CELL_TYPES):
            raise NotANotebook(f"cell {number}'s cell_type is {_shown(kind)}, expected one of "
                               f"{', '.join(CELL_TYPES)}")
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list)
                                            and all(isinstance(s, str) for s in source))):
            raise NotANotebook(f"cell {number}'s source is {_shown(source)}, expected text")
        cell_meta = cell.setdefault("metadata", {})
        if not isinstance(cell_meta, dict):
            raise NotANotebook(f"cell {number}'s metadata is {_shown(cell_meta)}, expected "
                               f"an object")
        if "id" in cell and not isinstance(cell["id"], str):
            raise NotANotebook(f"cell {number}'s id is {_shown(cell['id'])}, expected text")
        if kind == "code":
            cell["outputs"], cell["execution_count"] = [], None
        else:
            cell.pop("outputs", None)
        attachments = cell.get("attachments")
        if "attachments" in cell and not (isinstance(attachments, dict) and all(
                isinstance(bundle, dict) and all(
                    isinstance(v, str) or (isinstance(v, list)
                                           and all(isinstance(s, str) for s in v))
                    for v in bundle.values())
                for bundle in attachments.values())):
            del cell["attachments"]  # images in a markdown cell: never graded


def _json_kind(value) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


# --------------------------------------------------------------------------- matching

def _candidates(folder: Path) -> list[_Candidate]:
    """Every ``.ipynb`` file below ``folder``, read one at a time without following a link
    (a link could hand in another student's notebook, or the course's secrets). A candidate
    keeps only its grade ids: the notebook graded is read again once chosen (:func:`match`),
    so a hand-in of many large notebooks never holds more than one in memory. At most
    MAX_CANDIDATES notebooks of MAX_CANDIDATE_BYTES together are read; the others are named."""
    found = []
    listing = untrusted_tree.walk(folder, skip=frozenset(SKIPPED_PARTS))
    root = untrusted_tree.open_folder(folder)
    budget = MAX_CANDIDATE_BYTES
    try:
        for entry in listing.files():
            if not entry.path.endswith(".ipynb") or SKIPPED_PARTS & set(entry.parts):
                continue
            path = folder / entry.path
            if len(found) >= MAX_CANDIDATES or entry.size > budget:
                found.append(_Candidate(path, f"not read: a hand-in's notebooks are read "
                                        f"up to {MAX_CANDIDATES} of them and "
                                        f"{MAX_CANDIDATE_BYTES // 2**20} MB together", 0.0))
                continue
            budget -= entry.size
            try:
                with os.fdopen(untrusted_tree.open_file(root, entry.path), "rb") as handle:
                    info = os.fstat(handle.fileno())
                    ids, notes, mtime, error = _seen(
                        (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns),
                        lambda: (*parse_submitted(handle, info.st_size, path.name),  # noqa: B023 — called at once
                                 info.st_mtime))  # noqa: B023
                found.append(_Candidate(path, error, mtime, notes, ids))
            except OSError as error:
                why = f"unreadable ({printable(error.strerror or error, 120)})"
                found.append(_Candidate(path, why, 0.0))
    finally:
        os.close(root)
    return found


def _read_again(folder: Path, candidate: _Candidate) -> NotebookNode:
    """The notebook of a chosen candidate (candidates keep their ids only)."""
    root = untrusted_tree.open_folder(folder)
    try:
        return _read_candidate(root, candidate.path.relative_to(folder).as_posix())[0]
    finally:
        os.close(root)


def _read_candidate(root: int, path: str) -> tuple[NotebookNode, list[str], float]:
    """``(notebook, notes, mtime)`` of the hand-in's file at ``path`` below ``root``."""
    fd = untrusted_tree.open_file(root, path)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        nb, notes = parse_submitted(handle, info.st_size, path.rsplit("/", 1)[-1])
    return nb, notes, info.st_mtime


# What a notebook file was found to be, by the file's identity: the formgrader's lists look
# at every hand-in at each request, and a class's notebooks change only when handed in again.
_SEEN: dict[tuple, tuple[set[str], list[str], float, str]] = {}
MAX_SEEN = 20_000


def _seen(key: tuple, read) -> tuple[set[str], list[str], float, str]:
    """``(ids, notes, mtime, error)`` of the notebook ``key`` names, read by ``read()`` (a
    NotANotebook is remembered as its error) unless it was read before."""
    if key not in _SEEN:
        try:
            nb, notes, mtime = read()
            found = (_ids(nb), notes, mtime, "")
        except NotANotebook as error:
            found = (set(), [], 0.0, str(error))
        if len(_SEEN) >= MAX_SEEN:
            _SEEN.clear()
        _SEEN[key] = found
    return _SEEN[key]


def _ids(nb: NotebookNode) -> set[str]:
    return {lab_cells.nbgrader_meta(c).get("grade_id") for c in nb.cells} - {None, ""}


def _looks_like(path: Path, lab: Lab) -> bool:
    """Does a file name suggest ``lab`` (for corrupt files, whose ids cannot be read)?"""
    name = path.stem.lower()
    short = lab.id.split("_")[0].lower()
    return lab.id.lower() in name or short in name


def match(folder: Path, lab: Lab, lab_ids: set[str], candidates: list[_Candidate],
          student: str, *, read: bool = True) -> Submission:
    """The submission for ``lab`` among ``candidates`` (see the module docstring); its
    notebook is read again from ``folder`` unless ``read`` is False (its status is all a
    caller wants)."""
    scored = [(len(c.ids & lab_ids), c) for c in candidates if not c.error]
    scored = [(n, c) for n, c in scored if n > 0]
    if scored:
        scored.sort(key=lambda item: (item[0], item[1].mtime,
                                      item[1].path.name == lab.notebook), reverse=True)
        best = scored[0][1]
        nb = _read_again(folder, best) if read else None
        sub = Submission(student, lab.id, SubmissionStatus.FOUND, best.path.parent, best.path, nb)
        shown = _name(best.path.relative_to(folder))
        if best.path.name != lab.notebook:
            sub.notes.append(f"graded {shown}: renamed, recognised by its cell ids")
        if len(scored) > 1:
            others = ", ".join(_name(c.path.relative_to(folder)) for _, c in scored[1:])
            sub.notes.append(f"{len(scored)} notebooks belong to {lab.id}: graded {shown} "
                             f"(most cells of the lab, then newest); ignored {others}")
        sub.notes += best.notes
        return sub
    unreadable = [c for c in candidates if c.error]
    # A corrupt file's ids cannot be read: its name decides, or it is the only suspect.
    corrupt = [c for c in unreadable if _looks_like(c.path, lab)] or unreadable
    if corrupt:
        bad = corrupt[0]
        return Submission(student, lab.id, SubmissionStatus.CORRUPT, bad.path.parent, bad.path, None,
                          [f"{_name(bad.path.relative_to(folder))}: {bad.error}"])
    looked = ", ".join(_name(c.path.relative_to(folder)) for c in candidates)
    why = f"no notebook for {lab.id} in the submission"
    return Submission(student, lab.id, SubmissionStatus.MISSING, None, None, None,
                      [why + (f" (found only {looked})" if looked else " (no notebooks at all)")])


def _archive_candidates(archive: Path) -> list[_Candidate]:
    """Every ``.ipynb`` member of the zip ``archive``, read from the archive in place (never
    unpacked, and no more of it than :func:`unpack` would write); none when the archive
    itself cannot be read."""
    found, total = [], 0
    try:
        whole = os.stat(archive, follow_symlinks=False)
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > MAX_MEMBERS:
                return []
            for info in members:
                parts = info.filename.split("/")
                if (info.is_dir() or not info.filename.endswith(".ipynb")
                        or SKIPPED_PARTS & set(parts) or ".." in parts):
                    continue
                total += info.file_size   # zipfile reads no more than a member declares
                if total > MAX_UNPACKED_BYTES:
                    break
                path = archive / info.filename.lstrip("/")
                if len(found) >= MAX_CANDIDATES:
                    break
                def read(info=info, path=path):
                    with zf.open(info) as handle:
                        nb, notes = parse_submitted(handle, info.file_size, path.name)
                    return nb, notes, time.mktime(info.date_time + (0, 0, -1))
                try:
                    ids, notes, mtime, error = _seen(
                        (whole.st_dev, whole.st_ino, whole.st_size, whole.st_mtime_ns,
                         info.filename), read)
                    found.append(_Candidate(path, error, mtime, notes, ids))
                except Exception as error:  # noqa: BLE001 — a damaged member is unreadable
                    found.append(_Candidate(path, _member_problem(info, error), 0.0))
    except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError, ValueError):
        return []
    return found


def labs_handed_in(entry: Path, labs: list[Lab], lab_ids: dict[str, set[str]]) -> set[str]:
    """The labs of ``labs`` that a student's hand-in ``entry`` (their folder or zip in the
    class folder) holds a notebook of, matched as grading matches it (by cell ids), without
    unpacking or grading anything: what the formgrader counts as handed in before it is
    graded. A corrupt file counts for the lab its name suggests (grading, which must give
    every lab an outcome, also blames it on a lab when it is the only suspect), and an
    archive that cannot be read counts for no lab until it is graded."""
    try:
        candidates = (_archive_candidates(entry) if entry.is_file()
                      else _candidates(entry))
    except OSError:
        return set()
    found = set()
    for lab in labs:
        sub = match(entry, lab, lab_ids[lab.id], candidates, "", read=False)
        if sub.status == SubmissionStatus.FOUND or (sub.status == SubmissionStatus.CORRUPT and _looks_like(sub.path, lab)):
            found.add(lab.id)
    return found


def _collect_student(sid: str, entry: Path, course: Course, labs: list[Lab],
                     lab_ids: dict[str, set[str]]) -> list[Submission]:
    folder, left_out = entry, {}
    if entry.is_file():
        try:
            folder, left_out = unpack(entry, course.work_dir / "unpacked" / sid)
        except (zipfile.BadZipFile, ArchiveError, OSError, EOFError, UnicodeDecodeError) as error:
            detail = error.strerror if isinstance(error, OSError) and error.strerror else error
            why = f"{_name(entry.name)} cannot be unpacked: {printable(detail, 200)}"
            return [Submission(sid, lab.id, SubmissionStatus.CORRUPT, None, entry, None, [why]) for lab in labs]
    candidates = _candidates(folder)
    # A notebook the archive could not give up is a corrupt candidate: if it is the lab's,
    # the outcome names it instead of calling the notebook missing.
    candidates += [_Candidate(folder / name, f"could not be unpacked from the zip: {why}",
                              0.0)
                   for name, why in left_out.items() if name.lower().endswith(".ipynb")]
    others = [f"{_name(name)} was left out of the zip: {why}"
              for name, why in left_out.items() if not name.lower().endswith(".ipynb")]
    submissions = []
    for lab in labs:
        sub = match(folder, lab, lab_ids[lab.id], candidates, sid)
        sub.notes += others
        submissions.append(sub)
    return submissions


def collect(course: Course, labs: list[Lab], lab_ids: dict[str, set[str]],
            submitted_dir: Path | None = None,
            students: list[str] | None = None) -> list[Submission]:
    """One :class:`Submission` per student × lab, students in name order.

    Args:
        lab_ids: ``{lab: grade ids of its graded cells}`` (``LabNotebook.identifying_ids``).
        students: only these ids.
    """
    submitted_dir = submitted_dir or course.submitted_dir
    submissions = []
    for sid, entry in student_entries(submitted_dir).students.items():
        if students and sid not in students:
            continue
        try:
            submissions += _collect_student(sid, entry, course, labs, lab_ids)
        except Exception as error:  # noqa: BLE001 — one student's hand-in never stops the class
            why = (f"the grader could not read this hand-in ({type(error).__name__}: "
                   f"{printable(error, 200)}): a problem of the grader, not of the work "
                   f"handed in")
            submissions += [Submission(sid, lab.id, SubmissionStatus.ERROR, None, entry, None, [why])
                            for lab in labs]
    return submissions
