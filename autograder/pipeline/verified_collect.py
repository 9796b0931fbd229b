"""nbgrader's collect, trusting neither the name nor the time a hand-in states.

Each hand-in in the exchange's inbound folder is a folder ``<student>+<lab>+<time>+<random>``
with a ``timestamp.txt``, both written by the student's own server: a student can write any
name, any time, or none. nbgrader's collect believes them (it only warns when the owner is
another user). :class:`VerifiedCollect`, configured in ``course/nbgrader_config.py``, adds:

* **The name is the owner's.** A hand-in is collected only when its folder belongs to the
  student it names, or to the user who collects (a course run by one account): on a
  JupyterHub, Ann cannot hand in as Bob. (Where every server runs as one uid, DockerSpawner's
  ``jovyan``, ownership tells nothing: ``c.VerifiedCollect.owner_must_match = False``.)
* **Only files and folders, copied without following anything.** nbgrader copies with the
  collector's rights and follows links: a link in a hand-in to the instructor's solution, or
  to ``/dev/zero``, was collected as the student's work. A hand-in holding anything but
  regular files and folders, or more than :data:`MAX_ENTRIES` entries, :data:`MAX_DEPTH`
  levels or nbgrader's size limit, is refused; the rest is copied first into a folder of the
  collector's own, links kept as links, and checked again there before nbgrader's copy.
* **One hand-in never stops the others.** Each is collected on its own; one that fails is
  logged, its partial copy removed, and the collection goes on.
* **A receipt of when it last changed.** The change time (``st_ctime``) of every entry of the
  hand-in, which the kernel sets and nobody can set back, not even the entry's owner: the
  latest is written to ``exchange_receipts/<student>/<lab>`` in the course folder, which
  students cannot write, with a digest of the hand-in's ``submission_secret.txt`` (so that a
  receipt never times another hand-in copied there later).
  :func:`autograder.pipeline.collect.submitted_at` believes the stated time only when it is
  within :data:`autograder.pipeline.receipts.SLACK` of the receipt's.

Change times move forward whenever anyone changes a file's metadata: a ``chmod -R``, a
``chown`` or a restore of the exchange between the deadline and the collection makes every
hand-in not yet collected look handed in then. Collect first.
"""
from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Bool

from autograder.pipeline.receipts import FORMAT, SECRET, digest, receipt_path
from coursekit.caps import MAX_FOLDER_DEPTH

MAX_ENTRIES = 10_000
MAX_DEPTH = MAX_FOLDER_DEPTH


class Refused(Exception):
    """A hand-in that is not collected; the message says why."""


def inspect(src: str | os.PathLike, max_bytes: int) -> datetime:
    """The latest change time (UTC, naive, as nbgrader's gradebook stores times) of ``src``
    and every entry below it, read through folder descriptors, never following a link.
    Raises :class:`Refused` for anything but regular files and folders, or a tree past the
    limits."""
    latest, entries, size = os.lstat(src).st_ctime, 0, 0
    top = os.fspath(src).rstrip(os.sep).count(os.sep)
    for folder, dirs, files, fd in os.fwalk(src, follow_symlinks=False):
        if folder.count(os.sep) - top >= MAX_DEPTH and dirs:
            raise Refused(f"folders nested deeper than {MAX_DEPTH} levels")
        for name in dirs + files:
            entries += 1
            if entries > MAX_ENTRIES:
                raise Refused(f"more than {MAX_ENTRIES} files and folders")
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise Refused(f"{name[:80]!r} is not a file or a folder (a link?)")
            latest = max(latest, info.st_ctime)
            size += info.st_size if stat.S_ISREG(info.st_mode) else 0
            if size > max_bytes:
                raise Refused(f"more than {max_bytes} bytes")
    return datetime.fromtimestamp(latest, timezone.utc).replace(tzinfo=None)


class VerifiedCollect(ExchangeCollect):
    """nbgrader's collect, with the checks of the module docstring."""

    owner_must_match = Bool(True, help="Collect a hand-in only when its folder belongs to the "
                            "student it names (or to the collecting user). Turn off where "
                            "every user's server runs as one uid.").tag(config=True)

    def _path_to_record(self, path):
        try:
            record = super()._path_to_record(path)
            refused = _refusal(path, record["username"], self.owner_must_match)
        except Exception as error:  # noqa: BLE001 — nbgrader's parse of a name a student chose
            record = {"username": os.path.basename(path).split("+", 1)[0],
                      "filename": os.path.basename(path)}
            refused = f"its name holds no time ({type(error).__name__})"
        if refused:
            # Sorted last, so that a genuine hand-in of the same name is the one chosen.
            record.update(timestamp=datetime.min, refused=refused)
        return record

    def _sort_by_timestamp(self, records):
        # A refused record never stands in for a genuine one (datetime.min is before every
        # due date, and --before-duedate would choose it).
        ordered = super()._sort_by_timestamp(records)
        return [r for r in ordered if not r.get("refused")] or ordered

    def copy_files(self):
        records = self.src_records
        for record in records:
            self.src_records = [record]
            try:
                if record.get("refused"):
                    # Nothing of the student it names is touched: the name may be a forgery.
                    self._refused(record, record["refused"])
                    continue
                super().copy_files()
            except Exception as error:  # noqa: BLE001 — one hand-in never stops the others
                self._undo(record)
                self._refused(record, str(error)[:300])
        self.src_records = records

    def _refused(self, record, why: str) -> None:
        self.log.error(f"not collected: {record['filename'][:200]!r} in the inbound folder: "
                       f"{why}")

    def do_copy(self, src, dest, log=None):
        limit = 1000 * self.coursedir.max_dir_size
        before = inspect(src, limit)
        with tempfile.TemporaryDirectory(dir=Path(dest).parent, prefix=".collecting-") as own:
            staged = os.path.join(own, "hand-in")
            shutil.copytree(src, staged, symlinks=True)   # a link stays a link
            inspect(staged, limit)   # the copy of our own holds what was checked
            received = max(before, inspect(src, limit))   # a change during the copy counts
            super().do_copy(staged, dest, log)
        self._write_receipt(dest, received)

    def _write_receipt(self, dest, received: datetime) -> None:
        from autograder.pipeline.collect import student_id
        student, lab = Path(dest).parent.name, Path(dest).name
        if student_id(student) is None or student_id(lab) is None:
            return   # a name that is no student's or lab's: nothing is graded under it
        try:
            with open(Path(dest, SECRET), "rb") as handed_in:   # the collector's own copy
                secret = handed_in.read(1024)
        except OSError:
            secret = None
        path = receipt_path(Path(self.coursedir.root), student, lab)
        path.parent.mkdir(parents=True, exist_ok=True)
        shared = self.coursedir.groupshared
        if shared:   # another collector of the staff group writes here too
            for folder in (path.parent.parent, path.parent):
                try:
                    os.chmod(folder, 0o2770)
                except PermissionError:
                    pass
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{lab}.")
        with os.fdopen(fd, "w") as out:
            out.write(f"{received.strftime(FORMAT)} {digest(secret)}\n")
        os.chmod(temporary, 0o660 if shared else 0o644)
        os.replace(temporary, path)

    def _undo(self, record) -> None:
        """Remove what a failed collection of ``record`` (the named student's own hand-in:
        its owner was checked) left: its copy and its receipt. A later collect copies the
        hand-in afresh."""
        from autograder.pipeline.collect import student_id
        student = record.get("username", "")
        if student_id(student) is None:
            return
        lab = self.coursedir.assignment_id
        dest = self.coursedir.format_path(self.coursedir.submitted_directory, student, lab)
        if os.path.isdir(dest) and not os.path.islink(dest):
            shutil.rmtree(dest, ignore_errors=True)
        receipt = receipt_path(Path(self.coursedir.root), student, lab)
        if receipt.is_file():
            receipt.unlink()


def _refusal(path: str, student: str, owner_must_match: bool) -> str | None:
    """Why the inbound folder ``path`` is not ``student``'s hand-in, or None."""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder (a link?)"
    if not owner_must_match or info.st_uid == os.geteuid():
        return None   # the collector's own: a course run by one account
    try:
        owner = pwd.getpwuid(info.st_uid).pw_name
    except KeyError:
        owner = f"uid {info.st_uid}"
    if owner != student:
        return f"it names the student {student!r} but belongs to {owner!r}"
    return None
