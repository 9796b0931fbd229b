"""Warm-ups: first uses of a framework that a grading kernel makes before its monitor.

A check module that defines ``warm_up()`` has it run by :mod:`.kernel` right after the lab's
setup imports, before the monitor is installed and before any student code. Some first uses
load hundreds of modules lazily: under the monitor, whose profile function sees every Python
call, that load costs two to three times as much, in the first check that meets it.
"""
from __future__ import annotations

import sys

_WARMED: set[str] = set()   # check modules whose warm-up ran in this process


def warm_up_for(check) -> None:
    """The ``warm_up()`` of the module that holds ``check``, once per process. The grading
    kernel runs it before its monitor; student mode and the mutant harness run it before the
    watch (:mod:`.watch`, the same profile function's cost), so that a lab's first check does
    not take three times as long as its second."""
    module = sys.modules[check.program.__module__]
    if module.__name__ not in _WARMED:
        _WARMED.add(module.__name__)
        getattr(module, "warm_up", lambda: None)()


def torch_meta() -> None:
    """The meta device's first forward and backward: torch loads its Python meta kernels and
    symbolic shapes (sympy, some 800 modules) on first use."""
    import torch
    x = torch.empty(4, 3, device="meta", requires_grad=True)
    w = torch.empty(3, 2, device="meta", requires_grad=True)
    loss = (x @ w).clamp(min=0).pow(2).sum()
    torch.autograd.grad(loss, (x, w))
