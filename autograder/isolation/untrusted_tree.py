"""File work on a folder a student chose the contents of, by a grader with more rights.

Everything in a hand-in or a graded folder is the student's choice: names (any bytes but
``/`` and NUL, 255 of them), symlinks (to the gradebook, to ``/etc``), depth (beyond
``PATH_MAX``, beyond Python's recursion limit) and count (hundreds of thousands of files).
The grader's work there (copying a hand-in in, trimming what a run left, hashing, writing
the graded notebook) keeps three rules:

* **never through a link**: each folder is opened relative to its parent's descriptor with
  ``O_NOFOLLOW``, and every entry is looked at without following it; a path through the
  folder is never resolved from its start again, so its length never matters;
* **bounded**: a walk is iterative, goes at most ``MAX_DEPTH`` folders down and looks at no
  more than ``MAX_ENTRIES`` entries; a subtree beyond that is removed whole by ``rm -rf``
  (which walks by descriptor and never follows a link either), never walked here;
* **the grader's own files are placed, never written in place**: a file is written, created
  exclusively, in a folder only the grader can write, then renamed into the student's
  folder; a rename replaces a link at the target instead of writing through it.

Callers work on a folder only once every process of its student has ended (the kernel's
cgroup, sandbox or slot uid is gone), so the tree does not change under them; the folders
*above* it (``course/autograded/<student>/``) are the grader's own.
"""
from __future__ import annotations

import os
import secrets
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.caps import MAX_ENTRIES
from coursekit.caps import MAX_FOLDER_DEPTH as MAX_DEPTH  # the name its callers and tests use

FILE, FOLDER, LINK, OTHER = "file", "folder", "link", "other"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK   # a FIFO must not block
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Entry:
    """One entry below the walked folder: its path relative to it (``/``-separated, names
    as the file system holds them, undecodable bytes surrogate-escaped), kind and size."""

    path: str
    kind: str
    size: int = 0    # apparent size of a file, in bytes

    @property
    def parts(self) -> list[str]:
        return self.path.split("/")


@dataclass
class Walk:
    """What a walk found, and what it did not look at."""

    entries: list[Entry] = field(default_factory=list)
    too_deep: list[str] = field(default_factory=list)   # folders whose contents were not walked
    incomplete: bool = False                              # MAX_ENTRIES reached

    def files(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == FILE]


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return FOLDER
    return LINK if stat.S_ISLNK(mode) else OTHER


def open_folder(path: Path) -> int:
    """A descriptor of the folder ``path``, whose last component must not be a link (the
    folders above it are the grader's own); OSError otherwise."""
    return os.open(path, _DIR)


def _open_child(fd: int, name: str) -> int:
    return os.open(name, _DIR, dir_fd=fd)


def walk(folder: Path | int, *, max_depth: int | None = None, max_entries: int | None = None,
         skip: frozenset[str] = frozenset()) -> Walk:
    """Every entry below ``folder`` (a path or a descriptor), parents before children,
    sorted by name within a folder, without following a link and within the bounds (see
    the module docstring; MAX_DEPTH and MAX_ENTRIES unless given). Folders named in
    ``skip`` are listed but not entered."""
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    result = Walk()
    root = os.dup(folder) if isinstance(folder, int) else open_folder(folder)
    # A stack of open folders, at most max_depth + 1 descriptors, each with the names of
    # its subfolders still to enter.
    stack: list[tuple[int, str, int, list[str]]] = [(root, "", 0, _list(root, "", result,
                                                                       max_entries, skip))]
    try:
        while stack and not result.incomplete:
            fd, rel, depth, pending = stack[-1]
            if not pending:
                os.close(fd)
                stack.pop()
                continue
            name = pending.pop()
            path = f"{rel}/{name}" if rel else name
            if depth + 1 > max_depth:
                result.too_deep.append(path)
                continue
            try:
                child = _open_child(fd, name)
            except OSError:
                continue   # unreadable: a non-root grader and a folder its owner locked
            stack.append((child, path, depth + 1,
                          _list(child, path, result, max_entries, skip)))
    finally:
        for fd, *_ in stack:
            os.close(fd)
    return result


def _list(fd: int, rel: str, result: Walk, max_entries: int, skip: frozenset[str]) -> list[str]:
    """Add the entries of the open folder ``fd`` to ``result``; the subfolders to enter."""
    folders = []
    try:
        with os.scandir(fd) as listing:
            names = sorted(entry.name for entry in listing)
    except OSError:
        return folders
    for name in names:
        if len(result.entries) >= max_entries:
            result.incomplete = True
            break
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        kind = _kind(info.st_mode)
        result.entries.append(Entry(f"{rel}/{name}" if rel else name, kind,
                                    info.st_size if kind == FILE else 0))
        if kind == FOLDER and name not in skip:
            folders.append(name)
    return folders[::-1]   # popped from the end: entered in name order


