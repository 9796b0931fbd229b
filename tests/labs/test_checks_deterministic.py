"""A check scores the same answer on the same seed the same way, every time (issue 27): the
same observations, so the same points and the same messages, for the solution and for a wrong
answer.

Both runs share one harness, so the reference runs once (its cache) and the second run
repeats only the answer's side: what changes between the two is what a check left behind
(a global generator it drew from, a file it wrote, a clock it read) or an order the machine
chose (a folder's listing). The observations are compared, not only the scores: a value that
changes from run to run fails against the cached reference both times, with the same message.
Per lab one answer cell, the one whose check leans most on such things, keeps the test cheap;
a set's order, which changes with the hash seed of a process, needs two processes and is not
covered here.
"""
from __future__ import annotations

import dataclasses
import itertools
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tooling.mutants import Harness, load_mutants, mutants_path
from coursekit import course as manifest
from coursekit.grading.program import Case, get_check

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)

# The answer cell per lab, and what its check could take from the machine.
CELLS = {
    "lab00_setup": "time_it",                    # clocks and the timer's devices
    "lab01_graphs": "train_two_layer",           # a training loop from random weights
    "lab02_autograd": "engine",                  # a graph walked through sets of nodes
    "lab03_functions": "my_gradcheck",           # finite differences written into the inputs
    "lab04_modules": "adam",                     # optimizer state carried across steps
    "lab05_data": "dataloader",                  # worker processes, sampler order
    "lab06_static_graphs": "time_compiled",      # a pretend clock and torch.compile's caches
    "lab07_tensorflow": "tensorboard_scalars",   # event files listed from a folder
    "lab08_jax": "time_jit",                     # jit caches and block_until_ready
    "lab09_performance": "read_profile",         # profiler rows in the order they come
    "lab10_distributed": "data_parallel",        # real processes and a rendezvous port
    "lab11_after_training": "ema",               # buffers and a copy of the model
}


@lru_cache(maxsize=None)
def harness(lab_id: str) -> Harness:
    return Harness(COURSE, COURSE.lab(lab_id))


def _answers(lab_id: str) -> list[tuple[str, str]]:
    """The solution of the lab's chosen cell and its first mutant."""
    answer = CELLS[lab_id]
    name, mutant = load_mutants(mutants_path(COURSE, lab_id))[answer][0]
    return [("the solution", harness(lab_id).solution(answer)), (f"the mutant '{name}'", mutant)]


def test_every_lab_has_a_cell_to_repeat():
    assert sorted(CELLS) == sorted(lab.id for lab in COURSE.labs)


def _run(h: Harness, answer: str, code: str) -> tuple[list, dict]:
    """What each grade(...) call observed, and the cell's score with its messages."""
    checks, drives, delegated = h.drive(answer, code)
    return ([drive.observed for drive in drives],
            dataclasses.asdict(h.scored(checks, drives, delegated)))


def _assert_repeats(h: Harness, answer: str, who: str, code: str) -> None:
    (observed, scored), (observed_again, scored_again) = (_run(h, answer, code) for _ in range(2))
    where = f"{h.lab.id}/{answer}: {who}"
    np.testing.assert_equal(observed_again, observed,
                            err_msg=f"{where} was observed differently on the same seed")
    assert scored_again == scored, (f"{where} scored differently on the same seed:\n"
                                    f"{scored}\n{scored_again}")


@pytest.mark.parametrize("lab_id", sorted(CELLS))
def test_the_same_answer_on_the_same_seed_scores_the_same(lab_id):
    for who, code in _answers(lab_id):
        _assert_repeats(harness(lab_id), CELLS[lab_id], who, code)


def test_a_check_that_observes_a_value_left_from_its_last_run_is_caught(monkeypatch):
    check = get_check("lab02.engine")
    runs = itertools.count()

    def leaky(impl, rng, program=check.program):
        yield from program(impl, rng)
        run = next(runs)
        yield Case("a count kept from the last run", lambda: run)

    monkeypatch.setattr(check, "program", leaky)
    h = Harness(COURSE, COURSE.lab("lab02_autograd"))  # its own reference run, of this program
    with pytest.raises(AssertionError, match="observed differently on the same seed"):
        _assert_repeats(h, "engine", "the solution", h.solution("engine"))
