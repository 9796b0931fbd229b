"""Annotate: each checks cell of the graded notebook shows what grading found there.

The checks ran in requests the grader sent after the cell (:mod:`.drive`), not in the cell, so
the cell's own outputs say little. This step adds to each checks cell what a TA wants next to
the written answers: what the student's code printed while the visible checks ran (never
while the hidden ones ran: those prints could show hidden inputs), and the same report the
student's feedback gives, points included.
"""
from __future__ import annotations

import copy

from nbformat import NotebookNode
from nbformat.v4 import new_output

from coursekit.caps import MAX_PRINTED
from coursekit.notebook.assemble import Assembled
from coursekit.notebook.drive import Drive
from coursekit.notebook.score import CellScore


def annotate(ran: NotebookNode, assembled: Assembled, scores: list[CellScore],
             drives: dict[str, list[Drive]]) -> NotebookNode:
    """A copy of ``ran`` (the assembled notebook as it ran) with the prints and the report
    appended to every checks cell."""
    annotated = copy.deepcopy(ran)
    for score in scores:
        index = assembled.index_of(score.grade_id) if score.checks else None
        if index is None:
            continue
        cell: NotebookNode = annotated.cells[index]
        for drive in drives.get(score.grade_id, []):
            for name, text in ((n, t) for n, t in drive.printed.items() if t and not drive.hidden):
                cell.outputs.append(new_output("stream", name=name, text=text[:MAX_PRINTED]))
        lines = [f"coursekit: {score.score:.2f}/{score.max_score:g} points"]
        for check in score.checks:
            lines.append(f"{'✓' if check.passed else '✗'} {check.name}: "
                         f"{check.score:.2f}/{check.max_score:.2f}")
            lines += [f"    {line}" for line in check.message.splitlines()]
        cell.outputs.append(new_output("stream", name="stdout", text="\n".join(lines) + "\n"))
    return annotated
