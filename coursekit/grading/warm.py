"""Warm-ups: first uses of a framework that a grading kernel makes before its monitor.

A check module that defines ``warm_up()`` has it run by :mod:`.kernel` right after the lab's
setup imports, before the monitor is installed and before any student code. Some first uses
load hundreds of modules lazily: under the monitor, whose profile function sees every Python
call, that load costs two to three times as much, in the first check that meets it.
"""
from __future__ import annotations


def torch_meta() -> None:
    """The meta device's first forward and backward: torch loads its Python meta kernels and
    symbolic shapes (sympy, some 800 modules) on first use."""
    import torch
    x = torch.empty(4, 3, device="meta", requires_grad=True)
    w = torch.empty(3, 2, device="meta", requires_grad=True)
    loss = (x @ w).clamp(min=0).pow(2).sum()
    torch.autograd.grad(loss, (x, w))
