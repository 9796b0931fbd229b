"""Losses against torch.nn.functional in float64: values and gradients, every reduction."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import coursekit as ck
from coursekit import nn
from coursekit.autograd.errors import ShapeError
from coursekit.nn import functional as F

FAST = settings(max_examples=30, deadline=None)
REDUCTIONS = st.sampled_from(["mean", "sum", "none"])


def _compare(ours_fn, theirs_fn, arrays, upstream_seed=0, tol=1e-12):
    """Run both losses on the same float64 arrays; compare value and the gradient of every input."""
    ours_in = [ck.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_ours, out_theirs = ours_fn(*ours_in), theirs_fn(*theirs_in)
    np.testing.assert_allclose(out_ours.data, out_theirs.detach().numpy(), rtol=tol, atol=tol)
    upstream = np.random.default_rng(upstream_seed).normal(size=out_ours.shape)
    out_ours.backward(ck.tensor(upstream))
    out_theirs.backward(torch.tensor(upstream))
    for i, (a, b) in enumerate(zip(ours_in, theirs_in)):
        np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=tol, atol=tol, err_msg=f"gradient of input {i}")


@FAST
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    reduction=REDUCTIONS,
    seed=st.integers(0, 2**16),
)
def test_mse_loss_matches_torch_for_input_and_target_gradients(shape, reduction, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=shape), rng.normal(size=shape)
    _compare(lambda a, b: F.mse_loss(a, b, reduction=reduction),
             lambda a, b: TF.mse_loss(a, b, reduction=reduction), [x, y], seed)
    _compare(lambda a, b: nn.MSELoss(reduction=reduction)(a, b),
             lambda a, b: torch.nn.MSELoss(reduction=reduction)(a, b), [x, y], seed)


@FAST
@given(
    n=st.integers(1, 6),
    c=st.integers(2, 5),
    reduction=REDUCTIONS,
    weighted=st.booleans(),
    ignore=st.booleans(),
    smoothing=st.sampled_from([0.0, 0.2]),
    seed=st.integers(0, 2**16),
)
def test_cross_entropy_with_class_indices_matches_torch(n, c, reduction, weighted, ignore, smoothing, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=3.0, size=(n, c))
    target = rng.integers(0, c, size=n)
    if ignore and n > 1:
        target[0] = -100
    weight = rng.uniform(0.5, 2.0, size=c) if weighted else None
    t_weight = None if weight is None else torch.tensor(weight)
    _compare(
        lambda x: nn.CrossEntropyLoss(weight=weight, reduction=reduction, label_smoothing=smoothing)(x, target),
        lambda x: torch.nn.CrossEntropyLoss(weight=t_weight, reduction=reduction, label_smoothing=smoothing)(
            x, torch.tensor(target)),
        [logits], seed,
    )


@FAST
@given(
    shape=st.sampled_from([(3,), (2, 4), (2, 3, 5), (2, 3, 2, 2)]),
    reduction=REDUCTIONS,
    seed=st.integers(0, 2**16),
)
def test_cross_entropy_on_unbatched_and_k_dimensional_inputs_matches_torch(shape, reduction, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=shape)
    c = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    target = rng.integers(0, c, size=target_shape)
    _compare(lambda x: F.cross_entropy(x, target, reduction=reduction),
             lambda x: TF.cross_entropy(x, torch.tensor(target), reduction=reduction), [logits], seed)


@FAST
@given(n=st.integers(1, 5), c=st.integers(2, 4), reduction=REDUCTIONS, weighted=st.booleans(),
       smoothing=st.sampled_from([0.0, 0.1]), seed=st.integers(0, 2**16))
def test_cross_entropy_with_class_probabilities_matches_torch(n, c, reduction, weighted, smoothing, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, c))
    probs = rng.dirichlet(np.ones(c), size=n)
    weight = rng.uniform(0.5, 2.0, size=c) if weighted else None
    t_weight = None if weight is None else torch.tensor(weight)
    _compare(lambda x, p: F.cross_entropy(x, p, weight=weight, reduction=reduction, label_smoothing=smoothing),
             lambda x, p: TF.cross_entropy(x, p, weight=t_weight, reduction=reduction, label_smoothing=smoothing),
             [logits, probs], seed)


@FAST
@given(n=st.integers(1, 6), c=st.integers(2, 5), reduction=REDUCTIONS, weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_nll_loss_after_log_softmax_matches_torch_and_equals_cross_entropy(n, c, reduction, weighted, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, c))
    target = rng.integers(0, c, size=n)
    weight = rng.uniform(0.5, 2.0, size=c) if weighted else None
    t_weight = None if weight is None else torch.tensor(weight)
    ours = nn.Sequential(nn.LogSoftmax(dim=1))
    _compare(lambda x: nn.NLLLoss(weight=weight, reduction=reduction)(ours(x), target),
             lambda x: TF.nll_loss(TF.log_softmax(x, dim=1), torch.tensor(target), weight=t_weight,
                                   reduction=reduction), [logits], seed)
    x = ck.tensor(logits)
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(x, 1), target, weight=weight, reduction=reduction).data,
                               F.cross_entropy(x, target, weight=weight, reduction=reduction).data, rtol=1e-13)


def test_cross_entropy_with_every_target_ignored_is_nan_like_torch():
    logits = np.zeros((2, 3))
    target = np.array([-100, -100])
    ours = F.cross_entropy(ck.tensor(logits), target).item()
    theirs = TF.cross_entropy(torch.tensor(logits), torch.tensor(target)).item()
    assert np.isnan(ours) and np.isnan(theirs)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = np.array([[1000.0, -1000.0, 0.0]])
    _compare(lambda x: F.cross_entropy(x, np.array([1])), lambda x: TF.cross_entropy(x, torch.tensor([1])), [logits])


def test_targets_may_be_coursekit_or_torch_integer_tensors():
    logits = ck.tensor(np.random.default_rng(0).normal(size=(3, 4)))
    expected = F.cross_entropy(logits, np.array([0, 3, 1])).item()
    assert F.cross_entropy(logits, ck.tensor(np.array([0, 3, 1]))).item() == expected
    assert F.cross_entropy(logits, torch.tensor([0, 3, 1])).item() == expected


# --------------------------------------------------------------- bad inputs
def test_out_of_range_class_index_is_refused_naming_it():
    with pytest.raises(IndexError, match=r"target 4 is out of bounds: expected class indices in \[0, 4\)"):
        F.cross_entropy(ck.tensor(np.zeros((2, 4))), np.array([1, 4]))


def test_target_shape_mismatch_is_refused_with_expected_and_got():
    with pytest.raises(ShapeError, match=r"expected target of shape \(3,\).*got \(3, 1\)"):
        F.cross_entropy(ck.tensor(np.zeros((3, 4))), np.zeros((3, 1), dtype=np.int64))


def test_float_class_indices_are_refused_by_nll_loss():
    with pytest.raises(TypeError, match="expected integer class indices"):
        F.nll_loss(ck.tensor(np.zeros((2, 3))), np.array([0.0, 1.0]))


def test_mse_loss_refuses_shapes_that_would_broadcast():
    """(N, 1) predictions against (N,) targets: torch warns and broadcasts to (N, N); we refuse."""
    with pytest.raises(ShapeError, match=r"expected target of the input's shape \(4, 1\), got \(4,\)"):
        F.mse_loss(ck.tensor(np.zeros((4, 1))), ck.tensor(np.zeros(4)))


def test_unknown_reduction_is_refused():
    with pytest.raises(ValueError, match="batchmean is not a valid value for reduction"):
        nn.MSELoss(reduction="batchmean")
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.cross_entropy(ck.tensor(np.zeros((1, 2))), np.array([0]), reduction="avg")


def test_bad_label_smoothing_and_weight_shapes_are_refused():
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(ck.tensor(np.zeros((1, 2))), np.array([0]), label_smoothing=1.5)
    with pytest.raises(ShapeError, match=r"expected weight of shape \(2,\), got \(3,\)"):
        F.cross_entropy(ck.tensor(np.zeros((1, 2))), np.array([0]), weight=np.ones(3))
