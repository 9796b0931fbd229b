"""Every row of an exercise's property table names a case its check really yields, and every
parameter of the graded function has a row (issue 27, see coursekit.grading.properties).

The labels come from the check's program run on its public seed with an answer that raises
(and, indexed, gives answers that raise):
a program never branches on what the answer returned, so its labels are the reference's.
"""
from __future__ import annotations

import ast
import importlib
from functools import lru_cache
from pathlib import Path

import pytest

from coursekit import course as manifest
from coursekit.grading.program import get_check, run_program
from coursekit.grading.properties import Kind
from coursekit.grading.seeds import public_seed
from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import ANSWER, CHECKS

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
# Every check of every lab has a table.
COVERED = tuple(lab.id for lab in COURSE.labs)


def _module(lab_id: str):
    COURSE.enable_checks()
    return importlib.import_module(f"coursekit.grading.checks.{lab_id[:5]}")


def _graded_functions(lab_id: str) -> dict[str, set[str]]:
    """Per check, the parameters of the functions the solution's checks cells hand to it."""
    source = lab_cells.load(COURSE.source_notebook(COURSE.lab(lab_id)))
    defs = {node.name: {a.arg for a in node.args.args + node.args.kwonlyargs}
            for cell in source.with_role(ANSWER)
            for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.FunctionDef)}
    params: dict[str, set[str]] = {}
    for cell in source.with_role(CHECKS):
        for call in ast.walk(ast.parse(cell.source)):
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "grade":
                name = call.args[0].value
                handed = {n.id for n in ast.walk(call.args[1]) if isinstance(n, ast.Name)}
                params.setdefault(name, set()).update(
                    *(defs[f] for f in handed if f in defs))
    return params


class _Refuse:
    """An answer that raises when called; handed as a dict of classes (lab04.layers gets
    ``{"Linear": ..., "ReLU": ..., "Sequential": ...}``), each of its entries is one too."""

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("the property table's test answers nothing")

    def __getitem__(self, key):
        return self


_refuse = _Refuse()


@lru_cache(maxsize=None)
def _labels(check_name: str) -> tuple[str, ...]:
    """Every case label of the program on its public seed, and ``label: item`` for a case whose
    result has named items."""
    labels = []
    for observation in run_program(get_check(check_name), _refuse, public_seed(check_name)):
        assert observation.case is not None, (check_name, observation.error)
        labels.append(observation.label)
        labels += [f"{observation.label}: {item}" for item in observation.case.names]
    return tuple(labels)


TABLED = [(lab.id, name) for lab in COURSE.labs
          for name in sorted(getattr(_module(lab.id), "PROPERTIES", {}))]


@pytest.mark.parametrize("lab_id", COVERED)
def test_every_check_of_a_covered_lab_has_a_table(lab_id):
    tables = _module(lab_id).PROPERTIES
    assert sorted(tables) == sorted(_graded_functions(lab_id)), lab_id
    assert all(tables.values()), [name for name, rows in tables.items() if not rows]


@pytest.mark.parametrize("lab_id, check_name", TABLED, ids=[name for _, name in TABLED])
def test_every_row_names_a_case_the_check_yields(lab_id, check_name):
    check, labels = get_check(check_name), _labels(check_name)
    for row in _module(lab_id).PROPERTIES[check_name]:
        assert row.case or row.forbidden, f"{check_name}: '{row.what}' names no case"
        if row.case:
            assert any(row.case in label for label in labels), (
                f"{check_name}: '{row.what}' names the case '{row.case}', which the check does "
                f"not yield; its cases: {labels}")
        if row.forbidden:
            assert row.forbidden in check.forbid, (check_name, row.forbidden, check.forbid)


@pytest.mark.parametrize("lab_id, check_name", TABLED, ids=[name for _, name in TABLED])
def test_every_parameter_has_a_row(lab_id, check_name):
    rows = _module(lab_id).PROPERTIES[check_name]
    tabled = {row.what for row in rows if row.kind is Kind.PARAMETER}
    assert tabled == _graded_functions(lab_id)[check_name], check_name
