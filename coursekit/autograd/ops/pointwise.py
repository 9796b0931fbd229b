"""Element-wise functions of one tensor: exp, log, abs, clamp."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Context, Function
from ..tensor import Tensor


class Exp(Function):
    """$f(x) = e^x$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        y = np.exp(x)
        ctx.save_for_backward(y)  # f'(x) = e^x = y: keep the output, not the input
        return y

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        (y,) = ctx.saved_tensors
        return grad * y


def exp(x: Any) -> Tensor:
    """$e^x$"""
    return Exp.apply(x)


class Log(Function):
    """$f(x) = \\ln x$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.log(x)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        (x,) = ctx.saved_tensors
        return grad / x


def log(x: Any) -> Tensor:
    """$\\ln x$"""
    return Log.apply(x)


class Abs(Function):
    """$f(x) = |x|$, with $f'(0) = 0$ as in torch"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        ctx.save_for_backward(x)
        return np.abs(x)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        (x,) = ctx.saved_tensors
        return grad * np.sign(x)


def abs(x: Any) -> Tensor:
    """$|x|$"""
    return Abs.apply(x)


class Clamp(Function):
    """$f(x) = \\min(\\max(x, lo), hi)$; gradient 1 where $lo \\le x \\le hi$ (bounds included, as torch)"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
        if lo is None and hi is None:
            raise ValueError("clamp: at least one of min and max must be given")
        # The mask is computed now: after clamping, x itself is no longer needed.
        mask = np.ones(x.shape, dtype=bool)
        if lo is not None:
            mask &= x >= lo
        if hi is not None:
            mask &= x <= hi
        ctx.save_for_backward(mask)
        out = x
        if lo is not None:
            out = np.maximum(out, lo)
        if hi is not None:
            out = np.minimum(out, hi)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[Any, None, None]:
        (mask,) = ctx.saved_tensors
        return grad * mask, None, None


def clamp(x: Any, min: float | None = None, max: float | None = None) -> Tensor:
    """$\\min(\\max(x, \\text{min}), \\text{max})$; either bound may be omitted."""
    return Clamp.apply(x, min, max)
