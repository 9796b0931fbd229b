"""Every lab can be done in the student distribution, installed as a student installs it.

The bundle is built with nothing revealed, packaged into a wheel and installed into a folder of
its own (not the source tree: an installed package must carry its recorded expectations). Then
the installed ``coursekit validate`` runs each handed-out lab's solution: every visible check
must pass, though the reference code is stubbed and the visible checks answer from recordings.
A lab that builds on an earlier lab's answer is held back until that lab is revealed, and then
passes too.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from autograder import manifest
from autograder.bundle import build_bundle
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
BEFORE_ANY_REVEAL = date(2000, 1, 1)
HELD_BACK = {lab.id for lab in COURSE.labs if lab.builds_on}
pytestmark = pytest.mark.slow


def _install(bundle: Path, target: Path) -> Path:
    """Build the bundle's wheel and install it into ``target``, as `make setup` installs it
    (without the dependencies, which this environment already has)."""
    wheels = target.parent / f"{target.name}-wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "-w", str(wheels), str(bundle)], check=True,
                   capture_output=True, timeout=scaled(300))
    wheel = next(wheels.glob("coursekit-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=scaled(300))
    return target


def _validate(bundle: Path, installed: Path, lab: manifest.Lab, work: Path) -> str:
    """The installed ``coursekit validate`` on a copy of the lab's solution, run from the
    bundle's folder as a student would (``-P``: the folder itself is not on the path)."""
    notebook = work / lab.notebook
    shutil.copy(COURSE.source_notebook(lab), notebook)
    env = {**os.environ, "PYTHONPATH": str(installed), "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-P", "-c",
         "import sys, coursekit; assert coursekit.__file__.startswith(sys.argv[1]), "
         "coursekit.__file__\nfrom coursekit.cli import main\nsys.exit(main(['validate', "
         "sys.argv[2]]))", str(installed), str(notebook)],
        cwd=bundle, env=env, capture_output=True, text=True, timeout=scaled(900))
    return run.stdout + run.stderr


def _all_visible_checks_pass(report: str) -> bool:
    summary = re.search(r"(\d+)/(\d+) visible checks passed", report)
    return bool(summary) and summary.group(1) == summary.group(2) and "✗" not in report


def _build_unrevealed(root: Path) -> dict:
    built = build_bundle(COURSE, root / "students", today=BEFORE_ANY_REVEAL)
    return {"labs": list(built.labs), "held_back": built.held_back, "out": str(built.out),
            "installed": str(_install(root / "students", root / "installed"))}


@pytest.fixture
def unrevealed(once) -> dict:
    """The bundle with nothing revealed, built and installed once per test run."""
    return once("unrevealed-bundle", _build_unrevealed)


@pytest.mark.parametrize("lab_id", [lab.id for lab in COURSE.labs if lab.id not in HELD_BACK])
def test_every_visible_check_passes_in_the_installed_student_build(unrevealed, tmp_path, lab_id):
    assert lab_id in unrevealed["labs"]
    report = _validate(Path(unrevealed["out"]), Path(unrevealed["installed"]),
                       COURSE.lab(lab_id), tmp_path)
    assert _all_visible_checks_pass(report), report


@pytest.mark.parametrize("lab_id", sorted(HELD_BACK))
def test_a_lab_that_builds_on_an_unrevealed_answer_arrives_once_it_is_revealed(
        unrevealed, tmp_path, lab_id):
    lab = COURSE.lab(lab_id)
    assert lab_id not in unrevealed["labs"]
    assert unrevealed["held_back"][lab_id] == list(lab.builds_on)
    readme = (Path(unrevealed["out"]) / "README.md").read_text()
    assert f"`{lab_id}` | arrives once {', '.join(lab.builds_on)} is revealed" in readme

    # Reveal what it builds on: the lab is handed out, and its solution passes there.
    opened = dataclasses.replace(COURSE, labs=tuple(
        dataclasses.replace(each, reveal_after=BEFORE_ANY_REVEAL) if each.id in lab.builds_on
        else each for each in COURSE.labs))
    later = build_bundle(opened, tmp_path / "students", today=BEFORE_ANY_REVEAL)
    assert lab_id in later.labs and not later.held_back.get(lab_id)
    installed = _install(later.out, tmp_path / "installed")
    report = _validate(later.out, installed, lab, tmp_path)
    assert _all_visible_checks_pass(report), report
