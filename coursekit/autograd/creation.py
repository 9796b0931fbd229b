"""Factories for common tensors, as in torch: zeros, ones, zeros_like, ones_like, arange."""
from __future__ import annotations

from typing import Any

import numpy as np

from .tensor import Tensor


def _shape(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(n) for n in size)


def zeros(*size: Any, dtype: Any = np.float32, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of shape ``size`` (float32 by default)."""
    return Tensor(np.zeros(_shape(size), dtype=dtype), requires_grad=requires_grad)


def ones(*size: Any, dtype: Any = np.float32, requires_grad: bool = False) -> Tensor:
    """A tensor of ones of shape ``size`` (float32 by default)."""
    return Tensor(np.ones(_shape(size), dtype=dtype), requires_grad=requires_grad)


def zeros_like(x: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of ``x``."""
    return Tensor(np.zeros(np.shape(x), dtype=dtype or np.asarray(x).dtype), requires_grad=requires_grad)


def ones_like(x: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape (and dtype, unless given) of ``x``."""
    return Tensor(np.ones(np.shape(x), dtype=dtype or np.asarray(x).dtype), requires_grad=requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None) -> Tensor:
    """Evenly spaced values in [start, end), int64 for int arguments, else float32."""
    values = np.arange(start, end, step) if end is not None else np.arange(start)
    return Tensor(values, dtype=dtype if dtype is not None else (np.float32 if values.dtype.kind == "f" else np.int64))
