"""``Tensor``: a NumPy array that remembers how it was computed.

A Tensor holds its values in ``.data`` (a ``numpy.ndarray``). When it was produced by an op
on tensors that require gradients, ``.grad_fn`` is the graph node that knows how to send a
gradient back to those inputs; ``.backward()`` runs the engine from here. Operators and
methods (``x + y``, ``x @ w``, ``x.relu()``, ``x.sum(axis=0)``) call the ops in
``coursekit.autograd.ops``; the Tensor itself computes nothing.

dtypes follow PyTorch: Python floats become float32, Python ints int64; a NumPy array keeps
its dtype (a float64 array stays float64); ops between a float32 tensor and a Python scalar
stay float32.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterator

import numpy as np

from . import grad_mode

Shape = tuple[int, ...]


def _as_array(data: Any, dtype: Any = None) -> np.ndarray:
    """Convert ``data`` to an ndarray with PyTorch's default dtypes; no copy if avoidable."""
    if isinstance(data, Tensor):
        data = data._data
    if dtype is not None:
        return np.asarray(data, dtype=dtype)
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data)  # NumPy data keeps its dtype, like torch.from_numpy
    array = np.asarray(data)
    if array.dtype == np.float64:  # Python floats: torch's default float dtype
        array = array.astype(np.float32)
    return array


