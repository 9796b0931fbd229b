"""add, sub, mul, div, neg, pow, sqrt: against torch (float64, broadcasting) and gradcheck."""
from __future__ import annotations

import operator

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import coursekit as ck
from coursekit.autograd import ShapeError, gradcheck

from ..helpers import DIFFERENTIAL, arrays, assert_matches_torch, away_from_zero, broadcastable_shapes, floats, random_inputs

BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
}


@pytest.mark.parametrize("name", list(BINARY))
@DIFFERENTIAL
@given(data=st.data(), shapes=broadcastable_shapes(2))
def test_binary_op_with_broadcasting_matches_torch(name, data, shapes):
    op = BINARY[name]
    a = data.draw(arrays(shapes[0]), label="a")
    b = data.draw(arrays(shapes[1], away_from_zero() if name == "div" else None), label="b")
    assert_matches_torch(op, op, [a, b])


@pytest.mark.parametrize("name", list(BINARY))
@DIFFERENTIAL
@given(data=st.data(), shapes=broadcastable_shapes(2), swap=st.booleans())
def test_binary_op_with_one_input_not_requiring_grad_matches_torch(name, data, shapes, swap):
    op = BINARY[name]
    a = data.draw(arrays(shapes[0]), label="a")
    b = data.draw(arrays(shapes[1], away_from_zero() if name == "div" else None), label="b")
    assert_matches_torch(op, op, [a, b], requires_grad=[swap, not swap])


@pytest.mark.parametrize("name", list(BINARY))
@DIFFERENTIAL
@given(data=st.data(), scalar=away_from_zero(0.25, 4.0), scalar_first=st.booleans())
def test_binary_op_with_python_scalar_matches_torch(name, data, scalar, scalar_first):
    op = BINARY[name]
    shape = data.draw(st.sampled_from([(), (3,), (2, 3)]), label="shape")
    x = data.draw(arrays(shape, away_from_zero() if name == "div" and scalar_first else None), label="x")
    if scalar_first:
        assert_matches_torch(lambda t: op(scalar, t), lambda t: op(scalar, t), [x])
    else:
        assert_matches_torch(lambda t: op(t, scalar), lambda t: op(t, scalar), [x])


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_op_accepts_numpy_array_on_either_side(name):
    op = BINARY[name]
    x = ck.tensor([1.0, 2.0, 4.0], requires_grad=True)
    other = np.array([2.0, 4.0, 8.0], dtype=np.float32)
    for out in (op(x, other), op(other, x)):
        assert isinstance(out, ck.Tensor) and out.requires_grad
    np.testing.assert_allclose(op(other, x).data, op(other, x.data))


@DIFFERENTIAL
@given(x=arrays(st.sampled_from([(), (4,), (2, 3), (2, 1, 3)])))
def test_neg_matches_torch(x):
    assert_matches_torch(lambda t: -t, lambda t: -t, [x])


@DIFFERENTIAL
@given(data=st.data(), exponent=st.sampled_from([0, 1, 2, 3, -1, -2, 0.5, 1.5, -0.5, 2.5]))
def test_pow_with_scalar_exponent_matches_torch(data, exponent):
    shape = data.draw(st.sampled_from([(), (4,), (2, 3)]), label="shape")
    integral = float(exponent).is_integer()
    # Fractional powers need a positive base, negative ones a base away from 0.
    elements = floats(0.3, 3.0) if not integral else (away_from_zero(0.3) if exponent < 0 else floats())
    x = data.draw(arrays(shape, elements), label="x")
    assert_matches_torch(lambda t: t ** exponent, lambda t: t ** exponent, [x])
    assert_matches_torch(lambda t: t.pow(exponent), lambda t: t.pow(exponent), [x])


@DIFFERENTIAL
@given(x=arrays(st.sampled_from([(), (4,), (2, 3)]), floats(0.1, 5.0)))
def test_sqrt_matches_torch(x):
    assert_matches_torch(lambda t: t.sqrt(), torch.sqrt, [x])
    assert_matches_torch(ck.sqrt, torch.sqrt, [x])


@DIFFERENTIAL
@given(x=arrays(st.sampled_from([(), (4,), (2, 3)])), base=floats(0.5, 4.0))
def test_scalar_to_the_power_of_tensor_matches_torch(x, base):
    assert_matches_torch(lambda t: base ** t, lambda t: base ** t, [x])


@DIFFERENTIAL
@given(a=arrays((2, 3), floats(0.3, 3.0)), b=arrays((3,)))
def test_tensor_to_the_power_of_tensor_matches_torch(a, b):
    assert_matches_torch(lambda x, y: x ** y, lambda x, y: x ** y, [a, b])


GRADCHECK_CASES = {
    "add": (lambda a, b: a + b, [(2, 3), (3,)], False),
    "sub": (lambda a, b: a - b, [(2, 1), (1, 3)], False),
    "rsub": (lambda a: 1.5 - a, [(2, 3)], False),
    "mul": (lambda a, b: a * b, [(2, 3), (2, 1)], False),
    "div": (lambda a, b: a / b, [(2, 3), (3,)], True),
    "rdiv": (lambda a: 2.0 / a, [(2, 3)], True),
    "neg": (lambda a: -a, [(4,)], False),
    "pow": (lambda a: a ** 3, [(2, 3)], False),
    "pow_fractional": (lambda a: a ** 1.5, [(2, 3)], True),
    "pow_tensor": (lambda a, b: a ** b, [(2, 3), (3,)], True),
    "rpow": (lambda a: 2.0 ** a, [(3,)], False),
    "sqrt": (lambda a: a.sqrt(), [(2, 3)], True),
}


@pytest.mark.parametrize("name", list(GRADCHECK_CASES))
def test_gradcheck_passes(name):
    fn, input_shapes, positive = GRADCHECK_CASES[name]
    assert gradcheck(fn, random_inputs(*input_shapes, positive=positive))


def test_add_of_shapes_that_do_not_broadcast_raises_shape_error_naming_both():
    with pytest.raises(ShapeError, match=r"add: shapes \(2, 3\) and \(4,\) do not broadcast"):
        ck.tensor(np.zeros((2, 3))) + ck.tensor(np.zeros(4))


def test_div_of_shapes_that_do_not_broadcast_names_div_not_mul():
    with pytest.raises(ShapeError, match=r"div: shapes \(2,\) and \(3,\)"):
        ck.tensor([1.0, 2.0]) / ck.tensor([1.0, 2.0, 3.0])


def test_mul_of_shapes_that_do_not_broadcast_raises_shape_error_naming_both():
    with pytest.raises(ShapeError, match=r"mul: shapes \(3,\) and \(2,\)"):
        ck.tensor([1.0, 2.0, 3.0], requires_grad=True) * np.ones(2)


@pytest.mark.parametrize("name", list(BINARY))
def test_float32_tensor_with_python_scalar_stays_float32(name):
    x = ck.tensor([1.0, 2.0])
    assert BINARY[name](x, 3.0).dtype == np.float32
    assert BINARY[name](3.0, x).dtype == np.float32
    assert (x ** 2).dtype == np.float32
    assert (2.0 ** x).dtype == np.float32


def test_float32_tensor_with_numpy_scalar_stays_float32_like_torch():
    x = ck.tensor([1.0, 2.0])
    assert (x * np.sqrt(2.0)).dtype == np.float32
    assert (np.float64(1.0) - x).dtype == np.float32


def test_float32_and_float64_tensors_promote_to_float64_as_in_torch():
    assert (ck.tensor([1.0]) + ck.tensor(np.array([1.0]))).dtype == np.float64
