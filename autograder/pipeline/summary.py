"""The grade table printed after a class is graded (autograde, demo)."""
from __future__ import annotations

import shutil


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def grade_table(outcomes, *, expected: dict | None = None, width: int | None = None) -> str:
    """One line per student × lab: score, status and the first reason.

    Args:
        outcomes: :class:`autograder.pipeline.gradebook.Outcome` or ``StoredOutcome`` objects.
        expected: optional ``{(student, lab): text}`` shown in an extra column (the demo
            prints what each demo student is meant to show).
    """
    width = width or max(100, min(shutil.get_terminal_size((140, 20)).columns, 180))
    rows = []
    for o in outcomes:
        auto_max = getattr(o, "auto_max_score", o.max_score)
        reason = "; ".join(o.reasons) if o.reasons else ""
        row = [o.student, o.lab, f"{o.score:5.2f}/{auto_max:g}", o.status, reason]
        if expected is not None:
            row.insert(4, expected.get((o.student, o.lab), ""))
        rows.append(row)
    head = ["student", "lab", "auto score", "status", "why"]
    if expected is not None:
        head.insert(4, "check")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head) - 1)]
    rest = max(20, width - sum(widths) - 2 * len(widths))
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(head, widths)) + "  " + head[-1]]
    lines.append("-" * min(width, sum(widths) + 2 * len(widths) + rest))
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) + "  "
                     + _short(str(row[-1]), rest))
    return "\n".join(lines)
