"""Stateless layer and loss functions (``torch.nn.functional``'s names and semantics).

Each is composed of autograd ops, so none has a backward of its own: the gradient of
``cross_entropy`` is whatever the engine derives from ``log_softmax`` and indexing.
The Module classes in ``activation.py``, ``linear.py`` and ``loss.py`` call these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coursekit.autograd import Tensor
from coursekit.autograd.errors import ShapeError

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "linear",
    "mse_loss",
    "nll_loss",
    "cross_entropy",
]

_REDUCTIONS = ("mean", "sum", "none")


# ------------------------------------------------------------------ activations
def relu(input: Tensor) -> Tensor:
    r"""$\mathrm{relu}(x) = \max(x, 0)$"""
    return input.relu()


def sigmoid(input: Tensor) -> Tensor:
    r"""$\sigma(x) = 1 / (1 + e^{-x})$"""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    r"""$\tanh(x) = (e^x - e^{-x}) / (e^x + e^{-x})$"""
    return input.tanh()


def softmax(input: Tensor, dim: int) -> Tensor:
    r"""$\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}$ along ``dim``."""
    return input.softmax(dim=dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    r"""$\log\mathrm{softmax}(x)_i = x_i - \log\sum_j e^{x_j}$ along ``dim`` (computed stably)."""
    return input.log_softmax(dim=dim)


# ----------------------------------------------------------------------- linear
def _check_linear_input(input: Any, weight: Tensor, caller: Any) -> None:
    """Refuse inputs ``linear`` cannot use, saying expected vs got (the matmul error would not say why).

    ``caller`` names the layer in the message: a string, or the module itself, whose repr is
    only built when there is an error to report (this check runs on every forward).
    """
    if (
        isinstance(input, Tensor)
        and input.dtype == weight.dtype
        and input.ndim > 0
        and input.shape[-1] == weight.shape[-1]
    ):
        return
    where = caller if isinstance(caller, str) else repr(caller)
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{where}: expected a coursekit Tensor as input, got {type(input).__module__}.{type(input).__name__}; "
            "wrap it with coursekit.tensor(...)"
        )
    if input.dtype.kind != "f":
        raise TypeError(
            f"{where}: expected a floating-point input of dtype {weight.dtype} (the weight's dtype), "
            f"got {input.dtype}; convert it, e.g. x.to(np.{weight.dtype})"
        )
    if input.dtype != weight.dtype:
        raise TypeError(
            f"{where}: expected input of dtype {weight.dtype} (the weight's dtype), got {input.dtype}; "
            f"convert the input (x.to(np.{weight.dtype})) or the model (model.to(np.{input.dtype}))"
        )
    raise ShapeError(
        f"{where}: expected input with last dimension {weight.shape[-1]} (in_features), "
        f"got shape {tuple(input.shape)}"
    )


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""$y = x W^\top + b$, with ``weight`` of shape (out_features, in_features) as in torch.

    ``input`` has shape ``(*, in_features)``; the result has shape ``(*, out_features)``.
    """
    _check_linear_input(input, weight, "linear")
    output = input @ weight.T
    if bias is not None:
        output = output + bias
    return output


# ------------------------------------------------------------------------ losses
def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (expected one of {_REDUCTIONS})")


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    return Tensor(np.asarray(value, dtype=like.dtype))


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    r"""$\ell = \mathrm{reduce}\big((x - y)^2\big)$ with reduce = mean (default), sum or none.

    ``input`` and ``target`` must have the same shape. torch only warns when they differ
    and then broadcasts, so a ``(N, 1)`` prediction against a ``(N,)`` target silently
    compares every prediction with every target; here that is an error.
    """
    _check_reduction(reduction)
    target = _as_tensor_like(target, input)
    if tuple(input.shape) != tuple(target.shape):
        raise ShapeError(
            f"mse_loss: expected target of the input's shape {tuple(input.shape)}, got {tuple(target.shape)} "
            "(broadcasting them would compare every prediction with every target)"
        )
    diff = input - target
    return _reduce(diff * diff, reduction)


