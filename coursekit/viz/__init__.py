"""Pictures of what the engine does, for the notebooks.

``graph.py``: ``backward_graph`` (the nodes and edges ``backward`` walks, from a coursekit or a
torch tensor) and ``draw_graph`` (the same, drawn with matplotlib)::

    from coursekit.viz import draw_graph
    draw_graph(loss, title="the graph backward() walks")

Nothing here imports torch or matplotlib at import time.
"""
from __future__ import annotations

from .graph import Graph, Node, backward_graph, draw_graph

__all__ = ["Graph", "Node", "backward_graph", "draw_graph"]
