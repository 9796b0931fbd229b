"""Every lab's check programs, beyond what the shared mutant suite (tests/mutants) proves.

The mutant suite proves each wrong answer loses points under every grade secret. Here the same
in-process harness (:class:`tooling.mutants.Harness`) runs right answers under several
secrets, each standing for another student's hidden seeds:

* the solution gets full marks under every secret, so the checks do not flake;
* every right answer written differently (``ALTERNATIVES`` in ``tests/mutants/<lab>.py``)
  keeps full marks, so the checks are not fitted to one way of writing the answer.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from tooling.mutants import Harness, load_mutants, mutants_path
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
LABS = [lab.id for lab in COURSE.labs]
SECRETS = ("student-a", "student-b")


@lru_cache(maxsize=None)
def harness(lab_id: str, secret: str) -> Harness:
    return Harness(COURSE, COURSE.lab(lab_id), secret)


def _variants(kind: str) -> list[tuple[str, str, str, str]]:
    return [(lab, answer, name, code) for lab in LABS
            for answer, items in load_mutants(mutants_path(COURSE, lab), kind).items()
            for name, code in items]


def _failures(cell) -> list[str]:
    return [f"{c.name}: {c.message}" for c in cell.checks if not c.passed]


ANSWERS = [(lab, cell.grade_id) for lab in LABS for cell in harness(lab, SECRETS[0]).answers]
ALTERNATIVES = _variants("ALTERNATIVES")


# Nightly tier: `make test` scores every solution under the mutant suite's secret
# (tests/mutants), and runs each solution notebook on a fresh hidden seed (nbval).
@pytest.mark.nightly
@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("lab_id, answer", ANSWERS, ids=[f"{a[0]}-{a[1]}" for a in ANSWERS])
def test_solution_gets_full_marks_under_every_secret(lab_id, answer, secret):
    h = harness(lab_id, secret)
    cell = h.score(answer, h.solution(answer))
    assert cell.score == pytest.approx(cell.max_score), _failures(cell)


# The second secret is the nightly tier's: the first is every `make test`'s.
@pytest.mark.parametrize("secret", [SECRETS[0], pytest.param(SECRETS[1], marks=pytest.mark.nightly)])
@pytest.mark.parametrize("lab_id, answer, name, code", ALTERNATIVES,
                         ids=[f"{a[0]}-{a[1]}-{i}" for i, a in enumerate(ALTERNATIVES)])
def test_right_answer_written_differently_keeps_full_marks(lab_id, answer, name, code, secret):
    cell = harness(lab_id, secret).score(answer, code)
    assert cell.score == pytest.approx(cell.max_score), (name, secret, _failures(cell))
