"""``trace_disagreements``: where a ``torch.jit.trace`` of a function stops matching the
function itself.

A trace runs the function once on an example and records the tensor operations that ran.
Python control flow that looked at a tensor's value (``if x.sum() > 0``), and sizes read as
Python numbers (``x.shape[0]``), are not operations: the trace keeps the outcome they had on
the example as a constant. On other inputs the traced graph can then return another value,
another shape, or fail.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence


def _differ(traced: Callable, fn: Callable, x: Any, rtol: float, atol: float) -> bool:
    import torch

    expected = fn(x)
    try:
        got = traced(x)
    except Exception:  # noqa: BLE001 — a graph that fails where the function runs disagrees
        return True
    return got.shape != expected.shape or not torch.allclose(got, expected, rtol=rtol,
                                                               atol=atol)


def trace_disagreements(fn: Callable, example: Any, inputs: Sequence[Any], rtol: float = 1e-5,
                        atol: float = 1e-7) -> list[bool]:
    """For each input, whether ``torch.jit.trace(fn, example)`` disagrees with ``fn`` on it.

    Disagrees means: the traced call raises, or its result has another shape than ``fn``'s,
    or their values are not ``torch.allclose`` within ``rtol``/``atol``. ``fn`` is traced once,
    on ``example`` only.
    """
    import torch

    with warnings.catch_warnings():
        # The tracer warns about every branch it freezes: that is what is being measured.
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        return [_differ(traced, fn, x, rtol, atol) for x in inputs]
