"""Score: payloads published by the kernel → verdicts (in this process) → points per check.

For every checks cell of the *source*, its ``grade(...)`` calls are known from the source
(:func:`autograder.cells.grade_calls`). Each call is matched, in order, with a payload the
cell published (MIME ``application/vnd.coursekit.observations+json``) and judged here with
:func:`coursekit.grading.judge` on the same seed the kernel used. The cell's points are split
over all cases of all its calls by case weight, so one wrong gradient costs its share, not the
cell. Stderr, warnings and anything else in the output play no part: only payloads count.

A call with no payload scores 0 with a reason (the cell raised, timed out, was not reached);
more payloads than calls for a check means the output was forged, and that check scores 0.
Written answers are left for a human (``score=None``).
"""
from __future__ import annotations

import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

from coursekit.grading.encoding import MIME_TYPE
from coursekit.grading.integrity import Finding, delegation_message, find_forbidden
from coursekit.grading.program import get_check
from coursekit.grading.report import format_check
from coursekit.grading.verdict import CheckResult, decode_payload, judge

from .assemble import Assembled
from .cells import CHECKS, WRITTEN, GradeCall, LabCell, LabNotebook
from .execute import DEAD, ERROR, KILLED, NOT_RUN, TIMEOUT, Execution, cell_label



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


def payloads(cell) -> list[dict]:
    """The observation payloads in a cell's outputs, in order."""
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {}) if isinstance(output, dict) else {}
        payload = data.get(MIME_TYPE)
        if isinstance(payload, dict):
            found.append(payload)
    return found


def missing_reason(execution: Execution | None, index: int | None) -> str:
    """Why a checks cell produced no payload for a call, from how the cell ran."""
    if index is None:
        return "the checks cell is missing"
    run = execution.cells.get(index) if execution is not None else None
    if run is None:
        return "the checks cell was not run"
    if run.status == NOT_RUN:
        return f"not run: {execution.stopped}" if execution.stopped else "not run"
    if run.status in (TIMEOUT, KILLED, DEAD):
        return run.note
    if run.status == ERROR:
        evalue = run.evalue if len(run.evalue) < 300 else run.evalue[:300] + "…"
        return (f"no result: {cell_label(index)} raised {run.ename}: {evalue}" if evalue
                else f"no result: {cell_label(index)} raised {run.ename}")
    return "no result was published by this call (was the cell changed at run time?)"


def _message(result: CheckResult) -> str:
    """What the student reads about one call: why it failed, or which cases differ."""
    if result.passed:
        return f"all {len(result.cases)} cases passed"
    if result.reason:
        return result.reason
    n_pass = sum(c.passed for c in result.cases)
    details = textwrap.dedent("\n".join(format_check(result).splitlines()[1:]))
    return f"{n_pass}/{len(result.cases)} cases passed\n{details}".strip()


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


def score_checks_cell(cell: LabCell, outputs_cell, *, seed_of: Callable[[str, bool], int],
                      reason_if_missing: str, forbidden: dict[str, list[Finding]] | None = None,
                      zero_reason: str = "", include_hidden: bool = True) -> CellScore:
    """Score one checks cell from its executed copy ``outputs_cell`` (None if absent).

    Args:
        forbidden: ``{check name: findings}`` — delegation found in the covered answer cells.
    """
    forbidden = forbidden or {}
    calls: list[GradeCall] = [c for c in cell.calls if include_hidden or not c.hidden]
    queue: dict[tuple[str, bool], list[dict]] = defaultdict(list)
    for payload in payloads(outputs_cell) if outputs_cell is not None else []:
        key = (str(payload.get("check")), bool(payload.get("hidden")))
        queue[key].append(payload)
    expected = defaultdict(int)
    for call in calls:
        expected[call.key] += 1
    results: list[CheckResult] = []
    for call in calls:
        seed = seed_of(call.check, call.hidden)
        reason = ""
        if zero_reason:
            reason = zero_reason
        elif len(queue[call.key]) > expected[call.key]:
            reason = (f"{len(queue[call.key])} results were published for "
                      f"{call.check} where the cell makes {expected[call.key]} call(s): "
                      f"the output was tampered with")
        payload = queue[call.key].pop(0) if queue[call.key] and not reason else None
        try:
            if payload is not None:
                result = judge(call.check, seed, decode_payload(payload), hidden=call.hidden)
            else:
                result = judge(call.check, seed, [], hidden=call.hidden).failed(
                    reason or reason_if_missing)
        except Exception as error:  # noqa: BLE001 — a broken check must not stop the class
            result = CheckResult(call.check, call.hidden, [], reason=(
                f"the grader could not run this check ({type(error).__name__}: {error}); "
                f"this is a bug in the check, not in your code — tell your instructor"))
        if forbidden.get(call.check) and not zero_reason and result.cases:
            result = result.failed(delegation_message(forbidden[call.check]))
        results.append(result)
    weights = [sum(c.weight for c in r.cases) for r in results]
    total = sum(weights)
    checks = []
    for call, result, weight in zip(calls, results, weights):
        share = cell.points * (weight / total if total else 1 / max(len(results), 1))
        score = share * result.fraction
        checks.append(CheckScore(cell.grade_id or "", call.check, call.hidden, score, share,
                                 _message(result),
                                 sum(c.passed for c in result.cases), len(result.cases)))
    return CellScore(cell.grade_id or "", CHECKS, cell.points, sum(c.score for c in checks),
                     checks)


def score_notebook(source: LabNotebook, assembled: Assembled | None,
                   execution: Execution | None, *, seed_of: Callable[[str, bool], int],
                   forbidden: dict[str, dict[str, list[Finding]]] | None = None,
                   zero_reason: str = "") -> list[CellScore]:
    """Every graded cell of the source, scored from the assembled and executed notebook.

    With ``assembled`` None (missing or unreadable submission) every check scores 0 with
    ``zero_reason``.
    """
    scores = []
    for cell in source.cells:
        if cell.role == WRITTEN:
            scores.append(CellScore(cell.grade_id or "", WRITTEN, cell.points, None,
                                    note="graded by hand"))
        elif cell.role == CHECKS:
            index = assembled.index_of(cell.grade_id) if assembled is not None else None
            outputs_cell = assembled.nb.cells[index] if index is not None else None
            scores.append(score_checks_cell(
                cell, outputs_cell, seed_of=seed_of,
                reason_if_missing=zero_reason or missing_reason(execution, index),
                forbidden=(forbidden or {}).get(cell.grade_id, {}),
                zero_reason=zero_reason))
    return scores
