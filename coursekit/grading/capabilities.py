"""Capabilities a check can forbid: named groups of the ``forbid=`` patterns of :mod:`.targets`.

A check forbids what its exercise rebuilds, never a whole framework the lecture teaches: an
exercise that derives gradients by hand forbids every way to have them derived (:data:`AUTODIFF`),
and still lets the student update weights under ``torch.no_grad()`` (grad-mode context managers
are never targets).
"""
from __future__ import annotations

from .monitor import ENGINE_TARGET

# The other frameworks' ways to gradients, and where each lives in its package: the grader
# resolves them by file (:func:`.targets.target`) and never imports a framework to do it.
BY_FILE = {
    **{f"jax.{name}": ("jax", "_src/api.py", name, name)
       for name in ("grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
                    "hessian")},
    "tensorflow.GradientTape": ("tensorflow", "python/eager/backprop.py", "GradientTape.", ""),
    "tensorflow.gradients": ("tensorflow", "python/ops/gradients_impl.py", "gradients", ""),
}

# Every way to gradients: torch's engine itself (watched from C++ while the check is driven,
# whatever path starts it: a C wrapper, TorchScript, a node called by hand), the Python ways
# in, named so that the student's message says which one ran, forward mode (one JVP per input
# entry is a whole gradient, and runs no node of the engine: its Python doors are named here,
# and the engine watch charges a dual level open as the check starts or ends, however it was
# entered), and JAX's and TensorFlow's (a
# NumPy exercise's gradients by hand are no more by hand from JAX).
FORWARD_MODE = ("torch.autograd.forward_ad", "torch._functorch.predispatch", "torch._make_dual",
                "torch._unpack_dual", "torch._C._enter_dual_level")
AUTODIFF = (ENGINE_TARGET, "torch.autograd.backward", "torch.autograd.grad", ".backward",
            "torch.autograd.Function.apply", "torch.autograd.functional", "torch.func",
            *FORWARD_MODE, *BY_FILE)

# A custom Function's backward must compute its gradient itself: no autograd inside it (the
# check's own program runs backward through it, which is allowed: see :mod:`.engine`).
DELEGATED_BACKWARD = (ENGINE_TARGET, "torch.autograd.backward", "torch.autograd.grad",
                      ".backward", "torch.autograd.functional", "torch.func", *FORWARD_MODE)
