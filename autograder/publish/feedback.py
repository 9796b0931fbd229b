"""Feedback: one HTML page per student and lab, from the gradebook.

A page shows each check's name, points and message, the written answers' state, and the
notes about the submission (renamed notebook, restored cells, timeouts). It is built from
the stored verdicts only — never from the executed notebook — so hidden test source and
tracebacks cannot leak into it. Every piece of text is escaped, and made printable (no lone
surrogates, NULs or control characters, which the page could not hold): messages quote
student code's exception messages and file names.
"""
from __future__ import annotations

import os
from html import escape as _html_escape
from pathlib import Path

from autograder.pipeline import gradebook as gb
from autograder.isolation import untrusted_tree
from coursekit.caps import MAX_EXCHANGE_FILE
from autograder.publish.lateness import NO_DUE_DATE, NOT_HANDED_IN, Lateness, lateness_of_all
from coursekit.course import Course
from coursekit.notebook.safe_text import printable

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; }
h1 { font-size: 1.4rem; margin-bottom: 0.2rem; }
.total { font-size: 1.1rem; margin: 0.5rem 0 1.5rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.6rem;
         border-bottom: 1px solid #ddd; }
td.points { white-space: nowrap; font-variant-numeric: tabular-nums; }
pre { margin: 0; white-space: pre-wrap; font-size: 0.85rem; }
.pass { color: #1a7f37; } .fail { color: #b42318; } .pending { color: #8a6d00; }
.lateness { margin: -1rem 0 1rem; }
.notes { background: #f6f8fa; padding: 0.6rem 1rem; border-radius: 4px; }
.warning { background: #fde8e8; border: 2px solid #b42318; padding: 0.6rem 1rem;
           font-weight: bold; }
""".strip()


def escape(text: object) -> str:
    """``text`` safe inside HTML: printable, then escaped."""
    return _html_escape(printable(text))


def _row(check: gb.StoredCheck, manual: dict[str, float]) -> str:
    if check.kind == "written":
        score = manual.get(check.cell)
        state = ("pending", "to be graded by hand") if score is None else (
            "pass" if score >= check.max_score else "fail", "graded by hand")
        points = "–" if score is None else f"{score:g}"
        name, where = check.cell, "written answer"
        message = state[1]
        css = state[0]
    else:
        css = "pass" if check.score is not None and check.score >= check.max_score - 1e-9 \
            else "fail"
        points = f"{check.score:.2f}"
        name, where = check.check, "hidden" if check.hidden else "visible"
        message = check.message
    return (f'<tr class="{css}"><td>{escape(name)}<br><small>{escape(where)}</small></td>'
            f'<td class="points">{escape(points)} / {check.max_score:.2f}</td>'
            f"<td><pre>{escape(message)}</pre></td></tr>")


def _lateness_block(outcome: gb.StoredOutcome, late: Lateness | None) -> list[str]:
    """When it was handed in, against the due date, and the penalty beside the raw points."""
    if late is None or late.status in (NO_DUE_DATE, NOT_HANDED_IN):
        return []
    parts = [f'<div class="lateness">Handed in: <b>{escape(late.describe())}</b>'
             f"<br><small>late policy: {escape(late.policy)}</small></div>"]
    if late.penalty:
        parts.append(f'<div class="total">Late penalty: <b>−{late.penalty:.2f}</b> of '
                     f"{outcome.total:.2f} points · score after the penalty: "
                     f"<b>{outcome.total - late.penalty:.2f} / {outcome.max_score:g}</b></div>")
    return parts


def render(outcome: gb.StoredOutcome, title: str, late: Lateness | None = None) -> str:
    """The feedback page of one stored outcome (``late``: its lateness, where the lab has a
    due date)."""
    written = [c for c in outcome.checks if c.kind == "written"]
    pending = [c for c in written if c.cell not in outcome.manual_scores]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(outcome.lab)} — {escape(outcome.student)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<div>Feedback for <b>{escape(outcome.student)}</b> · lab <code>"
        f"{escape(outcome.lab)}</code></div>",
        f'<div class="total">Autograded: <b>{outcome.score:.2f} / '
        f"{outcome.auto_max_score:g}</b> points"
        + (f" · written answers: {sum(outcome.manual_scores.values()):g} / "
           f"{sum(c.max_score for c in written):g}" + (" (not all graded yet)" if pending else "")
           if written else "")
        + "</div>",
        *_lateness_block(outcome, late),
    ]
    if not outcome.sandbox.startswith("bubblewrap"):
        parts.append(f'<p class="warning">{escape(outcome.sandbox)}</p>')
    if outcome.flagged:
        parts.append('<p class="warning">This submission is flagged for review by a TA.</p>')
    if outcome.reasons:
        parts.append('<div class="notes"><b>About this submission</b><ul>'
                     + "".join(f"<li>{escape(r)}</li>" for r in outcome.reasons) + "</ul></div>")
    parts.append("<h2>Checks</h2><table><tr><th>check</th><th>points</th><th>message</th></tr>")
    parts += [_row(check, outcome.manual_scores) for check in outcome.checks]
    parts.append("</table>")
    parts.append("<p><small>Hidden checks run on inputs drawn for you at grading time; their "
                  "messages say what differed, not how the check is written.</small></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# What nbgrader's exchange left beside a hand-in collected from it; its release_feedback
# hands a page back only with them beside the page.
EXCHANGE_FILES = ("timestamp.txt", "submission_secret.txt")


def _exchange_files(folder: Path) -> list[tuple[str, bytes]]:
    """The exchange's files beside a hand-in, read as the hand-in's: never through a link
    (a ``timestamp.txt`` linked to a root-only file would hand that file to the student with
    the feedback), and never more than a few kilobytes."""
    found = []
    try:
        root = untrusted_tree.open_folder(folder)
    except OSError:
        return found   # no folder hand-in (a zip, a missing one), or a linked one
    try:
        for name in EXCHANGE_FILES:
            try:
                found.append((name, untrusted_tree.read_file(root, name, MAX_EXCHANGE_FILE)))
            except OSError:
                continue
    finally:
        os.close(root)
    return found


def write_feedback(course: Course, db_url: str | None = None, *,
                   students: list[str] | None = None,
                   labs: list[str] | None = None) -> list[Path]:
    """Write ``course/feedback/<student>/<lab>/<lab>.html`` for every stored outcome, with
    the exchange's files of the hand-in beside it (hand-ins from elsewhere have none)."""
    titles = {lab.id: lab.title for lab in course.labs}
    gradebook = gb.open_gradebook(db_url or course.default_db_url)
    written = []
    try:
        outcomes = gb.load_outcomes(gradebook, students=students, labs=labs)
        late = lateness_of_all(course, outcomes)
        for outcome in outcomes:
            path = course.feedback_dir / outcome.student / outcome.lab / f"{outcome.lab}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(outcome, titles.get(outcome.lab, outcome.lab),
                                   late.get((outcome.student, outcome.lab))),
                            encoding="utf-8")
            for name, data in _exchange_files(course.submitted_dir / outcome.student
                                              / outcome.lab):
                untrusted_tree.place(data, path.parent, name, staging=path.parent)
            written.append(path)
    finally:
        gradebook.close()
    return written
