"""Collation: turning a list of samples into one batch.

``default_collate`` keeps the structure of a sample and stacks its leaves along
a new first axis, into the *same kind* as the samples:

=============================  ==========================================
sample leaf                    batch leaf
=============================  ==========================================
``numpy.ndarray``              ``numpy.ndarray`` (``np.stack``)
NumPy scalar (``np.float32``)  ``numpy.ndarray`` of that dtype
``int`` / ``float`` / ``bool`` ``numpy.ndarray`` (int64 / float64 / bool)
``coursekit.Tensor``           ``coursekit.Tensor``
``torch.Tensor``               ``torch.Tensor`` (``torch.stack``)
``str`` / ``bytes``            ``list`` of them
``dict`` (any mapping)         same mapping, each key collated
``tuple`` / namedtuple / list  same container, each position collated
=============================  ==========================================

Two differences from ``torch.utils.data.default_collate``, both from keeping the
kind: NumPy arrays and Python numbers stay NumPy (PyTorch turns them into torch
tensors; ``torch.as_tensor(batch)`` does it without a copy), and a tuple sample
gives a tuple batch (PyTorch gives a list).

torch is never imported here: a leaf is a torch tensor only if torch is already
loaded (``sys.modules``), which it must be for a torch tensor to exist.
"""

from __future__ import annotations

import collections.abc
import sys
from typing import Any, Sequence

import numpy as np

from .dataset import SampleBatch

__all__ = ["default_collate", "default_convert", "CollateError"]


class CollateError(TypeError, ValueError):
    """Samples that cannot be stacked into one batch.

    Both a ``TypeError`` (a leaf of a kind that cannot be batched, or kinds that
    disagree between samples) and a ``ValueError`` (shapes, keys or lengths that
    disagree), so either ``except`` catches it.
    """


def _coursekit_tensor_type() -> type | None:
    # Looked up at call time: the autograd package may load after this module.
    ck = sys.modules.get("coursekit")
    if ck is None:
        return None
    try:
        return getattr(ck, "Tensor", None)
    except Exception:  # noqa: BLE001 — a lazy attribute that fails to import is "no coursekit tensors"
        return None


def _kind(x: Any) -> str:
    t = type(x)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _require_all(batch: Sequence[Any], cls: type | tuple[type, ...], what: str) -> None:
    for k, x in enumerate(batch):
        if not isinstance(x, cls):
            raise CollateError(
                f"default_collate: every sample must have a {what} at this position like sample 0, "
                f"but sample {k} has {_kind(x)}"
            )


def _stack_numpy(arrays: Sequence[np.ndarray]) -> np.ndarray:
    try:
        return np.stack(arrays)
    except ValueError:
        shapes = sorted({a.shape for a in arrays}, key=str)
        raise CollateError(
            f"default_collate: arrays must share one shape to be stacked, got shapes {shapes}"
        ) from None


def _stack_torch(torch: Any, tensors: Sequence[Any]) -> Any:
    try:
        return torch.stack(list(tensors), 0)
    except RuntimeError as err:
        shapes = sorted({tuple(t.shape) for t in tensors}, key=str)
        dtypes = sorted({str(t.dtype) for t in tensors})
        raise CollateError(
            f"default_collate: torch tensors must share one shape to be stacked, got shapes {shapes} "
            f"and dtypes {dtypes} ({err})"
        ) from None


