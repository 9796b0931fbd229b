"""Tensor: construction and dtypes, metadata, conversion, printing, operators with NumPy and scalars."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit.autograd import Tensor


@pytest.mark.parametrize(
    "data, expected",
    [
        (1.5, np.float32),
        ([1.0, 2.0], np.float32),
        ([[1, 2], [3, 4]], np.int64),
        (3, np.int64),
        ([True, False], np.bool_),
        (np.array([1.0, 2.0]), np.float64),
        (np.array([1.0], dtype=np.float32), np.float32),
        (np.array([1, 2], dtype=np.int32), np.int32),
        (np.float64(2.0), np.float64),
    ],
)
def test_tensor_infers_dtype_like_torch(data, expected):
    assert ck.tensor(data).dtype == expected
    assert ck.tensor(data).dtype == torch.tensor(data).numpy().dtype


def test_explicit_dtype_wins():
    assert ck.tensor([1, 2], dtype=ck.float64).dtype == np.float64
    assert ck.tensor(np.ones(2), dtype=np.float32).dtype == np.float32


def test_tensor_factory_copies_its_input_like_torch_tensor():
    array = np.zeros(3)
    t = ck.tensor(array)
    array[0] = 1.0
    assert t.data[0] == 0.0
    u = ck.tensor(t)
    t.data[1] = 5.0
    assert u.data[1] == 0.0


def test_only_floating_tensors_can_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        ck.tensor([1, 2], requires_grad=True)


def test_metadata_mirrors_torch():
    x = ck.tensor(np.zeros((2, 3, 4), dtype=np.float32))
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.dim() == 3
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.numel() == 24
    assert len(x) == 2 and x.dtype == ck.float32
    assert x.T.shape == (4, 3, 2)


def test_data_is_assignable_and_in_place_updates_keep_the_array():
    w = ck.tensor([1.0, 2.0], requires_grad=True)
    array = w.data
    w.data -= 0.5 * np.ones(2, dtype=np.float32)
    assert w.data is array
    np.testing.assert_allclose(w.data, [0.5, 1.5])
    w.data = np.zeros(2, dtype=np.float32)
    assert isinstance(w.data, np.ndarray) and w.requires_grad
    w.data = ck.tensor([3.0, 4.0])  # a Tensor is unwrapped to its array
    assert isinstance(w.data, np.ndarray)


def test_item_numpy_and_tolist():
    assert ck.tensor([[2.5]]).item() == 2.5
    with pytest.raises(ValueError, match="one-element"):
        ck.tensor([1.0, 2.0]).item()
    x = ck.tensor([1.0, 2.0])
    assert x.numpy() is x.data
    assert x.tolist() == [1.0, 2.0]
    assert float(ck.tensor(2.0)) == 2.0


def test_numpy_of_a_tensor_that_requires_grad_asks_for_detach():
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        ck.tensor([1.0], requires_grad=True).numpy()


def test_np_asarray_of_a_tensor_gives_its_values():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


def test_numpy_array_on_the_left_defers_to_the_tensor():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    for out in (np.ones(2) + x, np.ones(2) * x, np.ones(2) - x, np.ones(2) / x, np.ones((2, 2)) @ x):
        assert isinstance(out, Tensor) and out.requires_grad


def test_repr_looks_like_torch():
    assert repr(ck.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(ck.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"
    assert repr(ck.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ck.tensor(np.array([1.5]))) == "tensor([1.5], dtype=float64)"
    x = ck.tensor([1.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2.], grad_fn=<MulBackward>)"
    assert repr(ck.tensor([[1.0, 2.0], [3.0, 4.0]])) == "tensor([[1., 2.],\n        [3., 4.]])"


def test_comparisons_are_elementwise_and_tensors_stay_hashable():
    x = ck.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal((x > 1.5).data, [False, True, True])
    np.testing.assert_array_equal((x == ck.tensor([1.0, 0.0, 3.0])).data, [True, False, True])
    assert len({x, ck.tensor([1.0, 2.0, 3.0])}) == 2
    assert (x > 1.5).requires_grad is False


def test_iterating_gives_rows():
    rows = list(ck.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert len(rows) == 2 and rows[1].tolist() == [3.0, 4.0]


def test_argmax_returns_int64_indices():
    idx = ck.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 1.0]]).argmax(dim=1)
    assert idx.dtype == np.int64 and idx.tolist() == [1, 0]


def test_pickle_and_deepcopy_keep_values_and_requires_grad_but_not_the_graph():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    for clone in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert clone.requires_grad and clone.tolist() == [1.0, 2.0]
        assert clone.data is not x.data
    restored = pickle.loads(pickle.dumps(y))
    assert restored.grad_fn is None and restored.tolist() == [2.0, 4.0]


def test_zero_fills_in_place():
    x = ck.tensor([1.0, 2.0])
    assert x.zero_() is x and x.tolist() == [0.0, 0.0]


def test_factories_follow_torch_defaults():
    assert ck.zeros(2, 3).shape == (2, 3) and ck.zeros(2, 3).dtype == np.float32
    assert ck.ones((4,), dtype=ck.float64).dtype == np.float64
    assert ck.zeros_like(ck.tensor([[1, 2]])).dtype == np.int64
    assert ck.arange(3).tolist() == [0, 1, 2] and ck.arange(3).dtype == np.int64
    assert ck.ones(2, requires_grad=True).requires_grad


def test_item_assignment_changes_values_outside_the_graph():
    x = ck.tensor([1.0, 2.0, 3.0])
    x[x > 1.5] = 0.0
    x[0] = ck.tensor(7.0)
    assert x.tolist() == [7.0, 0.0, 0.0]


def test_item_assignment_on_a_tensor_that_requires_grad_is_refused_unless_no_grad():
    w = ck.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w[0] = 5.0
    with ck.no_grad():
        w[0] = 5.0
    assert w.tolist() == [5.0, 2.0]
