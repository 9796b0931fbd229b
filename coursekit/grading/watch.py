"""Watch: the grading monitor's rules, in the student's own notebook.

In JupyterLab ``grade()`` runs a check right in the student's process (student mode, see
:mod:`.grade`). So that a check passes or fails there exactly as it will at grading, the same
rules decide (:mod:`.monitor`, with its matcher): a call into what the exercise rebuilds (the
check's ``forbid=``) made while the check runs, with the student's code on the stack; a call
from the student's code into grading code that is not open to it; torch's autograd engine
running where the check did not ask for it (:mod:`.engine`); or an answer that *is* such a
thing (an alias, a subclass that inherits it, the reference behind a wrapper). A docstring
that mentions ``torch.autograd``, a method of the student's own called ``backward``, or
``torch.no_grad()`` around an update never counts; only what runs does.

This is a convenience for honest students, not a defence: the student's process is the
student's. Here student code is simply code whose file is not in the installation (there is
no audit hook in a student's own kernel to record it by identity). Grading relies on
:mod:`.monitor` in a sandboxed kernel.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
import time
from typing import Any, Iterator

from . import engine, monitor
from .integrity import DELEGATION
from .program import _REGISTRY, handed_objects, run_program
from .targets import for_patterns

_ENGINE_ENTRY = "_engine_run_backward"
_MODULE_BODY = "<module>"


def reason(patterns: set[str]) -> str:
    """Why a check fails for delegation: the same words in the notebook and at grading."""
    grading = monitor.GRADING_TARGET in patterns
    return (f"{DELEGATION}: while this check ran, your code called or handed in "
            f"{', '.join(sorted(patterns))}" + (" (the grading code itself)" if grading else ""))


@functools.lru_cache(maxsize=64)
def _matcher(forbid: tuple[str, ...]) -> dict:
    """The monitor's matcher for ``forbid``, resolved once per process: a pattern names
    installed files, which do not change while a notebook runs, and resolving them was a
    tenth of a check's run in process (lab10)."""
    return monitor.compile_targets(for_patterns(forbid))


@contextlib.contextmanager
def watching(forbid: tuple[str, ...], impl: Any) -> Iterator[set[str]]:
    """Collect, into the yielded set, the forbid patterns the check's run calls into from the
    student's code, and those ``impl`` is made of."""
    seen: set[str] = set()
    watch_engine = monitor.ENGINE_TARGET in forbid
    matcher = dict(_matcher(tuple(sorted(set(forbid)))))
    library = monitor._library_prefixes()
    grading = monitor._grading_prefixes()
    modules = [m for m in list(sys.modules.values())
               if isinstance(getattr(m, "__file__", None), str)
               and m.__file__.startswith(grading)]
    open_, references = monitor.grading_identity(_REGISTRY, handed_objects(), modules)
    seen |= monitor.answer_patterns(impl, matcher, (grading, open_, references))
    stop = run_program.__code__
    kinds: dict[int, tuple] = {}

    def kind(code) -> str:
        known = kinds.get(id(code))
        if known is not None and known[0] is code:
            return known[1]
        filename = code.co_filename
        if not isinstance(filename, str) or not filename.startswith(library):
            found = monitor.STUDENT
        elif filename.startswith(grading):
            found = (monitor.REFERENCE if id(code) in references else
                     monitor.OPEN if id(code) in open_ else monitor.GRADING)
        else:
            found = monitor.LIBRARY
        kinds[id(code)] = (code, found)
        return found

    def student_above(frame) -> bool:
        """Student code on the stack from ``frame`` up to the check's run of the answer,
        inside that run (a call made by whoever runs the check does not count). A library
        module's body on the way is an import, which the student's code may set off (torch
        imports parts of itself at first use): what runs below it is the module's own doing,
        as the grading monitor rules."""
        student = False
        while frame is not None:
            code = frame.f_code
            if code is stop:
                return student
            found = kind(code)
            if found == monitor.LIBRARY and code.co_name == _MODULE_BODY:
                return False
            student = student or found == monitor.STUDENT
            frame = frame.f_back
        return False

    def student_calls(frame) -> bool:
        """The nearest code above ``frame`` that is not the library's is the student's, and
        the call happens inside the check's run of the answer."""
        nearest = None
        while frame is not None:
            code = frame.f_code
            if code is stop:
                return nearest == monitor.STUDENT
            if nearest is None and kind(code) != monitor.LIBRARY:
                nearest = kind(code)
            frame = frame.f_back
        return False

    # A check may run the answer in forked processes (lab10's ranks): they inherit this
    # profile function, and tell this process what they saw through a pipe.
    owner = os.getpid()
    from_children, to_parent = os.pipe()
    os.set_blocking(from_children, False)
    refs = engine.capture() if watch_engine else None
    windows: list[list[int]] = []
    open_windows: dict[int, list[int]] = {}

    def note(pattern: str) -> None:
        if pattern not in seen:
            seen.add(pattern)
            if os.getpid() != owner:
                os.write(to_parent, (pattern + "\n").encode())

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            found = kind(code)
            if found == monitor.LIBRARY:
                # A module's body is its import, not a call of what it defines.
                if code.co_name != _MODULE_BODY and code.co_filename.startswith(matcher["files"]):
                    patterns = monitor.match_code(code, matcher)
                    if patterns and student_above(frame.f_back):
                        for pattern in patterns:
                            note(pattern)
                if refs is not None and code.co_name == _ENGINE_ENTRY and not student_above(
                        frame.f_back):
                    window = [time.time_ns(), 0, refs["sequence_nr"]()]
                    windows.append(window)
                    open_windows[id(frame)] = window
            elif code is not stop and (
                    (found == monitor.REFERENCE and student_above(frame.f_back))
                    or (found == monitor.GRADING and student_calls(frame.f_back))):
                note(monitor.GRADING_TARGET)
        elif event == "return" and open_windows:
            window = open_windows.pop(id(frame), None)
            if window is not None:
                window[1] = time.time_ns()
        elif event == "c_call" and kind(frame.f_code) == monitor.STUDENT and (
                matcher["c_modules"] or getattr(arg, "__name__", None) in matcher["c_names"]):
            patterns = monitor.match_builtin(arg, matcher)
            if patterns and student_above(frame):
                for pattern in patterns:
                    note(pattern)

    # The garbage collector can run a library's finalizer in the middle of the student's
    # code, which would look like a call the student made: no collection while the check runs.
    collecting = gc.isenabled()
    gc.disable()
    watched = refs is not None and engine.start(refs)
    if refs is not None and engine.dual_level_open(refs):   # as the grading monitor charges
        seen.add(monitor.ENGINE_TARGET)
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(previous)
        if watched:
            events = engine.stop(refs)
            if events is None or engine.unasked(events, windows) or engine.dual_level_open(refs):
                seen.add(monitor.ENGINE_TARGET)
        if collecting:
            gc.enable()
        os.close(to_parent)
        seen |= set(_drain(from_children).split())
        os.close(from_children)


def _drain(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
