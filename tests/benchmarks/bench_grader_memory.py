"""The grader's peak memory when a kernel sends it a 1 GB message, against its peak with an
honest notebook (issue 22: goal ≤ 1.2×). ``make bench``; figures printed with ``-s``.

Each class is graded by a grader process of its own (fresh kernels, one job), which reports
its own peak resident memory (``ru_maxrss``): kernels are other processes and do not count.
The message is a display whose one extra part is 1 GB, sent by the kernel's own session; the
grader's sockets refuse a part over ``execute.MAX_MESSAGE_BYTES`` before reading it.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell

from autograder.demo import demo_class

PIPELINE_TESTS = Path(__file__).resolve().parents[1] / "autograder"
pytestmark = pytest.mark.benchmark


def _load(name: str, file: str):
    """A helper module of tests/autograder, loaded by its path (each test folder has a
    conftest of its own, so the plain name would find this folder's)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PIPELINE_TESTS / file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_grader_peak_memory_with_a_1_gb_message_against_an_honest_notebook(tmp_path):
    fixtures = _load("pipeline_fixtures", "conftest.py")
    processes = _load("grader_processes", "grader_processes.py")
    honest = fixtures.make_fixture_course(tmp_path / "honest")
    demo = demo_class.demo_lab(honest, honest.labs[0])
    processes.hand_in(honest, "ada", demo.notebook())
    attack = fixtures.make_fixture_course(tmp_path / "attack")
    bomb = demo.notebook()
    bomb.cells.insert(2, new_code_cell(processes.SEND_1_GB))
    processes.hand_in(attack, "mal", bomb)
    calm = processes.grade_in_a_process(honest.root)
    loud = processes.grade_in_a_process(attack.root)
    ratio = loud["peak_mb"] / calm["peak_mb"]
    print(f"\ngrader peak memory: honest notebook {calm['peak_mb']:.0f} MB, with a 1 GB "
          f"message {loud['peak_mb']:.0f} MB: {ratio:.2f}x (goal <= 1.2x)")
    assert loud["outcomes"]["mal"][0] == pytest.approx(demo.max_score)
