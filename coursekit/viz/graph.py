"""``backward_graph`` and ``draw_graph``: the graph ``backward`` walks, as data and as a picture.

Works on a coursekit Tensor and on a torch tensor alike: both expose ``grad_fn``, nodes with
``name()`` and ``next_functions``, and leaves as ``AccumulateGrad`` nodes with ``.variable``.
Only those attributes are read, so neither torch nor matplotlib is imported here until a
figure is drawn.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..autograd.engine import toposort


@dataclass(frozen=True)
class Node:
    """One node of a backward graph.

    Attributes:
        id: its index in ``Graph.nodes``; the root (the tensor's ``grad_fn``) is 0.
        label: the op's node name (``"MulBackward"``), or ``"leaf (3, 4)"`` for a leaf.
        kind: ``"op"`` or ``"leaf"``.
        depth: the longest distance from the root, in edges.
    """

    id: int
    label: str
    kind: str
    depth: int


@dataclass(frozen=True)
class Graph:
    """The nodes reachable from a tensor's ``grad_fn``, each once.

    Attributes:
        nodes: root first, every node before the nodes it sends gradients to.
        edges: ``(a, b)`` node ids: ``a`` sends a gradient to ``b`` (``b`` is in
            ``a.next_functions``). An input used twice by one op (``a + a``) is one edge.
    """

    nodes: list[Node]
    edges: list[tuple[int, int]]


def _label(node: Any) -> tuple[str, str]:
    if hasattr(node, "variable"):  # AccumulateGrad, in coursekit and in torch
        return f"leaf {tuple(node.variable.shape)}", "leaf"
    # torch says "MulBackward0" (the digit picks an overload) and "torch::autograd::CopySlices";
    # dropping both makes the labels of the two libraries comparable.
    return re.sub(r"\d+$", "", node.name().rsplit("::", 1)[-1]), "op"


def backward_graph(t: Any) -> Graph:
    """The backward graph of ``t`` (a coursekit Tensor or a torch tensor).

    Example::

        >>> a = ck.tensor([1.0, 2.0], requires_grad=True)
        >>> [n.label for n in backward_graph((a * a).sum()).nodes]
        ['SumBackward', 'MulBackward', 'leaf (2,)']

    Raises:
        TypeError: ``t`` is not a tensor (it has no ``grad_fn``).
        ValueError: ``t`` has no graph: a leaf, or computed without recording.
    """
    if not hasattr(t, "grad_fn"):
        raise TypeError(f"backward_graph: expected a coursekit or torch tensor, got {type(t).__name__}")
    if t.grad_fn is None:
        why = ("it is a leaf; draw a result computed from it" if t.requires_grad else
               "requires_grad is False for all its inputs, or it was created under no_grad")
        raise ValueError(f"backward_graph: the tensor has no graph (grad_fn is None): {why}")
    return graph_of(list(reversed(toposort(t.grad_fn))))  # the engine's own order


def graph_of(order: list[Any]) -> Graph:
    """The ``Graph`` of backward nodes listed in an order ``backward`` may run them: the root
    first, every node after all the nodes that send it a gradient (the engine's order, or the
    order in which torch ran them). Edges to nodes not in ``order`` are left out."""
    # Every node comes after all nodes that send it a gradient, so a single pass in this
    # order settles each longest distance before it is extended.
    index = {node: i for i, node in enumerate(order)}
    depth = [0] * len(order)
    edges: dict[tuple[int, int], None] = {}  # a dict keeps the order and drops repeats
    for i, node in enumerate(order):
        for child, _ in node.next_functions:
            if child is not None and child in index:  # None: an input that needs no gradient
                j = index[child]
                depth[j] = max(depth[j], depth[i] + 1)
                edges[(i, j)] = None
    nodes = [Node(i, *_label(node), depth[i]) for i, node in enumerate(order)]
    return Graph(nodes, list(edges))


def _positions(graph: Graph) -> dict[int, tuple[float, float]]:
    """x = -depth; within a layer, nodes sorted by their parents' mean height, to keep lines short."""
    parents: dict[int, list[int]] = {}
    for a, b in graph.edges:
        parents.setdefault(b, []).append(a)
    pos: dict[int, tuple[float, float]] = {}
    for d in range(max(n.depth for n in graph.nodes) + 1):
        layer = [n.id for n in graph.nodes if n.depth == d]
        # Parents sit in shallower layers (depth is the longest path), so they are placed.
        layer.sort(key=lambda i: -sum(pos[p][1] for p in parents.get(i, [])) / max(len(parents.get(i, [])), 1))
        for k, i in enumerate(layer):
            pos[i] = (-d, (len(layer) - 1) / 2 - k)
    return pos


def draw_graph(t: Any, ax: Any = None, title: str | None = None) -> Any:
    """Draw ``backward_graph(t)`` with matplotlib: root at the right, leaves at the left.

    Arrows point the way gradients flow during ``backward``: from the root towards the
    leaves. Ops are grey boxes, leaves blue ones; the axes hold one Text per node, in node
    order, and one empty arrow Annotation per edge.

    Example::

        >>> x = torch.randn(3, requires_grad=True)
        >>> ax = draw_graph((x.exp() * x).sum(), title="d/dx of sum(x e^x)")

    Returns:
        The matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    graph = backward_graph(t)
    if ax is None:
        width, height = figure_size(graph)
        _, ax = plt.subplots(figsize=(width, height))
    return draw(graph, ax, title)


def figure_size(graph: Graph, lines: int = 1) -> tuple[float, float]:
    """Inches that fit ``graph`` drawn with ``lines`` lines of text per box."""
    depth = max(n.depth for n in graph.nodes)
    height = max(sum(n.depth == d for n in graph.nodes) for d in range(depth + 1))
    return 1.8 * (depth + 1) + 1, (0.35 + 0.25 * lines) * height + 1


def draw(graph: Graph, ax: Any, title: str | None = None, *, labels: list[str] | None = None,
         fills: list[str] | None = None, text_colours: list[str] | None = None,
         edge_colours: dict[tuple[int, int], str] | None = None,
         highlight: int | None = None) -> Any:
    """Draw ``graph`` on ``ax`` as :func:`draw_graph` does; the keywords restyle it per node
    (``labels``, ``fills``, ``text_colours``: one entry per node) and per edge, and
    ``highlight`` outlines one node (the backward stepper's current node)."""
    pos = _positions(graph)
    depth = max(n.depth for n in graph.nodes)
    height = max(sum(n.depth == d for n in graph.nodes) for d in range(depth + 1))
    boxes = []
    for n in graph.nodes:
        colour = fills[n.id] if fills else ("#cfe2f3" if n.kind == "leaf" else "#eeeeee")
        outline = dict(ec="#cc0000", lw=2.5) if n.id == highlight else dict(ec="black", lw=1)
        boxes.append(ax.text(*pos[n.id], labels[n.id] if labels else n.label, ha="center",
                             va="center", fontsize=8, multialignment="center",
                             color=text_colours[n.id] if text_colours else "black",
                             bbox=dict(boxstyle="round,pad=0.3", fc=colour, **outline)))
    for a, b in graph.edges:
        # Anchored to the two Text artists, so the arrow meets each box's edge whatever the
        # label's width; the shrink covers the box padding outside the text's extent.
        colour = (edge_colours or {}).get((a, b), "dimgray")
        ax.annotate("", xy=(1, 0.5), xycoords=boxes[b], xytext=(0, 0.5), textcoords=boxes[a],
                    arrowprops=dict(arrowstyle="-|>", color=colour, shrinkA=4, shrinkB=4))
    ax.set_xlim(-depth - 0.7, 0.7)
    ax.set_ylim(-height / 2, height / 2)
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    return ax
