"""``Parameter``: a Tensor that a Module registers as trainable."""

from __future__ import annotations

from typing import Any

import numpy as np

from coursekit.autograd import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module's trainable weight.

    It behaves exactly like a Tensor; the only difference is what happens on
    assignment: ``module.w = Parameter(...)`` registers ``w`` in
    ``module.parameters()`` (and so in the optimizer and the state dict), while
    ``module.w = tensor(...)`` stores a plain attribute that nothing trains.

    Args:
        data: initial values: a Tensor (its array is shared, not copied, as in torch),
            a NumPy array (shared) or anything ``numpy.asarray`` accepts. ``None`` gives
            an empty float32 tensor.
        requires_grad: whether the parameter takes part in autograd (default True;
            False makes it a frozen weight).

    Example:
        >>> w = Parameter(np.zeros((3, 2)))
        >>> w.requires_grad, w.is_leaf
        (True, True)
    """

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            array = np.empty((0,), dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data.data
        else:
            array = data
        super().__init__(array, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Tensor uses __slots__; rebuild from the array and the flag (grads are not pickled, as in torch).
        return (Parameter, (self.data, self.requires_grad))
