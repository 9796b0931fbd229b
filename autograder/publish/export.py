"""Export: ``grades.csv`` for the instructor, a Gradescope-style ``results.json`` per submission.

* ``course/exports/grades.csv``: one row per student × lab × check (a ``grade(...)`` call, or a
  written answer), with the check's points and the submission's totals on every row, so the
  file can be pivoted either way;
* ``course/exports/results/<student>/<lab>/results.json``: ``score`` and ``tests[{name, score,
  max_score, output, visibility}]``; hidden checks are ``"after_published"``, so students see
  them only once grades are released;
* with ``--format canvas`` / ``--format moodle``, also ``canvas.csv`` / ``moodle.csv``, the
  file that LMS imports (:mod:`.lms`).

Lateness (:mod:`.lateness`) is shown beside the raw points, never folded into them:
grades.csv has ``lab_total`` (raw) and ``late_penalty`` and ``lab_final``; results.json's
``score`` is the final score, with the raw one and the lateness in ``extra_data``.

Every text is made printable (:func:`coursekit.notebook.safe_text.printable`) on its way out, so a
file name or message that quotes odd bytes can neither break the CSV nor the JSON readers, and
no CSV cell is a spreadsheet formula (:mod:`.spreadsheet`).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from autograder.pipeline import gradebook as gb
from autograder.publish import lms
from autograder.publish.lateness import Lateness, lateness_of_all
from autograder.publish.spreadsheet import text_cell, write_csv
from coursekit.course import Course
from coursekit.notebook.safe_text import printable

CSV_COLUMNS = ["student", "lab", "cell", "check", "visibility", "score", "max_score",
               "lab_auto_score", "lab_auto_max_score", "lab_total", "lab_max_score",
               "status", "flagged", "message",
               "submitted_at", "lateness", "late_penalty", "lab_final"]


def _visibility(check: gb.StoredCheck) -> str:
    return "after_published" if check.hidden else "visible"


def csv_rows(outcomes: list[gb.StoredOutcome],
             late: dict[tuple[str, str], Lateness] | None = None) -> list[dict]:
    rows = []
    for o in outcomes:
        when = (late or {}).get((o.student, o.lab))
        penalty = when.penalty if when is not None else 0.0
        for check in o.checks:
            manual = o.manual_scores.get(check.cell) if check.kind == "written" else None
            score = check.score if check.kind != "written" else manual
            rows.append({
                "student": o.student, "lab": o.lab, "cell": check.cell,
                "check": check.check if check.kind != "written" else f"{check.cell} (written)",
                "visibility": _visibility(check) if check.kind != "written" else "manual",
                "score": "" if score is None else f"{score:.4f}",
                "max_score": f"{check.max_score:.4f}",
                "lab_auto_score": f"{o.score:.4f}", "lab_auto_max_score": f"{o.auto_max_score:g}",
                "lab_total": f"{o.total:.4f}", "lab_max_score": f"{o.max_score:g}",
                "status": o.status, "flagged": "yes" if o.flagged else "",
                "message": check.message.splitlines()[0] if check.message else "",
                "submitted_at": (o.submitted_at.isoformat(sep=" ") + " UTC"
                                 if o.submitted_at else ""),
                "lateness": when.describe() if when is not None else "",
                "late_penalty": f"{penalty:.4f}", "lab_final": f"{o.total - penalty:.4f}",
            })
    return [{key: text_cell(value) for key, value in row.items()} for row in rows]


def results_json(outcome: gb.StoredOutcome, late: Lateness | None = None) -> dict:
    tests = []
    for check in outcome.checks:
        if check.kind == "written":
            if check.cell not in outcome.manual_scores:
                continue  # not graded yet: leave it out rather than report a 0
            tests.append({"name": f"{check.cell} (written answer)",
                          "score": outcome.manual_scores[check.cell],
                          "max_score": check.max_score, "output": "graded by hand",
                          "visibility": "visible"})
            continue
        tests.append({"name": f"{check.cell}: {check.check}"
                              + (" (hidden)" if check.hidden else ""),
                      "score": round(check.score or 0.0, 4),
                      "max_score": round(check.max_score, 4),
                      "output": check.message, "visibility": _visibility(check)})
    output = "\n".join(outcome.reasons)
    if not outcome.sandbox.startswith("bubblewrap"):
        output = (outcome.sandbox + "\n" + output).strip()
    for test in tests:
        test.update({key: printable(test[key]) for key in ("name", "output")})
    penalty = late.penalty if late is not None else 0.0
    extra = {"raw_score": round(outcome.total, 4), "late_penalty": round(penalty, 4)}
    if late is not None:
        extra["lateness"] = printable(late.describe())
    return {"score": round(outcome.total - penalty, 4), "output": printable(output),
            "tests": tests, "extra_data": extra}


def export(course: Course, db_url: str | None = None, *, students: list[str] | None = None,
           labs: list[str] | None = None, out_dir: Path | None = None,
           formats: tuple[str, ...] = ()) -> list[Path]:
    """Write ``grades.csv``, every ``results.json`` and one ``<format>.csv`` per LMS format
    (the whole class, whatever the filters); returns the files written. An LMS file whose
    roster is incomplete raises :class:`lms.RosterError` before anything is written."""
    out_dir = out_dir or course.exports_dir
    tables = {fmt: lms.lms_table(course, fmt, db_url) for fmt in formats}
    gradebook = gb.open_gradebook(db_url or course.default_db_url)
    try:
        outcomes = gb.load_outcomes(gradebook, students=students, labs=labs)
    finally:
        gradebook.close()
    late = lateness_of_all(course, outcomes)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    csv_path = out_dir / "grades.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(outcomes, late))
    written.append(csv_path)
    for fmt, (header, rows) in tables.items():
        written.append(write_csv(out_dir / f"{fmt}.csv", header, rows))
    for outcome in outcomes:
        path = out_dir / "results" / outcome.student / outcome.lab / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results_json(outcome, late.get((outcome.student,
                                                                    outcome.lab))),
                                   indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written
