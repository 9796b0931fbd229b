"""Every lab of the course manifest, through the real grader: the instructor's solutions get
full marks, the untouched release gets zero, in sandboxed kernels with hidden seeds.

Nightly tier: ``make test`` proves both for every lab in process (tests/mutants: the solution
and the stub of every answer, under hidden seeds), runs every solution and release top to
bottom (nbval, tests/notebooks), and grades the demo class and lab10 in the sandbox."""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.demo import demo_class
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
from autograder.pipeline.gradebook import load_outcomes, open_gradebook
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.nightly
LABS = [lab.id for lab in manifest.load_course(REPO).labs]


def _grade_lab(lab_id: str, root: Path) -> dict:
    """The lab's solution and untouched release, graded in a course tree of their own."""
    (root / "course").mkdir(parents=True)
    for name in ("course.toml", "nbgrader_config.py"):
        shutil.copy(REPO / "course" / name, root / "course" / name)
    shutil.copytree(REPO / "solutions", root / "solutions")
    course = manifest.load_course(root)
    lab = course.lab(lab_id)
    demo = demo_class.demo_lab(course, lab)
    for student, nb in (("solution", demo.notebook()), ("release", demo.release)):
        folder = course.submitted_dir / student / lab.id
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(folder / lab.notebook))
    run = autograde(course, labs=[lab_id], jobs=2, progress=False, log=lambda message: None,
                    overrides=Overrides(memory_mb=4096))
    return {"sandboxed": run.status.sandboxed, "seconds": run.seconds}


def _graded(once, lab_id: str, student: str):
    info = once(f"graded-{lab_id}", lambda root: _grade_lab(lab_id, root))
    gradebook = open_gradebook(manifest.load_course(info["root"]).default_db_url)
    try:
        return {o.student: o for o in load_outcomes(gradebook)}[student]
    finally:
        gradebook.close()


@pytest.mark.slow
@pytest.mark.parametrize("lab_id", LABS)
def test_solution_gets_full_marks(once, lab_id):
    outcome = _graded(once, lab_id, "solution")
    assert outcome.score == pytest.approx(outcome.auto_max_score), [
        (c.check, c.hidden, c.message) for c in outcome.checks if c.kind == "checks"
        and c.score < c.max_score]
    assert outcome.status == "graded" and not outcome.flagged


@pytest.mark.slow
@pytest.mark.parametrize("lab_id", LABS)
def test_untouched_release_gets_zero(once, lab_id):
    outcome = _graded(once, lab_id, "release")
    assert outcome.score == 0.0
    assert outcome.status == "graded" and not outcome.flagged, outcome.reasons
    assert all("NotImplementedError" in c.message for c in outcome.checks
               if c.kind == "checks"), [c.message for c in outcome.checks]
