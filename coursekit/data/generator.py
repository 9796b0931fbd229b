"""Where the data pipeline's randomness comes from.

PyTorch's samplers take a ``torch.Generator``. coursekit's take any of

* ``None``: draw a fresh seed from NumPy's global generator each time one is
  needed, so ``np.random.seed(0)`` makes a whole run reproducible (PyTorch
  draws from torch's global generator instead, seeded by ``torch.manual_seed``);
* an ``int``: a seed for a new ``numpy.random.Generator``;
* a ``numpy.random.Generator``: used as is, and advanced by every draw;
* a ``torch.Generator``: the draws are made with torch's own functions
  (``randperm``, ``randint``, ``multinomial``), so a sampler given the same
  torch generator state as a ``torch.utils.data`` sampler yields the same order.

Everything else asks a :class:`Randomness` for what it needs, and never looks at
which of the four it holds.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["Randomness", "resolve_generator"]

# The largest seed handed to workers: torch draws them as non-negative int64.
_SEED_BOUND = 2**63 - 1


def _is_torch_generator(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Generator)


def resolve_generator(generator: Any, who: str = "generator") -> Any:
    """Turn a user's ``generator`` argument into the object to keep.

    An ``int`` becomes a ``numpy.random.Generator`` *once*, here, so that later
    epochs continue its stream instead of restarting it (restarting would give
    every epoch the same order).

    Raises:
        TypeError: for anything but ``None``, an int, a NumPy or a torch generator.
    """
    if generator is None or isinstance(generator, np.random.Generator) or _is_torch_generator(generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        if generator < 0:
            raise ValueError(f"{who}: a seed must be a non-negative integer, got {generator}")
        return np.random.default_rng(int(generator))
    raise TypeError(
        f"{who}: expected None, an int seed, a numpy.random.Generator or a torch.Generator, "
        f"got {type(generator).__name__} ({generator!r})"
    )


class Randomness:
    """The few random draws the data pipeline needs, from NumPy or from torch.

    Args:
        generator: an already resolved generator (see :func:`resolve_generator`);
            ``None`` means "seed a fresh NumPy generator from NumPy's global state".
    """

    def __init__(self, generator: Any = None) -> None:
        if generator is None:
            # One draw from the global generator per use, like torch's samplers do
            # with torch's global generator.
            generator = np.random.default_rng(int(np.random.randint(0, _SEED_BOUND, dtype=np.int64)))
        self._torch = _is_torch_generator(generator)
        self._gen = generator

    def permutation(self, n: int) -> list[int]:
        """A random order of ``range(n)``."""
        if self._torch:
            import torch

            return torch.randperm(n, generator=self._gen).tolist()
        return self._gen.permutation(n).tolist()

    def integers(self, high: int, size: int) -> list[int]:
        """``size`` integers drawn uniformly from ``[0, high)``, with replacement."""
        if self._torch:
            import torch

            return torch.randint(high=high, size=(size,), dtype=torch.int64, generator=self._gen).tolist()
        return self._gen.integers(0, high, size=size).tolist()

    def weighted(self, weights: np.ndarray, num_samples: int, replacement: bool) -> list[int]:
        """``num_samples`` indices drawn with probability proportional to ``weights``."""
        if self._torch:
            import torch

            w = torch.as_tensor(weights, dtype=torch.float64)
            return torch.multinomial(w, num_samples, replacement, generator=self._gen).tolist()
        p = weights / weights.sum()
        return self._gen.choice(len(weights), size=num_samples, replace=replacement, p=p).tolist()

    def seed(self) -> int:
        """A non-negative 63-bit seed, e.g. the base seed of the worker processes."""
        if self._torch:
            import torch

            return int(torch.empty((), dtype=torch.int64).random_(generator=self._gen).item())
        return int(self._gen.integers(0, _SEED_BOUND))

