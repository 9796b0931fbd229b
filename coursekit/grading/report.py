"""Plain-text reports of check results, for notebooks, the terminal and feedback."""
from __future__ import annotations

from .verdict import CheckResult

PASS, FAIL = "✓", "✗"
_STUB = "raised NotImplementedError"
_SKIPPED = "raised EarlierStepFailed"


def _stub_message(failures: list) -> str | None:
    """The stub's message when every failure comes from a stub (or a step it skipped):
    one line then says more than a hint per case about code that is not written yet."""
    stubs = [c.message for c in failures if c.message.startswith(_STUB)]
    if stubs and all(c.message.startswith((_STUB, _SKIPPED)) for c in failures):
        return stubs[0].removeprefix("raised ")
    return None


def format_check(result: CheckResult, points: float | None = None, *,
                 max_failures: int = 5) -> str:
    """A short report: a header, then the failed cases with their hints (passes are counted)."""
    kind = "hidden" if result.hidden else "visible"
    n_pass = sum(c.passed for c in result.cases)
    score = f", {points * result.fraction:.2f}/{points:g} points" if points is not None else ""
    lines = [f"{PASS if result.passed else FAIL} {result.check} ({kind}): "
             f"{n_pass}/{len(result.cases)} cases passed{score}"]
    if result.reason:
        lines.append(f"    {result.reason}")
    # Cases failed for the check-wide reason are said once, by the reason line above.
    failures = [c for c in result.cases if not c.passed
                and not (result.reason and c.message == result.reason)]
    stub = _stub_message(failures)
    if stub is not None:
        lines.append(f"  {FAIL} not implemented yet ({len(failures)} cases): {stub}")
        return "\n".join(lines)
    for case in failures[:max_failures]:
        lines.append(f"  {FAIL} {case.label}: {case.message}")
        if case.hint:
            lines.append(f"      hint: {case.hint}")
    if len(failures) > max_failures:
        lines.append(f"  … and {len(failures) - max_failures} more failing cases")
    return "\n".join(lines)
