"""The grader's side: replay a check on the reference and judge the student's observations.

This module never runs student code. It receives what the student's kernel observed, already
decoded from plain JSON (:mod:`.encoding`), reruns the same program with the same seed on the
reference implementation, and compares the two case by case.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .compare import compare
from .encoding import RaisedError, decode, encode, encode_error
from .program import STOPPED, get_check, run_program
from .tape import RecordingRng


@dataclass
class CaseResult:
    """The verdict on one observation."""

    label: str
    passed: bool
    message: str = ""
    hint: str = ""
    weight: float = 1.0


@dataclass
class CheckResult:
    """The verdict on one ``grade(...)`` call: one result per case, or a reason for none."""

    check: str
    hidden: bool
    cases: list[CaseResult] = field(default_factory=list)
    reason: str = ""

    @property
    def fraction(self) -> float:
        """Weighted share of cases that passed (0 when the check produced nothing)."""
        total = sum(c.weight for c in self.cases)
        if self.reason or total == 0:
            return 0.0
        return sum(c.weight for c in self.cases if c.passed) / total

    @property
    def passed(self) -> bool:
        return self.fraction == 1.0

    def failed(self, reason: str) -> "CheckResult":
        """The same check with every case failed for ``reason`` (e.g. delegation found)."""
        return CheckResult(self.check, self.hidden, [
            CaseResult(c.label, False, reason, c.hint, c.weight) for c in self.cases], reason)


def observed(value: Any = None, error: BaseException | None = None) -> Any:
    """Normalise a raw value (or exception) to what the grader compares: encode, then decode."""
    return decode(encode_error(error) if error is not None else encode(value))


def reference_run(check_name: str, seed: int) -> tuple[list[tuple[Any, Any]], list]:
    """Run the reference on ``seed``: ``(case, normalised value)`` pairs in program order,
    and the tape of every input drawn (what the student's kernel gets instead of the seed)."""
    check = get_check(check_name)
    rng = RecordingRng(seed)
    pairs = []
    for obs in run_program(check, check.reference_impl(), rng=rng):
        if obs.case is None:  # the program itself crashed on the reference: a bug in the check
            raise RuntimeError(f"check {check_name} crashed on the reference with seed {seed}: "
                               f"{obs.error!r}") from obs.error
        pairs.append((obs.case, observed(obs.value, obs.error)))
    return pairs, rng.tape


def reference_cases(check_name: str, seed: int) -> list[tuple[Any, Any]]:
    """Run the reference; returns ``(case, normalised value)`` pairs in program order."""
    return reference_run(check_name, seed)[0]


def judge(check_name: str, seed: int, student: list[tuple[str, Any]], *,
          hidden: bool) -> CheckResult:
    """Compare the student's ``(label, decoded value)`` observations with the reference's."""
    return judge_expected(check_name, reference_cases(check_name, seed), student, hidden=hidden)


def judge_expected(check_name: str, expected_pairs: list[tuple[Any, Any]],
                   student: list[tuple[str, Any]], *, hidden: bool,
                   stopped: str = "") -> CheckResult:
    """Compare the student's observations with the reference's ``(case, value)`` pairs.

    Args:
        stopped: why the student's run ended early (a timeout, a dead kernel): said for every
            case that was not observed, while the cases that were keep their verdicts.
    """
    result = CheckResult(check_name, hidden)
    got_by_label = dict(student)
    crashed = next((v for label, v in student if label == STOPPED), None)
    failed: set[str] = set()
    for case, expected in expected_pairs:
        if case.label not in got_by_label:
            why = (f" (the check stopped early: {crashed!r})" if crashed is not None
                   else f" ({stopped})" if stopped else "")
            result.cases.append(CaseResult(case.label, False, f"not observed{why}",
                                           case.hint, case.weight))
            failed.add(case.label)
            continue
        got = got_by_label[case.label]
        message = compare(got, expected, rtol=case.rtol, atol=case.atol, names=case.names)
        hint = case.hint
        if message is not None:
            failed.add(case.label)
            cause = next((label for label in getattr(case, "follows", ()) if label in failed),
                         None)
            if cause is not None:
                # NOTE [a failure that follows from another one]: this case starts from what
                # a failing case left; its own hint would name another mistake.
                message += f" (follows from the failing case '{cause}': fix that one first)"
                hint = ""
            elif isinstance(got, RaisedError) and "EarlierStepFailed" in got.names:
                hint = ""  # skipped: the step it needs failed, and that step says why
        result.cases.append(CaseResult(case.label, message is None, message or "",
                                       hint, case.weight))
    return result


def decode_payload(payload: dict) -> list[tuple[str, Any]]:
    """Observations from a kernel payload (untrusted JSON) as ``(label, value)`` pairs."""
    pairs = []
    for item in payload.get("observations", []):
        if isinstance(item, dict) and isinstance(item.get("label"), str):
            pairs.append((item["label"], decode(item.get("value"))))
    return pairs

