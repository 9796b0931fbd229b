"""`coursekit bundle`: the student distribution holds the labs, not the answers.

The bundle is built from this repository with nothing revealed, every file in it is scanned
for solution text, hidden tests, the secret and unrevealed reference functions, and a visible
check is run inside it against the recorded expectations.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import course as manifest
from autograder.publish.bundle import MIN_SOLUTION_TEXT, forbidden_texts, scan
from conftest import BEFORE_ANY_REVEAL
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)


def test_bundle_holds_no_answers_and_its_visible_checks_run(unrevealed_bundle):
    out, built = unrevealed_bundle
    assert (out / "notebooks" / "lab02_autograd" / "lab02_autograd.ipynb").exists()
    assert not (out / "solutions").exists() and not (out / "course" / ".secret").exists()
    assert scan(out, COURSE, BEFORE_ANY_REVEAL) == []
    assert "coursekit/autograd" in built["stubbed"]
    # The scan is real: a pasted reference is found.
    leak = out / "notebooks" / "leak.py"
    leak.write_text((REPO / "coursekit" / "autograd" / "engine.py").read_text())
    assert any("leak.py" in hit for hit in scan(out, COURSE, BEFORE_ANY_REVEAL))
    leak.unlink()
    # Answers are found by content, declared or not: lab10's answers are stubbed (it declares
    # them now), and a solution region renamed and reformatted, pasted in a library file,
    # is found though no lab lists that file.
    assert "coursekit/distributed/ring.py" in built["stubbed"]
    stub = (out / "coursekit" / "distributed" / "ring.py").read_text()
    assert "the reference answer of lab10_distributed" in stub and "isend" not in stub
    region = COURSE.source_notebook(COURSE.lab("lab10_distributed")).read_text()
    assert "two_stage" in region
    disguised = out / "coursekit" / "hardware" / "pipeline_helpers.py"
    disguised.write_text(
        "import torch\nimport torch.distributed as D\n\n\n"
        "def helper(st, b, shape, lf):\n"
        "    # two stages, one per process\n"
        "    if D.get_rank() == 0:\n        a = st(b)\n        D.send(a.detach(), dst=1)\n"
        "        g = torch.empty_like(a)\n        D.recv(g, src=1)\n"
        "        a.backward(g)\n        return None\n"
        "    dt = next(st.parameters()).dtype\n    r = torch.empty(shape, dtype=dt)\n"
        "    D.recv(r, src=0)\n    r.requires_grad_()\n    l = lf(st(r), b)\n"
        "    l.backward()\n    D.send(r.grad, dst=0)\n    return l.item()\n")
    hits = scan(out, COURSE, BEFORE_ANY_REVEAL)
    assert any("pipeline_helpers.py: the answer of lab10_distributed" in hit for hit in hits), hits
    disguised.unlink()
    # Helpers only a reference function uses go with it, wherever the check stands in the file
    # (lab02's reference engine, lab04's reference ParallelBlock sit above their checks).
    checks = out / "coursekit" / "grading" / "checks"
    assert "class _RefNode" not in (checks / "lab02.py").read_text()
    assert "self.linear1 = torch.nn.Linear" not in (checks / "lab04.py").read_text()
    # Solution blocks of every cell are searched for, the short ones too.
    assert MIN_SOLUTION_TEXT <= 40
    solutions = [what for what in forbidden_texts(COURSE, BEFORE_ANY_REVEAL)
                 if what.startswith("solution text of lab04_modules")]
    assert len(solutions) > 10, solutions
    # A visible check runs in the bundle against the recorded expectations.
    code = ("import coursekit, numpy as np\n"
            "assert coursekit.__file__.startswith(%r)\n"
            "from coursekit.grading import grade\n"
            "def roofline(*a, **k): raise NotImplementedError\n"
            "try:\n    grade('lab00.roofline', roofline)\n"
            "except AssertionError as e: print('FAILED AS EXPECTED')\n" % str(out))
    env = {**os.environ, "PYTHONPATH": str(out)}
    run = subprocess.run([sys.executable, "-c", code], cwd=out, env=env, capture_output=True,
                         text=True, timeout=scaled(300))
    assert "FAILED AS EXPECTED" in run.stdout, run.stdout + run.stderr
    # Students work on copies in work/, which the class repository ignores and `make lab`
    # fills; lab02's backward stepper (torch's engine) runs before lab02 is revealed.
    assert "/work/" in (out / ".gitignore").read_text().splitlines()
    assert "coursekit fetch --all\n\tJUPYTER_CONFIG_PATH=$(CURDIR)/course/student .venv/bin/jupyter lab work/" in (out / "Makefile").read_text()
    fetched = subprocess.run([sys.executable, "-m", "coursekit.cli", "fetch", "lab02"], cwd=out,
                             env=env, capture_output=True, text=True, timeout=scaled(120))
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    lab02 = Path("lab02_autograd") / "lab02_autograd.ipynb"
    assert (out / "work" / lab02).read_bytes() == (out / "notebooks" / lab02).read_bytes()
    stepper = ("import torch\nfrom coursekit.viz import BackwardStepper\n"
               "a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\nb = a + a\n"
               "print(BackwardStepper((b + b).sum()).steps[-1].received)\n")
    run = subprocess.run([sys.executable, "-c", stepper], cwd=out, env=env, capture_output=True,
                         text=True, timeout=scaled(300))
    assert "[4. 4. 4.]" in run.stdout, run.stdout + run.stderr


def test_builds_on_must_name_an_earlier_lab(tmp_path):
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "course.toml").write_text(
        '[[lab]]\nid = "lab01"\ntitle = "one"\npoints = 1\nbuilds_on = ["lab02"]\n\n'
        '[[lab]]\nid = "lab02"\ntitle = "two"\npoints = 1\n')
    with pytest.raises(manifest.ManifestError, match="lab02, which is not a lab listed above"):
        manifest.load_course(tmp_path)


def test_a_named_reveal_stubs_that_definition_only(unrevealed_bundle, tmp_path):
    """lab05 reveals BatchSampler, not the sampler module: the samplers its checks and given
    code use stay real, the answer's counterpart raises NotRevealedError on use."""
    out, _ = unrevealed_bundle
    code = ("import coursekit.data as d\n"
            "from coursekit._unrevealed import NotRevealedError\n"
            "assert len(list(d.WeightedRandomSampler([1.0, 2.0], 5, generator=0))) == 5\n"
            "try:\n    d.BatchSampler(range(4), 2, False)\n"
            "except NotRevealedError as e:\n"
            "    print('REFUSED', e)\n")
    run = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(out)}, capture_output=True,
                         text=True, timeout=scaled(120))
    assert "REFUSED coursekit.data.sampler.BatchSampler is part of the reference answer of " \
           "lab05_data" in run.stdout, run.stdout + run.stderr
