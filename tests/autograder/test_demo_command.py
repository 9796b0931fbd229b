"""`coursekit demo` on the course's own demo lab (lab01_graphs): every generated student gets
the outcome it was built to show, and the command says so with its exit status.

The run happens once per test run (:func:`repo_demo`): tests/autograder/test_cluster.py grades
the same class again on real Dask processes and compares every score with it."""
from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from autograder.demo import demo_class
from autograder.demo.run import DEMO_LAB
from autograder.pipeline.gradebook import load_outcomes, open_gradebook
from coursekit import course as manifest
from coursekit.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
HAS_DEMO_LAB = DEMO_LAB in {lab.id for lab in manifest.load_course(REPO).labs}


def _run_demo(root: Path) -> dict:
    """This repository's course (manifest, configuration, the demo lab's source), demo'd in
    ``root``: ``{"code", "out", "scores": {student: score}}``."""
    (root / "course").mkdir(parents=True)
    for name in ("course.toml", "nbgrader_config.py"):
        shutil.copy(REPO / "course" / name, root / "course" / name)
    shutil.copytree(REPO / "solutions" / DEMO_LAB, root / "solutions" / DEMO_LAB)
    shutil.copytree(REPO / "tests" / "mutants", root / "tests" / "mutants")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(["demo", "--root", str(root), "--no-progress"])
    course = manifest.load_course(root)
    gradebook = open_gradebook(course.default_db_url)
    try:
        scores = {o.student: o.score for o in load_outcomes(gradebook)}
    finally:
        gradebook.close()
    return {"code": code, "out": out.getvalue(), "scores": scores}


@pytest.fixture
def repo_demo(once) -> dict:
    """The demo class of this repository's course, graded locally once per test run."""
    if not HAS_DEMO_LAB:
        pytest.skip("the demo lab is not in the manifest yet")
    return once("repo-demo", _run_demo)


@pytest.mark.slow
def test_demo_grades_the_demo_class_as_expected(repo_demo):
    root, out = Path(repo_demo["root"]), repo_demo["out"]
    assert repo_demo["code"] == 0, out
    assert (f"all {len(demo_class.STUDENTS)} demo students got the outcome they were built to "
            f"show") in out
    for step in ("1/5 release", "2/5 collect", "3/5 autograde", "4/5 feedback", "5/5 export"):
        assert step in out
    assert (root / "course" / "exports" / "grades.csv").exists()
    assert (root / "notebooks" / DEMO_LAB / f"{DEMO_LAB}.ipynb").exists()
    assert sorted(repo_demo["scores"]) == sorted(s.id for s in demo_class.STUDENTS)
