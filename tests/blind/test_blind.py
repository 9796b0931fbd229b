"""The blind corpus (issue 27): answers written from each released notebook's text alone, by
someone who had not read tests/mutants/ or the checks. Every wrong one loses points; every right
one keeps full marks, round by round (``ROUNDS``). ``python tests/blind/score_blind.py`` scores
them under a second secret too and prints the figures per lab."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from tooling.mutants import Harness
from coursekit import course as manifest
from score_blind import ROUNDS, corpus

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
CORPORA = [(round_name, lab.id) for round_name in ROUNDS for lab in COURSE.labs
           if corpus(lab.id, round_name)]


@lru_cache(maxsize=None)
def harness(lab_id: str) -> Harness:
    return Harness(COURSE, COURSE.lab(lab_id))


def _answers(kind: str) -> list:
    """Every answer of that kind; a wrong one the checks still miss (its lab file's
    ``SURVIVORS``, with the reason) is a strict expected failure: the day a check catches it,
    the marker must go."""
    cases = []
    for round_name, lab in CORPORA:
        answers = corpus(lab, round_name)
        survivors = answers.get("SURVIVORS", {}) if kind == "WRONG" else {}
        for grade_id, variants in answers[kind].items():
            for index, (label, _) in enumerate(variants):
                why = survivors.get((grade_id, index))
                marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
                cases.append(pytest.param(round_name, lab, grade_id, index, label, marks=marks,
                                          id=f"{round_name}-{lab}-{grade_id}-{index}"))
    return cases


WRONG, RIGHT = _answers("WRONG"), _answers("RIGHT")


@pytest.mark.parametrize("round_name, lab_id, grade_id, index, label", WRONG)
def test_blind_wrong_answer_loses_points(round_name, lab_id, grade_id, index, label):
    source = corpus(lab_id, round_name)["WRONG"][grade_id][index][1]
    cell = harness(lab_id).score(grade_id, source)
    assert cell.score < cell.max_score - 1e-9, (
        f"{lab_id}/{grade_id}: '{label}' keeps all {cell.max_score:g} points")


@pytest.mark.parametrize("round_name, lab_id, grade_id, index, label", RIGHT)
def test_blind_right_answer_keeps_full_marks(round_name, lab_id, grade_id, index, label):
    cell = harness(lab_id).score(grade_id, corpus(lab_id, round_name)["RIGHT"][grade_id][index][1])
    assert cell.score == pytest.approx(cell.max_score), (
        label, [(c.name, c.message) for c in cell.checks if not c.passed])
