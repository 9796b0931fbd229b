"""Adam: per-coordinate step sizes from running moments of the gradient."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from coursekit.optim.optimizer import Optimizer

__all__ = ["Adam"]


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start += weight * (end - start)`` in place, rounded the way ``torch.lerp`` rounds.

    torch switches formula at weight 0.5 so the result stays accurate near either end;
    following it keeps float64 trajectories equal to torch's to the last few bits.
    """
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2015), step for step the algorithm of ``torch.optim.Adam``.

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t`
    (learning rate :math:`\gamma`, betas :math:`\beta_1, \beta_2`, weight decay
    :math:`\lambda`)::

        g_t   = -g_t                                  if maximize
        θ_{t-1} = θ_{t-1} (1 - γ λ)                   if decoupled weight decay (AdamW)
        g_t   = g_t + λ θ_{t-1}                       otherwise, if λ ≠ 0 (L2 penalty)
        m_t   = β1 m_{t-1} + (1 - β1) g_t             first moment (running mean)
        v_t   = β2 v_{t-1} + (1 - β2) g_t²            second moment (running uncentred variance)
        v̂_t   = max(v̂_{t-1}, v_t)                     if amsgrad, else v̂_t = v_t
        θ_t   = θ_{t-1} - (γ / (1 - β1^t)) · m_t / (sqrt(v̂_t) / sqrt(1 - β2^t) + ε)

    ``m`` and ``v`` start at zero, which biases them towards zero in the first steps;
    the factors :math:`1 - \beta^t` undo that bias (dropping them is a classic bug:
    the first steps come out far too small).

    Args:
        params: parameters or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma`.
        betas: decay rates :math:`(\beta_1, \beta_2)` of the two moment estimates.
        eps: added to the denominator for numerical stability.
        weight_decay: :math:`\lambda`; an L2 penalty added to the gradient (see
            :class:`~coursekit.optim.AdamW` for the decoupled form).
        amsgrad: normalise by the running maximum of :math:`v_t` (Reddi et al., 2018).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: shrink the parameter directly instead of adding
            :math:`\lambda\theta` to the gradient (this is AdamW).

    State:
        ``state[p]["step"]`` (int), ``"exp_avg"`` (:math:`m`), ``"exp_avg_sq"`` (:math:`v`),
        and ``"max_exp_avg_sq"`` when ``amsgrad``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "betas": (float(betas[0]), float(betas[1])),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Any, amsgrad: bool) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = 0
            state["exp_avg"] = self._state_tensor(np.zeros_like(p.data))
            state["exp_avg_sq"] = self._state_tensor(np.zeros_like(p.data))
            if amsgrad:
                state["max_exp_avg_sq"] = self._state_tensor(np.zeros_like(p.data))
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Apply one update to every parameter that has a gradient (see the class docstring)."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            amsgrad = group["amsgrad"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                param = p.data
                grad = p.grad.data
                if group["maximize"]:
                    grad = -grad
                state = self._init_state(p, amsgrad)
                state["step"] += 1
                step = state["step"]

                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * param

                exp_avg = state["exp_avg"].data
                exp_avg_sq = state["exp_avg_sq"].data
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad

                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5

                if amsgrad:
                    # The running maximum keeps the effective step from growing when v_t shrinks.
                    second = state["max_exp_avg_sq"].data
                    np.maximum(second, exp_avg_sq, out=second)
                else:
                    second = exp_avg_sq
                denom = np.sqrt(second) / bias_correction2_sqrt
                denom += eps
                param += (-step_size * exp_avg) / denom
        return loss
