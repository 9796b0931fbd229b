"""nbgrader's collect, trusting neither the name nor the time a hand-in states.

Each hand-in in the exchange's inbound folder is a folder ``<student>+<lab>+<time>+<random>``
with a ``timestamp.txt``, both written by the student's own server: a student can write any
name, any time, or none. nbgrader's collect believes them (it only warns when the owner is
another user). :class:`VerifiedCollect`, configured in ``course/nbgrader_config.py``, adds:

* **The name is the owner's.** A hand-in is collected only when its folder belongs to the
  student it names, or to the user who collects (a course run by one account): on a
  JupyterHub, Ann cannot hand in as Bob. A name whose time is no time is skipped, not fatal
  to everyone's collection.
* **A receipt of when it last changed.** The change time (``st_ctime``) of every entry of the
  hand-in, which the kernel sets and nobody can set back, not even the entry's owner: the
  latest is written to ``exchange_receipts/<student>/<lab>`` in the course folder, which
  students cannot write. :func:`autograder.pipeline.collect.submitted_at` believes the stated
  time only when the files did not change after it (within :data:`SLACK`).
"""
from __future__ import annotations

import os
import pwd
import stat
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from autograder.isolation import untrusted_tree

RECEIPTS = "exchange_receipts"   # beside submitted/ in the course folder
# nbgrader's submit takes its time, then copies the files and writes timestamp.txt: an honest
# hand-in's files change a little after its stated time (seconds, for a large hand-in).
SLACK = timedelta(seconds=60)
MAX_ENTRIES = 10_000   # a hand-in with more entries is timed by its collection instead
RECEIPT_BYTES = 64
_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def last_change(src: str | os.PathLike) -> datetime:
    """The latest change time (UTC, naive, as nbgrader's gradebook stores times) of ``src``
    and every entry below it, read without following a link. A tree too large to read, or
    one that is a link, counts as changed now: its time can only be later than the truth."""
    latest, seen = 0.0, 0
    pending = [os.fspath(src)]
    try:
        if stat.S_ISLNK(os.lstat(pending[0]).st_mode):
            latest = time.time()
            pending = []
        while pending:
            folder = pending.pop()
            latest = max(latest, os.lstat(folder).st_ctime)
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        return _utc(time.time())
                    info = entry.stat(follow_symlinks=False)
                    latest = max(latest, info.st_ctime)
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(entry.path)
    except OSError:
        return _utc(time.time())
    return _utc(latest)


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None)


def receipt_path(course_dir: Path, student: str, lab: str) -> Path:
    return course_dir / RECEIPTS / student / lab


def read_receipt(course_dir: Path, student: str, lab: str) -> datetime | None:
    """The receipt's time, or None where the hand-in came without the exchange's collector
    (copied into submitted/ by hand, the demo class)."""
    try:
        root = untrusted_tree.open_folder(course_dir / RECEIPTS)
    except OSError:
        return None
    try:
        text = untrusted_tree.read_file(root, f"{student}/{lab}", RECEIPT_BYTES)
        return datetime.strptime(text.decode("ascii").strip(), _FORMAT)
    except (OSError, ValueError):   # UnicodeDecodeError is a ValueError
        return None
    finally:
        os.close(root)


class VerifiedCollect(ExchangeCollect):
    """nbgrader's collect, with the checks of the module docstring."""

    def _path_to_record(self, path):
        try:
            record = super()._path_to_record(path)
            refused = _refusal(path, record["username"])
        except Exception as error:  # noqa: BLE001 — nbgrader's parse of a name a student chose
            record = {"username": os.path.basename(path).split("+", 1)[0],
                      "filename": os.path.basename(path)}
            refused = f"its name holds no time ({type(error).__name__})"
        if refused:
            # Sorted last, so that a genuine hand-in of the same name is the one chosen.
            record.update(timestamp=datetime.min, refused=refused)
        return record

    def copy_files(self):
        for record in self.src_records:
            if record.get("refused"):
                self.log.error(f"not collected: {record['filename'][:200]!r} in the inbound folder: "
                               f"{record['refused']}")
        self.src_records = [r for r in self.src_records if not r.get("refused")]
        super().copy_files()

    def do_copy(self, src, dest, log=None):
        from autograder.pipeline.collect import student_id
        super().do_copy(src, dest, log)
        received = last_change(src)   # after the copy: a change during it counts too
        student, lab = Path(dest).parent.name, Path(dest).name
        if student_id(student) is None or student_id(lab) is None:
            return   # a name that is no student's or lab's: nothing is graded under it
        path = receipt_path(Path(self.coursedir.root), student, lab)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o664)
        with os.fdopen(fd, "w") as out:
            out.write(received.strftime(_FORMAT) + "\n")


def _refusal(path: str, student: str) -> str | None:
    """Why the inbound folder ``path`` is not ``student``'s hand-in, or None."""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder (a link?)"
    if info.st_uid == os.geteuid():
        return None   # the collector's own: a course run by one account
    try:
        owner = pwd.getpwuid(info.st_uid).pw_name
    except KeyError:
        owner = f"uid {info.st_uid}"
    if owner != student:
        return f"it names the student {student!r} but belongs to {owner!r}"
    return None
