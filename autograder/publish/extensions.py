"""Extensions: a later due date for one student and one lab, in ``course/extensions.toml``.

The file is the course's, kept beside ``course.toml`` (and in git): a TA edits it, or runs
``coursekit extend LAB STUDENT --days N``, which adds a block at its end. Each block is one
extension; a later block for the same student and lab replaces an earlier one (as nbgrader's
``grant_extension`` does: extensions do not add up)::

    [[extension]]
    student = "ann"           # the student's id, as in course/submitted/
    lab = "lab01_graphs"
    days = 2                  # and/or hours = 12
    reason = "medical note"   # optional, for the TAs; never shown to students

An extension moves the due date the lab's late policy counts from; nothing else.
"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import tomllib

from autograder.pipeline.collect import student_id
from coursekit.course import Course, ManifestError
from coursekit.notebook.safe_text import printable

FILE = "extensions.toml"
KEYS = {"student", "lab", "days", "hours", "reason"}
HEADER = """\
# Extensions: a later due date for one student and one lab (see
# autograder/publish/extensions.py). A later block for the same student and lab replaces an
# earlier one. `coursekit extend LAB STUDENT --days N` adds a block here.
"""


def path_of(course: Course) -> Path:
    return course.course_dir / FILE


def load_extensions(course: Course) -> dict[tuple[str, str], timedelta]:
    """``{(student, lab): extension}`` from ``course/extensions.toml`` (none when it is
    absent); a malformed block is a :class:`ManifestError` that names it."""
    path = path_of(course)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}: {error}") from None
    blocks = data.pop("extension", [])
    if data or not isinstance(blocks, list):
        raise ManifestError(f"{path}: holds only [[extension]] blocks (found "
                            f"{', '.join(data) or 'extension = ...'})")
    found = {}
    for number, block in enumerate(blocks, 1):
        where = f"{path}: extension #{number}"
        unknown = set(block) - KEYS
        if unknown:
            raise ManifestError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; an "
                                f"extension has {', '.join(sorted(KEYS))}")
        student, lab = block.get("student"), block.get("lab")
        if not isinstance(student, str) or student_id(student) != student:
            raise ManifestError(f"{where}: student = {student!r} is not a student id (1 to 100 "
                                f"letters, digits and _ . @ + -)")
        if not isinstance(lab, str):
            raise ManifestError(f"{where}: lab = {lab!r} is not a lab id")
        if lab not in {known.id for known in course.labs}:
            raise ManifestError(f"{where}: no lab {lab!r} in course.toml (labs: "
                                f"{', '.join(known.id for known in course.labs)})")
        found[(student, lab)] = _length(where, block)
    return found


def _length(where: str, block: dict) -> timedelta:
    amounts = {key: block.get(key, 0) for key in ("days", "hours")}
    for key, value in amounts.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ManifestError(f"{where}: {key} = {value!r} is not a number of {key} >= 0")
    length = timedelta(days=amounts["days"], hours=amounts["hours"])
    if length <= timedelta(0):
        raise ManifestError(f"{where}: gives no time; set days = N and/or hours = N")
    return length


def grant(course: Course, student: str, lab: str, *, days: float = 0, hours: float = 0,
          reason: str = "") -> Path:
    """Add an extension block at the end of ``course/extensions.toml`` (checked first, and
    the file read back after, so a bad one is never left there)."""
    block = {"student": student, "lab": lab, "days": days, "hours": hours}
    _length("the extension", block)
    if student_id(student) != student:
        raise ManifestError(f"{student!r} is not a student id (1 to 100 letters, digits and "
                            f"_ . @ + -)")
    course.lab(lab)
    path = path_of(course)
    before = path.read_text(encoding="utf-8") if path.exists() else HEADER
    lines = ["", "[[extension]]", f"student = {_toml_string(student)}",
             f"lab = {_toml_string(lab)}"]
    lines += [f"{key} = {value!r}" for key, value in (("days", days), ("hours", hours)) if value]
    if reason:
        lines.append(f"reason = {_toml_string(reason)}")
    path.write_text(before + "\n".join(lines) + "\n", encoding="utf-8")
    try:
        load_extensions(course)
    except ManifestError:
        path.write_text(before, encoding="utf-8")
        raise
    return path


def _toml_string(text: str) -> str:
    """A TOML basic string. JSON's escapes (quote, backslash, control characters as
    ``\\uXXXX``) are TOML's; what JSON leaves raw and TOML refuses (DEL, lone surrogates)
    :func:`printable` has replaced."""
    import json
    return json.dumps(printable(text), ensure_ascii=False)
