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

import os
from typing import Any

from . import oracle
from .points import cell_of
from .program import get_check, run_program
from .report import format_check, not_implemented
from .seeds import seed_for
from .verdict import judge_expected, observed, reference_cases
from .warm import warm_up_for
from .watch import reason as delegation_reason
from .watch import watching

MODE_ENV = "COURSEKIT_MODE"
_FAILING: set[str] = set()  # checks that failed in this notebook session (student mode)
# The reference's cases of a check that a later call of the same cell makes, computed early
# for their weights (the cell's points are split by them): the call uses them, once.
_AHEAD: dict[tuple[str, int], list] = {}


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
    try:
        warm_up_for(check)
    except Exception:  # noqa: BLE001 — a warm-up only saves time; the check says what fails
        pass
    with watching(check.forbid, impl) as delegated:
        observations = run_program(check, impl, seed)
    expected = _AHEAD.pop((check_name, seed), None) or reference_cases(check_name, seed)
    result = judge_expected(check_name, expected,
                            [(o.label, observed(o.value, o.error)) for o in observations],
                            hidden=hidden)
    if delegated:
        result = result.failed(delegation_reason(delegated))
    if result.passed:
        _FAILING.discard(check_name)
    else:
        _FAILING.add(check_name)
        broken = [name for name in check.after if name in _FAILING]
        if broken and not not_implemented(result):  # the code it calls fails: say only that
            result = result.failed(f"depends on {broken[0]}, an earlier exercise, which fails: "
                                   f"fix that one first (this exercise's answer calls it)")
    report = format_check(result, None if hidden else _points(check_name, expected))
    if hidden:
        report += f"\n    (seed {seed}; rerun with COURSEKIT_SEED={seed} to reproduce)"
    print(report)
    if not result.passed:
        raise CheckFailed(f"{check_name}: {sum(not c.passed for c in result.cases)} of "
                          f"{len(result.cases)} cases differ from the reference (see above)")


def _points(check_name: str, expected: list) -> float | None:
    """This call's share of its checks cell's points, split by case weight over the cell's
    visible calls as validate and the grader split them; None where the release is not at
    hand (the report then counts cases only)."""
    try:
        cell = cell_of(check_name)
        if cell is None:
            return None
        points, calls = cell
        weights = []
        for name in calls:
            if name == check_name:
                cases = expected
            else:
                key = (name, seed_for(name, False))
                if key not in _AHEAD:
                    _AHEAD[key] = reference_cases(*key)
                cases = _AHEAD[key]
            weights.append(sum(case.weight for case, _ in cases))
        total = sum(weights)
        mine = weights[calls.index(check_name)]
        return points * mine / total if total else points / len(calls)
    except Exception:  # noqa: BLE001 — the points are a courtesy; the verdict stands without
        return None
