"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from coursekit.optim.optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent, step for step the algorithm of ``torch.optim.SGD``.

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t`
    (learning rate :math:`\gamma`, weight decay :math:`\lambda`, momentum :math:`\mu`,
    dampening :math:`\tau`)::

        g_t   = -g_t                          if maximize
        g_t   = g_t + λ θ_{t-1}               if λ ≠ 0      (L2 penalty folded into the gradient)
        b_t   = g_t                           if μ ≠ 0 and t = 1
        b_t   = μ b_{t-1} + (1 - τ) g_t       if μ ≠ 0 and t > 1
        g_t   = g_t + μ b_t                   if nesterov
        g_t   = b_t                           otherwise, if μ ≠ 0
        θ_t   = θ_{t-1} - γ g_t

    The momentum buffer starts as the first gradient itself, not as zero, so the very
    first step is plain SGD whatever the dampening.

    Args:
        params: parameters or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma`.
        momentum: momentum factor :math:`\mu`.
        dampening: dampening :math:`\tau` for the momentum.
        weight_decay: L2 penalty :math:`\lambda`.
        nesterov: use Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
        maximize: ascend the objective instead of descending it.

    State:
        ``state[p]["momentum_buffer"]``: :math:`b_t`, when ``momentum != 0``.

    Example:
        >>> opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "Nesterov momentum requires a momentum and zero dampening "
                f"(got momentum={momentum}, dampening={dampening})"
            )
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Apply one update to every parameter that has a gradient (see the class docstring)."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                param = p.data
                grad = p.grad.data
                if group["maximize"]:
                    grad = -grad
                if weight_decay != 0:
                    # A new array: the gradient the user sees in p.grad stays as backward left it.
                    grad = grad + weight_decay * param

                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = self._state_tensor(np.array(grad, copy=True))
                        state["momentum_buffer"] = buf
                    else:
                        b = buf.data
                        b *= momentum
                        b += (1 - dampening) * grad
                    grad = grad + momentum * buf.data if group["nesterov"] else buf.data

                param -= lr * grad
        return loss
