"""Tapes: a check's random inputs, drawn in the grader and replayed in the student's kernel.

A check program draws its inputs from a NumPy ``Generator`` (see :mod:`.program`). At grading
time the seed of a hidden check is secret, so it never enters the student's kernel. Instead the
grader runs the program on the reference with a :class:`RecordingRng`, which writes every draw
on a tape, and sends the kernel only the tape. There a :class:`TapeRng` answers the program's
draws from the tape, in order. The kernel so learns the inputs of one check when that check is
driven, and nothing else: not the seed, not the inputs of other checks, not the expected outputs.

Replay is exact because programs follow two rules: every draw happens in the generator body
(never inside a thunk), and the program never branches on a thunk's result. The tape records
each draw's method name, so a program that breaks the rules stops with a clear error instead of
comparing different inputs.

Tapes travel as JSON: arrays as base64 of their bytes with dtype and shape (numeric, boolean and
fixed-width string dtypes, as ``rng.choice`` over names returns).
"""
from __future__ import annotations

import base64
from typing import Any

import numpy as np

_ARRAY_KINDS = "biufcU"


class TapeError(RuntimeError):
    """The program asked for a draw the tape does not hold (a check that breaks the rules)."""


class RecordingRng:
    """A ``numpy.random.Generator`` that records every draw (method name and result)."""

    def __init__(self, seed: int):
        self._rng = np.random.default_rng(seed)
        self.tape: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._rng, name)
        if not callable(method):
            raise AttributeError(f"a check may only call the generator's methods, not read "
                                 f"{name!r}")

        def draw(*args: Any, **kwargs: Any) -> Any:
            value = method(*args, **kwargs)
            self.tape.append((name, _copy(value)))
            return value
        return draw


class TapeRng:
    """Answers a program's draws from a tape, in the order they were recorded."""

    def __init__(self, tape: list[tuple[str, Any]]):
        self._tape = list(tape)
        self._position = 0

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            if self._position >= len(self._tape):
                raise TapeError(f"the check drew more inputs ({name}) than the grader recorded")
            recorded, value = self._tape[self._position]
            if recorded != name:
                raise TapeError(f"draw {self._position + 1}: the check asked for {name}, the "
                                f"grader recorded {recorded}")
            self._position += 1
            return _copy(value)
        return draw


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, (np.ndarray, np.generic)) else value


def dump(tape: list[tuple[str, Any]]) -> list:
    """A tape as JSON-compatible data."""
    return [[name, _dump_value(value)] for name, value in tape]


def load(data: list) -> list[tuple[str, Any]]:
    """Inverse of :func:`dump`."""
    return [(str(name), _load_value(value)) for name, value in data]


def _dump_value(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in _ARRAY_KINDS:
            raise TapeError(f"a draw of dtype {array.dtype} cannot be put on a tape")
        # tobytes() is C order whatever the layout; np.ascontiguousarray would turn a 0-d
        # array (a scalar draw) into shape (1,).
        return {"bytes": base64.b64encode(array.tobytes(order="C")).decode("ascii"),
                "dtype": array.dtype.str, "shape": list(array.shape),
                "scalar": isinstance(value, np.generic)}
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (list, tuple):
        return {"seq": type(value).__name__, "items": [_dump_value(v) for v in value]}
    raise TapeError(f"a draw of type {type(value).__name__} cannot be put on a tape")


def _load_value(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    if "seq" in data:
        items = [_load_value(v) for v in data["items"]]
        return tuple(items) if data["seq"] == "tuple" else items
    dtype = np.dtype(data["dtype"])
    array = np.frombuffer(base64.b64decode(data["bytes"]), dtype=dtype).reshape(
        tuple(data["shape"])).copy()
    return array[()] if data.get("scalar") else array
