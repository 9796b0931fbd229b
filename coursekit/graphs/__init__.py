"""Static graphs of dynamic models (lab06): the models its checks export, the reference for
finding where a trace and eager disagree, and a runner that loads a saved graph in a fresh
Python process.

``models.py``: small ``torch.nn`` models and functions with data-dependent control flow;
``tracing.py``: ``trace_disagreements`` (the lab's reference answer);
``fresh_process.py``: ``run_in_fresh_process`` (what a deployment without your code sees).

Nothing here imports torch at import time.
"""
from __future__ import annotations

from .fresh_process import FreshProcessError, run_in_fresh_process
from .tracing import trace_disagreements

__all__ = ["FreshProcessError", "run_in_fresh_process", "trace_disagreements"]
