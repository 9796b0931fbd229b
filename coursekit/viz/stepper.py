"""``BackwardStepper``: a backward pass, one node at a time.

``BackwardStepper(loss)`` runs ``loss.backward()`` once (leaves' ``.grad`` accumulate as with
any backward) and records, at every node of the graph, the gradient that arrived there (the
sum of what the nodes using its output sent) and the gradient it sent to each of its inputs.
In JupyterLab it is a widget: the graph with the current node outlined, what that node
received and sent, and buttons to step through the pass ("Next node ▶", "◀ Previous node",
"◀◀ First node"). Where no one can click (nbval, nbgrader, a script; see
:func:`coursekit.viz.display.interactive`) it shows the whole pass at once: the graph with
every node's gradient, and the steps as text.

The values shown are the engine's own, observed while it runs; the stepper computes none:

* torch calls the hooks a node carries just before it runs (``register_prehook``: the
  gradient it received) and just after (``register_hook``: the gradients it sent). The root
  is hooked first, and each node's pre-hook hooks the nodes it sends to, which always run
  later; so every node is hooked before it runs, and the record is in the engine's order.
* coursekit's engine runs the nodes in the order of its ``toposort`` and calls each node's
  ``fn.backward``; while ``backward`` runs, each node's ``fn`` is a stand-in that records
  what goes in and out of the real one. A leaf receives the sum of what was sent to it,
  added in the engine's order, which is the value the engine adds into ``.grad``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .display import interactive, png, show_png
from .graph import Graph, draw, figure_size, graph_of

# Colours of a node during the pass: done, the current one, waiting for more gradients, not
# reached yet; an edge turns green once its gradient has been sent.
DONE, CURRENT, WAITING, AHEAD = "#d9ead3", "#f9cb9c", "#fff2cc", "#ffffff"
SENT, NOT_SENT = "#38761d", "#cccccc"


@dataclass(frozen=True)
class Step:
    """One node's turn in the backward pass.

    Attributes:
        node: the node's id in :attr:`BackwardStepper.graph` (steps run in id order).
        label: the node's name (``"MulBackward"``, ``"leaf (3,)"``).
        received: d(root)/d(the node's output) as a NumPy array (its first output, for a torch
            node with several), or None when no gradient reached it.
        parts: ``(sender, input, gradient)`` for every gradient added up into ``received``:
            the sending node's id, and which of the sender's inputs this node is.
        sent: ``(receiver, input, gradient)`` for every gradient this node passed on.
    """

    node: int
    label: str
    received: np.ndarray | None
    parts: tuple[tuple[int, int, np.ndarray], ...]
    sent: tuple[tuple[int, int, np.ndarray], ...]

    @property
    def is_leaf(self) -> bool:
        return self.label.startswith("leaf")


def format_gradient(g: np.ndarray | None) -> str:
    """A gradient as the stepper prints it (its values, or a summary when it is large)."""
    if g is None:
        return "None"
    # + 0.0 turns -0.0 into 0.0, which reads better in a gradient
    return np.array2string(np.asarray(g) + 0.0, precision=4, suppress_small=True, threshold=24,
                           edgeitems=3, max_line_width=88)


def _short(g: np.ndarray | None) -> str:
    """A gradient in a few characters, for a box in the picture."""
    if g is None:
        return "no gradient"
    g = np.asarray(g) + 0.0
    if g.size <= 4:
        return np.array2string(g.reshape(-1) if g.ndim > 1 else g, precision=2,
                               suppress_small=True, separator=" ")
    return f"{g.shape}, norm {np.linalg.norm(g):.3g}"


def _numpy(g: Any) -> np.ndarray | None:
    if g is None:
        return None
    if type(g).__module__.startswith("torch"):  # a torch tensor, on any device
        return g.detach().cpu().numpy()
    return g.numpy() if hasattr(g, "numpy") else np.asarray(g)  # a coursekit Tensor, an array


def _record_torch(t: Any, retain_graph: bool) -> tuple[list[Any], dict[Any, list[Any]]]:
    """Run torch's backward from ``t``; returns the nodes in the order they ran and, per node,
    [gradients received, gradients sent]."""
    order: list[Any] = []
    record: dict[Any, list[Any]] = {}
    handles: list[Any] = []

    def hook(node: Any) -> None:
        if node in record:
            return
        record[node] = [(), ()]

        def before(grad_outputs):
            order.append(node)
            record[node][0] = grad_outputs
            for child, _ in node.next_functions:
                if child is not None:
                    hook(child)

        def after(grad_inputs, grad_outputs):
            record[node][1] = grad_inputs

        handles.append(node.register_prehook(before))
        handles.append(node.register_hook(after))

    hook(t.grad_fn)
    try:
        t.backward(retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
    return order, record


class _Recording:
    """Stands in for a coursekit node's ``fn`` while backward runs: calls the real
    ``fn.backward`` and keeps what went in and came out."""

    def __init__(self, fn: Any, record: dict[Any, list[Any]]) -> None:
        self.fn, self.record, self.__name__ = fn, record, fn.__name__

    def backward(self, ctx: Any, *grad_outputs: Any) -> Any:
        grads = self.fn.backward(ctx, *grad_outputs)
        self.record[ctx] = [grad_outputs, grads]
        return grads


def _record_coursekit(t: Any, retain_graph: bool) -> tuple[list[Any], dict[Any, list[Any]]]:
    from ..autograd.engine import toposort
    from ..autograd.function import AccumulateGrad

    order = list(reversed(toposort(t.grad_fn)))  # the order in which backward runs them
    ops = [node for node in order if type(node) is not AccumulateGrad]
    if any(node._released for node in ops):
        raise ValueError("BackwardStepper: backward() has already freed this graph; build the "
                         "stepper before calling backward, or call backward(retain_graph=True)")
    record: dict[Any, list[Any]] = {}
    originals = [node.fn for node in ops]
    for node in ops:
        node.fn = _Recording(node.fn, record)
    try:
        t.backward(retain_graph=retain_graph)
    finally:
        for node, fn in zip(ops, originals):
            node.fn = fn
    for node in ops:
        if node in record:  # one gradient per entry of next_functions, as torch reports them
            grads = record[node][1]
            grads = grads if isinstance(grads, tuple) else (
                tuple(grads) if isinstance(grads, list) else (grads,))
            # backward returns one gradient per input of forward (numbers and axes included);
            # _grad_inputs names, in next_functions order, the inputs that receive one.
            positions = iter(position for position, _, _ in node._grad_inputs)
            record[node][1] = tuple(None if child is None else grads[next(positions)]
                                    for child, _ in node.next_functions)
    return order, record


def _edge_inputs(node: Any) -> list[tuple[Any, int]]:
    """``(child, input number)`` for each entry of ``next_functions``."""
    return [(child, i) for i, (child, _) in enumerate(node.next_functions)]


class BackwardStepper:
    """Step through the backward pass of a coursekit or torch scalar, node by node.

    Example::

        >>> a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        >>> b = a + a
        >>> BackwardStepper((b + b).sum())   # in JupyterLab: click "Next node ▶"

    Args:
        t: the scalar backward starts from (a coursekit or torch tensor with a graph).
        retain_graph: keep the graph for another backward afterwards.

    Attributes:
        graph: the nodes and edges (:class:`coursekit.viz.Graph`), numbered in the order
            the engine ran them.
        steps: one :class:`Step` per node, in that order.
        position: the step shown (0 is the root).

    Raises:
        ValueError: ``t`` is not a tensor with a graph, or its graph was freed.
    """

    def __init__(self, t: Any, retain_graph: bool = False) -> None:
        if getattr(t, "grad_fn", None) is None:
            raise ValueError("BackwardStepper: the tensor has no graph (grad_fn is None): step "
                             "through a result computed from tensors with requires_grad=True")
        is_torch = type(t).__module__.startswith("torch")
        order, record = (_record_torch if is_torch else _record_coursekit)(t, retain_graph)
        self.graph: Graph = graph_of(order)
        index = {node: i for i, node in enumerate(order)}
        sent: list[tuple[tuple[int, int, np.ndarray], ...]] = []
        for node in order:
            grads = record.get(node, [(), ()])[1]
            sent.append(tuple(
                (index[child], i, _numpy(g)) for (child, i), g in zip(_edge_inputs(node), grads)
                if child is not None and g is not None and child in index))
        self.steps: list[Step] = []
        for i, node in enumerate(order):
            parts = tuple((j, k, g) for j in range(i) for (to, k, g) in sent[j] if to == i)
            received = record.get(node, [()])[0]
            if received and received[0] is not None:
                value = _numpy(received[0])
            elif parts:  # a coursekit leaf: the engine adds up what was sent, in this order
                value = parts[0][2]
                for _, _, g in parts[1:]:
                    value = value + g
            else:
                value = None
            self.steps.append(Step(i, self.graph.nodes[i].label, value, parts, sent[i]))
        self.position = 0
        self.controls: dict[str, Any] = {}  # the widgets, once built: "next", "picture", ...

    # ------------------------------------------------------------------ moving
    def go(self, position: int) -> None:
        """Show step ``position`` (clamped to the first and last step)."""
        self.position = max(0, min(position, len(self.steps) - 1))
        if self.controls:
            self._refresh()

    def next(self) -> None:
        self.go(self.position + 1)

    def previous(self) -> None:
        self.go(self.position - 1)

    @property
    def current(self) -> Step:
        return self.steps[self.position]

    # ------------------------------------------------------------------ words
    def _name(self, node: int) -> str:
        return f"node {node + 1} ({self.steps[node].label})"

    def describe(self, position: int) -> str:
        """What happens at step ``position``, in plain text."""
        step = self.steps[position]
        head = f"Step {position + 1} of {len(self.steps)}: {self._name(position)}"
        g = format_gradient(step.received)
        if step.received is None:
            lines = [f"{head} receives no gradient: nothing that uses its output sent one."]
        elif not step.parts:
            lines = [f"{head} is where backward starts. Its gradient with respect to itself "
                     f"is the seed:", f"    {g}"]
        elif len(step.parts) == 1:
            sender, k, _ = step.parts[0]
            lines = [f"{head} receives from {self._name(sender)}, for that node's input {k}:",
                     f"    {g}"]
        else:
            lines = [f"{head} receives {len(step.parts)} gradients, one for each use of its "
                     f"output, and adds them up:"]
            lines += [f"    {format_gradient(part)}   from {self._name(sender)}, its input {k}"
                      for sender, k, part in step.parts]
            lines += [f"  = {g}"]
        if step.is_leaf and step.received is not None:
            lines.append("  A leaf: this is added into the leaf's .grad.")
        for receiver, k, part in step.sent:
            lines.append(f"  Its backward rule sends, for its input {k}, to "
                         f"{self._name(receiver)}:")
            lines.append(f"    {format_gradient(part)}")
        return "\n".join(lines)

    def text(self) -> str:
        """Every step, as the static output prints them."""
        return "\n\n".join(self.describe(i) for i in range(len(self.steps)))

    # ------------------------------------------------------------------ pictures
    def figure(self, position: int | None = None) -> Any:
        """The graph at step ``position`` (None: after the last step, every gradient shown)."""
        from matplotlib.figure import Figure

        last = len(self.steps) - 1 if position is None else position
        labels, fills, texts = [], [], []
        for step in self.steps:
            name = f"{step.node + 1}. {step.label}"
            arrived = sum(1 for j, _, _ in step.parts if j <= last)
            if step.node <= last:
                labels.append(f"{name}\n{_short(step.received)}")
                fills.append(CURRENT if step.node == position else DONE)
                texts.append("black")
            else:
                waiting = 0 < arrived
                labels.append(f"{name}\n{arrived} of {len(step.parts)} gradients in" if waiting
                              else name)
                fills.append(WAITING if waiting else AHEAD)
                texts.append("black" if waiting else "#999999")
        edges = {(a, b): SENT if a <= last else NOT_SENT for a, b in self.graph.edges}
        width, height = figure_size(self.graph, lines=2)
        figure = Figure(figsize=(width, height))
        title = ("the whole backward pass: each node's gradient, numbered in the order the "
                 "engine ran them" if position is None else
                 f"step {position + 1} of {len(self.steps)}: green done, orange running, "
                 f"yellow has gradients waiting and runs later")
        draw(self.graph, figure.add_subplot(), title, labels=labels, fills=fills,
             text_colours=texts, edge_colours=edges, highlight=position)
        return figure

    def png(self, position: int | None = None) -> bytes:
        return png(self.figure(position))

    # ------------------------------------------------------------------ the notebook
    def widget(self) -> Any:
        """The ipywidgets stepper (built once). Its buttons carry the CSS classes
        ``coursekit-stepper-first``, ``-previous`` and ``-next``; the box ``coursekit-stepper``."""
        if not self.controls:
            import ipywidgets as w

            buttons = {
                "first": w.Button(description="◀◀ First node", tooltip="back to the root"),
                "previous": w.Button(description="◀ Previous node",
                                     tooltip="the node the engine ran before this one"),
                "next": w.Button(description="Next node ▶", button_style="primary",
                                 tooltip="the node the engine runs next"),
            }
            for name, button in buttons.items():
                button.layout.width = "auto"
                button.add_class(f"coursekit-stepper-{name}")
            buttons["first"].on_click(lambda _: self.go(0))
            buttons["previous"].on_click(lambda _: self.previous())
            buttons["next"].on_click(lambda _: self.next())
            self.controls = {**buttons, "status": w.HTML(), "picture": w.Image(format="png"),
                             "details": w.HTML()}
            self.controls["status"].add_class("coursekit-stepper-status")
            self.controls["details"].add_class("coursekit-stepper-details")
            box = w.VBox([w.HBox([*buttons.values(), self.controls["status"]]),
                          self.controls["picture"], self.controls["details"]])
            box.add_class("coursekit-stepper")
            self.controls["box"] = box
            self._refresh()
        return self.controls["box"]

    def _refresh(self) -> None:
        from html import escape

        ui, step = self.controls, self.current
        ui["status"].value = (f"<b>step {self.position + 1} of {len(self.steps)}</b>: "
                              f"{escape(self._name(step.node))}")
        ui["picture"].value = self.png(self.position)
        ui["details"].value = f"<pre>{escape(self.describe(self.position))}</pre>"
        ui["first"].disabled = ui["previous"].disabled = self.position == 0
        ui["next"].disabled = self.position == len(self.steps) - 1

    def mimebundle(self) -> dict[str, Any]:
        """The widget's display data, with the whole pass as a PNG and as text beside it.

        JupyterLab shows the widget. Where the widget's state was not saved with the
        notebook, nbconvert (feedback pages, HTML exports) shows the PNG instead, and an
        untrusted notebook in JupyterLab shows it too.
        """
        from base64 import b64encode

        bundle = dict(self.widget()._repr_mimebundle_())
        bundle["image/png"] = b64encode(self.png()).decode("ascii")
        bundle["text/plain"] = self.text()
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display

        if interactive():
            display(self.mimebundle(), raw=True)
        else:  # no one to click: the whole pass, as a picture and as text
            show_png(self.png())
            print(self.text())

    def __repr__(self) -> str:
        return f"<BackwardStepper: {len(self.steps)} nodes, at step {self.position + 1}>"
