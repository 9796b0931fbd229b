"""``Function``: one differentiable op, forward and backward side by side.

Every op in coursekit, built-in or written by a student, is a subclass::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):              # x is a NumPy array
            y = np.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_out):      # grad_out: d(loss)/d(y), a NumPy array
            (y,) = ctx.saved_tensors
            return grad_out * y           # d(loss)/d(x), one gradient per input

    y = Exp.apply(x)                      # x, y are Tensors

``forward`` and ``backward`` compute on NumPy arrays: that is the level at which a
derivative rule is written, and it keeps the engine's overhead per op small. ``apply``
unwraps the Tensors, runs ``forward``, wraps the result, and (when any input requires grad
and grad mode is on) records a graph node: the ``ctx`` itself, as in PyTorch.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import grad_mode
from .errors import BackwardError
from .tensor import Tensor


# NOTE [freeing the graph]
# A node keeps whatever forward saved (often arrays as large as the activations) until its
# backward has run. Backward then drops them, unless retain_graph=True: the memory is usually
# needed for the next iteration's graph, and a training loop builds a new graph every step.
# A second backward through a released node would silently use nothing, so it raises instead.
_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or to read saved tensors after they "
    "have been freed). Saved values are freed after the first backward; pass "
    "retain_graph=True to the first backward() if you need to call it again."
)


class Context:
    """What ``forward`` leaves for ``backward``; also the graph node (``tensor.grad_fn``).

    Attributes:
        needs_input_grad: one bool per input of ``forward``: does it need a gradient?
            ``backward`` may skip work for the inputs that do not.
        next_functions: one ``(node, 0)`` pair per Tensor input, the node that receives
            that input's gradient: the input's ``grad_fn``, an ``AccumulateGrad`` for a leaf
            that requires grad, or ``None``. Non-Tensor arguments (scalars, axes) get none.
        saved_tensors: the arrays given to ``save_for_backward``.

    Any other value ``forward`` needs later is stored as a plain attribute
    (``ctx.axis = axis``).
    """

    __slots__ = ("fn", "needs_input_grad", "next_functions", "_grad_inputs", "_saved",
                 "_released", "_retained", "__dict__", "__weakref__")

    def __init__(self, fn: type[Function]) -> None:
        self.fn = fn
        self.needs_input_grad: tuple[bool, ...] = ()
        self.next_functions: tuple[tuple[Any, int], ...] = ()
        self._grad_inputs: list[tuple[int, Any, Any]] = []  # (position, shape, node) per input needing grad
        self._saved: tuple[Any, ...] = ()
        self._released = False
        self._retained = None

    def save_for_backward(self, *values: Any) -> None:
        """Keep arrays (or anything else) for ``backward``; read them as ``ctx.saved_tensors``."""
        self._saved = values

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._released:
            raise RuntimeError(_FREED_MESSAGE)
        return self._saved

    def name(self) -> str:
        """``"ExpBackward"`` for the node of ``Exp``, as torch names ``ExpBackward0``."""
        return self.fn.__name__ + "Backward"

    def _release(self) -> None:
        """Drop everything forward stored (see NOTE [freeing the graph])."""
        self._saved = ()
        self.__dict__.clear()
        self._released = True

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad:
    """The graph node of a leaf that requires grad: it adds its gradient into ``variable.grad``.

    Attributes:
        variable: the leaf tensor.
    """

    __slots__ = ("variable", "__weakref__")
    next_functions: tuple[tuple[Any, int], ...] = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def _edge(t: Tensor) -> tuple[Any, int]:
    """The ``(node, 0)`` pair through which input ``t`` receives its gradient."""
    if t.grad_fn is not None:
        return (t.grad_fn, 0)
    # A leaf: reuse its AccumulateGrad while some graph still holds it, as torch does, so
    # every use of the leaf points at the same node. The tensor holds it weakly (no cycle).
    acc = t._accumulator() if t._accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accumulator = weakref.ref(acc)
    return (acc, 0)


class Function:
    """Base class of every differentiable op.

    Subclasses define two static methods:

    * ``forward(ctx, *inputs, **options)``: compute the output from NumPy arrays (a
      Tensor input arrives as its ``.data``; other inputs, like a Python scalar, arrive
      unchanged; keyword options are passed through and never get gradients). Save what
      backward needs with ``ctx.save_for_backward(...)`` or as ``ctx`` attributes.
    * ``backward(ctx, grad_output)``: given d(loss)/d(output), return d(loss)/d(input)
      for every positional input of forward, in order: an array of that input's shape, or
      ``None`` where no gradient is needed (``ctx.needs_input_grad[i]`` is False). A single
      input may return a single array instead of a 1-tuple.

    Use an op through ``apply``: ``y = MyOp.apply(x, 2.0)``.
    """

    @staticmethod
    def forward(ctx: Context, *inputs: Any, **options: Any) -> Any:
        raise NotImplementedError("Function subclasses must define a static forward(ctx, *inputs)")

    @staticmethod
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        raise NotImplementedError("Function subclasses must define a static backward(ctx, grad_output)")

    @classmethod
    def apply(cls, *inputs: Any, **options: Any) -> Tensor:
        """Run ``forward`` on the inputs' data and, if needed, record the graph node."""
        ctx = Context(cls)
        arrays = []
        needs = []
        track = False
        enabled = grad_mode._enabled
        for x in inputs:
            if isinstance(x, Tensor):
                arrays.append(x._data)
                need = enabled and x.requires_grad
                track = track or need
                needs.append(need)
            else:
                # A NumPy scalar (np.float64(0.5), from np.sqrt etc.) acts like a Python
                # number, as in torch: it must not turn a float32 result into float64.
                arrays.append(x.item() if isinstance(x, np.generic) else x)
                needs.append(False)
        ctx.needs_input_grad = tuple(needs)

        out = cls.forward(ctx, *arrays, **options)
        if type(out) is not np.ndarray:
            out = out._data if isinstance(out, Tensor) else np.asarray(out)
        if not track:
            return Tensor._make(out)

        # Like torch, one edge per *Tensor* input; other arguments (scalars, axes) get none.
        # The engine walks only the inputs that need a gradient: (position, shape, node).
        next_functions = []
        grad_inputs = []
        for i, x in enumerate(inputs):
            if needs[i]:
                edge = _edge(x)
                next_functions.append(edge)
                grad_inputs.append((i, arrays[i].shape, edge[0]))
            elif isinstance(x, Tensor):
                next_functions.append((None, 0))
        ctx.next_functions = tuple(next_functions)
        ctx._grad_inputs = grad_inputs
        return Tensor._make(out, True, ctx)


def _input_gradients(node: Context, grads: Any) -> list[tuple[np.ndarray, Any]]:
    """Check what ``backward`` returned and pair each gradient with the node it goes to.

    ``backward`` must return one gradient (or None) per input of ``forward``, and each
    gradient an input needs must have that input's shape; otherwise ``BackwardError``
    names the Function and the input.
    """
    if type(grads) is not tuple:
        grads = tuple(grads) if isinstance(grads, list) else (grads,)
    if len(grads) != len(node.needs_input_grad):
        raise BackwardError(
            f"{node.fn.__name__}.backward returned {len(grads)} gradient(s), expected "
            f"{len(node.needs_input_grad)}: one per input of forward, in order "
            f"(None for an input that needs none)"
        )
    pairs = []
    for i, shape, child in node._grad_inputs:
        g = grads[i]
        if g is None:
            continue
        if type(g) is not np.ndarray:
            g = g._data if isinstance(g, Tensor) else np.asarray(g)
        if g.shape != shape:
            raise BackwardError(
                f"{node.fn.__name__}.backward returned a gradient of shape {g.shape} for input {i}, "
                f"expected {shape} (the shape of input {i}); undo broadcasting with unbroadcast()"
            )
        pairs.append((g, child))
    return pairs
