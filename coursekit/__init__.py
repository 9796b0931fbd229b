"""coursekit: the reference library of the course "Deep Learning Software".

Names mirror PyTorch's: ``coursekit.tensor``, ``coursekit.no_grad``, ``coursekit.autograd.Function``,
``coursekit.nn``, ``coursekit.optim``, ``coursekit.data``.

``import coursekit`` loads only the NumPy autograd engine. The other subpackages (``nn``,
``optim``, ``data``, ``hardware``, ``grading``, ...) load on first attribute access
(PEP 562), so importing coursekit stays fast and never imports torch.
"""
from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from . import autograd
from .autograd import Tensor, enable_grad, no_grad, set_grad_enabled, is_grad_enabled, tensor
from .autograd.creation import arange, ones, ones_like, zeros, zeros_like
from .autograd.ops import (abs, cat, clamp, exp, log, log_softmax, matmul, max, mean, min, relu, sigmoid,
                           softmax, sqrt, stack, sum, tanh)

__version__ = "0.1.0"

# dtypes are NumPy's: `ck.tensor([1, 2], dtype=ck.float64)`, `t.dtype == ck.float32`.
float16 = np.float16
float32 = np.float32
float64 = np.float64
int32 = np.int32
int64 = np.int64
bool_ = np.bool_

_LAZY_SUBMODULES = {"nn", "optim", "data", "hardware", "grading", "cli", "viz"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module  # later lookups skip __getattr__
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES)
