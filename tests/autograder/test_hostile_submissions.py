"""Hand-ins built to hurt the class, graded for real (sandbox, kernels, SQLite): none of them
may change another student's grade, reach the course's files, or stop the run."""
from __future__ import annotations

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from autograder import demo_class
from autograder.autograde import autograde
from autograder.gradebook import load_outcomes, open_gradebook

# After its kernel stops, the grader writes the graded notebook into the submission's folder,
# which the kernel could write: a symlink left there must not redirect that write.
LINK_TO_GRADEBOOK = '''import os
os.symlink("../../../gradebook.db", "labfx.ipynb")
'''


def _write(folder, nb, name="labfx.ipynb"):
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(folder / name))
    return folder / name


@pytest.mark.slow
def test_hostile_hand_ins_leave_the_class_and_the_course_intact(fixture_course, test_limits):
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    submitted = course.submitted_dir
    ada = _write(submitted / "ada" / lab.id, demo.notebook())

    writer = demo.notebook()
    writer.cells.append(new_code_cell(LINK_TO_GRADEBOOK))
    _write(submitted / "wes_link_writer" / lab.id, writer)

    (submitted / "lin_link" / lab.id).mkdir(parents=True)  # hands in ada's work by a symlink
    os.symlink(ada, submitted / "lin_link" / lab.id / lab.notebook)
    os.symlink(course.root / "course" / "course.toml", submitted / "lin_link" / lab.id / "x.toml")

    _write(submitted / "ada_" / lab.id, demo.release)  # the same id as "ada" once made safe

    mangled = demo.notebook()
    mangled.cells[0].metadata["nbgrader"] = "x"
    mangled.cells[1].metadata["nbgrader"] = {"grade_id": ["a"], "grade": True}
    _write(submitted / "mo_mangled" / lab.id, mangled)

    autograde(course, jobs=2, overrides=test_limits, progress=False, log=lambda m: None)

    gradebook = open_gradebook(course.default_db_url)  # still a database
    try:
        outcomes = {o.student: o for o in load_outcomes(gradebook)}
    finally:
        gradebook.close()
    assert outcomes["ada"].score == pytest.approx(demo.max_score)
    assert outcomes["ada-2"].score == 0.0  # the lookalike is graded on its own
    assert outcomes["lin_link"].status == "missing"
    assert not (course.autograded_dir / "lin_link").exists() or not any(
        p.name == "x.toml" for p in (course.autograded_dir / "lin_link").rglob("*"))
    graded = course.autograded_dir / "wes_link_writer" / lab.id / lab.notebook
    assert graded.is_file() and not graded.is_symlink()
    assert outcomes["mo_mangled"].status in ("graded", "flagged")
