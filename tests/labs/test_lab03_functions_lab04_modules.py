"""The check programs of lab03_functions and lab04_modules are proven on known answers.

In-process, without kernels: the solution's setup and answer cells are executed, then every
``grade(...)`` call of a checks cell is replayed as ``run_program`` + ``judge`` (what the grader
does with a kernel's observations) on the public seed and a fixed "hidden" seed. The solution
must score full marks, every mutant in ``tests/mutants/<lab>.py`` must lose points (or be caught
by the delegation scan), every right answer written differently (``ALTERNATIVES`` there) must
keep full marks, and the release stub must score zero.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest

from coursekit.grading.integrity import find_forbidden
from coursekit.grading.program import get_check, run_program
from coursekit.grading.seeds import public_seed
from coursekit.grading.verdict import judge, observed

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
LABS = ("lab03_functions", "lab04_modules")
HIDDEN_SEED = 20260213
GRADE_CALL = re.compile(r'grade\("([^"]+)",\s*(\{[^}]*\}|[^,)]+?)\s*(?:,\s*hidden=True)?\)')
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION.*?### END SOLUTION", re.S | re.M)


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
    spec = importlib.util.spec_from_file_location(f"_mutants_{lab}", ROOT / "tests" / "mutants" / f"{lab}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mutants(lab: str) -> dict[str, list[tuple[str, str]]]:
    return _known_answers(lab).MUTANTS


def _alternatives(lab: str) -> dict[str, list[tuple[str, str]]]:
    return getattr(_known_answers(lab), "ALTERNATIVES", {})


def _checks_cells(lab: str) -> list[tuple[int, str, list[str]]]:
    """(index, checks grade_id, answer grade_ids it covers) for each checks cell."""
    cells, out, covered = _cells(lab), [], []
    for index, (role, grade_id, _) in enumerate(cells):
        if role == "answer":
            covered.append(grade_id)
        elif role == "checks":
            out.append((index, grade_id, covered))
            covered = []
    return out


def _score(lab: str, checks_index: int, replace: dict[str, str] | None = None) -> tuple[float, list[str]]:
    """Execute setup + answer cells (some replaced), then judge the checks cell; (fraction, failures)."""
    cells = _cells(lab)
    replace = replace or {}
    namespace: dict = {"__name__": "__main__"}
    answers = {}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for role, grade_id, source in cells[:checks_index]:
            if role == "checks":
                continue
            source = replace.get(grade_id, source)
            exec(compile(source, f"<{lab}:{grade_id}>", "exec"), namespace)
            if role == "answer":
                answers[grade_id] = source
    covered = {g: answers[g] for g in [c[2] for c in _checks_cells(lab) if c[0] == checks_index][0]}
    total = earned = 0.0
    failures: list[str] = []
    for name, impl_source in sorted(set(GRADE_CALL.findall(cells[checks_index][2]))):
        check = get_check(name)
        impl = eval(impl_source, namespace)
        hits = find_forbidden(covered, check.forbid) if check.forbid else []
        for seed in (public_seed(name), HIDDEN_SEED):
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                observations = run_program(check, impl, seed)
            result = judge(name, seed, [(o.label, observed(o.value, o.error)) for o in observations],
                           hidden=True)
            if hits:
                result = result.failed("delegates: " + "; ".join(map(str, hits)))
            weight = sum(c.weight for c in result.cases)
            total += weight
            earned += result.fraction * weight
            failures += [f"{name} (seed {seed}) {c.label}: {c.message}" for c in result.cases if not c.passed]
    return (earned / total if total else 0.0), failures


def _stub(source: str, grade_id: str) -> str:
    return SOLUTION.sub(lambda m: f'{m.group(1)}raise NotImplementedError("{grade_id}")', source)


SOLUTION_CASES = [(lab, index, gid) for lab in LABS for index, gid, _ in _checks_cells(lab)]
ALTERNATIVE_CASES = [(lab, index, answer, description, source)
                     for lab in LABS for index, _, answers in _checks_cells(lab) for answer in answers
                     for description, source in _alternatives(lab).get(answer, [])]
MUTANT_CASES = [(lab, index, answer, description, source)
                for lab in LABS for index, _, answers in _checks_cells(lab) for answer in answers
                for description, source in _mutants(lab).get(answer, [])]


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,checks_id", SOLUTION_CASES, ids=[f"{c[0]}:{c[2]}" for c in SOLUTION_CASES])
def test_solution_scores_full_marks(lab, index, checks_id):
    fraction, failures = _score(lab, index)
    assert fraction == 1.0, "\n".join(failures[:10])


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,checks_id", SOLUTION_CASES, ids=[f"{c[0]}:{c[2]}" for c in SOLUTION_CASES])
def test_untouched_stub_scores_zero(lab, index, checks_id):
    answers = [c[2] for c in _checks_cells(lab) if c[0] == index][0]
    sources = {g: s for role, g, s in _cells(lab) if role == "answer"}
    try:
        fraction, _ = _score(lab, index, {g: _stub(sources[g], g) for g in answers})
    except NotImplementedError:  # a stubbed class that earlier cells instantiate
        fraction = 0.0
    assert fraction == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,answer,description,source", ALTERNATIVE_CASES,
                         ids=[f"{c[0]}:{c[2]}:{c[3][:40]}" for c in ALTERNATIVE_CASES])
def test_right_answer_written_differently_keeps_full_marks(lab, index, answer, description, source):
    fraction, failures = _score(lab, index, {answer: source})
    assert fraction == 1.0, "\n".join(failures[:10])


def test_every_answer_cell_has_three_mutants():
    for lab in LABS:
        mutants = _mutants(lab)
        for _, _, answers in _checks_cells(lab):
            for answer in answers:
                assert len(mutants.get(answer, [])) >= 3, f"{lab}:{answer} has fewer than 3 mutants"


@pytest.mark.slow
@pytest.mark.parametrize("lab,index,answer,description,source", MUTANT_CASES,
                         ids=[f"{c[0]}:{c[2]}:{c[3][:40]}" for c in MUTANT_CASES])
def test_mutant_loses_points(lab, index, answer, description, source):
    try:
        fraction, _ = _score(lab, index, {answer: source})
    except Exception:  # noqa: BLE001 — a mutant that breaks its own cell scores nothing
        fraction = 0.0
    assert fraction < 1.0, f"{lab}:{answer}: the mutant '{description}' keeps full marks"


def test_module_reference_agrees_with_torch_on_random_trees():
    """lab04.module is judged against coursekit.nn.Module; torch.nn.Module must pass it too."""
    torch = pytest.importorskip("torch")
    check = get_check("lab04.module")
    for seed in range(8):
        observations = run_program(check, torch.nn.Module, seed)
        result = judge("lab04.module", seed, [(o.label, observed(o.value, o.error)) for o in observations],
                       hidden=True)
        assert result.passed, [(c.label, c.message) for c in result.cases if not c.passed]


def test_gradcheck_reference_rejects_every_broken_function():
    """The torch.autograd.gradcheck reference gives (reject, accept) on every pair of Functions."""
    check = get_check("lab03.my_gradcheck")
    reference = check.reference_impl()
    for seed in range(5):
        for observation in run_program(check, reference, seed):
            if "rejects" in observation.label:
                assert observation.value == (False, True), observation.label


def test_optimizer_trajectories_use_tight_tolerances():
    """A float32 optimizer state must be visible: the trajectory cases compare to 1e-9."""
    rng = np.random.default_rng(0)
    for name in ("lab04.sgd", "lab04.adam"):
        cases = list(get_check(name).program(get_check(name).reference_impl(), rng))
        steps = [c for c in cases if "after step" in c.label]
        assert steps and all(c.rtol <= 1e-9 for c in steps)
