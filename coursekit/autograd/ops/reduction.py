"""Reductions: sum, mean and max (primitives), min (built from max).

Each accepts NumPy's ``axis``/``keepdims`` and PyTorch's ``dim``/``keepdim``; ``axis`` may be
an int, a tuple of ints, or ``None`` for all axes.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..function import Context, Function
from ..tensor import Tensor
from .arithmetic import Neg


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` as a tuple of non-negative ints; ``None`` means every axis."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, list):
        axis = tuple(axis)
    return normalize_axis_tuple(axis, ndim)


def _resolve(axis: Any, keepdims: bool, dim: Any, keepdim: bool | None) -> tuple[Any, bool]:
    """Merge PyTorch's spelling (dim, keepdim) into NumPy's (axis, keepdims)."""
    if dim is not None:
        if axis is not None:
            raise TypeError("give axis or dim, not both")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    return (tuple(axis) if isinstance(axis, list) else axis), bool(keepdims)


class Sum(Function):
    """$f(x) = \\sum_i x_i$ over ``axis``"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        ctx.in_shape = x.shape
        ctx.axis = axis
        ctx.keepdims = keepdims
        return np.asarray(x.sum(axis=axis, keepdims=keepdims))

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None, None]:
        # Every summed element gets the upstream gradient of its sum: put the reduced axes
        # back (size 1) and broadcast. broadcast_to makes a read-only view, not a copy.
        if not ctx.keepdims and ctx.axis is not None:
            grad = np.expand_dims(grad, _axes(ctx.axis, len(ctx.in_shape)))
        return np.broadcast_to(grad, ctx.in_shape), None, None


def sum(x: Any, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
    """$\\sum x$ over ``axis`` (all axes by default)"""
    axis, keepdims = _resolve(axis, keepdims, dim, keepdim)
    return Sum.apply(x, axis, keepdims)


class Mean(Function):
    """$f(x) = \\frac{1}{n} \\sum_i x_i$ over ``axis`` ($n$ elements per output): Sum, scaled"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        total = Sum.forward(ctx, x, axis, keepdims)
        n = x.size // total.size if total.size else 0  # elements behind each output
        # A Python float keeps float32 float32; the mean of nothing is NaN, as in torch.
        ctx.scale = 1 / n if n else float("nan")
        return np.asarray(total * ctx.scale)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None, None]:
        # Each of the n averaged elements gets 1/n of its mean's gradient.
        return Sum.backward(ctx, grad * ctx.scale)


def mean(x: Any, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
    """$\\frac{1}{n} \\sum x$ over ``axis``"""
    axis, keepdims = _resolve(axis, keepdims, dim, keepdim)
    return Mean.apply(x, axis, keepdims)


class Max(Function):
    """$f(x) = \\max_i x_i$ over ``axis``; ties share the gradient equally (torch's ``amax``)"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        if x.size == 0:
            raise ValueError(f"max: cannot reduce an empty tensor of shape {x.shape}")
        top = x.max(axis=axis, keepdims=True)
        ctx.save_for_backward(x == top)
        ctx.axes = _axes(axis, x.ndim)
        ctx.keepdims = keepdims
        return top if keepdims else np.asarray(np.squeeze(top, axis=ctx.axes))

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None, None]:
        # NOTE [max with ties]: torch.amax, and torch.max without a dim, split the gradient
        # evenly among the elements equal to the maximum. (torch.max(x, dim) instead sends
        # all of it to the one index it returns.) coursekit's max returns only values and
        # follows amax: with k tied maxima each gets grad / k.
        (is_max,) = ctx.saved_tensors
        if not ctx.keepdims:
            grad = np.expand_dims(grad, ctx.axes)
        count = is_max.sum(axis=ctx.axes, keepdims=True)
        return is_max * (grad / count), None, None


def max(x: Any, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
    """$\\max x$ over ``axis`` (values only, like ``torch.amax``)"""
    axis, keepdims = _resolve(axis, keepdims, dim, keepdim)
    return Max.apply(x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
    """$\\min x = -\\max(-x)$ over ``axis`` (values only, like ``torch.amin``)"""
    axis, keepdims = _resolve(axis, keepdims, dim, keepdim)
    return Neg.apply(Max.apply(Neg.apply(x), axis, keepdims))

