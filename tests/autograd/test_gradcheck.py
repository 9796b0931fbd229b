"""gradcheck: accepts correct backward, rejects a wrong one with a message naming input and element."""
from __future__ import annotations

import numpy as np
import pytest

import coursekit as ck
from coursekit.autograd import Function, GradcheckError, gradcheck

from .helpers import random_inputs


class SigmoidBackwardFromInput(Function):
    """A classic student bug: sigma'(x) written as x * (1 - x) instead of y * (1 - y)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + np.exp(-x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x * (1 - x)


class WrongSecondInput(Function):
    """Correct for a, wrong (sign) for b only at element (1, 0)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        gb = grad * a
        gb[1, 0] = -gb[1, 0]
        return grad * b, gb


def test_gradcheck_accepts_a_correct_backward():
    assert gradcheck(lambda a, b: (a @ b).tanh(), random_inputs((2, 3), (3, 2)))


def test_gradcheck_rejects_a_wrong_backward():
    with pytest.raises(GradcheckError, match=r"output 0 with respect to input 0"):
        gradcheck(SigmoidBackwardFromInput.apply, random_inputs((3,)))


def test_gradcheck_message_names_the_input_the_element_and_both_values():
    a, b = random_inputs((2, 2), (2, 2))
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSecondInput.apply, (a, b))
    message = str(info.value)
    assert "with respect to input 1" in message
    assert "at input element (1, 0)" in message  # the element that disagrees
    assert "numerical" in message and "analytical" in message
    expected = a.data[1, 0]
    assert f"{expected:.6g}" in message and f"{-expected:.6g}" in message


def test_gradcheck_can_return_false_instead_of_raising():
    assert gradcheck(SigmoidBackwardFromInput.apply, random_inputs((3,)), raise_exception=False) is False


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)


def test_gradcheck_works_in_float64_on_copies_of_float32_inputs():
    x = ck.tensor([0.3, -0.7], requires_grad=True)
    assert gradcheck(lambda t: t.sigmoid() * t, (x,))
    assert x.dtype == np.float32 and x.grad is None


def test_gradcheck_checks_each_output_of_a_tuple():
    assert gradcheck(lambda a: (a.exp(), a * a), random_inputs((3,)))


def test_gradcheck_skips_inputs_that_do_not_require_grad():
    a = random_inputs((3,))[0]
    const = ck.tensor(np.array([1.0, 2.0, 3.0]))
    assert gradcheck(lambda x, c: x * c, (a, const))


def test_gradcheck_without_any_input_requiring_grad_is_refused():
    with pytest.raises(ValueError, match="no input requires grad"):
        gradcheck(lambda x: x * 2, (ck.tensor([1.0]),))
