"""Pinned (page-locked) host memory for batches headed to a GPU.

A copy from pageable host memory to the GPU first goes through a pinned staging
buffer; a batch that already lives in pinned memory skips that step and can be
copied asynchronously (``tensor.to("cuda", non_blocking=True)``). Only torch
tensors can be pinned, and only when CUDA is present: NumPy arrays and
coursekit tensors pass through unchanged, and so does everything on a machine
without CUDA (the DataLoader says so once with a :class:`PinMemoryWarning`).
"""

from __future__ import annotations

import collections.abc
import sys
from typing import Any

__all__ = ["pin_memory", "pinning_available", "PinMemoryWarning"]


class PinMemoryWarning(UserWarning):
    """``pin_memory=True`` was asked for, but there is nothing to pin into (no CUDA)."""


def pinning_available() -> bool:
    """Whether torch is loaded and sees a CUDA device (never raises)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 — a broken driver is "no CUDA", not a crash
        return False


def pin_memory(data: Any) -> Any:
    """``data`` with every torch tensor in it moved to pinned memory.

    Containers (dicts, tuples, namedtuples, lists) are rebuilt around the pinned
    tensors; objects with their own ``pin_memory()`` method are asked to pin
    themselves; anything else is returned as is.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(data, torch.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v) for k, v in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_memory(x) for x in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(x) for x in data)
    if isinstance(data, list):
        return [pin_memory(x) for x in data]
    if hasattr(data, "pin_memory") and not isinstance(data, type):
        return data.pin_memory()
    return data
