"""Grades for an LMS: the CSV Canvas or Moodle imports, one row per student, one column per lab.

Students are named by their LMS login, which comes from the course's roster as nbgrader
keeps it: the gradebook's students, imported with nbgrader's own command from a CSV with
columns ``id,first_name,last_name,email,lms_user_id``::

    nbgrader db student import course/roster.csv

(``id`` is the coursekit/JupyterHub user name, ``lms_user_id`` the LMS login). Each lab's
cell is the lab's final score: the raw total (autograded plus hand-graded points) minus the
late penalty (:mod:`.lateness`); a lab not graded for a student is left empty, which both
LMSs read as "no grade", never as 0. Every text cell goes through :mod:`.spreadsheet`.

The formats followed:

* **Canvas**, the Gradebook's "Import" (Canvas Instructor Guide, "How do I import grades in
  the Gradebook?"; its export is the template): header ``Student, ID, SIS User ID, SIS Login
  ID, Section``, then one column per assignment, then rows. Canvas matches a row to a
  student by ``SIS Login ID`` (or ``ID`` / ``SIS User ID``, left empty here: coursekit never
  sees Canvas's numeric ids); an assignment column it does not know it offers to create. The
  second row is ``Points Possible``, as Canvas's own export writes it.
* **Moodle**, Grade administration → Import → "CSV file" (MoodleDocs, "Grade import"): any
  header; on upload the TA maps a column to a user field ("Identify user by": map from
  ``username`` to ``username``, or ``Email address`` to ``useremail``) and each other column
  to a grade item. Comma separated, UTF-8.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.pipeline import gradebook as gb
from autograder.publish.lateness import lateness_of_all
from autograder.publish.spreadsheet import number_cell, text_cell
from coursekit.course import Course

FORMATS = ("canvas", "moodle")


class RosterError(ValueError):
    """A graded student the roster cannot name to the LMS; says how to fix it."""


@dataclass(frozen=True)
class RosterEntry:
    student: str
    first_name: str
    last_name: str
    email: str
    lms_login: str


def roster_of(gradebook) -> dict[str, RosterEntry]:
    """``{student id: entry}`` of the gradebook's students (nbgrader's ``student`` table)."""
    from nbgrader.api import Student
    return {s.id: RosterEntry(s.id, s.first_name or "", s.last_name or "", s.email or "",
                              s.lms_user_id or "")
            for s in gradebook.db.query(Student)}


def lms_table(course: Course, fmt: str, db_url: str | None = None) -> tuple[list[str],
                                                                              list[list[str]]]:
    """``(header, rows)`` of the ``fmt`` CSV for every student on the roster with an LMS login.

    Raises RosterError naming every graded student whom the roster cannot name (no
    ``lms_user_id``), and ValueError for an unknown format."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown LMS format {fmt!r}; choose one of {', '.join(FORMATS)}")
    gradebook = gb.open_gradebook(db_url or course.default_db_url)
    try:
        outcomes = gb.load_outcomes(gradebook)
        roster = roster_of(gradebook)
    finally:
        gradebook.close()
    unnamed = sorted({o.student for o in outcomes if not roster.get(o.student, None)
                      or not roster[o.student].lms_login})
    if unnamed:
        raise RosterError(
            f"{len(unnamed)} graded student(s) have no LMS login on the roster: "
            f"{', '.join(unnamed)}. Add them to the roster CSV (columns id,first_name,"
            f"last_name,email,lms_user_id) and run `nbgrader db student import ROSTER.csv` "
            f"in course/; nothing was written")
    late = lateness_of_all(course, outcomes)
    final = {(o.student, o.lab): o.total - late[(o.student, o.lab)].penalty
             for o in outcomes if (o.student, o.lab) in late}
    entries = sorted((e for e in roster.values() if e.lms_login),
                     key=lambda e: (e.last_name, e.first_name, e.student))

    def scores(entry: RosterEntry) -> list[str]:
        return [number_cell(final[(entry.student, lab.id)])
                if (entry.student, lab.id) in final else "" for lab in course.labs]

    if fmt == "canvas":
        header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                  *(f"{lab.title} ({lab.id})" for lab in course.labs)]
        rows = [["Points Possible", "", "", "", "",
                 *(number_cell(lab.points) for lab in course.labs)]]
        rows += [[text_cell(_sortable_name(e)), "", "", text_cell(e.lms_login), "",
                  *scores(e)] for e in entries]
        return header, rows
    header = ["username", "Email address", *(f"{lab.title} ({lab.id})" for lab in course.labs)]
    rows = [[text_cell(e.lms_login), text_cell(e.email), *scores(e)] for e in entries]
    return header, rows


def _sortable_name(entry: RosterEntry) -> str:
    """Canvas's "Last, First" (it shows it; it matches by the login)."""
    if entry.last_name and entry.first_name:
        return f"{entry.last_name}, {entry.first_name}"
    return entry.last_name or entry.first_name or entry.student
