"""Optimizers with ``torch.optim``'s names, options and update rules.

Each optimizer updates ``p.data`` in place from ``p.grad``, so the same random
start and the same gradients give the same trajectory as torch, step for step.
"""

from coursekit.optim.adam import Adam
from coursekit.optim.adamw import AdamW
from coursekit.optim.optimizer import Optimizer, required
from coursekit.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "required"]
