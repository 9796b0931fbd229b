"""Hand-ins built to hurt the class, graded for real (sandbox, kernels, SQLite): none of them
may change another student's grade, reach the course's files, or stop the run."""
from __future__ import annotations

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from autograder.demo import demo_class
from autograder.isolation import sandbox
from autograder.pipeline.autograde import autograde
from autograder.pipeline.gradebook import load_outcomes, open_gradebook

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

    flood = demo.notebook()  # three 30 MB displays: dropped, not kept in memory and on disk
    flood.cells.append(new_code_cell(
        "from IPython.display import display\nfor _ in range(3):\n"
        "    display({'text/plain': 'x' * 30_000_000}, raw=True)"))
    _write(submitted / "flo_flood" / lab.id, flood)

    filler = demo.notebook()  # /tmp is memory: it has a size, or a class could eat the RAM
    filler.cells.append(new_code_cell(
        "import errno\nchunk = b'x' * 2**20\nresult = 'no limit'\n"
        "try:\n    with open('/tmp/fill', 'wb') as out:\n        for _ in range(700):\n"
        "            out.write(chunk)\n            out.flush()\n"
        "except OSError as error:\n    result = errno.errorcode.get(error.errno, str(error))\n"
        "open('tmp_result.txt', 'w').write(result)\n"
        "with open('big.bin', 'wb') as out:\n    out.write(b'x' * 60 * 2**20)"))
    _write(submitted / "tia_tmp_filler" / lab.id, filler)

    # A one-cell cheat: its own grade() hands the checks the reference instead of the answer.
    regrader = demo.release
    regrader.cells.append(new_code_cell(
        "_real = grade\ndef grade(name, impl, **kw):\n    return _real(name, impl, **kw)"))
    _write(submitted / "reg_regrade" / lab.id, regrader)

    helper = demo.notebook()  # code in a .py file handed in with the notebook is scanned too
    _write(submitted / "hal_helper" / lab.id, helper)
    (submitted / "hal_helper" / lab.id / "helpers.py").write_text('exec("x = 1")\n')

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
    assert outcomes["ada_"].score == 0.0  # the lookalike is graded on its own, as itself
    assert outcomes["lin_link"].status == "missing"
    assert not (course.autograded_dir / "lin_link").exists() or not any(
        p.name == "x.toml" for p in (course.autograded_dir / "lin_link").rglob("*"))
    graded = course.autograded_dir / "wes_link_writer" / lab.id / lab.notebook
    assert graded.is_file() and not graded.is_symlink()
    assert outcomes["mo_mangled"].status in ("graded", "flagged")
    if outcomes["ada"].sandbox.startswith("bubblewrap") and sandbox._tmp_size():
        tmp_result = course.autograded_dir / "tia_tmp_filler" / lab.id / "tmp_result.txt"
        assert tmp_result.read_text() == "ENOSPC"
    assert not (course.autograded_dir / "tia_tmp_filler" / lab.id / "big.bin").exists()
    assert any("big.bin (60 MB) was deleted" in r for r in outcomes["tia_tmp_filler"].reasons)
    # A student's own grade() only decides what gets registered: the stubs it passes on
    # still score 0. A helper file that is never run costs an honest notebook nothing.
    assert outcomes["reg_regrade"].score == 0.0
    assert outcomes["hal_helper"].score == pytest.approx(demo.max_score)
    assert not outcomes["hal_helper"].flagged
    assert outcomes["flo_flood"].score == pytest.approx(demo.max_score)
    flooded = course.autograded_dir / "flo_flood" / lab.id / lab.notebook
    assert flooded.stat().st_size < 5_000_000 and "was dropped" in flooded.read_text()


def test_an_edited_setup_cell_never_runs_before_the_monitor(fixture_course, test_limits):
    """The grading kernel imports the setup cell's imports before its monitor starts
    (coursekit.grading.kernel). An attacker who edits the setup cell to run first, unwatched,
    gets nothing: the preload is the instructor's setup from the source notebook, and the
    notebook's setup cell is restored from it too. The honest answers keep full marks."""
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    nb = demo.notebook()
    setup = next(c for c in nb.cells
                 if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
    setup.source = ("open('ran_before_the_monitor.txt', 'w').write('unwatched')\n"
                    "import numpy as np\n" + setup.source)
    _write(course.submitted_dir / "pre_loader" / lab.id, nb)

    run = autograde(course, overrides=test_limits, progress=False, log=lambda m: None)

    [outcome] = run.outcomes
    assert outcome.score == pytest.approx(demo.max_score), outcome.reasons
    workdir = course.autograded_dir / "pre_loader" / lab.id
    assert workdir.is_dir() and not (workdir / "ran_before_the_monitor.txt").exists()
