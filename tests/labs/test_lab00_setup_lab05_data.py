"""lab00_setup and lab05_data: what the shared mutant suite (tests/mutants/test_mutants.py)
does not already prove about their check programs.

The suite scores each mutant on the public seed and one hidden seed, overall. Here, in-process
and without kernels (setup and answer cells executed, each checks cell run with a ``grade``
that records its calls, every call replayed as ``run_program`` + ``judge``), on the public seed
and two more hidden seeds *separately*:

* the solution scores full marks on every seed (the checks do not flake);
* every mutant loses points on *every* seed, so no student's hidden seed lets it through;
* every right answer written differently (``ALTERNATIVES`` in ``tests/mutants/<lab>.py``)
  keeps full marks (the checks are not fitted to one way of writing the answer).
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import warnings
from pathlib import Path

import nbformat
import pytest

from coursekit.grading.integrity import find_forbidden
from coursekit.grading.program import get_check, run_program
from coursekit.grading.seeds import public_seed
from coursekit.grading.verdict import judge, observed

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
LABS = ("lab00_setup", "lab05_data")
HIDDEN_SEEDS = (20260213, 7)


def _cells(lab: str) -> list[tuple[str, str, str]]:
    """(role, grade_id, source) of the setup, answer and checks code cells, in order."""
    nb = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    cells = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or "grade_id" not in meta:
            continue
        role = "answer" if meta.get("solution") else "checks" if meta.get("grade") else "setup"
        cells.append((role, meta["grade_id"], cell.source))
    return cells


def _known_answers(lab: str):
    spec = importlib.util.spec_from_file_location(f"_mutants_{lab}",
                                                  ROOT / "tests" / "mutants" / f"{lab}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _checks_cells(lab: str) -> list[tuple[int, str, list[str]]]:
    """(index, checks grade_id, answer grade_ids it covers) for each checks cell."""
    out, covered = [], []
    for index, (role, grade_id, _) in enumerate(_cells(lab)):
        if role == "answer":
            covered.append(grade_id)
        elif role == "checks":
            out.append((index, grade_id, covered))
            covered = []
    return out


def _quiet():
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def _scores(lab: str, checks_index: int, replace: dict[str, str] | None = None
            ) -> tuple[list[float], list[str]]:
    """Run setup + answer cells (some replaced) and judge the checks cell on every seed.

    Returns one fraction per seed (all calls of the cell together) and the failures.
    """
    cells = _cells(lab)
    replace = replace or {}
    namespace: dict = {"__name__": "__main__"}
    answers = {}
    with _quiet():
        for role, grade_id, source in cells[:checks_index]:
            if role == "checks":
                continue
            source = replace.get(grade_id, source)
            exec(compile(source, f"<{lab}:{grade_id}>", "exec"), namespace)
            if role == "answer":
                answers[grade_id] = source
        # The checks cell may build its impl (lab00's dict of functions): run it with a
        # recording `grade`.
        calls: dict[str, object] = {}
        namespace["grade"] = lambda name, impl, hidden=False: calls.setdefault(name, impl)
        checks_source = "\n".join(line for line in cells[checks_index][2].splitlines()
                                  if "import grade" not in line)
        exec(compile(checks_source, f"<{lab}:checks>", "exec"), namespace)
    covered_ids = [c[2] for c in _checks_cells(lab) if c[0] == checks_index][0]
    covered = {g: answers[g] for g in covered_ids}
    fractions, failures = [], []
    for seed_index in range(1 + len(HIDDEN_SEEDS)):
        total = earned = 0.0
        for name, impl in sorted(calls.items()):
            check = get_check(name)
            seed = public_seed(name) if seed_index == 0 else HIDDEN_SEEDS[seed_index - 1]
            hits = find_forbidden(covered, check.forbid) if check.forbid else []
            with _quiet():
                observations = run_program(check, impl, seed)
            result = judge(name, seed, [(o.label, observed(o.value, o.error))
                                        for o in observations], hidden=True)
            if hits:
                result = result.failed("delegates: " + "; ".join(map(str, hits)))
            weight = sum(c.weight for c in result.cases)
            total += weight
            earned += result.fraction * weight
            failures += [f"{name} (seed {seed}) {c.label}: {c.message}"
                         for c in result.cases if not c.passed]
        fractions.append(earned / total if total else 0.0)
    return fractions, failures


SOLUTION_CASES = [(lab, index, gid) for lab in LABS for index, gid, _ in _checks_cells(lab)]
MUTANT_CASES = [(lab, index, answer, description, source)
                for lab in LABS for index, _, answers in _checks_cells(lab) for answer in answers
                for description, source in _known_answers(lab).MUTANTS.get(answer, [])]
ALTERNATIVE_CASES = [(lab, index, answer, description, source)
                     for lab in LABS for index, _, answers in _checks_cells(lab)
                     for answer in answers
                     for description, source in getattr(_known_answers(lab), "ALTERNATIVES",
                                                        {}).get(answer, [])]


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,checks_id", SOLUTION_CASES,
                         ids=[f"{c[0]}:{c[2]}" for c in SOLUTION_CASES])
def test_solution_scores_full_marks(lab, index, checks_id):
    fractions, failures = _scores(lab, index)
    assert min(fractions) == 1.0, "\n".join(failures[:10])


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,answer,description,source", ALTERNATIVE_CASES,
                         ids=[f"{c[0]}:{c[2]}:{c[3][:40]}" for c in ALTERNATIVE_CASES])
def test_right_answer_written_differently_keeps_full_marks(lab, index, answer, description,
                                                            source):
    fractions, failures = _scores(lab, index, {answer: source})
    assert min(fractions) == 1.0, "\n".join(failures[:10])


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,answer,description,source", MUTANT_CASES,
                         ids=[f"{c[0]}:{c[2]}:{c[3][:40]}" for c in MUTANT_CASES])
def test_mutant_loses_points_on_every_seed(lab, index, answer, description, source):
    fractions, _ = _scores(lab, index, {answer: source})
    assert max(fractions) < 1.0, (f"{lab}:{answer}: the mutant '{description}' keeps full marks "
                                  f"on some seed: {fractions}")


def test_lab05_weighted_sampling_tolerance_cannot_flake():
    """The class-frequency tolerance is at least 8 standard deviations for every class count
    the check draws (2 to 5 classes, 20,000 draws)."""
    from coursekit.grading.checks import lab05

    for classes in range(2, 6):
        p = 1 / classes
        sigma = (p * (1 - p) / lab05._DRAWS) ** 0.5
        assert lab05._TOLERANCE / sigma >= 8
