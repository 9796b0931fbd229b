"""The graded folder of one submission, ``course/autograded/<student>/<lab>/``.

A kernel works in it (or, forked, in a slot's folder that is moved there afterwards), so
after the run it holds whatever the student's code left: the grader treats it as hostile
input (:mod:`.untrusted_tree`). The grader

1. **prepares** it before the run: a copy of the files handed in beside the notebook, never
   the originals, without links;
2. **trims** it after the run: a graded folder keeps the files and folders a TA may want
   to open (no links, FIFOs or disk fillers), and the notes say what was deleted;
3. **places** the graded notebook in it, replacing whatever the student left under its name;
4. keeps its **own error details** beside it (``<lab>.grader-error.txt`` in
   ``course/autograded/<student>/``), where the student's process never could write.

Every step here runs once the student's processes have ended, and off the event loop that
drives the other kernels (the callers use ``asyncio.to_thread``): a folder of 200,000 files
must not stall a neighbour's cells.
"""
from __future__ import annotations

import os
from pathlib import Path

import nbformat

from autograder.isolation import untrusted_tree
from coursekit.notebook import kernels
from coursekit.notebook.safe_text import printable

KEEP_FILE_MB = 50   # a graded folder keeps what a TA may want to open, not a disk filler
HANDED_IN_MB = kernels.DISK_MB   # the files beside a hand-in's notebook grading takes
NOT_COPIED = frozenset({".ipynb_checkpoints", "__pycache__"})
ERROR_DETAILS = "{lab}.grader-error.txt"


def handed_in(folder: Path, notebook: Path | None) -> tuple[list[untrusted_tree.Entry],
                                                            list[str]]:
    """What grading takes of a hand-in beside its ``notebook`` (copies in, hashes, ships to
    a cluster): its folders and regular files, never a link, checkpoints or the notebook
    itself (the assembled one runs), files in path order as long as they fit in HANDED_IN_MB
    together (apparent sizes: a sparse file is as large as it claims). Notes say what was
    left out."""
    listing = untrusted_tree.walk(folder, skip=NOT_COPIED)
    leave_out = notebook.relative_to(folder).as_posix() if notebook is not None else None
    kept, dropped, total = [], [], 0
    for entry in listing.entries:
        if entry.path == leave_out or NOT_COPIED & set(entry.parts):
            continue
        if entry.kind == untrusted_tree.FOLDER:
            kept.append(entry)
        elif entry.kind == untrusted_tree.FILE:
            if total + entry.size > HANDED_IN_MB * 2**20:
                dropped.append(entry)
            else:
                total += entry.size
                kept.append(entry)
    notes = []
    if dropped:
        notes.append(f"{len(dropped)} file(s) handed in beside the notebook "
                     f"({sum(e.size for e in dropped) / 2**20:,.0f} MB) were left out: "
                     f"grading takes at most {HANDED_IN_MB} MB of them "
                     f"({_names([e.path for e in dropped])})")
    if listing.too_deep:
        notes.append(f"{len(listing.too_deep)} folder(s) handed in, nested over "
                     f"{untrusted_tree.MAX_DEPTH} deep, were left out")
    if listing.incomplete:
        notes.append(f"only the first {untrusted_tree.MAX_ENTRIES:,} files and folders handed "
                     f"in were taken")
    return kept, notes


def prepare(workdir: Path, folder: Path | None, notebook: Path | None) -> list[str]:
    """Make ``workdir`` afresh: a copy of what was handed in beside ``notebook`` in
    ``folder`` (:func:`handed_in`), never the originals. Notes say what was left out."""
    if workdir.exists():
        kernels.remove_tree(workdir)
    workdir.parent.mkdir(parents=True, exist_ok=True)
    if folder is None:
        workdir.mkdir()
        return []
    entries, notes = handed_in(folder, notebook)
    untrusted_tree.copy(folder, workdir, entries)
    return notes


