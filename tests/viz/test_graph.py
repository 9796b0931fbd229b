"""backward_graph and draw_graph: torch as the oracle for the structure, reuse, skipped inputs, depth, drawing."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.text import Annotation

import coursekit as ck
from coursekit.viz import Graph, backward_graph, draw_graph

matplotlib.use("Agg")  # no display in CI


def expression(lib, a, b, x):
    """A reused intermediate (h), a leaf reached by paths of different lengths (a), a constant (x)."""
    h = lib.tanh(a * x + b)
    return (h * h + lib.exp(a)).sum()


def inputs(lib):
    rng = np.random.default_rng(0)
    a, b, x = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(3, 4))
    if lib is torch:
        return torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True), torch.tensor(x)
    return ck.tensor(a, requires_grad=True), ck.tensor(b, requires_grad=True), ck.tensor(x)


def canonical(graph: Graph) -> Counter:
    """The graph up to node ids: each node's label, depth and the labels it sends gradients to."""
    children = {n.id: [] for n in graph.nodes}
    for a, b in graph.edges:
        children[a].append(graph.nodes[b].label)
    return Counter((n.label, n.kind, n.depth, tuple(sorted(children[n.id]))) for n in graph.nodes)


def test_coursekit_and_torch_give_the_same_graph_for_the_same_expression():
    ours = backward_graph(expression(ck, *inputs(ck)))
    theirs = backward_graph(expression(torch, *inputs(torch)))
    assert Counter(n.label for n in ours.nodes) == Counter(n.label for n in theirs.nodes) == Counter(
        {"AddBackward": 2, "MulBackward": 2, "SumBackward": 1, "TanhBackward": 1, "ExpBackward": 1,
         "leaf (3, 4)": 1, "leaf (4,)": 1})
    assert canonical(ours) == canonical(theirs)
    assert len(ours.edges) == len(theirs.edges) == 9


@pytest.mark.parametrize("lib", [ck, torch], ids=["coursekit", "torch"])
def test_a_reused_tensor_is_one_node(lib):
    a = inputs(lib)[0]
    b = a + a
    c = b * b
    graph = backward_graph(c)
    assert [n.label for n in graph.nodes] == ["MulBackward", "AddBackward", "leaf (3, 4)"]
    assert graph.edges == [(0, 1), (1, 2)]


@pytest.mark.parametrize("lib", [ck, torch], ids=["coursekit", "torch"])
def test_inputs_that_need_no_gradient_are_not_nodes(lib):
    a, _, x = inputs(lib)
    y = (a * x) * x  # both Mul nodes have a None entry in next_functions
    assert any(child is None for child, _ in y.grad_fn.next_functions)
    graph = backward_graph(y)
    assert [n.kind for n in graph.nodes] == ["op", "op", "leaf"]
    assert graph.edges == [(0, 1), (1, 2)]


@pytest.mark.parametrize("lib", [ck, torch], ids=["coursekit", "torch"])
def test_depth_is_the_longest_distance_from_the_root(lib):
    a, b, _ = inputs(lib)
    d = (a * b) + a  # a is one edge below Add, and two below through Mul
    depth = {n.label: n.depth for n in backward_graph(d).nodes}
    assert depth == {"AddBackward": 0, "MulBackward": 1, "leaf (4,)": 2, "leaf (3, 4)": 2}


def test_a_tensor_without_a_graph_raises_value_error_saying_why():
    with pytest.raises(ValueError, match="no graph.*requires_grad is False"):
        backward_graph(ck.tensor([1.0]) * 2)
    with ck.no_grad():
        y = ck.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(ValueError, match="no graph.*no_grad"):
        backward_graph(y)
    with pytest.raises(ValueError, match="no graph.*leaf"):
        backward_graph(torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="got ndarray"):
        backward_graph(np.ones(2))


@pytest.mark.parametrize("lib", [ck, torch], ids=["coursekit", "torch"])
def test_draw_graph_puts_one_box_per_node_at_minus_depth_and_arrows_towards_the_leaves(lib):
    y = expression(lib, *inputs(lib))
    graph = backward_graph(y)
    ax = draw_graph(y, title="graph")
    ax.figure.canvas.draw()  # arrows anchored to the boxes are placed only when drawn
    boxes = [t for t in ax.texts if not isinstance(t, Annotation)]
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    assert [t.get_text() for t in boxes] == [n.label for n in graph.nodes]
    assert [t.get_position()[0] for t in boxes] == [-n.depth for n in graph.nodes]
    assert len(arrows) == len(graph.edges)
    for arrow in arrows:  # from the box nearer the root to the one nearer the leaves
        assert arrow.anncoords.get_position()[0] > arrow.xycoords.get_position()[0]
    assert ax.get_title() == "graph"
    plt.close(ax.figure)


def test_draw_graph_draws_on_the_axes_it_is_given():
    fig = Figure()
    ax = fig.add_subplot()
    a = ck.tensor([1.0, 2.0], requires_grad=True)
    assert draw_graph((a * a).sum(), ax=ax) is ax
    assert [t.get_text() for t in ax.texts if not isinstance(t, Annotation)] == [
        "SumBackward", "MulBackward", "leaf (2,)"]


def test_importing_viz_imports_neither_torch_nor_matplotlib():
    code = ("import sys, coursekit; coursekit.viz.backward_graph; "
            "print(sorted({'torch', 'matplotlib'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
