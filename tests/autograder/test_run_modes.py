"""One run step, two modes (coursekit.notebook.run_plan): a plan run in a grading kernel under
the monitor, as `coursekit validate` and `coursekit autograde` run it, and the same plan run in
this process, as the mutant suite and the blind corpus run it, score the same, check by check,
delegation included. Neither run changes the plan's notebook."""
from __future__ import annotations

import asyncio
import copy
import os
from pathlib import Path

import pytest

from coursekit.course import load_course
from coursekit.notebook import kernels, monitoring
from coursekit.notebook.in_process_run import run_in_process
from coursekit.notebook.monitored_run import run_monitored
from coursekit.notebook.run_plan import KernelSettings
from tooling.mutants import Harness, load_mutants, mutants_path

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

COURSE = load_course(Path(__file__).resolve().parents[2])
LAB = "lab03_functions"
ANSWER = "sigmoid"
WRONG_VALUE = "forgets to multiply by grad_output"
DELEGATES = "torch.sigmoid inside the forward"


def _in_kernel(harness: Harness, plan):
    source, lab = harness.source, harness.lab
    checks = [call.check for planned in plan.checks.values() for call in planned.calls]
    settings = KernelSettings(monitoring.targets(checks), tuple(COURSE.check_path),
                              source.setup_imports, tuple(source.check_names),
                              lab.cell_timeout_s * 4, lab.time_limit_s * 4, lab.memory_mb)
    runtime = kernels.runtime_dir()
    try:
        km = kernels.local_kernel_manager(runtime_dir=runtime, limits=None)
        env = {**os.environ, **COURSE.kernel_env(), "COURSEKIT_MODE": "grade",
               "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
        return asyncio.run(run_monitored(plan, settings, km, cwd=COURSE.root, env=env,
                                         runtime=runtime))
    finally:
        kernels.remove_tree(runtime)


def _scored(harness: Harness, ran):
    checks = harness.checks_of(ANSWER)
    return harness.scored(checks, ran.execution.drives.get(checks.grade_id, []), ran.forbidden)


def _by_check(cell) -> dict:
    return {(c.check, c.hidden): (round(c.score, 9), c.cases_passed, c.cases, c.message)
            for c in cell.checks}


@pytest.mark.parametrize("variant", ["solution", WRONG_VALUE, DELEGATES])
def test_a_plan_scores_the_same_in_a_kernel_and_in_this_process(variant):
    harness = Harness(COURSE, COURSE.lab(LAB))
    code = harness.solution(ANSWER)
    if variant == DELEGATES:    # what the exercise forbids: the monitor's rule, both ways
        code = code.replace("e = torch.exp(-x.abs())", "y = torch.sigmoid(x)\n        return y")
    elif variant != "solution":
        code = dict(load_mutants(mutants_path(COURSE, LAB))[ANSWER])[variant]
    plan = harness.plan(ANSWER, code)
    before = copy.deepcopy(plan.nb)
    here, there = _scored(harness, run_in_process(plan)), _scored(harness, _in_kernel(harness,
                                                                                      plan))
    assert plan.nb == before, "a run changed the plan's notebook"
    assert here.checks, "no check was driven"
    assert _by_check(here) == _by_check(there)
    if variant == "solution":
        assert here.score == pytest.approx(here.max_score)
    else:
        assert here.score < here.max_score - 1e-9
    if variant == DELEGATES:
        assert all("torch.sigmoid" in c.message for c in here.checks)
