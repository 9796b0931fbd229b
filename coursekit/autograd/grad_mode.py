"""Switching graph recording off and on: ``no_grad`` and ``enable_grad``.

Both work as context managers and as decorators, as in PyTorch::

    with no_grad():
        y = model(x)          # no graph is built: cheaper, and y.requires_grad is False

    @no_grad()
    def evaluate(model, x): ...

# NOTE [grad mode is one global flag]
# PyTorch keeps the flag per thread. Here it is a single module-level flag: the course runs
# one Python thread per process (DataLoader workers are processes, each with its own copy),
# and `Function.apply` reads the flag on every op, so it should be as cheap as possible.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_enabled: bool = True


def is_grad_enabled() -> bool:
    """Whether ops record a graph right now."""
    return _enabled


class set_grad_enabled:
    """Set grad mode to ``mode`` for a ``with`` block (or as a decorator); restore it after.

    Args:
        mode: ``True`` to record graphs, ``False`` not to.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._previous: list[bool] = []  # a stack, so one instance may be re-entered

    def __enter__(self) -> None:
        global _enabled
        self._previous.append(_enabled)
        _enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        global _enabled
        _enabled = self._previous.pop()

    def __call__(self, func: F) -> F:
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(set_grad_enabled):
    """Context manager and decorator that turns graph recording off.

    Inside, every op returns a tensor with ``requires_grad=False`` and no ``grad_fn``.
    Use it for evaluation and for parameter updates. ``@no_grad`` and ``@no_grad()``
    both work as decorators.
    """

    def __new__(cls, func: Callable[..., Any] | None = None) -> Any:
        if func is not None:  # used bare, as ``@no_grad``
            return cls()(func)
        return super().__new__(cls)

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Context manager and decorator that turns graph recording on, even inside ``no_grad``."""

    def __new__(cls, func: Callable[..., Any] | None = None) -> Any:
        if func is not None:
            return cls()(func)
        return super().__new__(cls)

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        super().__init__(True)
