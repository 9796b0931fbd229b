"""Partial credit follows the lesson: the checks weight their cases by concept (issue 9).

With every case weighing the same, a Sigmoid that saves x instead of y (the lecture's central
point) kept 2.83/3, and Adam without bias correction 0.26/3 — numbers that said how many cases a
mistake touched, not what it misses. The weights are stated in the lab text; here the mutant
suite shows they rank realistic mistakes sensibly.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from tooling.mutants import Harness, load_mutants, mutants_path
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)


@lru_cache(maxsize=None)
def _harness(lab: str) -> Harness:
    return Harness(COURSE, COURSE.lab(lab))


def share(lab: str, answer: str, mutant_starts: str) -> float:
    """The share of the checks cell's points that the named mutant keeps."""
    variants = load_mutants(mutants_path(COURSE, lab))[answer]
    (code,) = [code for name, code in variants if name.startswith(mutant_starts)]
    cell = _harness(lab).score(answer, code)
    return cell.score / cell.max_score


def test_sigmoid_saving_x_costs_the_third_the_lab_states():
    saves_x = share("lab03_functions", "sigmoid", "saves the input x and recomputes")
    assert saves_x == pytest.approx(2 / 3, abs=1e-9)  # was 17/18 = 0.94
    # Wrong gradients cost more than a right gradient computed from the wrong saved tensor.
    assert share("lab03_functions", "sigmoid", "backward computed from the input x") < 0.5
    assert share("lab03_functions", "sigmoid", "backward re-derives exp(-x)") <= 0.5


def test_adam_without_bias_correction_keeps_only_the_parts_it_has_right():
    # Construction, zero_grad() and device state: 0.6 of 3 points; every step differs.
    assert share("lab04_modules", "adam", "no bias correction") == pytest.approx(0.2, abs=1e-9)


def test_sgd_momentum_conventions_rank_below_plain_sgd_done_right():
    damped = share("lab04_modules", "sgd", "momentum as an average")
    ignored = share("lab04_modules", "sgd", "ignores momentum")
    # Momentum is the exercise's concept (1 of its 2 points): either mistake keeps under half.
    assert damped <= 0.45 and ignored <= 0.45
    # The damped buffer is still a buffer on the right device; ignoring momentum has none.
    assert ignored < damped


@pytest.mark.parametrize("answer", ["sgd", "adam"])
def test_cpu_state_on_a_meta_parameter_fails_though_in_place_updates_hide_it(answer):
    # torch runs cpu_buffer.add_(meta_grad) and meta_param.sub_(cpu_buffer) without a word,
    # so the parameter stays on meta: only a look at the state finds the CPU buffer.
    cell = _harness("lab04_modules").score(
        answer, dict(load_mutants(mutants_path(COURSE, "lab04_modules"))[answer])[
            next(name for name, _ in load_mutants(mutants_path(COURSE, "lab04_modules"))[answer]
                 if name.startswith(("momentum buffer torch.zeros(p.shape, dtype",
                                     "moments torch.zeros(p.shape, dtype")))])
    assert cell.score < cell.max_score
    message = "\n".join(c.message for c in cell.checks)
    assert "got 'cpu float64', expected 'meta float64'" in message
