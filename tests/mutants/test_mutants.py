"""The mutant suite: every realistic wrong answer in tests/mutants/<lab>.py loses points,
under every student's hidden seeds, every solution gets full marks, every untouched stub gets
zero (see tests/tooling/mutants.py).

Fast by design: in-process, only setup cells, earlier answers and the answer under test run;
the checks cell's grade() calls are judged by the grader's own scoring. The session summary
prints the kill rate per lab (also: `python -m tooling.mutants`).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from tooling.mutants import MIN_MUTANTS, MUTANT_SECRET, Harness, load_mutants, mutants_path
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
LABS = [lab.id for lab in COURSE.labs]


# Another student's grade secret: their hidden checks draw other inputs.
ANOTHER_SECRET = "student-a"


@lru_cache(maxsize=None)
def harness(lab_id: str, secret: str = MUTANT_SECRET) -> Harness:
    return Harness(COURSE, COURSE.lab(lab_id), secret)


def _loses(cell) -> bool:
    return cell.score < cell.max_score - 1e-9


def _visible_calls_catch(cell) -> bool:
    """A visible call lost points. Its seed is the same for every student (public), and a
    check gives the same verdict on the same seed, so the mutant loses points whatever the
    secret: only a mutant that the hidden calls alone catch needs another secret tried."""
    return any(not c.hidden and c.score < c.max_score - 1e-9 for c in cell.checks)


def _mutants(lab_id: str) -> dict:
    return load_mutants(mutants_path(COURSE, lab_id))


@lru_cache(maxsize=None)
def _scored(lab_id: str, answer: str, index: int, secret: str = MUTANT_SECRET):
    """A mutant's score, kept: the nightly test reads the one `make test`'s test made (one
    file runs on one test worker)."""
    return harness(lab_id, secret).score(answer, _mutants(lab_id)[answer][index][1])


MUTANTS = [(lab, answer, index, name) for lab in LABS
           for answer, variants in _mutants(lab).items()
           for index, (name, _) in enumerate(variants)]
ANSWERS = [(lab, cell.grade_id) for lab in LABS for cell in harness(lab).answers]


@pytest.mark.parametrize("lab_id, answer, index, name", MUTANTS,
                         ids=[f"{m[0]}-{m[1]}-{m[2]}" for m in MUTANTS])
def test_mutant_loses_points(lab_id, answer, index, name, record_property):
    cell = _scored(lab_id, answer, index)
    record_property("mutant", {"lab": lab_id, "killed": _loses(cell)})
    assert _loses(cell), (
        f"{lab_id}/{answer}: the mutant '{name}' keeps all {cell.max_score:g} points; "
        f"the checks do not catch it")


# Nightly tier: the test above proves each mutant loses points under the suite's secret.
@pytest.mark.nightly
@pytest.mark.parametrize("lab_id, answer, index, name", MUTANTS,
                         ids=[f"{m[0]}-{m[1]}-{m[2]}" for m in MUTANTS])
def test_mutant_loses_points_under_another_students_secret(lab_id, answer, index, name):
    if _visible_calls_catch(_scored(lab_id, answer, index)):
        return   # a public seed: the same verdict under every secret
    other = _scored(lab_id, answer, index, ANOTHER_SECRET)
    assert _loses(other), (
        f"{lab_id}/{answer}: the mutant '{name}' keeps all {other.max_score:g} points "
        f"under the secret {ANOTHER_SECRET!r}: only the suite's hidden seeds catch it")


@pytest.mark.parametrize("lab_id, answer", ANSWERS, ids=[f"{a[0]}-{a[1]}" for a in ANSWERS])
def test_solution_gets_full_marks_and_stub_gets_zero(lab_id, answer):
    h = harness(lab_id)
    solved = h.score(answer, h.solution(answer))
    assert solved.score == pytest.approx(solved.max_score), [
        (c.name, c.message) for c in solved.checks if not c.passed]
    # The untouched stub: every check reads "not implemented yet" in one line, with no hint,
    # and no case passes (lab02.node_ops used to pass its 10 forward-value cases).
    stubbed = h.score(answer, h.stub(answer))
    assert stubbed.score == 0.0, [(c.name, c.score) for c in stubbed.checks]
    for check in stubbed.checks:
        assert check.cases_passed == 0, (check.name, check.message)
        assert "not implemented yet" in check.message, (check.name, check.message)
        assert "hint" not in check.message, (check.name, check.message)


@pytest.mark.parametrize("lab_id, answer", ANSWERS, ids=[f"{a[0]}-{a[1]}" for a in ANSWERS])
def test_every_answer_cell_has_enough_mutants(lab_id, answer):
    count = len(_mutants(lab_id).get(answer, []))
    assert count >= MIN_MUTANTS, (f"{mutants_path(COURSE, lab_id).relative_to(REPO)} has "
                                  f"{count} mutants for {answer!r}; at least {MIN_MUTANTS} needed")
