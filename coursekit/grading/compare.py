"""Compare one observed value with the expected one, and say precisely what differs."""
from __future__ import annotations

from typing import Any

import numpy as np

from .encoding import MetaTensor, Opaque, RaisedError


def compare(got: Any, expected: Any, *, rtol: float = 1e-5, atol: float = 1e-7,
            names: tuple[str, ...] = ()) -> str | None:
    """Return ``None`` if ``got`` matches ``expected``, else a one-line explanation.

    Both sides are decoded observations (see :mod:`.encoding`): NumPy arrays, Python scalars,
    strings, tuples/lists/dicts of those, :class:`RaisedError`, :class:`MetaTensor`.
    """
    return _compare(got, expected, rtol, atol, names, path="")


def describe(value: Any) -> str:
    """A short human description of a decoded value, for messages."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0 or value.size == 1:
            return f"{value.reshape(-1)[0]!r}" if value.size else "an empty array"
        return f"an array of shape {tuple(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, dict):
        return f"a dict with keys {sorted(value)}"
    if isinstance(value, RaisedError):
        return f"{value.type_name} raised"
    return repr(value)


def _where(path: str) -> str:
    return f"{path}: " if path else ""


def _compare(got: Any, expected: Any, rtol: float, atol: float, names: tuple[str, ...],
             path: str) -> str | None:
    if isinstance(expected, RaisedError):
        if isinstance(got, RaisedError) and expected.type_name in got.names:
            return None
        return (f"{_where(path)}expected {expected.type_name} to be raised, "
                f"got {describe(got) if not isinstance(got, RaisedError) else repr(got)}")
    if isinstance(got, RaisedError):
        return f"{_where(path)}raised {got!r}"
    if isinstance(got, Opaque):
        return f"{_where(path)}returned {got.description}, expected {describe(expected)}"
    if isinstance(expected, (np.ndarray, float, np.floating)) and not isinstance(expected, bool):
        return _compare_arrays(got, np.asarray(expected), rtol, atol, path)
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            return f"{_where(path)}returned {describe(got)}, expected {describe(expected)}"
        if len(got) != len(expected):
            return (f"{_where(path)}returned {len(got)} items, expected {len(expected)}"
                    + (f" ({', '.join(names)})" if names else ""))
        for index, (g, e) in enumerate(zip(got, expected)):
            item = names[index] if index < len(names) else f"{path}[{index}]"
            message = _compare(g, e, rtol, atol, (), item)
            if message:
                return message
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{_where(path)}returned {describe(got)}, expected {describe(expected)}"
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        if missing or extra:
            return f"{_where(path)}keys differ: missing {missing}, unexpected {extra}"
        for key in expected:
            message = _compare(got[key], expected[key], rtol, atol, (), f"{path}[{key!r}]")
            if message:
                return message
        return None
    if isinstance(expected, MetaTensor):
        return _compare_meta(got, expected, path)
    if isinstance(expected, (bool, int, np.integer, str)) or expected is None:
        if isinstance(got, np.ndarray) and got.size == 1 and not isinstance(expected, str):
            got = got.reshape(-1)[0].item()
        # Only plain scalars are compared with ``==``: an array (or anything else) on the left
        # would broadcast, and the truth value of the result is ambiguous.
        plain = got is None or isinstance(got, (bool, int, float, str))
        same_kind = isinstance(got, bool) == isinstance(expected, bool)
        if plain and same_kind and got == expected:
            return None
        shown = describe(got) if isinstance(got, np.ndarray) else repr(got)
        return f"{_where(path)}got {shown}, expected {expected!r}"
    return f"{_where(path)}cannot compare {describe(got)} with {describe(expected)}"


def _compare_meta(got: Any, expected: MetaTensor, path: str) -> str | None:
    """A tensor on the ``meta`` device is expected: only its shape, dtype and device count."""
    if isinstance(got, MetaTensor):
        if got == expected:
            return None
        what = [f"{name} {g} where {e} was expected" for name, g, e in (
            ("shape", got.shape, expected.shape), ("dtype", got.dtype, expected.dtype),
            ("device", got.device, expected.device)) if g != e]
        return f"{_where(path)}got a tensor with {'; '.join(what)}"
    if isinstance(got, np.ndarray):
        # A torch tensor with data arrives as an array: it was not on the meta device. Torch
        # lets in-place ops mix a CPU tensor with meta ones, so such a tensor can reach here.
        return (f"{_where(path)}got a cpu tensor of shape {tuple(got.shape)} where a meta "
                f"tensor was expected ({expected!r}): something in it was made on the CPU "
                f"(torch.zeros(n) without device=, a .cpu() or .numpy() round trip); create "
                f"it with device=x.device, torch.zeros_like(x) or x.new_zeros(n)")
    return f"{_where(path)}got {describe(got)}, expected a meta tensor ({expected!r})"


def _compare_arrays(got: Any, expected: np.ndarray, rtol: float, atol: float,
                    path: str) -> str | None:
    if isinstance(got, (bool, int, float)) or (isinstance(got, np.ndarray)):
        got = np.asarray(got)
    else:
        return f"{_where(path)}returned {describe(got)}, expected {describe(expected)}"
    if got.dtype.kind not in "biuf" or expected.dtype.kind not in "biuf":
        return f"{_where(path)}returned values of dtype {got.dtype}, expected {expected.dtype}"
    if got.shape != expected.shape:
        if got.size == expected.size == 1:
            got = got.reshape(expected.shape)
        else:
            return (f"{_where(path)}shape {tuple(got.shape)} differs from the expected "
                    f"{tuple(expected.shape)}")
    if expected.size == 0:
        return None
    got64, exp64 = got.astype(np.float64), expected.astype(np.float64)
    close = np.isclose(got64, exp64, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    at = f" at index {first}" if expected.ndim else ""
    g, e = got64[first], exp64[first]
    message = f"{_where(path)}differs{at}: got {g:.6g}, expected {e:.6g}"
    if expected.ndim and len(bad) > 1:
        finite = np.isfinite(got64) & np.isfinite(exp64)
        worst = np.max(np.abs(got64 - exp64)[finite & ~close]) if (finite & ~close).any() else np.nan
        message += f" ({len(bad)} of {expected.size} elements differ; largest error {worst:.3g})"
    if not np.isfinite(g) and np.isfinite(e):
        message += " — a non-finite value where a finite one is expected (overflow? log of 0?)"
    return message
