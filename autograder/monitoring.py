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
   is reported too.
"""
from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.grading.integrity import DELEGATION
from coursekit.grading.monitor import (EXIT_CHANNEL_TAMPERED, FIFO_ENV, GRADING_TARGET,
                                       LIBRARY_ENV, REPORT_S, TARGETS_ENV)
from coursekit.grading.program import get_check

from .drive import Drive

MAX_EVENTS = 100_000
MAX_LINE = 4096
# Grading code a student's code has no reason to call: references and the grader's own steps.
# (The oracle is not one: checks cells call its register(), and its drive() is the grader's
# own entry point, which the monitor knows.)
_GRADING_FILES = ("verdict.py", "compare.py", "program.py", "tape.py", "encoding.py",
                  "seeds.py", "monitor.py")


def _grading_target() -> dict:
    import coursekit.grading as grading
    folder = Path(grading.__file__).resolve().parent
    files = [str(folder / name) for name in _GRADING_FILES]
    return {"pattern": GRADING_TARGET, "files": files,
            "also": [{"files": [str(folder / "checks") + "/"], "qual": "_reference"}]}


def _resolve(dotted: str):
    """The object a forbid pattern names (a module, class, function or builtin), or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 — not a module (or not installed): try a shorter name
            continue
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        return obj
    return None


def _files_of(module) -> list[str]:
    path = getattr(module, "__file__", None)
    if not path:
        return []
    path = os.path.abspath(path)
    if os.path.basename(path) == "__init__.py":
        folder = os.path.dirname(path)
        return sorted({folder + "/", os.path.realpath(folder) + "/"})
    return sorted({path, os.path.realpath(path)})


def target(pattern: str) -> dict | None:
    """What the monitor matches for one forbid pattern (see the module docstring)."""
    if pattern.startswith("."):
        name = pattern[1:]
        roots = [f for package in ("torch", "coursekit") for f in _files_of(_resolve(package))]
        return {"pattern": pattern, "files": roots, "name": name,
                "c_names": [name], "c_owners": ["torch", "coursekit"]}
    obj = _resolve(pattern)
    if obj is None:
        return None
    spec: dict = {"pattern": pattern}
    if inspect.ismodule(obj):
        spec["files"] = _files_of(obj)
        spec["c_modules"] = [pattern]
        if pattern.startswith("torch.autograd") or pattern == "torch":
            spec["c_names"], spec["c_owners"] = ["run_backward"], ["torch"]
    elif inspect.isbuiltin(obj):
        spec["c_names"] = [obj.__name__]
        spec["c_owners"] = [getattr(obj, "__module__", None) or pattern.rsplit(".", 1)[0]]
    elif inspect.isclass(obj) or inspect.isfunction(obj):
        try:
            source = inspect.getsourcefile(obj)
        except TypeError:
            return None
        if not source:
            return None
        spec["files"] = sorted({os.path.abspath(source), os.path.realpath(source)})
        spec["qual"] = obj.__qualname__ + ("." if inspect.isclass(obj) else "")
        if inspect.isfunction(obj):
            spec["name"] = obj.__name__
    else:
        return None
    return spec


def targets(lab_checks: list[str]) -> list[dict]:
    """Every target the lab's checks forbid, plus the grading code itself."""
    patterns = sorted({p for name in lab_checks for p in get_check(name).forbid})
    found = []
    grading = _grading_target()
    found.append({"pattern": GRADING_TARGET, "files": grading["files"]})
    for extra in grading["also"]:
        found.append({"pattern": GRADING_TARGET, **extra})
    for pattern in patterns:
        spec = target(pattern)
        if spec is not None:
            found.append(spec)
    return found


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
        asyncio.get_running_loop().add_reader(channel._fd, channel._read)
        return channel

    def env(self, targets_: list[dict], trusted: tuple[Path, ...] = ()) -> dict[str, str]:
        """The kernel's monitor settings; ``trusted``: folders of the course's own checks."""
        return {FIFO_ENV: str(self.path), TARGETS_ENV: json.dumps(targets_),
                LIBRARY_ENV: os.pathsep.join(str(p.resolve()) for p in trusted)}

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
        if event.kind not in ("call", "answer"):
            continue
        pattern = event.what.split(" from ", 1)[0]
        for start, end, drive in windows:
            # A repeated call is reported at most every REPORT_S: one made in the check can
            # show up that much after it.
            if start <= event.t <= end + REPORT_S:
                if pattern == GRADING_TARGET or pattern in get_check(drive.check).forbid:
                    found.setdefault(drive.call.key, set()).add(pattern)
                break
    return {key: (f"{DELEGATION}: while this check ran, your code called "
                  f"{', '.join(sorted(what))}"
                  + (" (the grading code itself)" if GRADING_TARGET in what else ""))
            for key, what in found.items()}


def tampering(channel: Channel, execution) -> list[str]:
    """What the monitor refused or noticed, for a TA (never scored by itself)."""
    notes = list(dict.fromkeys(e.what for e in channel.events if e.kind == "tamper"))
    stopped = f"exit code {EXIT_CHANNEL_TAMPERED}" in (execution.stopped or "")
    if stopped:
        notes.append("the kernel replaced or closed the grading monitor's pipe")
    elif not channel.ready and not _never_started(execution):
        notes.append("the grading monitor did not report from the kernel")
    if channel.overflow:
        notes.append(f"the monitor reported over {MAX_EVENTS} events; later ones were not read")
    return notes
