"""Export: ``grades.csv`` for the instructor, a Gradescope-style ``results.json`` per submission.

* ``course/exports/grades.csv``: one row per student × lab × check (a ``grade(...)`` call, or a
  written answer), with the check's points and the submission's totals on every row, so the
  file can be pivoted either way;
* ``course/exports/results/<student>/<lab>/results.json``: ``score`` and ``tests[{name, score,
  max_score, output, visibility}]``; hidden checks are ``"after_published"``, so students see
  them only once grades are released.

Every text is made printable (:func:`coursekit.notebook.safe_text.printable`) on its way out, so a
file name or message that quotes odd bytes can neither break the CSV nor the JSON readers.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from autograder.pipeline import gradebook as gb
from coursekit.course import Course
from coursekit.notebook.safe_text import printable

CSV_COLUMNS = ["student", "lab", "cell", "check", "visibility", "score", "max_score",
               "lab_auto_score", "lab_auto_max_score", "lab_total", "lab_max_score",
               "status", "flagged", "message"]


def _visibility(check: gb.StoredCheck) -> str:
    return "after_published" if check.hidden else "visible"


def csv_rows(outcomes: list[gb.StoredOutcome]) -> list[dict]:
    rows = []
    for o in outcomes:
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
            })
    return [{key: printable(value) for key, value in row.items()} for row in rows]


def results_json(outcome: gb.StoredOutcome) -> dict:
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
    return {"score": round(outcome.total, 4), "output": printable(output), "tests": tests}


def export(course: Course, db_url: str | None = None, *, students: list[str] | None = None,
           labs: list[str] | None = None, out_dir: Path | None = None) -> list[Path]:
    """Write ``grades.csv`` and every ``results.json``; returns the files written."""
    out_dir = out_dir or course.exports_dir
    gradebook = gb.open_gradebook(db_url or course.default_db_url)
    try:
        outcomes = gb.load_outcomes(gradebook, students=students, labs=labs)
    finally:
        gradebook.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    csv_path = out_dir / "grades.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(outcomes))
    written.append(csv_path)
    for outcome in outcomes:
        path = out_dir / "results" / outcome.student / outcome.lab / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results_json(outcome), indent=2, sort_keys=True) + "\n",
                        encoding="utf-8")
        written.append(path)
    return written
