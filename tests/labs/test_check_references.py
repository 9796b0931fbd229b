"""Properties of individual check programs that the score-based suites cannot show: the
reference agrees with the framework it stands in for, and tolerances are tight but safe."""
from __future__ import annotations

import numpy as np
import pytest

from coursekit.grading.program import get_check, run_program
from coursekit.grading.verdict import judge, observed

torch = pytest.importorskip("torch")


def _judge(name: str, impl, seed: int):
    observations = run_program(get_check(name), impl, seed)
    return judge(name, seed, [(o.label, observed(o.value, o.error)) for o in observations],
                 hidden=True)


def test_module_reference_agrees_with_torch_on_random_trees():
    """lab04.module is judged against coursekit.nn.Module; torch.nn.Module must pass it too."""
    for seed in range(8):
        result = _judge("lab04.module", torch.nn.Module, seed)
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
        check = get_check(name)
        steps = [c for c in check.program(check.reference_impl(), rng) if "after step" in c.label]
        assert steps and all(c.rtol <= 1e-9 for c in steps)


def test_lab05_weighted_sampling_tolerance_cannot_flake():
    """The class-frequency tolerance is at least 8 standard deviations for every class count
    the check draws (2 to 5 classes, 20,000 draws)."""
    from coursekit.grading.checks import lab05

    for classes in range(2, 6):
        p = 1 / classes
        sigma = (p * (1 - p) / lab05._DRAWS) ** 0.5
        assert lab05._TOLERANCE / sigma >= 8
