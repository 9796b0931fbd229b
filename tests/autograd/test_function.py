"""Function and its context: the API students write custom ops with, and the checks on backward."""
from __future__ import annotations

import numpy as np
import pytest

import coursekit as ck
from coursekit.autograd import AccumulateGrad, BackwardError, Function, gradcheck

from .helpers import random_inputs


class MySigmoid(Function):
    """The lab's custom op: backward from the saved output."""

    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + np.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


class ScaleBy(Function):
    """An op with a non-Tensor argument and a plain ctx attribute."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def test_custom_function_computes_value_and_gradient():
    x = ck.tensor(np.array([-1.0, 0.0, 2.0]), requires_grad=True)
    y = MySigmoid.apply(x)
    assert y.grad_fn.name() == "MySigmoidBackward"
    y.sum().backward()
    s = 1 / (1 + np.exp(-x.data))
    np.testing.assert_allclose(x.grad.data, s * (1 - s))
    assert gradcheck(MySigmoid.apply, random_inputs((3,)))


def test_non_tensor_arguments_pass_through_and_get_no_edge():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = ScaleBy.apply(x, 3.0)
    assert y.grad_fn.needs_input_grad == (True, False)
    assert len(y.grad_fn.next_functions) == 1  # like torch: edges only for Tensor inputs
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, [3.0, 3.0])


def test_needs_input_grad_reports_which_inputs_need_a_gradient():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    a = ck.tensor([1.0], requires_grad=True)
    b = ck.tensor([2.0])
    Probe.apply(a, b).backward()
    assert seen["needs"] == (True, False)
    assert b.grad is None


def test_backward_returning_the_wrong_number_of_gradients_is_refused_naming_the_function():
    class TwoInputsOneGrad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad

    y = TwoInputsOneGrad.apply(ck.tensor([1.0], requires_grad=True), ck.tensor([2.0], requires_grad=True))
    with pytest.raises(BackwardError, match=r"TwoInputsOneGrad\.backward returned 1 gradient\(s\), expected 2"):
        y.backward()


def test_backward_returning_a_gradient_of_the_wrong_shape_is_refused_naming_function_and_input():
    class ForgetsToUnbroadcast(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad  # b was broadcast: its gradient must be summed back to (3,)

    a = ck.tensor(np.zeros((2, 3)), requires_grad=True)
    b = ck.tensor(np.zeros(3), requires_grad=True)
    with pytest.raises(BackwardError) as info:
        ForgetsToUnbroadcast.apply(a, b).sum().backward()
    message = str(info.value)
    assert "ForgetsToUnbroadcast.backward" in message
    assert "for input 1" in message and "(2, 3)" in message and "expected (3,)" in message


def test_backward_error_is_a_runtime_error():
    assert issubclass(BackwardError, RuntimeError)


def test_backward_may_return_tensors_lists_and_none():
    class Loose(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return [ck.tensor(grad * 2), None]

    a = ck.tensor(np.ones(2), requires_grad=True)
    b = ck.tensor(np.ones(2), requires_grad=True)
    Loose.apply(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.data, [2.0, 2.0])
    assert b.grad is None


def test_saved_tensors_are_freed_after_backward_and_reading_them_raises():
    x = ck.tensor([1.0], requires_grad=True)
    y = MySigmoid.apply(x)
    node = y.grad_fn
    assert len(node.saved_tensors) == 1
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        node.saved_tensors


def test_grad_fn_next_functions_mirror_torch_structure():
    a = ck.tensor([1.0, 2.0], requires_grad=True)
    b = ck.tensor([3.0, 4.0], requires_grad=True)
    c = ck.tensor([5.0, 6.0])  # does not require grad
    d = a * b
    e = d + c
    assert a.grad_fn is None and a.is_leaf and not d.is_leaf
    assert e.grad_fn.name() == "AddBackward"
    (first, i0), (second, i1) = e.grad_fn.next_functions
    assert first is d.grad_fn and i0 == 0
    assert second is None and i1 == 0
    (acc_a, _), (acc_b, _) = d.grad_fn.next_functions
    assert isinstance(acc_a, AccumulateGrad) and acc_a.variable is a
    assert isinstance(acc_b, AccumulateGrad) and acc_b.variable is b
    assert acc_a.next_functions == ()
    # The same leaf used twice reaches the same AccumulateGrad node, as in torch.
    f = a * a
    assert f.grad_fn.next_functions[0][0] is f.grad_fn.next_functions[1][0]


def test_apply_without_any_input_requiring_grad_records_nothing():
    y = MySigmoid.apply(ck.tensor([0.0]))
    assert y.grad_fn is None and not y.requires_grad


def test_forward_may_return_a_tensor_or_a_numpy_scalar():
    class SumAll(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.sum()  # a NumPy scalar, not an array

        @staticmethod
        def backward(ctx, grad):
            return np.full(ctx.shape, grad)

    x = ck.tensor(np.ones((2, 2)), requires_grad=True)
    y = SumAll.apply(x)
    assert isinstance(y.data, np.ndarray) and y.shape == ()
    y.backward()
    np.testing.assert_allclose(x.grad.data, np.ones((2, 2)))
