"""The mechanical mutants' bookkeeping (tests/tooling/mechanical.py), without judging any mutant.

Judging every mutant takes minutes and runs in `make mutants`; here, fast: the operators make
mutants of what students write only, every listed equivalent mutant is still made (a stale
entry would hide nothing and mislead), and each has a reason.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from coursekit import course as manifest
from tooling.mechanical import DeleteStatement, OPERATORS, generate, load_equivalent, student_lines
from tooling.mutants import Harness

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
LABS = [lab.id for lab in COURSE.labs]


@lru_cache(maxsize=None)
def _mutants(lab_id: str) -> list:
    harness = Harness(COURSE, COURSE.lab(lab_id))
    return [m for cell in harness.answers
            for m in generate(lab_id, cell.grade_id, cell.source, {})]


def test_only_solution_regions_and_defaults_are_mutated():
    source = '''def f(x, scale=2.0):
    """Docstring."""
    y = x + 1
    ### BEGIN SOLUTION
    return y * scale
    ### END SOLUTION
'''
    assert student_lines(source) == {0, 4}
    counts: dict[str, int] = {}
    made = {(m.before, m.after) for m in generate("lab", "f", source, counts)}
    assert ("return y * scale", "return y / scale") in made
    assert ("def f(x, scale=2.0):", "def f(x, scale= 3.0):") in made
    assert all("y = x" not in before for before, _ in made)
    assert counts["given code"] > 0


def test_statement_deletion_is_one_of_the_operators():
    assert isinstance(OPERATORS["DeleteStatement"], DeleteStatement)
    made = {(m.before, m.after) for m in generate("lab", "f", "def f(x):\n    ### BEGIN SOLUTION\n"
                                                  "    x = x + 1\n    return x\n"
                                                  "    ### END SOLUTION\n", {})}
    assert ("x = x + 1", "pass") in made


@pytest.mark.parametrize("lab_id", LABS)
def test_every_listed_equivalent_mutant_is_still_made_and_says_why(lab_id):
    made = {(m.answer, m.before, m.after) for m in _mutants(lab_id)}
    for key, reason in load_equivalent(COURSE, lab_id).items():
        assert key in made, f"tests/mutants/equivalent/{lab_id}.py lists a mutant no longer made: {key}"
        assert len(reason) > 20, f"{key}: say in a line why it behaves like the solution"


def test_an_unknown_lab_is_a_clear_error_before_any_mutant_is_judged(capsys):
    from tooling.mechanical import main

    assert main(["lab99_missing"]) == 2
    err = capsys.readouterr().err
    assert "no lab 'lab99_missing'" in err and "lab00_setup" in err and "Traceback" not in err
