"""reshape/view, transpose/permute/.T, broadcast_to, indexing, cat, stack, squeeze/unsqueeze/flatten."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import coursekit as ck
from coursekit.autograd import ShapeError, gradcheck

from ..helpers import DIFFERENTIAL, arrays, assert_matches_torch, random_inputs, shapes


@DIFFERENTIAL
@given(data=st.data(), shape=shapes())
def test_reshape_and_view_match_torch(data, shape):
    x = data.draw(arrays(shape), label="x")
    size = int(np.prod(shape))
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    first = data.draw(st.sampled_from(divisors), label="first")
    assert_matches_torch(lambda t: t.reshape(first, -1), lambda t: t.reshape(first, -1), [x])
    assert_matches_torch(lambda t: t.view((size,)), lambda t: t.reshape((size,)), [x])


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(min_dims=1))
def test_permute_transpose_and_T_match_torch(data, shape):
    x = data.draw(arrays(shape), label="x")
    perm = tuple(data.draw(st.permutations(range(len(shape))), label="perm"))
    d0 = data.draw(st.integers(-len(shape), len(shape) - 1), label="d0")
    d1 = data.draw(st.integers(-len(shape), len(shape) - 1), label="d1")
    assert_matches_torch(lambda t: t.permute(*perm), lambda t: t.permute(*perm), [x])
    assert_matches_torch(lambda t: t.transpose(d0, d1), lambda t: t.transpose(d0, d1), [x])
    assert_matches_torch(lambda t: t.T, lambda t: t.permute(*reversed(range(t.ndim))), [x])


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(max_dims=3))
def test_broadcast_to_matches_torch_expand(data, shape):
    x = data.draw(arrays(shape), label="x")
    target = tuple(data.draw(st.sampled_from([n, 3]) if n == 1 else st.just(n)) for n in shape)
    target = (2,) + target
    assert_matches_torch(lambda t: t.expand(*target), lambda t: t.expand(*target), [x])


@st.composite
def basic_index(draw, shape):
    """A tuple of ints, slices (positive steps: torch has no negative ones), Ellipsis and None."""
    parts = []
    for n in shape[: draw(st.integers(0, len(shape)))]:
        if draw(st.booleans()):
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            start = draw(st.none() | st.integers(-n, n))
            stop = draw(st.none() | st.integers(-n, n))
            step = draw(st.none() | st.integers(1, 2))
            parts.append(slice(start, stop, step))
    if draw(st.booleans()):
        parts.append(Ellipsis)  # x[i, j, ...]: the remaining dimensions whole
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return tuple(parts)


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3))
def test_basic_indexing_matches_torch(data, shape):
    x = data.draw(arrays(shape), label="x")
    index = data.draw(basic_index(shape), label="index")
    assert_matches_torch(lambda t: t[index], lambda t: t[index], [x])


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3))
def test_integer_array_indexing_with_repeats_matches_torch(data, shape):
    x = data.draw(arrays(shape), label="x")
    rows = data.draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=6), label="rows")
    assert_matches_torch(lambda t: t[rows], lambda t: t[rows], [x])
    if len(shape) >= 2:
        cols = data.draw(st.lists(st.integers(0, shape[1] - 1), min_size=len(rows), max_size=len(rows)), label="cols")
        r, c = np.array(rows), np.array(cols)
        assert_matches_torch(lambda t: t[r, c], lambda t: t[torch.from_numpy(r), torch.from_numpy(c)], [x])
        assert_matches_torch(lambda t: t[:, c], lambda t: t[:, torch.from_numpy(c)], [x])


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3))
def test_boolean_mask_indexing_matches_torch(data, shape):
    x = data.draw(arrays(shape), label="x")
    mask = data.draw(arrays(shape, st.booleans()).map(lambda a: a.astype(bool)), label="mask")
    assert_matches_torch(lambda t: t[mask], lambda t: t[torch.from_numpy(mask)], [x])


def test_integer_array_indexing_with_repeated_indices_scatter_adds_the_gradient():
    x = ck.tensor([10.0, 20.0, 30.0], requires_grad=True)
    y = x[[0, 0, 2, 0]]
    y.backward(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(x.grad.data, [7.0, 0.0, 3.0])


def test_indexing_with_a_coursekit_integer_tensor():
    x = ck.tensor([1.0, 2.0, 3.0], requires_grad=True)
    idx = ck.tensor([2, 2])
    x[idx].sum().backward()
    np.testing.assert_allclose(x.grad.data, [0.0, 0.0, 2.0])


@DIFFERENTIAL
@given(data=st.data(), base=shapes(min_dims=1, max_dims=3), count=st.integers(1, 3))
def test_cat_matches_torch(data, base, count):
    axis = data.draw(st.integers(-len(base), len(base) - 1), label="axis")
    pieces = []
    for i in range(count):
        shape = list(base)
        shape[axis] = data.draw(st.integers(1, 3), label=f"size{i}")
        pieces.append(data.draw(arrays(tuple(shape)), label=f"x{i}"))
    assert_matches_torch(lambda *ts: ck.cat(ts, dim=axis), lambda *ts: torch.cat(ts, dim=axis), pieces)
    assert_matches_torch(lambda *ts: ck.cat(list(ts), axis=axis), lambda *ts: torch.cat(ts, dim=axis), pieces)


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(max_dims=3), count=st.integers(1, 3))
def test_stack_matches_torch(data, shape, count):
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)), label="dim")
    pieces = [data.draw(arrays(shape), label=f"x{i}") for i in range(count)]
    assert_matches_torch(lambda *ts: ck.stack(ts, dim=dim), lambda *ts: torch.stack(ts, dim=dim), pieces)


def test_cat_with_one_input_not_requiring_grad_gives_gradient_to_the_other():
    a = ck.tensor([1.0, 2.0], requires_grad=True)
    b = np.array([3.0])
    y = ck.cat([a, b])
    y.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(a.grad.data, [1.0, 2.0])


@DIFFERENTIAL
@given(data=st.data(), shape=shapes(max_dims=4, max_side=3))
def test_squeeze_unsqueeze_flatten_match_torch(data, shape):
    x = data.draw(arrays(shape), label="x")
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)), label="dim")
    assert_matches_torch(lambda t: t.unsqueeze(dim), lambda t: t.unsqueeze(dim), [x])
    assert_matches_torch(lambda t: t.squeeze(), lambda t: t.squeeze(), [x])
    if shape:
        d = data.draw(st.integers(-len(shape), len(shape) - 1), label="d")
        assert_matches_torch(lambda t: t.squeeze(d), lambda t: t.squeeze(d), [x])
        start = data.draw(st.integers(0, len(shape) - 1), label="start")
        assert_matches_torch(lambda t: t.flatten(start), lambda t: t.flatten(start), [x])


GRADCHECK_CASES = {
    "reshape": (lambda a: a.reshape(3, 2), [(2, 3)]),
    "T": (lambda a: a.T, [(2, 3)]),
    "permute": (lambda a: a.permute(2, 0, 1), [(2, 3, 2)]),
    "transpose": (lambda a: a.transpose(0, 2), [(2, 3, 2)]),
    "expand": (lambda a: a.expand(2, 3, 4), [(3, 1)]),
    "getitem_basic": (lambda a: a[1:, ::2], [(3, 4)]),
    "getitem_int_array": (lambda a: a[[0, 2, 0]], [(3, 2)]),
    "getitem_mixed": (lambda a: a[np.array([1, 1]), 1:], [(3, 3)]),
    "cat": (lambda a, b: ck.cat([a, b], dim=1), [(2, 3), (2, 1)]),
    "stack": (lambda a, b: ck.stack([a, b], dim=1), [(2, 3), (2, 3)]),
    "unsqueeze_squeeze": (lambda a: a.unsqueeze(0).squeeze(0), [(2, 3)]),
    "flatten": (lambda a: a.flatten(), [(2, 3)]),
}


@pytest.mark.parametrize("name", list(GRADCHECK_CASES))
def test_gradcheck_passes(name):
    fn, input_shapes = GRADCHECK_CASES[name]
    assert gradcheck(fn, random_inputs(*input_shapes))


def test_reshape_to_a_wrong_size_raises_shape_error_with_both_shapes():
    with pytest.raises(ShapeError, match=r"reshape: cannot reshape \(2, 3\) \(6 elements\) into \(4,\)"):
        ck.tensor(np.zeros((2, 3))).reshape(4)


def test_cat_of_mismatched_shapes_raises_shape_error_listing_all_shapes():
    with pytest.raises(ShapeError, match=r"cat: shapes \(2, 3\), \(3, 3\)"):
        ck.cat([ck.tensor(np.zeros((2, 3))), ck.tensor(np.zeros((3, 3)))], dim=1)


def test_stack_of_different_shapes_raises_shape_error():
    with pytest.raises(ShapeError, match=r"stack: all tensors must have the same shape, got \(2,\), \(3,\)"):
        ck.stack([ck.tensor([1.0, 2.0]), ck.tensor([1.0, 2.0, 3.0])])


def test_permute_with_wrong_dims_raises_shape_error():
    with pytest.raises(ShapeError, match="not a permutation"):
        ck.tensor(np.zeros((2, 3))).permute(0, 0)


def test_expand_to_an_incompatible_shape_raises_shape_error():
    with pytest.raises(ShapeError, match=r"broadcast_to: cannot broadcast \(3,\) to \(2, 4\)"):
        ck.tensor([1.0, 2.0, 3.0]).expand(2, 4)
