"""Plain-text reports of check results, for notebooks, the terminal and feedback."""
from __future__ import annotations

import re

from .verdict import CheckResult

PASS, FAIL = "✓", "✗"
# What the release's stub raises (autograder/publish/release.py, course/nbgrader_config.py):
# ``raise NotImplementedError("<exercise>: replace this line with your implementation")``.
# nbgrader's own default stub raises NotImplementedError without a message. Any other
# NotImplementedError (torch's "Cannot copy out of meta tensor", a missing method of a base
# class) is a real error in written code and is reported case by case, with its hint.
STUB_TEXT = "replace this line with your implementation"
_BARE_STUB = re.compile(r"\bNotImplementedError(: )?$")
_SKIPPED = "EarlierStepFailed"


def plural(count: int, noun: str) -> str:
    """``1 case``, ``2 cases``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _from_stub(message: str) -> bool:
    return STUB_TEXT in message or bool(_BARE_STUB.search(message))


def _stub_message(failures: list) -> str | None:
    """The stub's message when every failure comes from a stub (or a step it skipped):
    one line then says more than a hint per case about code that is not written yet."""
    stubs = [c.message for c in failures if _from_stub(c.message)]
    if stubs and all(_from_stub(c.message) or _SKIPPED in c.message for c in failures):
        first = stubs[0]
        at = first.find("NotImplementedError")
        return first[at:] if at >= 0 else first
    return None


def format_check(result: CheckResult, points: float | None = None, *,
                 max_failures: int = 5) -> str:
    """A short report: a header, then the failed cases with their hints (passes are counted)."""
    kind = "hidden" if result.hidden else "visible"
    n_pass = sum(c.passed for c in result.cases)
    score = f", {points * result.fraction:.2f}/{points:g} points" if points is not None else ""
    lines = [f"{PASS if result.passed else FAIL} {result.check} ({kind}): "
             f"{n_pass}/{plural(len(result.cases), 'case')} passed{score}"]
    if result.reason:
        lines.append(f"    {result.reason}")
    # Cases failed for the check-wide reason are said once, by the reason line above.
    failures = [c for c in result.cases if not c.passed
                and not (result.reason and c.message == result.reason)]
    stub = _stub_message(failures)
    if stub is not None:
        lines.append(f"  {FAIL} not implemented yet ({plural(len(failures), 'case')}): {stub}")
        return "\n".join(lines)
    for case in failures[:max_failures]:
        lines.append(f"  {FAIL} {case.label}: {case.message}")
        if case.hint:
            lines.append(f"      hint: {case.hint}")
    if len(failures) > max_failures:
        lines.append(f"  … and {plural(len(failures) - max_failures, 'more failing case')}")
    return "\n".join(lines)


def not_implemented(result: CheckResult) -> bool:
    """Whether every failing case of ``result`` comes from the release's untouched stub."""
    failures = [c for c in result.cases if not c.passed]
    return bool(failures) and _stub_message(failures) is not None
