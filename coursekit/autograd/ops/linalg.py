"""Matrix multiplication: 1-D, 2-D and batched, with NumPy's (and torch's) matmul rules."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..broadcast import unbroadcast
from ..errors import ShapeError
from ..function import Context, Function
from ..tensor import Tensor


def _check_shapes(a: np.ndarray, b: np.ndarray) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: {a.shape} @ {b.shape} — both operands need at least one dimension")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(f"matmul: {a.shape} @ {b.shape} — inner sizes {k_a} and {k_b} differ")


class MatMul(Function):
    """$C = A B$, $\\partial L/\\partial A = G B^T$, $\\partial L/\\partial B = A^T G$"""

    @staticmethod
    def forward(ctx: Context, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        b = np.asarray(b)
        _check_shapes(a, b)
        try:
            out = a @ b
        except ValueError:
            raise ShapeError(
                f"matmul: {a.shape} @ {b.shape} — batch dimensions {a.shape[:-2]} and "
                f"{b.shape[:-2]} do not broadcast"
            ) from None
        ctx.save_for_backward(a, b)
        return out

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[Any, Any]:
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if a.ndim == 2 and b.ndim == 2:  # the common case, no reshaping
            return (grad @ b.T if need_a else None), (a.T @ grad if need_b else None)
        # NOTE [matmul of vectors and batches]: a 1-D `a` acts as a (1, k) row and a 1-D `b`
        # as a (k, 1) column, and that dimension is dropped from the result. Put it back into
        # the gradient, run the 2-D rule on the last two axes, sum the batch axes that were
        # broadcast, and drop the dimension again.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        if b.ndim == 1:
            grad = grad[..., None]
        if a.ndim == 1:
            grad = grad[..., None, :]
        ga = gb = None
        if need_a:
            ga = unbroadcast(grad @ np.swapaxes(b2, -1, -2), a2.shape).reshape(a.shape)
        if need_b:
            gb = unbroadcast(np.swapaxes(a2, -1, -2) @ grad, b2.shape).reshape(b.shape)
        return ga, gb


def matmul(a: Any, b: Any) -> Tensor:
    """$a @ b$"""
    return MatMul.apply(a, b)
