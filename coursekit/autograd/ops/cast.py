"""Copies: dtype conversion and clone. Differentiable, so the graph is not cut."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Context, Function
from ..tensor import Tensor


class ToDtype(Function):
    """$y = x$ stored with another dtype; the gradient goes back in the input's dtype"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, dtype: Any) -> np.ndarray:
        ctx.in_dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        return grad.astype(ctx.in_dtype, copy=False), None


def to_dtype(x: Any, dtype: Any) -> Tensor:
    """$x$ as ``dtype``; returns ``x`` itself when it already has that dtype (as torch's ``to``)"""
    if isinstance(x, Tensor) and x.dtype == np.dtype(dtype):
        return x
    return ToDtype.apply(x, np.dtype(dtype))


class Clone(Function):
    """$y = x$, a copy"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        return x.copy()

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> np.ndarray:
        return grad


def clone(x: Any) -> Tensor:
    """A copy of $x$ that stays in the graph"""
    return Clone.apply(x)
