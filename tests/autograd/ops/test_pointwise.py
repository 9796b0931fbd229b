"""exp, log, abs, clamp: against torch (float64) and gradcheck."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import coursekit as ck
from coursekit.autograd import gradcheck

from ..helpers import DIFFERENTIAL, arrays, assert_matches_torch, floats, random_inputs, shapes

UNARY = {
    # name: (coursekit, torch, element strategy)
    "exp": (lambda t: t.exp(), torch.exp, floats()),
    "log": (lambda t: t.log(), torch.log, floats(0.05, 5.0)),
    "abs": (lambda t: t.abs(), torch.abs, floats()),  # hypothesis draws exact zeros: f'(0) = 0 as torch
    "clamp": (lambda t: t.clamp(-1.0, 0.5), lambda t: t.clamp(-1.0, 0.5), floats()),
    "clamp_min": (lambda t: t.clamp(min=0.0), lambda t: t.clamp(min=0.0), floats()),
    "clamp_max": (lambda t: t.clamp(max=1.0), lambda t: t.clamp(max=1.0), floats()),
    # Exactly on a bound the gradient passes (torch includes the bounds).
    "clamp_on_bounds": (lambda t: t.clamp(-1.0, 1.0), lambda t: t.clamp(-1.0, 1.0), st.sampled_from([-1.0, 1.0, 0.0, -2.0, 2.0])),
}


@pytest.mark.parametrize("name", list(UNARY))
@DIFFERENTIAL
@given(data=st.data(), shape=shapes())
def test_unary_op_matches_torch(name, data, shape):
    ck_fn, torch_fn, elements = UNARY[name]
    assert_matches_torch(ck_fn, torch_fn, [data.draw(arrays(shape, elements), label="x")])


def test_module_level_functions_match_methods():
    x = ck.tensor([0.5, 1.5, -2.0])
    np.testing.assert_allclose(ck.exp(x).data, x.exp().data)
    np.testing.assert_allclose(ck.abs(x).data, x.abs().data)
    np.testing.assert_allclose(ck.clamp(x, min=0).data, x.clamp(min=0).data)
    np.testing.assert_allclose(ck.log(ck.abs(x)).data, np.log(np.abs(x.data)))


GRADCHECK_CASES = {
    "exp": (lambda a: a.exp(), False),
    "log": (lambda a: a.log(), True),
    "abs": (lambda a: a.abs(), False),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), False),
}


@pytest.mark.parametrize("name", list(GRADCHECK_CASES))
def test_gradcheck_passes(name):
    fn, positive = GRADCHECK_CASES[name]
    assert gradcheck(fn, random_inputs((3, 4), positive=positive))


def test_clamp_without_bounds_is_refused():
    with pytest.raises(ValueError, match="at least one of min and max"):
        ck.tensor([1.0]).clamp()


def test_clamp_keeps_float32():
    assert ck.tensor([1.0, -1.0]).clamp(min=0.0).dtype == np.float32
