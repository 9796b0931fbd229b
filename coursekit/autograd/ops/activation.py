"""Activation functions: relu, sigmoid, tanh, softmax, log_softmax.

sigmoid, softmax and log_softmax have their own backward, written from the output: they are
cheaper that way, and the forward formulas are arranged so no ``exp`` can overflow.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Context, Function
from ..tensor import Tensor


class ReLU(Function):
    """$f(x) = \\max(x, 0)$, with $f'(0) = 0$ as in torch"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        mask = x > 0
        ctx.save_for_backward(mask)
        return x * mask  # keeps the dtype; np.maximum(x, 0) would too, but is slower here

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        (mask,) = ctx.saved_tensors
        return grad * mask


def relu(x: Any) -> Tensor:
    """$\\max(x, 0)$"""
    return ReLU.apply(x)


class Sigmoid(Function):
    """$\\sigma(x) = 1 / (1 + e^{-x})$, $\\sigma'(x) = \\sigma(x)(1 - \\sigma(x))$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        # NOTE [stable sigmoid]: 1 / (1 + exp(-x)) overflows for x << 0. With e = exp(-|x|),
        # which is in (0, 1], sigma(x) is 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0.
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1, e) / (1 + e)
        y = y.astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


def sigmoid(x: Any) -> Tensor:
    """$1 / (1 + e^{-x})$"""
    return Sigmoid.apply(x)


class Tanh(Function):
    """$f(x) = \\tanh x$, $f'(x) = 1 - \\tanh^2 x$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


def tanh(x: Any) -> Tensor:
    """$\\tanh x$"""
    return Tanh.apply(x)


class Softmax(Function):
    """$y_i = e^{x_i} / \\sum_j e^{x_j}$ along ``axis``"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, axis: int = -1) -> np.ndarray:
        e = np.exp(x - x.max(axis=axis, keepdims=True))  # shift: every exponent <= 0
        y = e / e.sum(axis=axis, keepdims=True)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        # dx_i = y_i (g_i - sum_j g_j y_j): the Jacobian diag(y) - y y^T applied to g.
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(axis=ctx.axis, keepdims=True)), None


def softmax(x: Any, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """$e^{x_i} / \\sum_j e^{x_j}$ along ``axis`` (or torch's ``dim``)"""
    return Softmax.apply(x, axis if dim is None else dim)


class LogSoftmax(Function):
    """$y_i = x_i - \\log \\sum_j e^{x_j}$ along ``axis``"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, axis: int = -1) -> np.ndarray:
        shifted = x - x.max(axis=axis, keepdims=True)
        y = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        # dx_i = g_i - softmax(x)_i * sum_j g_j, and softmax(x) = exp(y).
        (y,) = ctx.saved_tensors
        return grad - np.exp(y) * grad.sum(axis=ctx.axis, keepdims=True), None


def log_softmax(x: Any, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """$x_i - \\log \\sum_j e^{x_j}$ along ``axis`` (or torch's ``dim``)"""
    return LogSoftmax.apply(x, axis if dim is None else dim)
