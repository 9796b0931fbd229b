"""Undoing broadcasting in backward: the one place a gradient is reduced to its input's shape.

# NOTE [reducing a gradient to the input's shape]
# When a forward op broadcasts an input of shape (3, 1) against one of shape (4, 3, 5),
# the input is used as if it were copied to (4, 3, 5). Each copy contributes to the loss,
# so the input's gradient is the *sum* of the upstream gradient over the copies:
#   1. sum over the leading axes that broadcasting prepended (here axis 0), then
#   2. sum, keeping the axis, over every axis where the input had size 1 (here the last).
# Every backward that can see a broadcast input calls `unbroadcast`; none re-implements it.
"""
from __future__ import annotations

import numpy as np


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added, so it has shape ``shape``.

    Args:
        grad: the upstream gradient, in the broadcast (output) shape.
        shape: the shape of the input the gradient belongs to.

    Returns:
        ``grad`` itself when the shapes already agree (no copy), else a new array.
    """
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1
    )
    return grad.sum(axis=axes).reshape(shape)
