"""Linear: torch's layout, forward, backward and initialisation; bad inputs refused with expected vs got."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import coursekit as ck
from coursekit import nn
from coursekit.autograd.errors import ShapeError

FAST = settings(max_examples=25, deadline=None)


@FAST
@given(
    batch=st.lists(st.integers(1, 4), min_size=0, max_size=2),
    in_features=st.integers(1, 6),
    out_features=st.integers(1, 5),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_linear_forward_and_backward_match_torch_given_the_same_weights(batch, in_features, out_features, bias, seed):
    """Any batch shape (*, in): same output and same gradients for input, weight and bias, float64."""
    rng = np.random.default_rng(seed)
    theirs = torch.nn.Linear(in_features, out_features, bias=bias, dtype=torch.float64)
    ours = nn.Linear(in_features, out_features, bias=bias, dtype=np.float64)
    ours.load_state_dict(theirs.state_dict())
    x = rng.normal(size=(*batch, in_features))
    upstream = rng.normal(size=(*batch, out_features))

    x_ours = ck.tensor(x, requires_grad=True)
    x_theirs = torch.tensor(x, requires_grad=True)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    np.testing.assert_allclose(y_ours.data, y_theirs.detach().numpy(), rtol=1e-12, atol=1e-14)

    y_ours.backward(ck.tensor(upstream))
    y_theirs.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x_ours.grad.data, x_theirs.grad.numpy(), rtol=1e-12, atol=1e-14)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert p.grad.shape == p.shape
        np.testing.assert_allclose(p.grad.data, q.grad.numpy(), rtol=1e-12, atol=1e-13, err_msg=name)


def test_functional_linear_matches_the_module():
    layer = nn.Linear(3, 2, dtype=np.float64, generator=0)
    x = ck.tensor(np.random.default_rng(1).normal(size=(4, 3)))
    np.testing.assert_array_equal(nn.functional.linear(x, layer.weight, layer.bias).data, layer(x).data)
    np.testing.assert_array_equal(nn.functional.linear(x, layer.weight).data, (x @ layer.weight.T).data)


def test_weight_layout_is_out_by_in_like_torch():
    ours, theirs = nn.Linear(100, 10), torch.nn.Linear(100, 10)
    assert ours.weight.shape == tuple(theirs.weight.shape) == (10, 100)
    assert ours.bias.shape == tuple(theirs.bias.shape) == (10,)
    assert ours.weight.dtype == np.float32 and ours.weight.requires_grad
    assert repr(ours) == repr(theirs)
    assert repr(nn.Linear(3, 4, bias=False)) == repr(torch.nn.Linear(3, 4, bias=False))
    assert nn.Linear(3, 4, bias=False).bias is None


@pytest.mark.parametrize("in_features,out_features", [(1, 1), (30, 200), (400, 50)])
def test_init_is_uniform_within_torchs_bound(in_features, out_features):
    """torch's rule: weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)); check bound, spread and mean of both libraries."""
    bound = 1 / math.sqrt(in_features)
    torch.manual_seed(0)
    theirs = torch.nn.Linear(in_features, out_features)
    ours = nn.Linear(in_features, out_features, generator=0)
    for name in ("weight", "bias"):
        w_ours = getattr(ours, name).data.astype(np.float64)
        w_theirs = getattr(theirs, name).detach().numpy().astype(np.float64)
        for w in (w_ours, w_theirs):
            assert np.abs(w).max() <= bound * (1 + 1e-6), name
        if w_ours.size >= 5000:
            # Uniform(-b, b): std b/sqrt(3), mean 0, and samples reach close to the bound.
            for w in (w_ours, w_theirs):
                assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound, name
                assert abs(w.mean()) < 0.03 * bound, name
                assert np.abs(w).max() > 0.99 * bound, name


def test_generator_makes_initialisation_reproducible():
    a = nn.Linear(5, 4, generator=42)
    b = nn.Linear(5, 4, generator=np.random.default_rng(42))
    c = nn.Linear(5, 4, generator=43)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    np.testing.assert_array_equal(a.bias.data, b.bias.data)
    assert not np.array_equal(a.weight.data, c.weight.data)