def _parent_of(root: int, path: str) -> tuple[int, str]:
    """``(descriptor of the folder holding path, its last name)``, every folder on the way
    opened without following a link. The caller closes the descriptor."""
    *folders, name = path.split("/")
    fd = os.dup(root)
    try:
        for part in folders:
            child = _open_child(fd, part)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, name


def open_file(root: int, path: str) -> int:
    """A read-only descriptor of the regular file at ``path`` below ``root``; OSError when
    it is anything else (a link, a FIFO, a device) or cannot be reached without a link."""
    fd, name = _parent_of(root, path)
    try:
        file = os.open(name, _READ, dir_fd=fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(file).st_mode):
        os.close(file)
        raise OSError(f"not a regular file: {path!r}")
    os.set_blocking(file, True)
    return file


def read_file(root: int, path: str, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` below ``root``; OSError when it holds more
    than ``limit`` bytes (they are not read)."""
    fd = open_file(root, path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise OSError(f"{size} bytes, more than {limit}")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit + 1)[:limit]
    finally:
        os.close(fd)


def remove(root: int, path: str) -> None:
    """Delete the entry at ``path`` below ``root``: a file or link is unlinked, a folder is
    removed with everything in it (never following a link, whatever its depth)."""
    fd, name = _parent_of(root, path)
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            _remove_folder_at(fd, name)
        else:
            os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def _remove_folder_at(fd: int, name: str) -> None:
    """``rm -rf`` of ``name`` in the open folder ``fd``: reached as ``/proc/self/fd/N/name``,
    a path of the descriptor's folder itself and so as short as ``name``, whatever lies above.
    rm walks by descriptor, never follows a link, and has no depth limit."""
    done = subprocess.run(["rm", "-rf", "--one-file-system", "--", f"/proc/self/fd/{fd}/{name}"],
                          pass_fds=(fd,), capture_output=True, timeout=600, check=False)
    if done.returncode != 0:
        raise OSError(f"rm could not remove a folder: "
                      f"{done.stderr.decode(errors='replace')[-300:].strip()}")


def empty(folder: Path, *, keep: frozenset[str] = frozenset()) -> None:
    """Delete everything in ``folder`` but the top-level names in ``keep``."""
    fd = open_folder(folder)
    try:
        with os.scandir(fd) as listing:
            names = [entry.name for entry in listing]
        for name in names:
            if name not in keep:
                remove(fd, name)
    finally:
        os.close(fd)


def copy(source: Path, target: Path, entries: list[Entry]) -> None:
    """Copy ``entries`` (folders and regular files of a :func:`walk` of ``source``, parents
    before children) into the new folder ``target``; links and other kinds are never
    copied."""
    os.mkdir(target, 0o755)
    src, dst = open_folder(source), open_folder(target)
    try:
        for entry in entries:
            if entry.kind == FOLDER:
                parent, name = _parent_of(dst, entry.path)
                try:
                    os.mkdir(name, 0o755, dir_fd=parent)
                finally:
                    os.close(parent)
            elif entry.kind == FILE:
                _copy_file(src, dst, entry.path)
    finally:
        os.close(src)
        os.close(dst)


def chunks(root: int, path: str, size: int = 2**20):
    """The bytes of the regular file at ``path`` below ``root``, a block at a time."""
    fd = open_file(root, path)
    try:
        while block := os.read(fd, size):
            yield block
    finally:
        os.close(fd)


def _copy_file(src: int, dst: int, path: str) -> None:
    reading = open_file(src, path)
    parent, name = _parent_of(dst, path)
    try:
        writing = os.open(name, _CREATE, 0o644, dir_fd=parent)
        try:
            while os.sendfile(writing, reading, None, 2**24):
                pass
            info = os.fstat(reading)
            os.utime(writing, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(writing)
    finally:
        os.close(parent)
        os.close(reading)


def place(data: bytes, folder: Path, name: str, *, staging: Path) -> None:
    """Put a file ``name`` holding ``data`` into ``folder`` (which the student's process may
    have written), via ``staging`` (a folder on the same file system only the grader can
    write): whatever the student left under ``name`` is replaced, never written through.
    """
    temporary = f".{name}.{secrets.token_hex(8)}.tmp"
    stage = open_folder(staging)
    try:
        fd = os.open(temporary, _CREATE, 0o644, dir_fd=stage)
        try:
            with os.fdopen(fd, "wb", closefd=False) as handle:
                handle.write(data)
        finally:
            os.close(fd)
        target = open_folder(folder)
        try:
            try:
                info = os.stat(name, dir_fd=target, follow_symlinks=False)
            except FileNotFoundError:
                info = None
            if info is not None and stat.S_ISDIR(info.st_mode):
                _remove_folder_at(target, name)   # rename cannot replace a folder with a file
            os.replace(temporary, name, src_dir_fd=stage, dst_dir_fd=target)
        finally:
            os.close(target)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=stage)
        except OSError:
            pass
        raise
    finally:
        os.close(stage)
