"""sum, mean, max, min with axis/dim and keepdims/keepdim: against torch (float64) and gradcheck."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import coursekit as ck
from coursekit.autograd import gradcheck

from ..helpers import DIFFERENTIAL, arrays, assert_matches_torch, random_inputs, shapes

# torch's counterparts with NumPy's semantics: amax/amin split the gradient among ties.
TORCH = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}


@st.composite
def axes(draw, ndim):
    """None, one axis (possibly negative) or a tuple of distinct axes."""
    kind = draw(st.sampled_from(["none", "int", "tuple"]) if ndim else st.just("none"))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(picked)


@pytest.mark.parametrize("name", list(TORCH))
@DIFFERENTIAL
@given(data=st.data(), shape=shapes(), keepdims=st.booleans(), torch_spelling=st.booleans())
def test_reduction_matches_torch(name, data, shape, keepdims, torch_spelling):
    axis = data.draw(axes(len(shape)), label="axis")
    # Small integers make ties common, so max/min's tie rule is exercised too.
    x = data.draw(arrays(shape, st.integers(-2, 2).map(float)), label="x")

    def ck_fn(t):
        if torch_spelling:
            return getattr(t, name)(dim=axis, keepdim=keepdims)
        return getattr(t, name)(axis=axis, keepdims=keepdims)

    def torch_fn(t):
        dim = tuple(range(t.ndim)) if axis is None else axis
        return TORCH[name](t, dim=dim, keepdim=keepdims) if dim != () else TORCH[name](t)

    assert_matches_torch(ck_fn, torch_fn, [x])


def test_max_splits_the_gradient_evenly_among_ties_like_torch_amax():
    x = ck.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.data, [0.0, 0.5, 0.5, 0.0])


def test_reductions_accept_list_of_axes_and_module_functions():
    x = ck.tensor(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_allclose(ck.sum(x, [0, 2]).data, x.data.sum(axis=(0, 2)))
    np.testing.assert_allclose(ck.mean(x, dim=1).data, x.data.mean(axis=1))
    np.testing.assert_allclose(ck.max(x, 2, keepdims=True).data, x.data.max(axis=2, keepdims=True))


def test_sum_of_float32_stays_float32():
    assert ck.tensor([[1.0, 2.0]]).sum(axis=1).dtype == np.float32
    assert ck.tensor([[1.0, 2.0]]).mean().dtype == np.float32


def test_giving_both_axis_and_dim_is_refused():
    with pytest.raises(TypeError, match="axis or dim"):
        ck.tensor([1.0]).sum(axis=0, dim=0)


GRADCHECK_CASES = {
    "sum_all": lambda a: a.sum(),
    "sum_axis": lambda a: a.sum(axis=1),
    "sum_keepdims": lambda a: a.sum(axis=(0, 2), keepdims=True),
    "mean_all": lambda a: a.mean(),
    "mean_dim": lambda a: a.mean(dim=-1, keepdim=True),
    "max_all": lambda a: a.max(),
    "max_axis": lambda a: a.max(axis=0),
    "min_axis": lambda a: a.min(axis=2),
}


@pytest.mark.parametrize("name", list(GRADCHECK_CASES))
def test_gradcheck_passes(name):
    assert gradcheck(GRADCHECK_CASES[name], random_inputs((2, 3, 2)))