def test_init_manual_seed_makes_whole_models_reproducible():
    def build():
        return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))

    nn.init.manual_seed(7)
    first = build()
    nn.init.manual_seed(7)
    second = build()
    for (name, p), q in zip(first.named_parameters(), second.parameters()):
        np.testing.assert_array_equal(p.data, q.data, err_msg=name)
    assert not np.array_equal(first[0].weight.data, first[2].weight.data[:, :3].T)


def test_reset_parameters_redraws_in_place():
    layer = nn.Linear(4, 3, generator=0)
    weight, old = layer.weight, layer.weight.data.copy()
    layer.reset_parameters(generator=1)
    assert layer.weight is weight and not np.array_equal(layer.weight.data, old)


@pytest.mark.parametrize(
    "fn,shape,args",
    [
        (nn.init.xavier_uniform_, (300, 200), {}),
        (nn.init.kaiming_uniform_, (300, 200), {"nonlinearity": "relu"}),
    ],
)
def test_uniform_init_rules_follow_torchs_bounds(fn, shape, args):
    torch.manual_seed(0)
    theirs = getattr(torch.nn.init, fn.__name__)(torch.empty(shape, dtype=torch.float64), **args).numpy()
    ours = fn(ck.tensor(np.empty(shape)), generator=0, **args).data
    assert abs(np.abs(ours).max() - np.abs(theirs).max()) < 1e-3 * np.abs(theirs).max()
    assert abs(ours.std() - theirs.std()) < 0.02 * theirs.std()


@pytest.mark.parametrize("nonlinearity,param", [("relu", None), ("tanh", None), ("leaky_relu", 0.2), ("sigmoid", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert nn.init.calculate_gain(nonlinearity, param) == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param))


# ------------------------------------------------------------------ bad inputs
def test_integer_input_is_refused_naming_expected_and_got_dtype():
    layer = nn.Linear(3, 2)
    with pytest.raises(TypeError, match=r"Linear\(in_features=3, out_features=2, bias=True\): "
                                        r"expected a floating-point input of dtype float32.*got int64"):
        layer(ck.tensor(np.arange(6).reshape(2, 3)))


def test_float64_input_to_a_float32_layer_is_refused_as_torch_does():
    layer = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="expected input of dtype float32.*got float64"):
        layer(ck.tensor(np.ones((2, 3))))
    with pytest.raises(RuntimeError):
        torch.nn.Linear(3, 2)(torch.ones((2, 3), dtype=torch.float64))


@pytest.mark.parametrize("shape", [(4, 5), (2,), (2, 3, 2)])
def test_wrong_last_dimension_is_refused_naming_expected_and_got(shape):
    layer = nn.Linear(3, 2)
    expected = re.escape(f"expected input with last dimension 3 (in_features), got shape {shape}")
    with pytest.raises(ShapeError, match=expected):
        layer(ck.tensor(np.ones(shape, dtype=np.float32)))
    assert issubclass(ShapeError, ValueError)


def test_scalar_and_non_tensor_inputs_are_refused():
    layer = nn.Linear(3, 2)
    with pytest.raises(ShapeError, match=r"got shape \(\)"):
        layer(ck.tensor(np.float32(1.0)))
    with pytest.raises(TypeError, match="expected a coursekit Tensor as input, got numpy.ndarray"):
        layer(np.ones((2, 3), dtype=np.float32))


@pytest.mark.parametrize("args", [(3.0, 2), (3, -1), ((3,), 2), (True, 2)])
def test_bad_sizes_are_refused_at_construction(args):
    with pytest.raises(TypeError, match="must be a non-negative int"):
        nn.Linear(*args)


def test_integer_parameter_dtype_is_refused():
    with pytest.raises(TypeError, match="floating-point dtype"):
        nn.Linear(3, 2, dtype=np.int64)
