"""Tapes: a check's inputs recorded in the grader replay exactly in the kernel, through JSON,
and a program that draws differently stops with a clear error instead of comparing other
inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from coursekit.grading.program import STOPPED, Case, Check, run_program
from coursekit.grading.tape import RecordingRng, TapeError, TapeRng, dump, load


def _through_json(tape):
    return load(json.loads(json.dumps(dump(tape))))


def test_every_kind_of_draw_replays_with_its_type_dtype_and_shape():
    rng = RecordingRng(7)
    drawn = [rng.integers(1, 6), rng.integers(0, 9, size=(2, 3)), rng.standard_normal((3, 4)).T,
             rng.uniform(-1, 1), rng.choice(np.array(["w", "bias", "gain"]), size=2, replace=False),
             rng.permutation(5), rng.standard_normal(()), rng.random(3) < 0.5]
    replay = TapeRng(_through_json(rng.tape))
    again = [replay.integers(1, 6), replay.integers(0, 9, size=(2, 3)),
             replay.standard_normal((3, 4)).T, replay.uniform(-1, 1),
             replay.choice(np.array(["w", "bias", "gain"]), size=2, replace=False),
             replay.permutation(5), replay.standard_normal(()), replay.random(3) < 0.5]
    for original, replayed in zip(drawn, again):
        assert type(replayed) is type(original)
        assert np.asarray(replayed).dtype == np.asarray(original).dtype
        assert np.asarray(replayed).shape == np.asarray(original).shape
        assert np.array_equal(replayed, original)
    assert int(again[0]) == int(drawn[0])  # a scalar draw stays a scalar (0-d), not shape (1,)


def test_a_replayed_draw_is_a_copy_that_the_program_may_change():
    rng = RecordingRng(1)
    first = rng.standard_normal(3)
    first[:] = 0  # a program that scribbles on its input must not change the tape
    replay = TapeRng(rng.tape)
    assert not np.array_equal(replay.standard_normal(3), np.zeros(3))


def test_a_program_that_draws_otherwise_than_recorded_stops_with_a_reason():
    def program(impl, rng):
        x = rng.integers(3)
        yield Case("one", lambda: impl(x))

    check = Check("demo.draws", program, reference=lambda: (lambda x: x))
    recorded = RecordingRng(3)
    recorded.standard_normal(2)
    observations = run_program(check, lambda x: x, rng=TapeRng(recorded.tape))
    assert observations[-1].label == STOPPED
    assert "asked for integers" in str(observations[-1].error)
    with pytest.raises(TapeError, match="more inputs"):
        TapeRng([]).integers(3)


def test_object_draws_cannot_be_put_on_a_tape():
    rng = RecordingRng(2)
    rng.choice(np.array([object(), object()], dtype=object))
    with pytest.raises(TapeError, match="cannot be put on a tape"):
        dump(rng.tape)
