"""Uids and cgroup names that no two graders on this machine ever share.

Each kernel runs as a uid of its own, in a cgroup of its own. Two graders that picked them
from their pids (two class runs on one machine, or two containers, where pids repeat) would
share both: one student's sleeping threads would use up the other student's process limit
(``RLIMIT_NPROC`` counts per uid), and two groups of one name make the second start fail.

A lease is an exclusive ``flock`` on a file ``uid-<n>`` in a run folder that only the
grader's user can write (``/run/coursekit`` for root). It is held for as long as the uid is
in use and released by closing the file, or by the kernel when the grader dies: so a lease is
never stale, whatever the pids, and a grader that was killed leaves nothing to reclaim.

Uids are handed out in turn, not lowest first: what one student leaves with a uid (a key in
its keyrings that it made impossible to clear) would otherwise meet the very next kernel. A
uid whose leftovers could not be cleared is marked spoiled and skipped until the machine
restarts. A
cgroup is named after the uid that runs in it (``ck-u<uid>-<random>``), so its name is as
unique as the lease; a group whose uid is not leased by anyone is stale and removed.

Graders in containers share leases only if they share the run folder: mount the host's
``/run/coursekit`` into each (the README says so).
"""
from __future__ import annotations

import fcntl
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

RUN_DIR_ENV = "COURSEKIT_RUN_DIR"   # tests: one folder for graders that must meet
FIRST_UID = 1_500_000   # far above the system's users and the usual subuid ranges
UIDS = 1 << 20          # how many uids the leases go through before giving up
GROUP_PREFIX = "ck-u"


class LeaseError(RuntimeError):
    """No lease could be taken; the message says why."""


def run_dir() -> Path:
    """The run folder (made on first use): the grader's user alone may write it, and it is
    no link, or another user could hand out or take away its leases."""
    if os.environ.get(RUN_DIR_ENV):
        folder = Path(os.environ[RUN_DIR_ENV])
    elif os.geteuid() == 0:
        folder = Path("/run/coursekit")
    else:
        folder = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / f"coursekit-{os.geteuid()}"
    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as error:
        raise LeaseError(f"the run folder {folder} cannot be made ({error.strerror})") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise LeaseError(f"the run folder {folder} is not a folder that only this user can "
                         f"write (owner {info.st_uid}, mode {stat.filemode(info.st_mode)})")
    return folder


@dataclass
class UidLease:
    """One uid, held until :meth:`release` (or this process's end)."""

    uid: int
    _fd: int

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)   # closing the file drops the lock
            self._fd = -1


def _try_lock(folder: Path, uid: int) -> int | None:
    """The lock file's descriptor, locked, or None when another holder has it."""
    fd = os.open(folder / f"uid-{uid}", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def take_uid() -> UidLease:
    """A uid nobody on this machine holds, leased to this process: the next one after the
    last uid handed out on this machine (so a uid serves one kernel after another only once
    the whole range has gone round) that no one holds and no kernel spoiled."""
    folder = run_dir()
    with open(os.open(folder / "next-uid", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                      | os.O_CLOEXEC, 0o600), "r+") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)   # one grader at a time moves the counter
        text = counter.read().strip()
        start = int(text) if text.isdigit() and FIRST_UID <= int(text) < FIRST_UID + UIDS \
            else FIRST_UID
        for step in range(UIDS):
            uid = FIRST_UID + (start - FIRST_UID + step) % UIDS
            if (folder / f"uid-{uid}.spoiled").exists():
                continue
            fd = _try_lock(folder, uid)
            if fd is not None:
                counter.seek(0)
                counter.truncate()
                counter.write(str(FIRST_UID + (uid + 1 - FIRST_UID) % UIDS))
                return UidLease(uid, fd)
    raise LeaseError(f"all {UIDS} sandbox uids are leased or spoiled")


def spoil(uid: int) -> None:
    """Never hand ``uid`` out again until the machine restarts (``/run`` is emptied then, as
    the kernel empties every keyring): a student left in its keyrings what cannot be
    cleared, and the next kernel of the uid would see it or refuse to start."""
    os.close(os.open(run_dir() / f"uid-{uid}.spoiled",
                     os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))


def is_leased(uid: int) -> bool:
    """Does some process hold ``uid``'s lease now (this one included)?"""
    path = run_dir() / f"uid-{uid}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False   # nobody held it; closing below lets it go again
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def group_name(uid: int) -> str:
    """A cgroup name for a kernel of ``uid``: unique while the uid is leased."""
    return f"{GROUP_PREFIX}{uid}-{secrets.token_hex(4)}"


def group_is_stale(name: str) -> bool:
    """Is ``name`` a kernel's cgroup whose uid nobody leases (its grader is gone)?"""
    if not name.startswith(GROUP_PREFIX):
        return False
    uid = name[len(GROUP_PREFIX):].split("-", 1)[0]
    return uid.isdigit() and not is_leased(int(uid))
