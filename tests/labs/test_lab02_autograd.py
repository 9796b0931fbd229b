"""lab02_autograd: the check programs give the solution full marks, the stubs and mutants less.

The in-process harness (``lab_answer_scores``) lives in test_lab01_graphs.py.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "lab01_harness", Path(__file__).with_name("test_lab01_graphs.py"))
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)

LAB = "lab02_autograd"
ANSWERS = [gid for role, gid, _ in _harness.lab_cells(LAB) if role == "answer"]
MUTANTS = [(answer, description, source) for answer, items in _harness.mutants(LAB).items()
           for description, source in items]


@pytest.mark.parametrize("answer", ANSWERS)
def test_solution_gets_full_marks_on_public_and_hidden_seeds(answer):
    source = _harness.answer_source(LAB, answer)
    scores = _harness.lab_answer_scores(LAB, answer, source, seeds=(3, 99, 2024))
    assert scores and min(scores) == 1.0, scores


@pytest.mark.parametrize("answer", ANSWERS)
def test_release_stub_gets_zero(answer):
    source = _harness.stub(_harness.answer_source(LAB, answer))
    assert max(_harness.lab_answer_scores(LAB, answer, source, seeds=())) == 0.0


def test_every_answer_cell_has_three_mutants():
    counts = {answer: len(items) for answer, items in _harness.mutants(LAB).items()}
    assert set(counts) == set(ANSWERS) and min(counts.values()) >= 3, counts


@pytest.mark.parametrize("answer, description, source", MUTANTS,
                         ids=[f"{a}: {d}" for a, d, _ in MUTANTS])
def test_mutant_loses_points(answer, description, source):
    scores = _harness.lab_answer_scores(LAB, answer, source)
    assert min(scores) < 1.0, f"mutant kept full marks: {description}"
