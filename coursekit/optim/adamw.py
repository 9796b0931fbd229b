"""AdamW: Adam with weight decay taken out of the gradient."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coursekit.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW (Loshchilov & Hutter, 2019), step for step the algorithm of ``torch.optim.AdamW``.

    The same moments and step as :class:`Adam`, but weight decay shrinks the parameter
    directly before the Adam step instead of entering the gradient::

        θ_{t-1} = θ_{t-1} (1 - γ λ)
        θ_t     = θ_{t-1} - (γ / (1 - β1^t)) · m_t / (sqrt(v̂_t) / sqrt(1 - β2^t) + ε)

    Why it matters: in Adam an L2 term :math:`\lambda\theta` is divided by
    :math:`\sqrt{\hat v}` like the rest of the gradient, so weights with large gradients
    are barely decayed. Decoupling makes the decay the same fraction for every weight.

    Args:
        params: parameters or parameter groups (see :class:`Optimizer`).
        lr: learning rate :math:`\gamma`.
        betas: decay rates :math:`(\beta_1, \beta_2)` of the moment estimates.
        eps: added to the denominator for numerical stability.
        weight_decay: decoupled decay :math:`\lambda` (default 1e-2, as in torch).
        amsgrad: normalise by the running maximum of :math:`v_t`.
        maximize: ascend the objective instead of descending it.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
        )

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a checkpoint; the groups stay decoupled whatever the checkpoint says."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
