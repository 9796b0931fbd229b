"""``gradcheck``: compare backward's gradients with finite differences.

The second oracle after PyTorch: it needs no other framework, only the definition of the
derivative. For every input element, nudge it by ±eps and watch every output element:
``(f(x + eps) - f(x - eps)) / (2 eps)`` is one column of the Jacobian. Backward, called once
per output element with a one-hot upstream gradient, gives the rows. Both run in float64,
where eps = 1e-6 leaves a truncation and round-off error far below the tolerances.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import grad_mode
from .errors import GradcheckError
from .tensor import Tensor


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> tuple[Tensor, ...]:
    out = fn(*inputs)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def gradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check ``fn``'s gradients with respect to every input that requires grad.

    Args:
        fn: takes ``*inputs`` and returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors (and other values passed through unchanged).
            Tensors are copied to float64 first; the originals are not touched.
        eps: the finite-difference step.
        atol, rtol: an analytical value ``a`` passes when ``|a - n| <= atol + rtol * |n|``
            for the numerical value ``n``.
        raise_exception: raise ``GradcheckError`` on a mismatch (else return False).

    Returns:
        True when every gradient agrees.

    Raises:
        GradcheckError: naming the output, the input, the element, and the numerical and
            analytical values of the first disagreement.
    """
    if isinstance(inputs, Tensor) or not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    inputs = [
        Tensor(x._data.astype(np.float64), requires_grad=x.requires_grad) if isinstance(x, Tensor) else x
        for x in inputs
    ]
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad, so there is nothing to check")

    with grad_mode.enable_grad():
        outputs = _outputs(fn, inputs)
    for k, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out.requires_grad:
            continue  # an output that does not depend on the inputs has nothing to check
        analytical = _analytical(fn, inputs, wrt, k, out)
        numerical = _numerical(fn, inputs, wrt, k, eps)
        for i in wrt:
            a, n = analytical[i], numerical[i]
            bad = np.abs(a - n) > atol + rtol * np.abs(n)
            bad |= np.isnan(a) != np.isnan(n)
            if bad.any():
                r, c = np.unravel_index(np.argmax(bad), bad.shape)
                out_index = tuple(int(j) for j in np.unravel_index(r, out.shape))
                in_index = tuple(int(j) for j in np.unravel_index(c, inputs[i].shape))
                message = (
                    f"Jacobian mismatch for output {k} with respect to input {i} at input element "
                    f"{in_index} (output element {out_index}): numerical {n[r, c]:.6g}, "
                    f"analytical {a[r, c]:.6g} (atol={atol}, rtol={rtol}; "
                    f"{int(bad.sum())} of {bad.size} Jacobian entries differ)"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def _analytical(fn: Callable[..., Any], inputs: list[Any], wrt: list[int], k: int, out: Tensor) -> dict[int, np.ndarray]:
    """Jacobians d out_k / d input_i from backward, one row per output element."""
    jac = {i: np.zeros((max(out._data.size, 1), inputs[i]._data.size)) for i in wrt}
    for r in range(out._data.size):
        for i in wrt:
            inputs[i].grad = None
        with grad_mode.enable_grad():
            out_r = _outputs(fn, inputs)[k]  # a fresh graph per row: no retain_graph needed
        seed = np.zeros(out_r.shape)
        seed.flat[r] = 1.0
        out_r.backward(seed)
        for i in wrt:
            if inputs[i].grad is not None:
                jac[i][r] = inputs[i].grad._data.ravel()
    for i in wrt:
        inputs[i].grad = None
    return jac


def _numerical(fn: Callable[..., Any], inputs: list[Any], wrt: list[int], k: int, eps: float) -> dict[int, np.ndarray]:
    """Jacobians d out_k / d input_i by central differences, one column per input element."""
    jac = {}
    with grad_mode.no_grad():
        for i in wrt:
            x = inputs[i]._data
            columns = []
            for c in range(x.size):
                original = x.flat[c]
                x.flat[c] = original + eps
                plus = np.array(_outputs(fn, inputs)[k]._data, dtype=np.float64).ravel()
                x.flat[c] = original - eps
                minus = np.array(_outputs(fn, inputs)[k]._data, dtype=np.float64).ravel()
                x.flat[c] = original
                columns.append((plus - minus) / (2 * eps))
            jac[i] = np.stack(columns, axis=1) if columns else np.zeros((1, 0))
    return jac
