"""``Linear``: the affine layer $y = x W^\\top + b$."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from coursekit.autograd import Tensor
from coursekit.nn import functional as F
from coursekit.nn import init
from coursekit.nn.module import Module
from coursekit.nn.parameter import Parameter

__all__ = ["Linear"]


class Linear(Module):
    r"""Applies $y = x W^\top + b$ to the last dimension of the input.

    The layout and the initialisation are PyTorch's, so weights move between the two
    unchanged: ``weight`` has shape ``(out_features, in_features)`` (one row per output
    unit) and both ``weight`` and ``bias`` start uniform in
    $[-1/\sqrt{\text{in\_features}},\ 1/\sqrt{\text{in\_features}}]$
    (torch's ``kaiming_uniform_(a=sqrt(5))``).

    Args:
        in_features: size of each input's last dimension.
        out_features: size of each output's last dimension.
        bias: learn an additive bias (``False`` registers ``bias`` as ``None``).
        device: accepted for torch compatibility; only ``None`` / ``"cpu"``.
        dtype: dtype of the parameters (default float32, as in torch).
        generator: a ``numpy.random.Generator`` or int seed for a reproducible
            initialisation (coursekit's addition); by default ``nn.init``'s generator
            (see ``nn.init.manual_seed``).

    Shape:
        input ``(*, in_features)`` -> output ``(*, out_features)``.

    Raises (at call time):
        TypeError: an input that is not a floating-point Tensor of the weight's dtype.
        ShapeError (a ValueError): an input whose last dimension is not ``in_features``.

    Example:
        >>> fc = Linear(100, 10, generator=0)
        >>> fc.weight.shape
        (10, 100)
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        generator: init.Generator = None,
    ) -> None:
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
                raise TypeError(f"Linear: {name} must be a non-negative int, got {value!r}")
        if device not in (None, "cpu"):
            raise ValueError(f"Linear: coursekit runs on the CPU only, got device={device!r}")
        dtype = np.dtype(np.float32 if dtype is None else dtype)
        if dtype.kind != "f":
            raise TypeError(f"Linear: expected a floating-point dtype for the parameters, got {dtype}")
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = Parameter(np.empty((self.out_features, self.in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(np.empty((self.out_features,), dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: init.Generator = None) -> None:
        """Draw new weights with torch's rule (see the class docstring)."""
        rng = init._rng(generator)  # one generator for weight and bias, so one seed fixes both
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=rng)
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound, generator=rng)

    def forward(self, input: Tensor) -> Tensor:
        F._check_linear_input(input, self.weight, self)
        output = input @ self.weight.T
        if self.bias is not None:
            output = output + self.bias
        return output

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
