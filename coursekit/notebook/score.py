"""Score: driven calls → verdicts (in this process) → points per check.

For every checks cell of the *source*, its ``grade(...)`` calls are known from the source
(:func:`coursekit.notebook.cells.grade_calls`). The grader drove each of them (:mod:`.drive`): it holds
the reference's expected values and the observations the kernel sent back, and judges them
here with :func:`coursekit.grading.verdict.judge_expected`. The cell's points are split over all
cases of all its calls by case weight, so one wrong gradient costs its share, not the cell.
Stderr, warnings and cell outputs play no part: only the driven observations count.

A call that could not be driven scores 0 with a reason (the cell raised before it, timed out,
was not reached); a call whose run stopped early keeps the cases that finished. Delegation the
monitor saw while a call was driven fails that call. Written answers are left for a human
(``score=None``).

Hidden checks say only what the check's author wrote: how many cases passed and the hints of
the failing ones, never a case's inputs, expected values, or any text that came from the
student's process (exception messages, reprs).
"""
from __future__ import annotations

import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

from coursekit.grading.integrity import Finding, find_forbidden
from coursekit.grading.program import get_check
from coursekit.grading.report import format_check, not_implemented
from coursekit.grading.verdict import CheckResult, judge, judge_expected

from .assemble import Assembled
from .cells import CHECKS, WRITTEN, GradeCall, LabCell, LabNotebook
from .drive import Drive, DriveStatus
from .execute import CellStatus, Execution



@dataclass
class CheckScore:
    """One ``grade(...)`` call of a checks cell, scored."""

    cell: str
    check: str
    hidden: bool
    score: float
    max_score: float
    message: str
    cases_passed: int = 0
    cases: int = 0

    @property
    def passed(self) -> bool:
        return self.cases > 0 and self.cases_passed == self.cases

    @property
    def name(self) -> str:
        return f"{self.check} ({'hidden' if self.hidden else 'visible'})"


@dataclass
class CellScore:
    """A graded cell: a checks cell (auto) or a written answer (``score`` None until a TA)."""

    grade_id: str
    role: str
    max_score: float
    score: float | None
    checks: list[CheckScore] = field(default_factory=list)
    note: str = ""


def missing_reason(execution: Execution | None, index: int | None, *,
                   hidden: bool = False) -> str:
    """Why a checks cell produced no result for a call, from how the cell ran. For a hidden
    call only the grader's own words: no exception text, no student cell's first line."""
    if index is None:
        return "the checks cell is missing"
    run = execution.cells.get(index) if execution is not None else None
    if run is None:
        return "the checks cell was not run"
    if run.status == CellStatus.NOT_RUN:
        if hidden or not execution.stopped:
            return "not run: the notebook stopped before this checks cell"
        return f"not run: {execution.stopped}"
    if run.status in (CellStatus.TIMEOUT, CellStatus.KILLED, CellStatus.DEAD):
        return run.note  # the checks cell's own name and the grader's words
    if run.status == CellStatus.ERROR:
        if hidden:
            return f"no result: {run.label} raised an exception before this call"
        return f"no result: {run.label} raised {run.raised}"
    return "grade() was not called for this check (was the checks cell changed at run time?)"


def _message(result: CheckResult, max_failures: int = 5) -> str:
    """What the student reads about one call: why it failed, or which cases differ (the first
    ``max_failures`` of them)."""
    if result.passed:
        return f"all {len(result.cases)} cases passed"
    n_pass = sum(c.passed for c in result.cases)
    if result.hidden:
        return _hidden_message(result, n_pass)
    if result.reason:
        return result.reason
    details = textwrap.dedent("\n".join(
        format_check(result, max_failures=max_failures).splitlines()[1:]))
    return f"{n_pass}/{len(result.cases)} cases passed\n{details}".strip()


def _hidden_message(result: CheckResult, n_pass: int) -> str:
    """A hidden check's report: counts, the grader's own reason, the check author's hints."""
    lines = [f"{n_pass}/{len(result.cases)} hidden cases passed"]
    if result.reason:
        lines.append(result.reason)
    elif not_implemented(result):
        return lines[0] + ": not implemented yet (the exercise still raises NotImplementedError)"
    hints = list(dict.fromkeys(c.hint for c in result.cases if not c.passed and c.hint))
    lines += [f"hint: {hint}" for hint in hints[:5]]
    return "\n".join(lines)


def delegation(calls: list[GradeCall], covered: dict[str, str]) -> dict[str, list[Finding]]:
    """``{check: findings}``: uses of what each check's exercise rebuilds in ``covered``
    (``{label: source}`` of the code that checks cell covers); unknown checks are skipped,
    the scorer reports them."""
    found = {}
    for call in calls:
        try:
            forbid = get_check(call.check).forbid
        except KeyError:
            continue
        hits = find_forbidden(covered, forbid) if forbid else []
        if hits:
            found[call.check] = hits
    return found


