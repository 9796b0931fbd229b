"""``grade(check_name, impl)``: the one call that visible and hidden test cells make.

It has two modes:

* **Student mode** (JupyterLab, nbval): run the check on ``impl`` and on the reference right
  here, print a short report, and raise :class:`CheckFailed` if any case differs.
* **Grade mode** (``COURSEKIT_MODE=grade``, set by the autograder and ``coursekit
  validate`` when they start the kernel): only register ``impl`` (:mod:`.oracle`). After the
  cell, the grader drives it with the check's inputs and judges what comes back in its own
  process; the kernel never holds a hidden seed, the expected values or the verdict.
"""
from __future__ import annotations

import inspect
import linecache
import os
from typing import Any

from . import oracle
from .integrity import delegation_message, find_forbidden
from .program import get_check, run_program
from .report import format_check
from .seeds import seed_for
from .verdict import judge, observed

MODE_ENV = "COURSEKIT_MODE"


class CheckFailed(AssertionError):
    """A check found differences from the reference; the report printed above lists them.

    IPython shows what ``_render_traceback_`` returns in place of the traceback, so a failed
    check ends with one red line under its report instead of a trace through this module. The
    cell still raises: the kernel reports an error, and nbgrader, nbval and ``validate`` see
    the cell as failed.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31mCheckFailed\x1b[0m: {self}"]


def grading_mode() -> bool:
    return os.environ.get(MODE_ENV) == "grade"


def grade(check_name: str, impl: Any, *, hidden: bool = False) -> None:
    """Check ``impl`` against the reference implementation of ``check_name``.

    Args:
        check_name: ``"<lab>.<exercise>"``, e.g. ``"lab01.two_layer_grads"``.
        impl: the student's function, class, or a dict of several names.
        hidden: hidden checks use a secret seed at grade time.
    """
    __tracebackhide__ = True  # IPython: show the student's cell, not this frame
    if grading_mode():
        oracle.register(check_name, hidden, impl)
        return
    check = get_check(check_name)
    seed = seed_for(check_name, hidden)
    observations = run_program(check, impl, seed)
    result = judge(check_name, seed, [(o.label, observed(o.value, o.error)) for o in observations],
                   hidden=hidden)
    findings = find_forbidden(_sources_of(impl), check.forbid) if check.forbid else []
    if findings:
        result = result.failed(delegation_message(findings))
    report = format_check(result)
    if hidden:
        report += f"\n    (seed {seed}; rerun with COURSEKIT_SEED={seed} to reproduce)"
    print(report)
    if not result.passed:
        raise CheckFailed(f"{check_name}: {sum(not c.passed for c in result.cases)} of "
                          f"{len(result.cases)} cases differ from the reference (see above)")


def _sources_of(impl: Any) -> dict[str, str]:
    """The source the delegation check scans in student mode: the whole cell that defined each
    of the student's objects, as grading scans the whole answer cell.

    A function's code object names the cell it was compiled from, and the kernel keeps that
    cell's text in ``linecache``; a class is found through the functions defined in its body
    (``inspect.getsource`` cannot find a class defined in a notebook).
    """
    objects = impl.values() if isinstance(impl, dict) else [impl]
    sources = {}
    for obj in objects:
        name = getattr(obj, "__qualname__", repr(obj))
        # Only notebook cells: for code from a file on disk, the object's own source is enough.
        files = {code.co_filename for code in _code_objects(obj)
                 if not os.path.exists(code.co_filename)}
        cells = ["".join(linecache.getlines(f)) for f in sorted(files)]
        text = "\n".join(cell for cell in cells if cell)
        if not text:
            try:
                text = inspect.getsource(obj)
            except (TypeError, OSError):
                continue
        sources[name] = text
    return sources


def _code_objects(obj: Any) -> list:
    """Code objects of a function, or of the functions defined in a class's body."""
    if isinstance(obj, type):
        members = [inspect.unwrap(getattr(m, "__func__", m)) for m in vars(obj).values()]
        return [m.__code__ for m in members if hasattr(m, "__code__")]
    code = getattr(inspect.unwrap(obj), "__code__", None) if callable(obj) else None
    return [code] if code is not None else []
