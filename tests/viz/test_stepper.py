"""BackwardStepper: the gradients it shows are the engine's, node by node; its buttons step.

Oracles: the leaves' ``.grad`` after the stepper's own backward (coursekit's engine and
torch's), torch's ``retain_grad`` for every intermediate result, and the same expression in
the other library. The widget is real ipywidgets; clicks go through ``Button.click``.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from matplotlib.text import Annotation

import coursekit as ck
from coursekit.viz import BackwardStepper, backward_graph
from coursekit.viz.stepper import format_gradient

LIBS = pytest.mark.parametrize("lib", [ck, torch], ids=["coursekit", "torch"])


def expression(lib, keep=None):
    """A leaf used twice by one op (b = a + a), a result used twice (b), a second leaf (w)."""
    rng = np.random.default_rng(3)
    a = lib.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    w = lib.tensor(rng.normal(size=3), requires_grad=True)
    b = a + a
    c = (b * w + b).tanh()
    if keep is not None:
        keep.update(b=b, c=c)
        for t in (b, c):
            t.retain_grad()
    return a, w, c.sum()


@LIBS
def test_leaves_receive_what_the_engine_adds_into_grad(lib):
    a, w, loss = expression(lib)
    stepper = BackwardStepper(loss)
    leaves = [s for s in stepper.steps if s.is_leaf]
    assert len(leaves) == 2
    got = {s.received.shape: s.received for s in leaves}
    np.testing.assert_array_equal(got[(2, 3)], np.asarray(a.grad.numpy()))
    np.testing.assert_array_equal(got[(3,)], np.asarray(w.grad.numpy()))
    # a receives two gradients from the one op that uses it twice, and adds them up.
    (leaf_a,) = [s for s in leaves if s.received.shape == (2, 3)]
    assert len(leaf_a.parts) == 2 and leaf_a.parts[0][0] == leaf_a.parts[1][0]
    assert sorted(k for _, k, _ in leaf_a.parts) == [0, 1]


def test_every_node_receives_what_torch_reports_for_its_output():
    keep: dict = {}
    _, _, loss = expression(torch, keep)
    stepper = BackwardStepper(loss)
    received = {s.label: s.received for s in stepper.steps}
    np.testing.assert_allclose(received["TanhBackward"], keep["c"].grad.numpy(), rtol=0, atol=0)
    (add_b,) = [s for s in stepper.steps if s.label == "AddBackward" and s.received.shape == (2, 3)
                and len(s.parts) == 2 and s.parts[0][0] != s.parts[1][0]]
    np.testing.assert_array_equal(add_b.received, keep["b"].grad.numpy())
    assert stepper.steps[0].received == pytest.approx(1.0) and not stepper.steps[0].parts


def test_coursekit_and_torch_steps_agree_node_by_node():
    ours = BackwardStepper(expression(ck)[2])
    theirs = BackwardStepper(expression(torch)[2])
    assert [s.label for s in ours.steps] == [s.label for s in theirs.steps]
    for mine, torch_step in zip(ours.steps, theirs.steps):
        np.testing.assert_allclose(mine.received, torch_step.received, rtol=1e-12, atol=1e-12)
        assert [(to, k) for to, k, _ in mine.sent] == [(to, k) for to, k, _ in torch_step.sent]


@LIBS
def test_steps_follow_the_graph_and_each_node_sums_what_was_sent_to_it(lib):
    stepper = BackwardStepper(expression(lib)[2])
    assert [n.label for n in stepper.graph.nodes] == [s.label for s in stepper.steps]
    if lib is ck:  # coursekit runs the nodes in backward_graph's order
        assert [n.label for n in backward_graph(expression(ck)[2]).nodes] == [
            s.label for s in stepper.steps]
    for step in stepper.steps[1:]:
        assert all(sender < step.node for sender, _, _ in step.parts)  # senders ran first
        np.testing.assert_allclose(sum(g for _, _, g in step.parts), step.received)
    edges = {(s.node, to) for s in stepper.steps for to, _, _ in s.sent}
    assert edges == set(stepper.graph.edges)


def test_the_stepper_is_a_real_backward_and_restores_coursekit_nodes():
    a, w, loss = expression(ck)
    node = loss.grad_fn
    fn = node.fn
    BackwardStepper(loss, retain_graph=True)
    assert node.fn is fn
    first = a.grad.numpy().copy()
    loss.backward()  # the graph was retained; gradients accumulate as after any backward
    np.testing.assert_allclose(a.grad.numpy(), 2 * first)
    with pytest.raises(ValueError, match="freed this graph"):
        BackwardStepper(loss)  # this backward freed it


def test_torch_a_retained_graph_gives_the_same_gradients_again():
    a, w, loss = expression(torch)
    stepper = BackwardStepper(loss, retain_graph=True)
    first = a.grad.clone()
    loss.backward()
    torch.testing.assert_close(a.grad, 2 * first)
    assert len(stepper.steps) == len(stepper.graph.nodes) == 7


def test_a_tensor_without_a_graph_is_refused():
    with pytest.raises(ValueError, match="no graph"):
        BackwardStepper(torch.ones(3, requires_grad=True))


@LIBS
def test_clicking_next_advances_one_node_and_shows_the_engines_gradient(lib):
    a, w, loss = expression(lib)
    stepper = BackwardStepper(loss)
    box = stepper.widget()
    ui = stepper.controls
    assert "coursekit-stepper" in box._dom_classes
    assert "coursekit-stepper-next" in ui["next"]._dom_classes
    assert ui["next"].description == "Next node ▶" and ui["previous"].disabled
    pictures = {bytes(ui["picture"].value)}
    for expected in range(1, len(stepper.steps)):
        ui["next"].click()
        assert stepper.position == expected
        assert f"step {expected + 1} of {len(stepper.steps)}" in ui["status"].value
        pictures.add(bytes(ui["picture"].value))
        assert bytes(ui["picture"].value).startswith(b"\x89PNG")
    assert len(pictures) == len(stepper.steps)  # each step draws its own picture
    assert ui["next"].disabled and not ui["previous"].disabled
    # The last node is a leaf: the gradient shown is the one the engine put into .grad.
    leaf = stepper.current
    assert leaf.is_leaf
    engine = a.grad.numpy() if leaf.received.shape == (2, 3) else w.grad.numpy()
    assert format_gradient(engine) in ui["details"].value.replace("&#x27;", "'")
    ui["previous"].click()
    assert stepper.position == len(stepper.steps) - 2
    ui["first"].click()
    assert stepper.position == 0 and ui["first"].disabled


def test_each_step_colours_the_graph_it_has_reached():
    stepper = BackwardStepper(expression(ck)[2])
    figure = stepper.figure(2)
    ax = figure.axes[0]
    boxes = [t for t in ax.texts if not isinstance(t, Annotation)]
    assert len(boxes) == len(stepper.steps)
    fills = [b.get_bbox_patch().get_facecolor() for b in boxes]
    done, current = fills[0], fills[2]
    assert fills[1] == done and current != done
    assert boxes[2].get_bbox_patch().get_linewidth() > boxes[0].get_bbox_patch().get_linewidth()
    assert format_gradient(stepper.steps[0].received) in boxes[0].get_text()
    final = stepper.figure().axes[0]
    labels = [t.get_text() for t in final.texts if not isinstance(t, Annotation)]
    assert all("\n" in label for label in labels)  # every node shows its gradient at the end


def test_the_text_names_every_step_in_order():
    stepper = BackwardStepper(expression(ck)[2])
    text = stepper.text()
    positions = [text.index(f"Step {i} of {len(stepper.steps)}") for i in range(1, 8)]
    assert positions == sorted(positions)
    assert "adds them up" in text and "added into the leaf's .grad" in text


def test_a_saved_stepper_without_widget_state_exports_as_its_picture():
    """What a TA's HTML view (nbconvert) shows of a notebook saved from JupyterLab, where the
    widget's state is not saved: the whole pass as a PNG, not an empty widget."""
    import nbformat
    from nbconvert import HTMLExporter

    stepper = BackwardStepper(expression(torch)[2])
    bundle = stepper.mimebundle()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    cell = nbformat.v4.new_code_cell("BackwardStepper(loss)", outputs=[
        nbformat.v4.new_output("display_data", data=bundle)])
    html, _ = HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    assert f"data:image/png;base64,{bundle['image/png'][:64]}" in html
