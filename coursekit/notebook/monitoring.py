"""Monitoring: the grader's side of the kernel's monitor (:mod:`coursekit.grading.monitor`).

Per submission the grader

1. resolves the lab's forbidden targets (``forbid=`` of its checks) into what the monitor can
   match without importing anything: the files and qualified names of Python code, the names
   and modules of C functions (:func:`targets`);
2. makes a pipe (a FIFO in the kernel's runtime folder) and reads it while the kernel runs
   (:class:`Channel`), keeping at most ``MAX_EVENTS`` reports in memory;
3. after the run, charges each reported call to the driven check whose time window holds it,
   if that check forbids it (:func:`delegations`), and lists what the monitor refused
   (:func:`tampering`). A kernel that never said it was ready, or whose monitor stopped it,
   is reported too. What torch's autograd engine ran unasked (an ``engine`` report, made
   while a check that forbids the engine was driven) is charged like a call.
"""
from __future__ import annotations

import asyncio
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.caps import MAX_EVENTS, MAX_LINE
from coursekit.grading.kernel import PRELOAD_CHECKS_ENV, PRELOAD_ENV
from coursekit.grading.monitor import (
    ENGINE_TARGET,
    EXIT_CHANNEL_TAMPERED,
    FIFO_ENV,
    GRADING_TARGET,
    LIBRARY_ENV,
    REPORT_S,
    TARGETS_ENV,
)
from coursekit.grading.program import get_check
from coursekit.grading.targets import targets
from coursekit.grading.watch import reason

from .drive import Drive

__all__ = ["Channel", "Event", "delegations", "tampering", "targets"]

PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ, Linux; named in the fcntl module from Python 3.10


UNCOMPILED = ("WARNING: the grading monitor's compiled module (coursekit.grading._fast_profile) "
              "is missing: coursekit was installed without a C compiler. Grading works, but "
              "the monitor is slower and leaves three more ways around it open (README: known "
              "limits). Install a C compiler (Debian: gcc, python3-dev) and install coursekit "
              "again (`make .venv` or `pip install`).")


def compiled_warning() -> str:
    """What the grader says before a class run when the monitor's fast paths were not built:
    "" when they were (NOTE [Signals] and NOTE [Sealed state] in the monitor need them)."""
    import importlib
    try:
        importlib.import_module("coursekit.grading._fast_profile")
    except ImportError:
        return UNCOMPILED
    return ""


def _never_started(execution) -> bool:
    return (execution.stopped or "").startswith("the kernel did not start")


@dataclass
class Event:
    t: float
    kind: str
    what: str


@dataclass
class Channel:
    """The read end of the monitor's pipe, drained into ``events`` while the kernel runs."""

    path: Path
    events: list[Event] = field(default_factory=list)
    overflow: bool = False
    ready: bool = False
    _fd: int = -1
    _buffer: bytes = b""

    @classmethod
    def open(cls, runtime_dir: Path) -> "Channel":
        path = runtime_dir / "monitor"
        os.mkfifo(path, 0o600)
        channel = cls(path)
        channel._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:  # room for a burst of reports while this process is busy judging another kernel
            fcntl.fcntl(channel._fd, F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass
        asyncio.get_running_loop().add_reader(channel._fd, channel._read)
        return channel

    def env(self, targets_: list[dict], trusted: tuple[Path, ...] = (),
            preload: str = "", warm: list[str] = ()) -> dict[str, str]:
        """The kernel's monitor settings; ``trusted``: folders of the course's own checks;
        ``preload``: trusted setup imports the kernel runs before its monitor, and ``warm``:
        checks whose modules it imports and warms up then (:mod:`coursekit.grading.kernel`)."""
        return {FIFO_ENV: str(self.path), TARGETS_ENV: json.dumps(targets_),
                LIBRARY_ENV: os.pathsep.join(str(p.resolve()) for p in trusted),
                PRELOAD_ENV: preload, PRELOAD_CHECKS_ENV: ",".join(warm)}

    def _read(self) -> None:
        try:
            chunk = os.read(self._fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            return
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        if len(self._buffer) > MAX_LINE:
            self._buffer = b""
        for line in lines:
            self._take(line)

    def _take(self, line: bytes) -> None:
        if len(self.events) >= MAX_EVENTS:
            self.overflow = True
            return
        try:
            item = json.loads(line)
            event = Event(float(item["t"]), str(item["kind"]), str(item.get("what", "")))
        except (ValueError, KeyError, TypeError):
            return
        if event.kind == "ready":
            self.ready = True
        self.events.append(event)

    def close(self) -> None:
        if self._fd < 0:
            return
        self._read()
        try:
            asyncio.get_running_loop().remove_reader(self._fd)
        except RuntimeError:
            pass
        os.close(self._fd)
        self._fd = -1


def delegations(events: list[Event], drives: list[Drive]) -> dict[tuple[str, bool], str]:
    """``{(check, hidden): message}`` for every forbidden call seen while that call was driven."""
    found: dict[tuple[str, bool], set[str]] = {}
    windows = sorted((d.started, d.ended, d) for d in drives if d.started)
    for event in events:
        if event.kind not in ("call", "answer", "engine"):
            continue
        pattern = ENGINE_TARGET if event.kind == "engine" else event.what.split(" from ", 1)[0]
        for start, end, drive in windows:
            # A repeated call is reported at most every REPORT_S: one made in the check can
            # show up that much after it.
            if start <= event.t <= end + REPORT_S:
                if pattern == GRADING_TARGET or pattern in get_check(drive.check).forbid:
                    found.setdefault(drive.call.key, set()).add(pattern)
                break
    return {key: reason(what) for key, what in found.items()}


def tampering(channel: Channel, execution) -> list[str]:
    """What the monitor refused or noticed, for a TA (never scored by itself)."""
    notes = list(dict.fromkeys(e.what for e in channel.events if e.kind == "tamper"))
    if any(e.kind in ("call", "answer") and e.what.split(" from ", 1)[0] == GRADING_TARGET
           for e in channel.events):
        notes.append(f"the student's code imported or called the grader's own code "
                     f"({GRADING_TARGET}: check programs, references, verdicts)")
    notes_seen = [execution.stopped or ""] + [d.note for ds in execution.drives.values()
                                              for d in ds]
    stopped = any(f"exit code {EXIT_CHANNEL_TAMPERED}" in note for note in notes_seen)
    if stopped:
        notes.append("the kernel replaced or closed the grading monitor's pipe")
    elif not channel.ready and not _never_started(execution):
        notes.append("the grading monitor did not report from the kernel")
    if channel.overflow:
        notes.append(f"the monitor reported over {MAX_EVENTS} events; later ones were not read")
    return notes
