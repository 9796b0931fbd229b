"""Arithmetic: the primitives add, sub, mul, neg, pow, and div, sqrt built from them.

Either operand may be a Tensor, a NumPy array or a Python scalar; NumPy broadcasting applies,
and backward sums each gradient back to its input's shape with ``unbroadcast``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..broadcast import unbroadcast
from ..errors import ShapeError
from ..function import Context, Function
from ..tensor import Tensor


def _broadcast_error(op: str, a: Any, b: Any) -> ShapeError:
    return ShapeError(f"{op}: shapes {np.shape(a)} and {np.shape(b)} do not broadcast "
                      f"(trailing sizes must be equal or 1)")


class Add(Function):
    """$f(a, b) = a + b$"""

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> np.ndarray:
        try:
            out = a + b
        except ValueError:
            raise _broadcast_error("add", a, b) from None
        ctx.shapes = (np.shape(a), np.shape(b))
        return out

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[Any, Any]:
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(grad, a_shape) if need_a else None,
                unbroadcast(grad, b_shape) if need_b else None)


def add(a: Any, b: Any) -> Tensor:
    """$a + b$, with broadcasting."""
    return Add.apply(a, b)


class Sub(Function):
    """$f(a, b) = a - b$

    Not built as ``a + (-b)``: a loss computes ``prediction - target`` every step, and one
    node instead of two is measurably cheaper (see tests/benchmarks/bench_two_layer.py).
    """

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> np.ndarray:
        try:
            out = a - b
        except ValueError:
            raise _broadcast_error("sub", a, b) from None
        ctx.shapes = (np.shape(a), np.shape(b))
        return out

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[Any, Any]:
        a_shape, b_shape = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(grad, a_shape) if need_a else None,
                unbroadcast(-grad, b_shape) if need_b else None)


def sub(a: Any, b: Any) -> Tensor:
    """$a - b$, with broadcasting."""
    return Sub.apply(a, b)


class Mul(Function):
    """$f(a, b) = a b$"""

    @staticmethod
    def forward(ctx: Context, a: Any, b: Any) -> np.ndarray:
        try:
            out = a * b
        except ValueError:
            raise _broadcast_error("mul", a, b) from None
        ctx.save_for_backward(a, b)
        return out

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[Any, Any]:
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(grad * b, a.shape) if need_a else None,
                unbroadcast(grad * a, b.shape) if need_b else None)


def mul(a: Any, b: Any) -> Tensor:
    """$a \\cdot b$, element-wise, with broadcasting."""
    return Mul.apply(a, b)


class Neg(Function):
    """$f(x) = -x$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        return -x

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        return -grad


def neg(x: Any) -> Tensor:
    """$-x$"""
    return Neg.apply(x)


class Pow(Function):
    """$f(x) = x^p$ for a constant exponent $p$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, p: float) -> np.ndarray:
        ctx.save_for_backward(x)
        ctx.p = p
        return x ** p

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[Any, None]:
        (x,) = ctx.saved_tensors
        p = ctx.p
        if p == 2:  # the common case (squared errors) without a second power
            return (2 * x) * grad, None
        if p == 0:  # x^0 = 1 is constant; p * x^(p-1) would give 0 * inf = nan at x = 0
            return np.zeros_like(grad), None
        return (p * x ** (p - 1)) * grad, None


def pow(x: Any, exponent: Any) -> Tensor:
    """$x^p$. A Tensor exponent is taken as $e^{p \\log x}$ (positive $x$ only)."""
    if isinstance(exponent, Tensor):
        from .pointwise import exp, log
        return exp(mul(log(x), exponent))
    return Pow.apply(x, exponent)


def rpow(base: Any, x: Any) -> Tensor:
    """$b^x = e^{x \\log b}$ for a constant base $b > 0$."""
    from .pointwise import exp
    return exp(mul(x, math.log(base)))


def div(a: Any, b: Any) -> Tensor:
    """$a / b = a \\cdot b^{-1}$"""
    try:
        if isinstance(b, Tensor):
            return Mul.apply(a, Pow.apply(b, -1))
        return Mul.apply(a, 1 / b)
    except ShapeError:  # the error should name the op the user called, not mul
        raise _broadcast_error("div", a, b) from None


def sqrt(x: Any) -> Tensor:
    """$\\sqrt{x} = x^{1/2}$"""
    return Pow.apply(x, 0.5)
