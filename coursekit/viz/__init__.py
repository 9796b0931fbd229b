"""Pictures of what the engine does, for the notebooks.

``graph.py``: ``backward_graph`` (the nodes and edges ``backward`` walks, from a coursekit or a
torch tensor) and ``draw_graph`` (the same, drawn with matplotlib)::

    from coursekit.viz import draw_graph
    draw_graph(loss, title="the graph backward() walks")

``stepper.py``: ``BackwardStepper(loss)`` runs ``loss.backward()`` and lets you step through it
node by node, each node's gradient shown (a widget in JupyterLab).

``live.py``: ``LossCurve``, a loss plot that grows while a training loop runs.

``display.py``: how they reach the notebook: live where a person watches (``interactive()``),
a static picture and text under nbval and nbgrader.

Nothing here imports torch or matplotlib at import time.
"""
from __future__ import annotations

from .display import interactive
from .graph import Graph, Node, backward_graph, draw_graph
from .live import LossCurve
from .stepper import BackwardStepper, Step

__all__ = ["BackwardStepper", "Graph", "LossCurve", "Node", "Step", "backward_graph",
           "draw_graph", "interactive"]