def score_checks_cell(cell: LabCell, drives: list[Drive] | None, *,
                      seed_of: Callable[[str, bool], int], reason_if_missing: str,
                      forbidden: dict[tuple[str, bool], str] | None = None,
                      zero_reason: str = "", include_hidden: bool = True,
                      max_failures: int = 5, hidden_reason_if_missing: str = "") -> CellScore:
    """Score one checks cell from its driven calls (``drives``, in call order; None if the
    cell never ran).

    Args:
        forbidden: ``{(check name, hidden): message}`` — delegation seen while that call was
            driven.
    """
    forbidden = forbidden or {}
    calls: list[GradeCall] = [c for c in cell.calls if include_hidden or not c.hidden]
    queue: dict[tuple[str, bool], list[Drive]] = defaultdict(list)
    for drive in drives or []:
        queue[drive.call.key].append(drive)
    results: list[CheckResult] = []
    for call in calls:
        drive = queue[call.key].pop(0) if queue[call.key] else None
        missing = (hidden_reason_if_missing or "no result: the checks cell stopped before this "
                   "call") if call.hidden else reason_if_missing
        try:
            result = _judge_call(call, drive, seed_of, zero_reason or "", missing)
        except Exception as error:  # noqa: BLE001 — a broken check must not stop the class
            result = CheckResult(call.check, call.hidden, [], reason=(
                f"the grader could not run this check ({type(error).__name__}: {error}); "
                f"this is a bug in the check, not in your code — tell your instructor"))
        if forbidden.get(call.key) and not zero_reason and result.cases:
            result = result.failed(forbidden[call.key])
        results.append(result)
    weights = [sum(c.weight for c in r.cases) for r in results]
    total = sum(weights)
    checks = []
    for call, result, weight in zip(calls, results, weights):
        share = cell.points * (weight / total if total else 1 / max(len(results), 1))
        score = share * result.fraction
        checks.append(CheckScore(cell.grade_id or "", call.check, call.hidden, score, share,
                                 _message(result, max_failures),
                                 sum(c.passed for c in result.cases), len(result.cases)))
    return CellScore(cell.grade_id or "", CHECKS, cell.points, sum(c.score for c in checks),
                     checks)


def _judge_call(call: GradeCall, drive: Drive | None, seed_of: Callable[[str, bool], int],
                zero_reason: str, reason_if_missing: str) -> CheckResult:
    if zero_reason:
        return judge(call.check, seed_of(call.check, call.hidden), [],
                     hidden=call.hidden).failed(zero_reason)
    if drive is None or drive.status == DriveStatus.MISSING:
        return judge(call.check, seed_of(call.check, call.hidden), [],
                     hidden=call.hidden).failed(reason_if_missing)
    if not drive.observed and drive.status != DriveStatus.DONE:
        return judge_expected(call.check, drive.expected, [], hidden=call.hidden).failed(
            drive.note or reason_if_missing)
    return judge_expected(call.check, drive.expected, drive.observed, hidden=call.hidden,
                          stopped=drive.note if drive.status != DriveStatus.DONE else "")


def depends_message(dependency: str) -> str:
    return (f"depends on {dependency}, an earlier exercise, which fails: fix that one first "
            f"(this exercise's answer calls it)")


def explain_dependencies(cells: list[CellScore]) -> None:
    """A failing check whose earlier exercise fails says so, and nothing else: its cases fail
    because the code it calls does (points are unchanged)."""
    failing = {c.check for cell in cells for c in cell.checks if not c.passed and not c.hidden}
    for cell in cells:
        for score in cell.checks:
            if score.passed or "not implemented yet" in score.message:
                continue  # its own exercise is not written yet: that says more
            try:
                after = get_check(score.check).after
            except KeyError:
                continue
            broken = [name for name in after if name in failing]
            if broken:
                score.message = (f"{score.cases_passed}/{score.cases} "
                                 f"{'hidden ' if score.hidden else ''}cases passed\n"
                                 + depends_message(broken[0]))


def score_notebook(source: LabNotebook, assembled: Assembled | None,
                   execution: Execution | None, *, seed_of: Callable[[str, bool], int],
                   forbidden: dict[tuple[str, bool], str] | None = None,
                   zero_reason: str = "") -> list[CellScore]:
    """Every graded cell of the source, scored from the assembled notebook's driven calls.

    With ``assembled`` None (missing or unreadable submission) every check scores 0 with
    ``zero_reason``. ``forbidden`` maps a call to the delegation seen while it was driven.
    """
    scores = []
    for cell in source.cells:
        if cell.role == WRITTEN:
            scores.append(CellScore(cell.grade_id or "", WRITTEN, cell.points, None,
                                    note="graded by hand"))
        elif cell.role == CHECKS:
            index = assembled.index_of(cell.grade_id) if assembled is not None else None
            drives = (execution.drives.get(cell.grade_id)
                      if execution is not None and index is not None else None)
            scores.append(score_checks_cell(
                cell, drives, seed_of=seed_of,
                reason_if_missing=zero_reason or missing_reason(execution, index),
                hidden_reason_if_missing=zero_reason or missing_reason(execution, index,
                                                                      hidden=True),
                forbidden=forbidden, zero_reason=zero_reason))
    if not zero_reason:
        explain_dependencies(scores)
    return scores
