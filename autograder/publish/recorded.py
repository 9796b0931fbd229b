"""Recorded expectations: visible checks in the student build, without the reference code.

Shipped into the student bundle as ``coursekit/_recorded.py`` (see :mod:`autograder.publish.bundle`).
A visible check's seed is public, so the reference's results on it are fixed: the bundle
builder records them (:func:`record`) in ``<lab>.expected.json`` next to the check program,
whose reference functions it removes. In the student build each check is registered with
:func:`recorded_check`: on the student's object the program runs as usual; on the reference it
draws the same inputs and answers each case with the recorded value. Students so see the same
verdicts and messages as with the reference, and learn the expected outputs of the visible
inputs (which a failed check prints anyway), never the code. Hidden inputs are the grader's:
asked for anything else, the recording says so instead of comparing.
"""
from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

RECORDED = "recorded expectations"   # stands for the reference implementation


def record(check_name: str) -> list[dict]:
    """The reference's cases on the visible seed of ``check_name``, as JSON-ready dicts."""
    from coursekit.grading.encoding import encode, encode_error
    from coursekit.grading.program import get_check, run_program
    from coursekit.grading.seeds import public_seed
    check = get_check(check_name)
    cases = []
    for obs in run_program(check, check.reference_impl(), public_seed(check_name)):
        if obs.case is None:
            raise RuntimeError(f"{check_name} crashed on the reference: {obs.error!r}")
        case = obs.case
        cases.append({"label": case.label, "hint": case.hint, "rtol": case.rtol,
                      "atol": case.atol, "weight": case.weight, "names": list(case.names),
                      "value": encode_error(obs.error) if obs.error is not None
                      else encode(obs.value)})
    return cases


class _Anything:
    """Stands in for the student's object while the program only draws its inputs."""

    def __getattr__(self, name: str) -> "_Anything":
        return self

    def __getitem__(self, key: Any) -> "_Anything":
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> "_Anything":
        return self


def _answer(payload: Any):
    """A thunk that gives back the recorded value (or raises the recorded error)."""
    from coursekit.grading.encoding import MetaTensor, RaisedError, decode
    value = _rebuilt(decode(payload), MetaTensor)

    def thunk():
        if isinstance(value, RaisedError):
            raise type(value.type_name, (Exception,), {})(value.message)
        return value
    return thunk


def _rebuilt(value: Any, meta_tensor: type) -> Any:
    """A recorded meta tensor as a real one (``torch.empty`` on ``meta``): the student's check
    compares torch tensors with torch tensors, as it does against the reference."""
    if isinstance(value, meta_tensor):
        import torch
        return torch.empty(value.shape, dtype=getattr(torch, value.dtype.removeprefix("torch.")),
                           device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_rebuilt(v, meta_tensor) for v in value)
    if isinstance(value, dict):
        return {k: _rebuilt(v, meta_tensor) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=None)
def _expected(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def replaying(program, check_name: str, expected_file: Path):
    """``program``, which answers from the recording when run on the reference."""
    @functools.wraps(program)
    def run(impl, rng):
        if impl is not RECORDED:
            yield from program(impl, rng)
            return
        recorded = {c["label"]: c for c in _expected(str(expected_file)).get(check_name, [])}
        inner = program(_Anything(), rng)
        sent = None
        while True:
            try:
                case = inner.send(sent)
            except StopIteration:
                return
            known = recorded.get(case.label)
            if known is None:
                raise RuntimeError(f"{check_name}: the student build holds the expected results "
                                   f"of the visible inputs only; hidden inputs are checked when "
                                   f"you are graded")
            sent = yield dataclasses.replace(case, thunk=_answer(known["value"]))
    return run


def recorded_check(name: str, *, expected_file: Path, reference: Any = None,
                   description: str = "", **options: Any):
    """``coursekit.grading.program.check`` for the student build (see the module docstring).
    Every other keyword of ``check`` (``forbid``, ``after``) passes through unchanged."""
    from coursekit.grading.program import check

    def register(program):
        check(name, reference=lambda: RECORDED,
              description=description or (program.__doc__ or "").strip().split("\n")[0],
              **options)(replaying(program, name, expected_file))
        return program
    return register
