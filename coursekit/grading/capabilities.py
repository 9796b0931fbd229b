"""Capabilities a check can forbid: named groups of the ``forbid=`` patterns of :mod:`.targets`.

A check forbids what its exercise rebuilds, never a whole framework the lecture teaches: an
exercise that derives gradients by hand forbids every way to have them derived (:data:`AUTODIFF`),
and still lets the student update weights under ``torch.no_grad()`` (grad-mode context managers
are never targets).
"""
from __future__ import annotations

from .monitor import ENGINE_TARGET

# Every way to reverse-mode gradients in torch: the engine itself (watched from C++ while the
# check is driven, whatever path starts it: a C wrapper, TorchScript) and the Python ways in,
# named so that the student's message says which one ran.
AUTODIFF = (ENGINE_TARGET, "torch.autograd.backward", "torch.autograd.grad", ".backward",
            "torch.autograd.Function.apply", "torch.autograd.functional", "torch.func")

# A custom Function's backward must compute its gradient itself: no autograd inside it (the
# check's own program runs backward through it, which is allowed: see :mod:`.engine`).
DELEGATED_BACKWARD = (ENGINE_TARGET, "torch.autograd.backward", "torch.autograd.grad",
                      ".backward", "torch.autograd.functional", "torch.func")
