"""Ops that move elements around without changing them: reshape, permute, broadcast_to,
indexing, cat; and transpose, squeeze, unsqueeze, flatten, stack built from them.

Their backward puts each gradient element back where its input element came from.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..broadcast import unbroadcast
from ..errors import ShapeError
from ..function import Context, Function
from ..tensor import Tensor


def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    """Accept ``f(x, 2, 3)`` and ``f(x, (2, 3))`` alike, as torch does."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(n) for n in shape)


class Reshape(Function):
    """$y = x$ viewed with another shape"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        ctx.in_shape = x.shape
        try:
            return x.reshape(shape)
        except ValueError:
            raise ShapeError(
                f"reshape: cannot reshape {x.shape} ({x.size} elements) into {shape}"
            ) from None

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        return grad.reshape(ctx.in_shape), None


def reshape(x: Any, *shape: Any) -> Tensor:
    """$x$ with shape ``shape`` (one entry may be -1)"""
    return Reshape.apply(x, _shape_arg(shape))


view = reshape


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dimensions ``start_dim`` .. ``end_dim`` merged into one"""
    shape = np.shape(x)
    if len(shape) == 0:
        return reshape(x, (1,))
    start = normalize_axis_index(start_dim, len(shape))
    end = normalize_axis_index(end_dim, len(shape))
    return reshape(x, shape[:start] + (-1,) + shape[end + 1:])


def unsqueeze(x: Any, dim: int) -> Tensor:
    """$x$ with a new dimension of size 1 at ``dim``"""
    shape = np.shape(x)
    dim = normalize_axis_index(dim, len(shape) + 1)
    return reshape(x, shape[:dim] + (1,) + shape[dim:])


def squeeze(x: Any, dim: int | None = None) -> Tensor:
    """$x$ without dimensions of size 1 (only ``dim``, if given and of size 1)"""
    shape = np.shape(x)
    if dim is None:
        return reshape(x, tuple(n for n in shape if n != 1))
    dim = normalize_axis_index(dim, len(shape))
    if shape[dim] != 1:
        return reshape(x, shape)
    return reshape(x, shape[:dim] + shape[dim + 1:])


class Permute(Function):
    """$y = x$ with its dimensions reordered by ``dims``"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
        if sorted(d % max(x.ndim, 1) for d in dims) != list(range(x.ndim)) or len(dims) != x.ndim:
            raise ShapeError(f"permute: dims {dims} are not a permutation of the {x.ndim} dimensions of {x.shape}")
        ctx.dims = dims
        return x.transpose(dims)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        return grad.transpose(np.argsort([d % grad.ndim for d in ctx.dims])), None


def permute(x: Any, *dims: Any) -> Tensor:
    """$x$ with dimensions reordered: output dimension i is input dimension ``dims[i]``"""
    return Permute.apply(x, _shape_arg(dims))


def transpose(x: Any, dim0: int = 0, dim1: int = 1) -> Tensor:
    """$x$ with dimensions ``dim0`` and ``dim1`` swapped"""
    ndim = np.ndim(x)
    dims = list(range(ndim))
    if ndim < 2 and dim0 in (0, -1) and dim1 in (0, 1, -1):  # torch allows this on 0-d and 1-d
        return permute(x, tuple(dims))
    d0, d1 = normalize_axis_index(dim0, ndim), normalize_axis_index(dim1, ndim)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(x, tuple(dims))


class BroadcastTo(Function):
    """$y = x$ repeated along broadcast dimensions to ``shape``"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        ctx.in_shape = x.shape
        shape = tuple(x.shape[i - len(shape) + x.ndim] if n == -1 else n for i, n in enumerate(shape))
        try:
            return np.broadcast_to(x, shape)
        except ValueError:
            raise ShapeError(f"broadcast_to: cannot broadcast {x.shape} to {shape}") from None

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        return unbroadcast(grad, ctx.in_shape), None


def broadcast_to(x: Any, *shape: Any) -> Tensor:
    """$x$ broadcast to ``shape`` (torch's ``expand``; -1 keeps a size)"""
    return BroadcastTo.apply(x, _shape_arg(shape))


expand = broadcast_to


def _index_arrays(index: Any) -> Any:
    """Replace Tensors and lists inside an index by arrays, as NumPy expects."""
    if isinstance(index, tuple):
        return tuple(_index_arrays(i) for i in index)
    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, list):
        return np.asarray([i._data if isinstance(i, Tensor) else i for i in index])
    return index


def _is_basic(index: Any) -> bool:
    """True for indices made of ints, slices, None and Ellipsis only (no arrays)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice)) for p in parts)


class GetItem(Function):
    """$y = x[\\text{index}]$"""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, index: Any) -> np.ndarray:
        ctx.in_shape = x.shape
        ctx.index = index
        return np.asarray(x[index])

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        # NOTE [indexing backward]: each output element came from one input element, so its
        # gradient goes back there. With integer arrays an input element may be picked
        # several times (x[[0, 0]]): its gradient is the sum, which np.add.at computes
        # (plain `out[index] += grad` would keep only one of the repeated updates). Basic
        # indexing (ints and slices) never repeats an element, so assignment is enough.
        out = np.zeros(ctx.in_shape, dtype=grad.dtype)
        if _is_basic(ctx.index):
            out[ctx.index] = grad
        else:
            np.add.at(out, ctx.index, grad)
        return out, None


def getitem(x: Any, index: Any) -> Tensor:
    """$x[\\text{index}]$: ints, slices, None, Ellipsis, integer and boolean arrays"""
    return GetItem.apply(x, _index_arrays(index))


class Cat(Function):
    """$y = [x_1; x_2; \\dots]$ joined along ``axis``"""

    @staticmethod
    def forward(ctx: Context, *xs: np.ndarray, axis: int = 0) -> np.ndarray:
        if not xs:
            raise ValueError("cat: expected a non-empty sequence of tensors")
        try:
            out = np.concatenate(xs, axis=axis)
        except (ValueError, np.exceptions.AxisError):
            shapes = ", ".join(str(np.shape(x)) for x in xs)
            raise ShapeError(
                f"cat: shapes {shapes} must agree in every dimension except {axis} "
                f"and have the same number of dimensions"
            ) from None
        axis = normalize_axis_index(axis, out.ndim)
        ctx.axis = axis
        ctx.splits = np.cumsum([np.shape(x)[axis] for x in xs])[:-1]
        return out

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, ...]:
        return tuple(np.split(grad, ctx.splits, axis=ctx.axis))


def cat(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """The tensors joined along an existing dimension (``np.concatenate``)"""
    return Cat.apply(*tensors, axis=dim if axis is None else axis)


concatenate = cat


def stack(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """The tensors (all of one shape) joined along a new dimension"""
    dim = dim if axis is None else axis
    if not tensors:
        raise ValueError("stack: expected a non-empty sequence of tensors")
    shapes = {np.shape(t) for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got {', '.join(map(str, (np.shape(t) for t in tensors)))}")
    return cat([unsqueeze(t, dim) for t in tensors], dim)
