"""The backward engine: reverse-mode differentiation over a topological order.

The graph is made of nodes: one ``Context`` per recorded op (``tensor.grad_fn``), and one
``AccumulateGrad`` per leaf that requires grad. Each node lists, in ``next_functions``, the
nodes that receive the gradients of its inputs. ``backward`` visits the nodes so that a
node runs only after every node that uses its output has sent it a gradient, sums those
gradients, and calls the node's ``backward`` to get the gradients of its inputs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .function import AccumulateGrad, _FREED_MESSAGE, _input_gradients
from .tensor import Tensor


def toposort(root: Any) -> list[Any]:
    """All nodes reachable from ``root``, each one after every node it takes input from.

    An iterative depth-first search that appends a node once all its ``next_functions``
    have been appended (post-order), so deep graphs (long loops) cannot overflow Python's
    recursion limit. Reversed, the list starts at ``root`` and ends at the leaves: the order
    in which ``backward`` visits the nodes.
    """
    order: list[Any] = []
    visited: set[Any] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and child not in visited:
                stack.append((child, False))
    return order


def backward(tensor: Tensor, gradient: Any = None, retain_graph: bool = False) -> None:
    """Reverse mode: accumulate d(tensor)/d(leaf) · gradient into ``leaf.grad``.

    1. Order the graph below ``tensor`` topologically (``toposort``).
    2. Walk it from ``tensor`` to the leaves. Each node's upstream gradient is complete when
       it is reached (every node that uses its output came before it); the node's
       ``backward`` turns it into one gradient per input, which is added to the gradient
       of the input's node.
    3. A leaf's gradient is *accumulated* into ``leaf.grad`` with ``+=``: two backward calls
       add up, which is why training loops call ``zero_grad()``.

    Args:
        tensor: where differentiation starts (usually a scalar loss).
        gradient: d(something)/d(tensor), of tensor's shape; defaults to 1 for one element.
        retain_graph: keep the nodes' saved values (see NOTE [freeing the graph]).
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn: "
            "nothing in its computation had requires_grad=True (or it ran under no_grad)"
        )
    if gradient is None:
        if tensor._data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs, got shape {tensor.shape}; "
                f"pass backward(gradient) with a gradient of shape {tensor.shape}, or reduce "
                f"the tensor to a scalar first (e.g. .sum())"
            )
        grad = np.ones(tensor._data.shape, dtype=tensor._data.dtype)
    else:
        grad = np.asarray(gradient._data if isinstance(gradient, Tensor) else gradient, dtype=tensor.dtype)
        if grad.shape != tensor.shape:
            raise RuntimeError(
                f"backward: gradient has shape {grad.shape}, expected {tensor.shape} (the tensor's shape)"
            )

    # Arrays already stored in some leaf's .grad, or owned by the caller: a leaf must never
    # share its .grad buffer with anything else, because it is later updated in place.
    handed_out = {id(grad)} if gradient is not None else set()
    root = tensor.grad_fn
    if root is None:  # backward on a leaf: d(leaf)/d(leaf) = 1
        _accumulate(tensor, grad, handed_out)
        return

    grads: dict[Any, np.ndarray] = {root: grad}
    for node in reversed(toposort(root)):
        g = grads.pop(node, None)
        if g is None:  # every path to this node carried a None gradient
            continue
        if type(node) is AccumulateGrad:
            _accumulate(node.variable, g, handed_out)
            continue
        if node._released:
            raise RuntimeError(_FREED_MESSAGE)
        if node._retained is not None:  # tensor.retain_grad() was called
            kept = node._retained()
            if kept is not None:
                _accumulate(kept, g, handed_out)
        for ig, child in _input_gradients(node, node.fn.backward(node, g)):
            previous = grads.get(child)
            # Out of place: `previous` may be the very array another branch still uses.
            grads[child] = ig if previous is None else previous + ig
        if not retain_graph:
            node._release()


def _accumulate(leaf: Tensor, g: np.ndarray, handed_out: set[int]) -> None:
    """``leaf.grad += g``, giving the leaf a buffer of its own the first time."""
    if g.dtype != leaf._data.dtype:
        g = g.astype(leaf._data.dtype)
    elif id(g) in handed_out or not g.flags.owndata or not g.flags.writeable:
        g = g.copy()  # a view or a shared array: copy so in-place updates stay local
    if leaf.grad is None:
        handed_out.add(id(g))
        leaf.grad = Tensor._make(g)
    else:
        leaf.grad._data += g
