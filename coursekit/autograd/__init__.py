"""coursekit's reference autograd engine: tensors over NumPy, reverse mode, as in PyTorch.

| file | concept |
| --- | --- |
| ``tensor.py`` | ``Tensor`` and the ``tensor()`` factory |
| ``function.py`` | ``Function`` (one op: forward and backward), its ``Context``, ``AccumulateGrad`` |
| ``engine.py`` | ``toposort`` and ``backward``: reverse mode over a topological order |
| ``grad_mode.py`` | ``no_grad`` and ``enable_grad`` |
| ``broadcast.py`` | ``unbroadcast``: the one place gradients are reduced to an input's shape |
| ``ops/`` | the built-in ops, one ``Function`` each |
| ``gradcheck.py`` | finite-difference check of any op's backward |
| ``errors.py`` | ``ShapeError``, ``BackwardError``, ``GradcheckError`` |
| ``creation.py`` | ``zeros``, ``ones``, ... |
"""
# tensor first: it pulls in engine and ops once Tensor exists (they use it at import).
from .tensor import Tensor, tensor  # isort: skip
from . import ops
from .broadcast import unbroadcast
from .creation import arange, ones, ones_like, zeros, zeros_like
from .engine import backward, toposort
from .errors import BackwardError, GradcheckError, ShapeError
from .function import AccumulateGrad, Context, Function
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck

__all__ = [
    "AccumulateGrad", "BackwardError", "Context", "Function", "GradcheckError", "ShapeError", "Tensor",
    "arange", "backward", "enable_grad", "gradcheck", "is_grad_enabled", "no_grad", "ones", "ones_like",
    "ops", "set_grad_enabled", "tensor", "toposort", "unbroadcast", "zeros", "zeros_like",
]