def _stack_coursekit(tensors: Sequence[Any]) -> Any:
    import coursekit

    if any(getattr(t, "requires_grad", False) for t in tensors) and hasattr(coursekit, "stack"):
        # Keep the graph, as torch.stack would for tensors that require grad.
        return coursekit.stack(list(tensors), 0)
    arrays = [np.asarray(t.detach().numpy() if hasattr(t, "detach") else t.numpy()) for t in tensors]
    stacked = _stack_numpy(arrays)
    return coursekit.tensor(stacked, dtype=stacked.dtype)


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a sequence of samples into one batch (see the module's table).

    Args:
        batch: the samples, all of the same structure.

    Returns:
        One batch, shaped like a sample with every leaf stacked along a new
        first axis.

    Raises:
        CollateError: (a ``TypeError``) when the samples disagree in kind, shape,
            keys or length, or a leaf's kind cannot be batched.
    """
    if type(batch) is SampleBatch:
        # Already gathered column-wise by the dataset: nothing left to stack.
        return batch.columns
    if len(batch) == 0:
        raise CollateError("default_collate: expected at least one sample, got an empty batch")
    elem = batch[0]
    elem_type = type(elem)
    # The common case, every sample of one exact type, is checked in one cheap
    # pass; the slower isinstance checks below only run when it fails.
    uniform = len(set(map(type, batch))) == 1

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(elem, torch.Tensor):
        if not uniform:
            _require_all(batch, torch.Tensor, "torch.Tensor")
        return _stack_torch(torch, batch)
    if elem_type is np.ndarray or isinstance(elem, np.ndarray):
        if not uniform:
            _require_all(batch, np.ndarray, "numpy.ndarray")
        return _stack_numpy(batch)
    ck_tensor = _coursekit_tensor_type()
    if ck_tensor is not None and isinstance(elem, ck_tensor):
        if not uniform:
            _require_all(batch, ck_tensor, "coursekit.Tensor")
        return _stack_coursekit(batch)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, (np.generic, bool, int, float, complex)):
        if not uniform:
            _require_all(batch, (np.generic, bool, int, float, complex), "number")
            if isinstance(elem, (bool, np.bool_)) != all(isinstance(x, (bool, np.bool_)) for x in batch):
                raise CollateError("default_collate: samples mix bools and numbers at one position")
        # NumPy scalars keep their dtype; Python int -> int64, float -> float64,
        # bool -> bool (the dtypes PyTorch gives them).
        return np.array(batch)
    if isinstance(elem, collections.abc.Mapping):
        return _collate_mapping(batch, elem)
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequence(batch, elem, uniform)
    raise CollateError(
        f"default_collate: cannot batch a sample of type {_kind(elem)}; expected NumPy arrays or scalars, "
        "Python numbers, str, coursekit or torch tensors, or dicts / tuples / lists of these"
    )


def _collate_mapping(batch: Sequence[Any], elem: collections.abc.Mapping) -> Any:
    keys = list(elem.keys())
    key_set = set(keys)
    for k, sample in enumerate(batch):
        if not isinstance(sample, collections.abc.Mapping) or sample.keys() != key_set:
            got = sorted(map(str, sample.keys())) if isinstance(sample, collections.abc.Mapping) else _kind(sample)
            raise CollateError(
                f"default_collate: every sample must have the keys of sample 0 {sorted(map(str, keys))}, "
                f"but sample {k} has {got}"
            )
    collated = {key: default_collate([sample[key] for sample in batch]) for key in keys}
    try:
        return type(elem)(collated)
    except TypeError:  # a mapping type that cannot be built from a dict
        return collated


def _collate_sequence(batch: Sequence[Any], elem: collections.abc.Sequence, uniform: bool) -> Any:
    size = len(elem)
    if not uniform or set(map(len, batch)) != {size}:
        for k, sample in enumerate(batch):
            if (not isinstance(sample, collections.abc.Sequence) or isinstance(sample, (str, bytes))
                    or len(sample) != size):
                got = f"length {len(sample)}" if isinstance(sample, collections.abc.Sequence) else _kind(sample)
                raise CollateError(
                    f"default_collate: every sample must be a sequence of length {size} like sample 0, "
                    f"but sample {k} has {got}"
                )
    columns = [default_collate(column) for column in zip(*batch)]
    if isinstance(elem, tuple):
        return type(elem)(*columns) if hasattr(elem, "_fields") else tuple(columns)  # namedtuple or tuple
    if isinstance(elem, list):
        return columns
    try:
        return type(elem)(columns)
    except TypeError:
        return columns


def default_convert(data: Any) -> Any:
    """The collate function used when automatic batching is off (``batch_size=None``).

    Samples already keep their kind in coursekit, so each one passes through
    unchanged (PyTorch's version turns NumPy arrays into torch tensors here).
    """
    return data

