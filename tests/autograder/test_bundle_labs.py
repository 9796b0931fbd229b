"""Every lab can be done in the student distribution, set up as a student sets it up.

The bundle is built with nothing revealed and set up by its own ``make setup``, in a clean
virtual environment with nothing of this checkout on its path (the third-party packages are
this environment's, linked, so nothing is downloaded; ``coursekit`` is the bundle's and
``autograder`` is not there at all: an import of the instructor's side fails). Then the
bundle's ``coursekit validate`` runs each handed-out lab's solution: every visible check must
pass, though the reference code is stubbed and the visible checks answer from recordings.
A lab that builds on an earlier lab's answer is held back until that lab is revealed, and then
passes too.

Nightly tier: ``make test`` builds and installs the bundle and runs its visible checks once
(tests/autograder/test_bundle.py); here every lab runs in it.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import course as manifest
from autograder.publish.bundle import build_bundle
from conftest import BEFORE_ANY_REVEAL
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
HELD_BACK = {lab.id for lab in COURSE.labs if lab.builds_on}
pytestmark = [pytest.mark.slow, pytest.mark.nightly]


def _third_party(folder: Path) -> Path:
    """A folder of links to this environment's installed packages, but for coursekit and
    autograder (the checkout's, installed editable: the very thing that must not leak into a
    student's environment). A clean environment given it needs no download."""
    import site
    folder.mkdir(parents=True, exist_ok=True)
    own = ("coursekit", "autograder", "__editable__", "_coursekit")
    for packages in site.getsitepackages():
        for entry in Path(packages).iterdir():
            if not entry.name.startswith(own) and not entry.name.endswith(".pth"):
                target = folder / entry.name
                if not target.exists():
                    target.symlink_to(entry)
    return folder


def _set_up(bundle: Path, deps: Path) -> Path:
    """The bundle set up as its README says (``make setup``), in a clean virtual environment
    that has this environment's third-party packages (no download) and nothing of the
    checkout: its ``coursekit`` is the bundle's, and ``autograder`` is not there at all.
    Returns the environment's python."""
    venv = bundle / ".venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True,
                   capture_output=True, timeout=scaled(300))
    packages = next((venv / "lib").glob("python*/site-packages"))
    (packages / "third_party.pth").write_text(str(deps) + "\n")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["make", "setup"], cwd=bundle, env=env, capture_output=True,
                          text=True, timeout=scaled(900))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv / "bin" / "python"


def _validate(bundle: Path, python: Path, lab: manifest.Lab, work: Path) -> str:
    """The bundle's ``coursekit validate`` on a copy of the lab's solution, run from the
    bundle's folder as a student would, in the bundle's environment."""
    notebook = work / lab.notebook
    shutil.copy(COURSE.source_notebook(lab), notebook)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)
    run = subprocess.run(
        [str(python), "-c",
         "import sys, coursekit; assert coursekit.__file__.startswith(sys.argv[1]), "
         "coursekit.__file__\n"
         "try:\n    import autograder\nexcept ModuleNotFoundError:\n    pass\n"
         "else:\n    sys.exit(f'autograder is importable: {autograder.__file__}')\n"
         "from coursekit.cli import main\nsys.exit(main(['validate', sys.argv[2]]))",
         str(bundle), str(notebook)],
        cwd=bundle, env=env, capture_output=True, text=True, timeout=scaled(900))
    return run.stdout + run.stderr


def _all_visible_checks_pass(report: str) -> bool:
    summary = re.search(r"(\d+)/(\d+) visible checks passed", report)
    return bool(summary) and summary.group(1) == summary.group(2) and "✗" not in report


def _deps(root: Path) -> dict:
    # A folder named site-packages, as a student's own `make setup` installs them: the grading
    # monitor in the kernel loads compiled code (.pyc) only from the Python installation and
    # the site-packages folders on sys.path, and refused every import from elsewhere.
    return {"deps": str(_third_party(root / "site-packages"))}


@pytest.fixture
def unrevealed(once, unrevealed_build) -> dict:
    """The bundle with nothing revealed, set up by its own ``make setup`` once per test run."""
    deps = once("third-party-packages", _deps)["deps"]

    def set_up(root: Path) -> dict:
        shutil.copytree(unrevealed_build[0], root, symlinks=True)
        return {**unrevealed_build[1], "python": str(_set_up(root, Path(deps))), "deps": deps}

    info = once("unrevealed-bundle-set-up", set_up)
    return {**info, "out": info["root"]}


# Every lab held back waits for lab02's answers: one bundle with those revealed serves them all.
REVEALED_FOR_HELD_BACK = sorted({need for lab in HELD_BACK for need in COURSE.lab(lab).builds_on})


@pytest.fixture
def revealed(once, unrevealed) -> dict:
    """The bundle once what the held-back labs build on is revealed, set up once per run."""
    def build(root: Path) -> dict:
        opened = dataclasses.replace(COURSE, labs=tuple(
            dataclasses.replace(each, reveal_after=BEFORE_ANY_REVEAL)
            if each.id in REVEALED_FOR_HELD_BACK else each for each in COURSE.labs))
        later = build_bundle(opened, root, today=BEFORE_ANY_REVEAL)
        return {"labs": list(later.labs), "held_back": later.held_back,
                "python": str(_set_up(later.out, Path(unrevealed["deps"])))}

    info = once("revealed-bundle-set-up", build)
    return {**info, "out": info["root"]}


@pytest.mark.parametrize("lab_id", [lab.id for lab in COURSE.labs if lab.id not in HELD_BACK])
def test_every_visible_check_passes_in_the_installed_student_build(unrevealed, tmp_path, lab_id):
    assert lab_id in unrevealed["labs"]
    report = _validate(Path(unrevealed["out"]), Path(unrevealed["python"]),
                       COURSE.lab(lab_id), tmp_path)
    assert _all_visible_checks_pass(report), report


@pytest.mark.parametrize("lab_id", sorted(HELD_BACK))
def test_a_lab_that_builds_on_an_unrevealed_answer_arrives_once_it_is_revealed(
        unrevealed, revealed, tmp_path, lab_id):
    lab = COURSE.lab(lab_id)
    assert lab_id not in unrevealed["labs"]
    assert unrevealed["held_back"][lab_id] == list(lab.builds_on)
    readme = (Path(unrevealed["out"]) / "README.md").read_text()
    assert f"`{lab_id}` | arrives once {', '.join(lab.builds_on)} is revealed" in readme

    # Reveal what it builds on: the lab is handed out, and its solution passes there.
    assert set(lab.builds_on) <= set(REVEALED_FOR_HELD_BACK)
    assert lab_id in revealed["labs"] and not revealed["held_back"].get(lab_id)
    report = _validate(Path(revealed["out"]), Path(revealed["python"]), lab, tmp_path)
    assert _all_visible_checks_pass(report), report
