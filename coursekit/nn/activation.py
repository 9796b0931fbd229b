"""Activation layers: Modules around the element-wise functions in ``functional``."""

from __future__ import annotations

from coursekit.autograd import Tensor
from coursekit.nn import functional as F
from coursekit.nn.module import Module

__all__ = ["ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax"]


class ReLU(Module):
    r"""$\mathrm{ReLU}(x) = \max(x, 0)$, element-wise.

    Args:
        inplace: accepted so torch code runs unchanged; coursekit always returns a new
            tensor (overwriting an input the graph saved would corrupt its gradient).
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    r"""$\sigma(x) = 1 / (1 + e^{-x})$, element-wise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    r"""$\tanh(x)$, element-wise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class _AlongDim(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        if dim is None:
            # torch guesses a dimension here (with a deprecation warning); guessing wrong on a
            # (batch, classes) input normalises over the batch, so coursekit asks instead.
            raise TypeError(
                f"{type(self).__name__} needs dim, the dimension that holds the classes, "
                f"e.g. {type(self).__name__}(dim=1) for a (batch, classes) input"
            )
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    r"""$\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}$ along ``dim``.

    Args:
        dim: the dimension that sums to 1 (required).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)


class LogSoftmax(_AlongDim):
    r"""$\log \mathrm{softmax}(x)$ along ``dim``, computed without overflow.

    Args:
        dim: the dimension over which to normalise (required).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)
