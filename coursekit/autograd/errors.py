"""Errors raised by the autograd engine.

Each subclasses the built-in a caller would catch anyway (``ValueError`` for bad shapes,
``RuntimeError`` for a broken graph), and each message says what was expected and what
was got, so a student can act on it without reading the engine.
"""
from __future__ import annotations


class ShapeError(ValueError):
    """An op got operands whose shapes it cannot combine.

    Example: ``matmul: (3, 4) @ (5, 2) — inner sizes 4 and 5 differ``.
    """


class BackwardError(RuntimeError):
    """A ``Function.backward`` returned something the engine cannot use.

    Raised when it returns the wrong number of gradients, or a gradient whose shape is not
    the shape of the input it belongs to. The message names the Function and the input.
    """


class GradcheckError(RuntimeError):
    """``gradcheck`` found an analytical gradient that disagrees with finite differences.

    The message names the output, the input, the element, and both values.
    """