def _class_indices(target: Any) -> np.ndarray:
    if isinstance(target, Tensor):
        array = target.data
    elif type(target).__module__.startswith("torch"):
        array = target.detach().cpu().numpy()
    else:
        array = np.asarray(target)
    if array.dtype.kind not in "iu":
        raise TypeError(f"expected integer class indices (int64) as target, got dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


def _class_layout(input: Tensor, target: np.ndarray, where: str) -> tuple[int, tuple]:
    """Check ``target`` against ``input`` = (N, C, d1, ...) or (C,); return (C, the index that picks each target)."""
    if input.ndim == 0:
        raise ShapeError(f"{where}: expected input of shape (N, C) or (C,), got a 0-d tensor")
    if input.ndim == 1:
        expected: tuple[int, ...] = ()
    else:
        expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ShapeError(
            f"{where}: expected target of shape {expected} (one class index per row of the "
            f"{tuple(input.shape)} input), got {tuple(target.shape)}"
        )
    n_classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    return n_classes, expected


def _gather_index(target: np.ndarray, ndim: int) -> tuple:
    """The advanced index that picks ``input[n, target[n, ...], ...]`` for every position."""
    if ndim == 1:
        return (target,)
    grids = np.indices(target.shape, sparse=True)
    return (grids[0], target, *grids[1:])


def nll_loss(
    input: Tensor,
    target: Any,
    weight: Any = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    r"""Negative log-likelihood of the target classes, given log-probabilities ``input``.

    $\ell_n = -w_{y_n}\, x_{n, y_n}$; ``mean`` divides $\sum_n \ell_n$ by $\sum_n w_{y_n}$
    (by N without weights), ``sum`` sums, ``none`` keeps one loss per target.
    Targets equal to ``ignore_index`` contribute nothing, not even to the mean's count.

    Args:
        input: log-probabilities, shape (N, C), (N, C, d1, ...) or (C,).
        target: int class indices in [0, C), shape (N,), (N, d1, ...) or ().
        weight: optional per-class weights, shape (C,).
        ignore_index: a target value to skip.
        reduction: "mean", "sum" or "none".
    """
    _check_reduction(reduction)
    target = _class_indices(target)
    n_classes, _ = _class_layout(input, target, "nll_loss")
    ignored = target == ignore_index
    bad = (~ignored) & ((target < 0) | (target >= n_classes))
    if bad.any():
        raise IndexError(
            f"nll_loss: target {int(target[bad].flat[0])} is out of bounds: expected class indices "
            f"in [0, {n_classes}) (or ignore_index={ignore_index})"
        )
    safe = np.where(ignored, 0, target)
    picked = input[_gather_index(safe, input.ndim)]

    if weight is None and not ignored.any():
        return _reduce(-picked, reduction)

    if weight is None:
        per_target = (~ignored).astype(input.dtype)
    else:
        weights = weight.data if isinstance(weight, Tensor) else np.asarray(weight)
        if tuple(weights.shape) != (n_classes,):
            raise ShapeError(f"nll_loss: expected weight of shape ({n_classes},), got {tuple(weights.shape)}")
        per_target = np.where(ignored, 0, weights[safe]).astype(input.dtype)
    losses = -(picked * Tensor(per_target))
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    total = float(per_target.sum())
    # All targets ignored: torch returns nan (0/0); multiplying by nan says so without a NumPy warning.
    return losses.sum() / total if total != 0 else losses.sum() * float("nan")


def cross_entropy(
    input: Tensor,
    target: Any,
    weight: Any = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    r"""Cross-entropy between softmax(``input``) over dim 1 and the targets.

    With class indices: $\ell_n = -w_{y_n} \log \mathrm{softmax}(x_n)_{y_n}$, i.e.
    ``nll_loss(log_softmax(input, 1), target)``; with class probabilities ``p`` (a float
    target of the input's shape): $\ell_n = -\sum_c w_c\, p_{n,c} \log \mathrm{softmax}(x_n)_c$.
    ``label_smoothing`` $\varepsilon$ mixes the target with the uniform distribution:
    $(1-\varepsilon)\,\ell + \varepsilon\, \ell_{\text{uniform}}$, as torch does.

    Args:
        input: unnormalised scores (logits), shape (N, C), (N, C, d1, ...) or (C,).
        target: int class indices (see :func:`nll_loss`) or float probabilities of the input's shape.
        weight: optional per-class weights, shape (C,).
        ignore_index: a class-index target value to skip.
        reduction: "mean", "sum" or "none".
        label_smoothing: $\varepsilon$ in [0, 1].
    """
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = input.log_softmax(dim=class_dim)
    n_classes = input.shape[class_dim]
    weights = None
    if weight is not None:
        weights = weight.data if isinstance(weight, Tensor) else np.asarray(weight)
        if tuple(weights.shape) != (n_classes,):
            raise ShapeError(f"cross_entropy: expected weight of shape ({n_classes},), got {tuple(weights.shape)}")
        weights = weights.astype(input.dtype)
    # Shape of a per-class array broadcast along the class dimension of the input.
    class_shape = [1] * input.ndim
    class_shape[class_dim] = n_classes

    target_array = target.data if isinstance(target, Tensor) else np.asarray(target)
    if target_array.dtype.kind == "f":
        # Class probabilities.
        if tuple(target_array.shape) != tuple(input.shape):
            raise ShapeError(
                f"cross_entropy: expected probability targets of the input's shape {tuple(input.shape)}, "
                f"got {tuple(target_array.shape)}"
            )
        probs = _as_tensor_like(target, input)
        if label_smoothing > 0:
            probs = probs * (1 - label_smoothing) + label_smoothing / n_classes
        terms = log_probs * probs
        if weights is not None:
            terms = terms * Tensor(weights.reshape(class_shape))
        losses = -terms.sum(dim=class_dim)
        if reduction == "mean":
            # torch divides by the number of samples here, not by a sum of weights.
            return losses.sum() / (losses.data.size if losses.ndim else 1)
        return _reduce(losses, reduction)

    nll = nll_loss(log_probs, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll

    # The uniform part: -sum_c w_c log p_c per position, zero where the target is ignored.
    indices = _class_indices(target)
    ignored = indices == ignore_index
    scaled = log_probs if weights is None else log_probs * Tensor(weights.reshape(class_shape))
    smooth = -scaled.sum(dim=class_dim)
    if ignored.any():
        smooth = smooth * Tensor((~ignored).astype(input.dtype))
    if reduction == "mean":
        if weights is None:
            denominator = float((~ignored).sum())
        else:
            denominator = float(weights[np.where(ignored, 0, indices)][~ignored].sum())
        smooth = smooth.sum() / denominator if denominator != 0 else smooth.sum() * float("nan")
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)
