"""dtype conversion and clone stay in the graph."""
from __future__ import annotations

import numpy as np

import coursekit as ck
from coursekit.autograd import gradcheck

from ..helpers import random_inputs


def test_float_and_double_convert_and_send_the_gradient_back_in_the_input_dtype():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.dtype == np.float64 and y.grad_fn is not None
    (y * 3).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.data, [3.0, 3.0])


def test_to_the_same_dtype_returns_the_tensor_itself():
    x = ck.tensor([1.0])
    assert x.to(ck.float32) is x
    assert x.float() is x


def test_clone_copies_data_and_passes_the_gradient_through():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    y.data[0] = 5.0
    assert x.data[0] == 1.0
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.data, [10.0, 4.0])


def test_gradcheck_passes_for_clone_and_cast():
    assert gradcheck(lambda a: a.clone() * 2, random_inputs((2, 3)))
    assert gradcheck(lambda a: a.to(np.float64), random_inputs((2, 3)))
