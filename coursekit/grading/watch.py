"""Watch: the grading monitor's delegation rule, in the student's own notebook.

In JupyterLab ``grade()`` runs a check right in the student's process (student mode, see
:mod:`.grade`). So that a check passes or fails there exactly as it will at grading, the same
rule decides: a call into what the exercise rebuilds (the check's ``forbid=``) made while the
check runs, with the student's code on the stack, or an answer that *is* such a thing (an
alias, a subclass that inherits it). A docstring that mentions ``torch.autograd``, or a
method of the student's own called ``backward``, never counts; only what runs does.

This is a convenience for honest students, not a defence: the student's process is the
student's. Grading relies on :mod:`.monitor` in a sandboxed kernel.
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import Any, Iterator

from . import monitor
from .integrity import DELEGATION
from .program import run_program
from .targets import for_patterns


def reason(patterns: set[str]) -> str:
    """Why a check fails for delegation: the same words in the notebook and at grading."""
    grading = monitor.GRADING_TARGET in patterns
    return (f"{DELEGATION}: while this check ran, your code called or handed in "
            f"{', '.join(sorted(patterns))}" + (" (the grading code itself)" if grading else ""))


@contextlib.contextmanager
def watching(forbid: tuple[str, ...], impl: Any) -> Iterator[set[str]]:
    """Collect, into the yielded set, the forbid patterns the check's run calls into from the
    student's code, and those ``impl`` is made of."""
    seen: set[str] = set()
    compiled = monitor.compile_targets(for_patterns(forbid))
    py, prefixes, c_names, c_owned, c_modules = compiled
    library = monitor._library_prefixes()
    scaffolding = monitor._scaffolding_prefixes()
    stop = run_program.__code__
    seen |= monitor.answer_patterns(impl, compiled)

    def student_above(frame) -> bool:
        """The nearest code above ``frame`` that is not the library's is the student's (not
        the check's own code, not a library module being imported), and the call happens
        inside the check's run (a call made by whoever runs the check does not count)."""
        student = False
        while frame is not None:
            code = frame.f_code
            if code is stop:
                return student
            if not student:
                if not code.co_filename.startswith(library):
                    student = True
                elif code.co_name == "<module>" or code.co_filename.startswith(scaffolding):
                    return False
            frame = frame.f_back
        return False

    # A check may run the answer in forked processes (lab10's ranks): they inherit this
    # profile function, and tell this process what they saw through a pipe.
    owner = os.getpid()
    from_children, to_parent = os.pipe()
    os.set_blocking(from_children, False)

    def note(pattern: str) -> None:
        if pattern not in seen:
            seen.add(pattern)
            if os.getpid() != owner:
                os.write(to_parent, (pattern + "\n").encode())

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(prefixes):
            pattern = monitor.match_code(frame.f_code, py)
            if pattern and student_above(frame.f_back):
                note(pattern)
        elif event == "c_call" and (c_modules or arg.__name__ in c_names):
            pattern = monitor.match_builtin(arg, c_owned, c_modules)
            if pattern and student_above(frame):
                note(pattern)

    # The garbage collector can run a library's finalizer in the middle of the student's
    # code, which would look like a call the student made: no collection while the check runs.
    collecting = gc.isenabled()
    gc.disable()
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(previous)
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
