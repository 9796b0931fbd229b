"""Loss modules: ``MSELoss``, ``NLLLoss`` and ``CrossEntropyLoss`` around ``functional``."""

from __future__ import annotations

from typing import Any

import numpy as np

from coursekit.autograd import Tensor
from coursekit.nn import functional as F
from coursekit.nn.module import Module

__all__ = ["MSELoss", "NLLLoss", "CrossEntropyLoss"]


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F._check_reduction(reduction)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        if weight is not None and not isinstance(weight, Tensor):
            weight = Tensor(np.asarray(weight))
        # A buffer, as in torch: it travels with state_dict() (key "weight").
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    r"""Mean squared error: $\ell = \mathrm{reduce}\big((x - y)^2\big)$.

    Args:
        reduction: "mean" (default), "sum" or "none".

    Shape:
        input and target: the same shape (a mismatch is refused, see ``F.mse_loss``).
    """

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    r"""Negative log-likelihood of integer targets given log-probabilities (pair it with ``LogSoftmax``).

    $\ell_n = -w_{y_n} x_{n, y_n}$; see ``F.nll_loss``.

    Args:
        weight: optional per-class weights, shape (C,).
        ignore_index: a target value that contributes nothing.
        reduction: "mean" (weighted mean), "sum" or "none".
    """

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    r"""Cross-entropy of logits against integer class targets (or class probabilities).

    $\ell_n = -w_{y_n} \log \mathrm{softmax}(x_n)_{y_n}$: ``log_softmax`` over dim 1 followed
    by ``nll_loss``, so the model's last layer outputs raw scores, with no softmax.

    Args:
        weight: optional per-class weights, shape (C,).
        ignore_index: a class-index target value that contributes nothing.
        reduction: "mean" (default), "sum" or "none".
        label_smoothing: mix the targets with the uniform distribution, in [0, 1].

    Shape:
        input (N, C) logits, target (N,) int64 class indices in [0, C).

    Example:
        >>> loss = CrossEntropyLoss()(model(x), y)
    """

    def __init__(
        self,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )
