"""Parameter initialisation, with ``torch.nn.init``'s names and formulas.

Every function fills ``tensor.data`` in place (no graph is recorded) and returns the
tensor. Random ones take ``generator``: a ``numpy.random.Generator`` or an int seed,
for reproducible initialisation; without it they draw from this module's default
generator, which :func:`manual_seed` reseeds.

Fan-in / fan-out of a weight of shape ``(out, in, *kernel)``::

    fan_in  = in  * prod(kernel)
    fan_out = out * prod(kernel)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "manual_seed",
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "zeros_",
    "ones_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
]

_default_generator = np.random.default_rng()

Generator = np.random.Generator | int | None


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the generator used when no ``generator`` is passed; returns it.

    After ``manual_seed(0)``, building the same model again gives the same weights.
    """
    global _default_generator
    _default_generator = np.random.default_rng(seed)
    return _default_generator


def _rng(generator: Generator) -> np.random.Generator:
    if generator is None:
        return _default_generator
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)):
        return np.random.default_rng(int(generator))
    raise TypeError(f"generator must be a numpy.random.Generator, an int seed or None, got {type(generator).__name__}")


def _fill(tensor: Any, values: np.ndarray | float) -> Any:
    tensor.data[...] = values
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    r"""The gain that keeps activations' variance steady through ``nonlinearity``.

    linear / conv / sigmoid: 1; tanh: 5/3; relu: :math:`\sqrt{2}`;
    leaky_relu with slope ``a``: :math:`\sqrt{2 / (1 + a^2)}`; selu: 3/4.
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Any) -> tuple[int, int]:
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {shape})"
        )
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Any, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Any, a: float = 0.0, b: float = 1.0, generator: Generator = None) -> Any:
    r"""Fill with draws from :math:`\mathcal{U}(a, b)`."""
    return _fill(tensor, _rng(generator).uniform(a, b, size=tuple(tensor.shape)))


def normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, generator: Generator = None) -> Any:
    r"""Fill with draws from :math:`\mathcal{N}(\text{mean}, \text{std}^2)`."""
    return _fill(tensor, _rng(generator).normal(mean, std, size=tuple(tensor.shape)))


def constant_(tensor: Any, val: float) -> Any:
    """Fill with ``val``."""
    return _fill(tensor, val)


def zeros_(tensor: Any) -> Any:
    """Fill with 0."""
    return _fill(tensor, 0.0)


def ones_(tensor: Any) -> Any:
    """Fill with 1."""
    return _fill(tensor, 1.0)


def xavier_uniform_(tensor: Any, gain: float = 1.0, generator: Generator = None) -> Any:
    r"""Glorot uniform: :math:`\mathcal{U}(-b, b)`, :math:`b = \text{gain}\sqrt{6 / (\text{fan\_in} + \text{fan\_out})}`."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Any, gain: float = 1.0, generator: Generator = None) -> Any:
    r"""Glorot normal: :math:`\mathcal{N}(0, \sigma^2)`, :math:`\sigma = \text{gain}\sqrt{2 / (\text{fan\_in} + \text{fan\_out})}`."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Any,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator = None,
) -> Any:
    r"""He uniform: :math:`\mathcal{U}(-b, b)`, :math:`b = \text{gain}\sqrt{3 / \text{fan}}`.

    ``Linear`` uses ``a = sqrt(5)`` (gain :math:`\sqrt{1/3}`), which gives
    :math:`b = 1/\sqrt{\text{fan\_in}}`.
    """
    if 0 in tuple(tensor.shape):
        return tensor  # nothing to fill, and the fan would divide by zero
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Any,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator = None,
) -> Any:
    r"""He normal: :math:`\mathcal{N}(0, \sigma^2)`, :math:`\sigma = \text{gain} / \sqrt{\text{fan}}`."""
    if 0 in tuple(tensor.shape):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)
