"""`coursekit demo` on the course's own demo lab (lab01_graphs): every generated student gets
the outcome it was built to show, and the command says so with its exit status."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder import demo_class, manifest
from autograder.demo import DEMO_LAB
from coursekit.cli import main as cli

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(DEMO_LAB not in {lab.id for lab in manifest.load_course(REPO).labs},
                    reason="the demo lab is not in the manifest yet")
def test_demo_grades_the_demo_class_as_expected(tmp_path, capsys):
    root = tmp_path / "tree"
    (root / "course").mkdir(parents=True)
    for name in ("course.toml", "nbgrader_config.py"):
        shutil.copy(REPO / "course" / name, root / "course" / name)
    shutil.copytree(REPO / "solutions" / DEMO_LAB, root / "solutions" / DEMO_LAB)
    shutil.copytree(REPO / "tests" / "mutants", root / "tests" / "mutants")
    assert cli(["demo", "--root", str(root), "--no-progress"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert (f"all {len(demo_class.STUDENTS)} demo students got the outcome they were built to "
            f"show") in out
    for step in ("1/5 release", "2/5 collect", "3/5 autograde", "4/5 feedback", "5/5 export"):
        assert step in out
    assert (root / "course" / "exports" / "grades.csv").exists()
    assert (root / "notebooks" / DEMO_LAB / f"{DEMO_LAB}.ipynb").exists()
