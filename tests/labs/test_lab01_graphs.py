"""lab01_graphs: the check programs give the solution full marks, the stubs and mutants less.

Runs in-process, as the lab conventions describe (solutions/README.md): the setup cells, the
earlier answer cells and the answer under test are executed, then each ``grade(...)`` call of
the following checks cell is replayed with ``run_program`` and judged with ``judge`` on the
public seed and a few hidden ones. ``lab_answer_scores`` is shared with test_lab02_autograd.py.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import nbformat
import pytest

from coursekit.grading import get_check, judge, run_program
from coursekit.grading.integrity import find_forbidden
from coursekit.grading.seeds import public_seed
from coursekit.grading.verdict import observed

ROOT = Path(__file__).resolve().parents[2]
HIDDEN_SEEDS = (7, 1234)
_GRADE_CALL = re.compile(r'grade\("([^"]+)", (\w+|\{[^}]*\})\)')


def lab_cells(lab: str) -> list[tuple[str, str, str]]:
    """(role, grade_id, source) of the lab's setup, answer and checks code cells, in order."""
    nb = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    cells = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if cell.cell_type == "code" and meta:
            role = "checks" if meta.get("grade") else "answer" if meta.get("solution") else "setup"
            cells.append((role, meta["grade_id"], cell.source))
    return cells


def stub(source: str) -> str:
    """The release's version of an answer cell: every solution region raises."""
    return re.sub(r"( *)### BEGIN SOLUTION.*?### END SOLUTION",
                  lambda m: m.group(1) + 'raise NotImplementedError("stub")', source, flags=re.S)


def mutants(lab: str) -> dict[str, list[tuple[str, str]]]:
    spec = importlib.util.spec_from_file_location(f"mutants_{lab}", ROOT / "tests" / "mutants" / f"{lab}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MUTANTS


def lab_answer_scores(lab: str, answer: str, replacement: str, seeds=HIDDEN_SEEDS) -> list[float]:
    """Scores (0..1) of the checks cell after ``answer`` when that cell is ``replacement``:
    one per grade call and seed (public seed first), 0 where a forbidden name is used."""
    namespace: dict = {}
    scores: list[float] = []
    pending = False
    with contextlib.redirect_stdout(io.StringIO()):
        for role, grade_id, source in lab_cells(lab):
            if role == "setup":
                exec(source, namespace)
            elif role == "answer":
                exec(replacement if grade_id == answer else source, namespace)
                pending = pending or grade_id == answer
            elif pending:
                visible = source.split("### BEGIN HIDDEN TESTS")[0]
                for name, impl_expr in _GRADE_CALL.findall(visible):
                    check = get_check(name)
                    forbidden = find_forbidden({answer: replacement}, check.forbid)
                    impl = eval(impl_expr, namespace)
                    for seed in (public_seed(name), *seeds):
                        obs = run_program(check, impl, seed)
                        result = judge(name, seed, [(o.label, observed(o.value, o.error)) for o in obs],
                                       hidden=True)
                        scores.append(0.0 if forbidden else result.fraction)
                return scores
    raise AssertionError(f"no checks cell follows the answer cell {answer!r}")


def answer_source(lab: str, answer: str) -> str:
    return next(source for role, gid, source in lab_cells(lab) if gid == answer)


LAB = "lab01_graphs"
ANSWERS = [gid for role, gid, _ in lab_cells(LAB) if role == "answer"]
MUTANTS = [(answer, description, source) for answer, items in mutants(LAB).items()
           for description, source in items]


@pytest.mark.parametrize("answer", ANSWERS)
def test_solution_gets_full_marks_on_public_and_hidden_seeds(answer):
    scores = lab_answer_scores(LAB, answer, answer_source(LAB, answer), seeds=(3, 99, 2024))
    assert scores and min(scores) == 1.0, scores


@pytest.mark.parametrize("answer", ANSWERS)
def test_release_stub_gets_zero(answer):
    assert max(lab_answer_scores(LAB, answer, stub(answer_source(LAB, answer)), seeds=())) == 0.0


def test_every_answer_cell_has_three_mutants():
    counts = {answer: len(items) for answer, items in mutants(LAB).items()}
    assert set(counts) == set(ANSWERS) and min(counts.values()) >= 3, counts


@pytest.mark.parametrize("answer, description, source", MUTANTS,
                         ids=[f"{a}: {d}" for a, d, _ in MUTANTS])
def test_mutant_loses_points(answer, description, source):
    scores = lab_answer_scores(LAB, answer, source)
    assert min(scores) < 1.0, f"mutant kept full marks: {description}"