class Tensor:
    """An n-dimensional array with reverse-mode automatic differentiation.

    Args:
        data: anything ``numpy.asarray`` accepts (nested lists, scalars, arrays, tensors).
            An ndarray is used as is, without a copy; ``coursekit.tensor`` always copies.
        requires_grad: record operations on this tensor so ``backward`` can reach it.
        dtype: a NumPy dtype; by default floats are float32 and ints int64 (as in torch),
            and an ndarray keeps its own dtype.

    Attributes:
        data: the values, a ``numpy.ndarray``. Assigning to it (or ``p.data -= ...``) changes
            the values without recording anything, which is how optimizers update weights.
        grad: the accumulated gradient (a Tensor of the same shape), or ``None``.
        requires_grad: whether ops on this tensor are recorded.
        grad_fn: the node that produced this tensor, ``None`` for a leaf.
    """

    __slots__ = ("_data", "grad", "requires_grad", "grad_fn", "_accumulator", "__weakref__")

    # NumPy must hand mixed expressions (`array + tensor`) to our reflected operators
    # instead of converting the tensor to an array and returning an ndarray.
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self._data = _as_array(data, dtype)
        self.grad: Tensor | None = None
        self.grad_fn = None
        self._accumulator = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool = False, grad_fn: Any = None) -> Tensor:
        """Wrap an op's result without conversions or checks (the hot path)."""
        t = object.__new__(Tensor)
        t._data = data
        t.grad = None
        t.requires_grad = requires_grad
        t.grad_fn = grad_fn
        t._accumulator = None
        return t

    # ----------------------------------------------------------------- data and metadata
    @property
    def data(self) -> np.ndarray:
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        self._data = value if type(value) is np.ndarray else _as_array(value)

    @property
    def shape(self) -> Shape:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    def size(self, dim: int | None = None) -> Any:
        """The shape (a tuple), or the size of dimension ``dim``, as ``torch.Tensor.size``."""
        return self._data.shape if dim is None else self._data.shape[dim]

    def numel(self) -> int:
        return self._data.size

    def dim(self) -> int:
        return self._data.ndim

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    @property
    def is_leaf(self) -> bool:
        """True for tensors created by the user rather than by a recorded op."""
        return self.grad_fn is None

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise ValueError(
                f"item(): only one-element tensors can be converted to a Python number, "
                f"got shape {self.shape}"
            )
        return self._data.item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied), as ``torch.Tensor.numpy``."""
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on a Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    # -------------------------------------------------------------------------- autograd
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (leaves only) and return ``self``."""
        if not self.is_leaf and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables; use detach() to get "
                "a tensor that does not require grad"
            )
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"only tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data, cut off from the graph."""
        return Tensor._make(self._data)

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self.requires_grad = False
        return self

    def backward(self, gradient: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        Args:
            gradient: d(loss)/d(self), same shape as self. May be omitted for a one-element tensor.
            retain_graph: keep the graph's saved values so backward can run through it again.
        """
        engine.backward(self, gradient, retain_graph=retain_graph)

    def retain_grad(self) -> None:
        """Also store ``.grad`` for this non-leaf tensor during backward."""
        if self.grad_fn is not None:
            self.grad_fn._retained = weakref.ref(self)

    def zero_(self) -> Tensor:
        """Fill with zeros in place (not recorded)."""
        self._data[...] = 0
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickling and deepcopy keep values and requires_grad, not the graph or .grad
        # (DataLoader workers send tensors between processes this way).
        return (Tensor, (self._data, self.requires_grad))

    # ------------------------------------------------------------------------- printing
    def __repr__(self) -> str:
        prefix = "tensor("
        body = np.array2string(self._data, separator=", ", prefix=prefix)
        extras = []
        default = np.float32 if self._data.dtype.kind == "f" else np.int64
        if self._data.dtype != default and self._data.dtype != np.bool_:
            extras.append(f"dtype={self._data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return prefix + body + "".join(", " + e for e in extras) + ")"

    # ------------------------------------------------------------------------ operators
    def __add__(self, other: Any) -> Tensor:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return ops.div(other, self)

    def __pow__(self, exponent: Any) -> Tensor:
        return ops.pow(self, exponent)

    def __rpow__(self, base: Any) -> Tensor:
        return ops.rpow(base, self)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return ops.neg(self)

    def __getitem__(self, index: Any) -> Tensor:
        return ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        """In-place assignment, for tensors outside the graph (or under ``no_grad``).

        In-place ops on recorded tensors are not supported: the engine keeps no version
        counters, so it could not tell that a saved value changed.
        """
        if self.requires_grad and grad_mode._enabled:
            raise RuntimeError(
                "in-place assignment to a tensor that requires grad is not recorded; do it under "
                "no_grad(), or change the values with tensor.data[...] = ..."
            )
        self._data[ops.shape._index_arrays(index)] = value._data if isinstance(value, Tensor) else value

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    # Comparisons give boolean tensors and are not differentiable (as in torch).
    def _compare(self, other: Any, op: Any) -> Tensor:
        return Tensor._make(op(self._data, other._data if isinstance(other, Tensor) else other))

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self._compare(other, np.equal)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self._compare(other, np.not_equal)

    def __lt__(self, other: Any) -> Tensor:
        return self._compare(other, np.less)

    def __le__(self, other: Any) -> Tensor:
        return self._compare(other, np.less_equal)

    def __gt__(self, other: Any) -> Tensor:
        return self._compare(other, np.greater)

    def __ge__(self, other: Any) -> Tensor:
        return self._compare(other, np.greater_equal)

    # Element-wise __eq__ would make tensors unhashable; like torch, hash by identity so a
    # tensor can key a dict (optimizer state) or sit in a set (the engine's visited set).
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        return int(self.item())

    # -------------------------------------------------------------------------- methods
    def add(self, other: Any) -> Tensor:
        return ops.add(self, other)

    def sub(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    def mul(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    def div(self, other: Any) -> Tensor:
        return ops.div(self, other)

    def neg(self) -> Tensor:
        return ops.neg(self)

    def pow(self, exponent: Any) -> Tensor:
        return ops.pow(self, exponent)

    def exp(self) -> Tensor:
        return ops.exp(self)

    def log(self) -> Tensor:
        return ops.log(self)

    def sqrt(self) -> Tensor:
        return ops.sqrt(self)

    def abs(self) -> Tensor:
        return ops.abs(self)

    def matmul(self, other: Any) -> Tensor:
        return ops.matmul(self, other)

    def relu(self) -> Tensor:
        return ops.relu(self)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        return ops.clamp(self, min, max)

    clip = clamp

    def sigmoid(self) -> Tensor:
        return ops.sigmoid(self)

    def tanh(self) -> Tensor:
        return ops.tanh(self)

    def softmax(self, axis: int = -1, *, dim: int | None = None) -> Tensor:
        return ops.softmax(self, axis, dim=dim)

    def log_softmax(self, axis: int = -1, *, dim: int | None = None) -> Tensor:
        return ops.log_softmax(self, axis, dim=dim)

    def sum(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        return ops.sum(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def mean(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        return ops.mean(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def max(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        """The maxima along ``axis``: values only, like ``torch.amax`` and ``np.max``.

        Unlike ``torch.max(x, dim)`` it returns no indices (use ``argmax``); tied maxima
        share the gradient equally.
        """
        return ops.max(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def min(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        return ops.min(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def argmax(self, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None, keepdim: bool | None = None) -> Tensor:
        """Indices of the maxima (not differentiable), an int64 tensor."""
        axis = axis if dim is None else dim
        keepdims = keepdims if keepdim is None else keepdim
        return Tensor._make(np.asarray(self._data.argmax(axis=axis, keepdims=keepdims)))

    def reshape(self, *shape: Any) -> Tensor:
        return ops.reshape(self, *shape)

    def view(self, *shape: Any) -> Tensor:
        return ops.reshape(self, *shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return ops.flatten(self, start_dim, end_dim)

    def squeeze(self, dim: int | None = None) -> Tensor:
        return ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return ops.unsqueeze(self, dim)

    def transpose(self, dim0: int = 0, dim1: int = 1) -> Tensor:
        return ops.transpose(self, dim0, dim1)

    def permute(self, *dims: Any) -> Tensor:
        return ops.permute(self, *dims)

    @property
    def T(self) -> Tensor:
        """All dimensions reversed (a matrix's transpose)."""
        return ops.permute(self, *range(self._data.ndim - 1, -1, -1))

    def expand(self, *shape: Any) -> Tensor:
        return ops.broadcast_to(self, *shape)

    def broadcast_to(self, *shape: Any) -> Tensor:
        return ops.broadcast_to(self, *shape)

    def to(self, dtype: Any) -> Tensor:
        """A copy with another dtype (differentiable); a no-op when the dtype already matches."""
        return ops.to_dtype(self, dtype)

    def float(self) -> Tensor:
        return ops.to_dtype(self, np.float32)

    def double(self) -> Tensor:
        return ops.to_dtype(self, np.float64)

    def clone(self) -> Tensor:
        return ops.clone(self)


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new leaf tensor holding a *copy* of ``data`` (as ``torch.tensor``).

    Python floats become float32 and Python ints int64; a NumPy array keeps its dtype
    unless ``dtype`` is given.
    """
    source = data._data if isinstance(data, Tensor) else data
    array = _as_array(source, dtype)
    if array is source or not array.flags.owndata:  # still the caller's memory
        array = array.copy()
    return Tensor(array, requires_grad=requires_grad)


# Imported last: both modules use Tensor at call time, and Tensor must exist before them.
from . import engine, ops
