"""relu, sigmoid, tanh, softmax, log_softmax: against torch (float64), gradcheck, stability."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import coursekit as ck
from coursekit.autograd import gradcheck

from ..helpers import DIFFERENTIAL, arrays, assert_matches_torch, floats, random_inputs, shapes

ELEMENTWISE = {
    "relu": (lambda t: t.relu(), torch.relu),  # hypothesis draws exact zeros: f'(0) = 0 as torch
    "sigmoid": (lambda t: t.sigmoid(), torch.sigmoid),
    "tanh": (lambda t: t.tanh(), torch.tanh),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@DIFFERENTIAL
@given(data=st.data(), shape=shapes())
def test_activation_matches_torch(name, data, shape):
    ck_fn, torch_fn = ELEMENTWISE[name]
    x = data.draw(arrays(shape, floats(-40.0, 40.0)), label="x")
    assert_matches_torch(ck_fn, torch_fn, [x])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@DIFFERENTIAL
@given(data=st.data(), shape=shapes(min_dims=1), use_dim_keyword=st.booleans())
def test_softmax_family_along_any_axis_matches_torch(name, data, shape, use_dim_keyword):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    x = data.draw(arrays(shape, floats(-30.0, 30.0)), label="x")
    if use_dim_keyword:
        ck_fn = lambda t: getattr(t, name)(dim=axis)
    else:
        ck_fn = lambda t: getattr(ck, name)(t, axis)
    assert_matches_torch(ck_fn, lambda t: getattr(torch, name)(t, dim=axis), [x])


@pytest.mark.parametrize("fn", [lambda t: t.sigmoid(), lambda t: t.softmax(-1), lambda t: t.log_softmax(-1)],
                         ids=["sigmoid", "softmax", "log_softmax"])
def test_stable_forms_give_finite_values_and_gradients_for_huge_inputs(fn):
    x = ck.tensor(np.array([[-1000.0, 0.0, 1000.0], [800.0, 800.0, -800.0]]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in exp would warn
        y = fn(x)
        y.backward(np.ones(y.shape))
    assert np.isfinite(y.data).all()
    assert np.isfinite(x.grad.data).all()


def test_sigmoid_of_extremes_is_zero_and_one():
    y = ck.tensor(np.array([-1000.0, 1000.0])).sigmoid()
    np.testing.assert_allclose(y.data, [0.0, 1.0])


def test_sigmoid_float32_stays_float32():
    assert ck.tensor([-3.0, 3.0]).sigmoid().dtype == np.float32


GRADCHECK_CASES = {
    "relu": lambda a: a.relu(),
    "sigmoid": lambda a: a.sigmoid(),
    "tanh": lambda a: a.tanh(),
    "softmax_last": lambda a: a.softmax(-1),
    "softmax_first": lambda a: a.softmax(dim=0),
    "log_softmax": lambda a: a.log_softmax(dim=1),
}


@pytest.mark.parametrize("name", list(GRADCHECK_CASES))
def test_gradcheck_passes(name):
    assert gradcheck(GRADCHECK_CASES[name], random_inputs((3, 4)))