def trim(workdir: Path, keep: str) -> list[str]:
    """Trim what the run left in ``workdir``: links and special files, files over
    KEEP_FILE_MB, then, in path order, whatever goes over kernels.DISK_MB for the folder as
    a whole (many files just under KEEP_FILE_MB are a disk filler too); folders nested
    deeper than a walk goes, and everything when the folder holds more entries than a walk
    looks at. ``keep`` (the graded notebook's name) is never deleted but counts. The notes
    say what was deleted.

    Sizes are apparent sizes, at least one 4 KiB block per file: a sparse file is as large
    as what a TA would copy, and a million empty files still fill the disk's inodes.
    """
    listing = untrusted_tree.walk(workdir)
    notes: list[str] = []
    root = untrusted_tree.open_folder(workdir)
    try:
        if listing.incomplete:
            untrusted_tree.empty(workdir, keep=frozenset({keep}))
            return [f"the run left over {untrusted_tree.MAX_ENTRIES:,} files and folders; all "
                    f"of them but the graded notebook were deleted after grading"]
        # A link a TA or a tool could follow later, a FIFO that blocks whoever reads it.
        odd = [e.path for e in listing.entries
               if e.kind in (untrusted_tree.LINK, untrusted_tree.OTHER) and e.path != keep]
        for path in odd + listing.too_deep:
            untrusted_tree.remove(root, path)
        if odd:
            notes.append(f"{len(odd)} link(s) or special file(s) the run left were deleted "
                         f"after grading: a graded folder keeps files and folders only "
                         f"({_names(odd)})")
        if listing.too_deep:
            notes.append(f"{len(listing.too_deep)} folder(s) nested over "
                         f"{untrusted_tree.MAX_DEPTH} deep were deleted after grading "
                         f"({_names(listing.too_deep)})")
        kept = next((f.size for f in listing.files() if f.path == keep), 0)
        big, over = [], []
        total = kept
        for entry in listing.files():
            if entry.path == keep:
                continue
            size = max(entry.size, 4096)
            if size > KEEP_FILE_MB * 2**20:
                big.append((entry.path, size))
            elif total + size > kernels.DISK_MB * 2**20:
                over.append((entry.path, size))
            else:
                total += size
        for path, _ in big + over:
            untrusted_tree.remove(root, path)
    finally:
        os.close(root)
    for path, size in big[:5]:
        notes.append(f"{_names([path])} ({size / 2**20:.0f} MB) was deleted after grading: "
                     f"files over {KEEP_FILE_MB} MB are not kept")
    if len(big) > 5:
        notes.append(f"{len(big) - 5} more files over {KEEP_FILE_MB} MB were deleted")
    if over:
        notes.append(f"{len(over)} file(s) ({sum(s for _, s in over) / 2**20:.0f} MB) were "
                     f"deleted after grading: a graded folder keeps at most {kernels.DISK_MB} "
                     f"MB in all ({_names([p for p, _ in over])})")
    return notes


def _names(paths: list[str], shown: int = 3) -> str:
    """Student-chosen names, as a TA reads them: short and printable."""
    names = ", ".join(printable(path, 80) for path in paths[:shown])
    return names + (", …" if len(paths) > shown else "")


def place_notebook(nb, workdir: Path, name: str) -> None:
    """Write the graded notebook as ``workdir/name``, replacing whatever the student left
    there (a link to the gradebook, a folder), never writing through it."""
    untrusted_tree.place(nbformat.writes(nb).encode("utf-8"), workdir, name,
                         staging=workdir.parent)


def error_details(autograded: Path, student: str, lab: str) -> Path:
    """Where the grader keeps the traceback of its failure on one submission."""
    return autograded / student / ERROR_DETAILS.format(lab=lab)


def write_error_details(autograded: Path, student: str, lab: str, text: str) -> Path:
    """Keep ``text`` in :func:`error_details`, a folder only the grader writes."""
    path = error_details(autograded, student, lab)
    path.parent.mkdir(parents=True, exist_ok=True)
    untrusted_tree.place(text.encode("utf-8", errors="replace"), path.parent, path.name,
                         staging=path.parent)
    return path


def handed_in_files(folder: Path | None, notebook: Path | None):
    """``(relative path, bytes)`` of each file handed in beside the notebook ``notebook`` in
    ``folder``, as grading takes them (:func:`handed_in`: no link followed, bounded), a block
    at a time."""
    if folder is None:
        return
    entries, _ = handed_in(folder, notebook)
    root = untrusted_tree.open_folder(folder)
    try:
        for entry in entries:
            if entry.kind == untrusted_tree.FILE:
                yield entry.path, untrusted_tree.chunks(root, entry.path)
    finally:
        os.close(root)
