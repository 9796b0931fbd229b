"""Checks: small random programs run once on the student's code and once on the reference.

A check is a generator function ``program(impl, rng)``. It draws its inputs from ``rng`` and
yields :class:`Case` objects, each wrapping a zero-argument ``thunk`` that calls ``impl``.
The runner calls each thunk, records what it returned (or raised) as an observation, and
sends the value back into the generator, so later steps can build on earlier ones.

The same program, with the same seed, runs on the student's implementation (in the student's
kernel) and on the reference (in the grader), and the two lists of observations are compared
label by label. Rules that keep the two runs aligned:

* draw every random input in the generator body, never inside a thunk;
* never branch on a value a thunk returned (the student's may differ);
* give every case a unique, readable label: it is what the student sees.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

import numpy as np

Program = Callable[[Any, np.random.Generator], Iterator["Case"]]


@dataclass
class Case:
    """One observation to make: ``thunk()`` is run and its result compared.

    Attributes:
        label: what is being observed, shown to the student ("grad_w1, trial 2 (N=3, D=5)").
        thunk: zero-argument callable that exercises the implementation.
        hint: where to look when this observation differs.
        rtol, atol: tolerances for floating-point comparison.
        weight: share of the cell's points relative to the other cases.
        names: labels for the items of a tuple result, e.g. ``("grad_x", "grad_y")``.
        follows: labels of earlier cases this one builds on (the same object, a state they
            left). When one of them failed, this case's failure is reported as following from
            it, without a hint of its own: its hint would name a mistake the student may not
            have made.
    """

    label: str
    thunk: Callable[[], Any]
    hint: str = ""
    rtol: float = 1e-5
    atol: float = 1e-7
    weight: float = 1.0
    names: tuple[str, ...] = ()
    follows: tuple[str, ...] = ()


@dataclass
class Check:
    """A named, registered check (see module docstring)."""

    name: str
    program: Program
    reference: Callable[[], Any]
    forbid: tuple[str, ...] = ()
    description: str = ""
    after: tuple[str, ...] = ()
    _reference_impl: Any = field(default=None, repr=False)

    def reference_impl(self) -> Any:
        if self._reference_impl is None:
            self._reference_impl = self.reference()
        return self._reference_impl


_REGISTRY: dict[str, Check] = {}
_HANDED: list[Any] = []


def handed(obj):
    """Mark ``obj`` (a class or function of a checks module) as handed to the student's code
    by the check's program: a dataset it iterates, a fake device it times, a callback. The
    grading monitor lets student code call these; any other grading code it calls is
    reported (the closures a program makes while it runs are handed by construction)."""
    _HANDED.append(obj)
    return obj


def handed_objects() -> tuple:
    return tuple(_HANDED)


def check(name: str, *, reference: Callable[[], Any], forbid: tuple[str, ...] = (),
          description: str = "", after: tuple[str, ...] = ()) -> Callable[[Program], Program]:
    """Register ``program`` as the check ``name`` (``"<lab>.<exercise>"``).

    Args:
        reference: called once, lazily, to build the reference implementation.
        forbid: module prefixes the student's code must not use for this exercise, e.g.
            ``("torch.autograd", "coursekit.autograd")`` where the exercise rebuilds autograd.
        after: checks of earlier exercises whose answers this one's answer calls: when one of
            them fails, this check's failure is reported as following from it.
    """
    def register(program: Program) -> Program:
        _REGISTRY[name] = Check(name, program, reference, tuple(forbid),
                                description or (program.__doc__ or "").strip().split("\n")[0],
                                tuple(after))
        return program
    return register


# Extra packages searched for ``<lab>`` check modules (comma-separated), after the built-in
# one: a course whose checks live elsewhere (the test fixtures) sets it for grader and kernel.
CHECK_PACKAGES_ENV = "COURSEKIT_CHECK_PACKAGES"


def get_check(name: str) -> Check:
    """The check called ``name``, importing ``coursekit.grading.checks.<lab>`` on first use
    (or ``<package>.<lab>`` for each package named in ``COURSEKIT_CHECK_PACKAGES``)."""
    if name not in _REGISTRY:
        lab = name.split(".", 1)[0]
        extra = [p for p in os.environ.get(CHECK_PACKAGES_ENV, "").split(",") if p.strip()]
        for package in ["coursekit.grading.checks", *extra]:
            module = f"{package.strip()}.{lab}"
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as error:
                if error.name not in (module, package.strip()):
                    raise
            if name in _REGISTRY:
                break
    if name not in _REGISTRY:
        raise KeyError(f"no check named {name!r}; known: {sorted(_REGISTRY)}")
    return _REGISTRY[name]


@dataclass
class Observation:
    """What one case returned (``value``) or raised (``error``)."""

    label: str
    value: Any = None
    error: BaseException | None = None
    case: Case | None = None


STOPPED = "(program stopped)"  # the label of a program that crashed outside a thunk


class EarlierStepFailed(Exception):
    """Stands in for the result of a step that raised, so later steps fail with a clear reason."""


class _FailedResult:
    """Sent back into the program in place of a result that raised: any use of it raises."""

    def __init__(self, label: str):
        object.__setattr__(self, "_label", label)

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise EarlierStepFailed(f"skipped because an earlier step failed: {self._label}")

    __getattr__ = __call__ = __iter__ = __getitem__ = __len__ = __array__ = _fail
    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __matmul__ = __float__ = _fail


def run_program(check_: Check, impl: Any, seed: int | None = None, *, rng: Any = None,
                on_observation: Callable[[Observation], None] | None = None
                ) -> list[Observation]:
    """Run ``check_``'s program on ``impl`` with inputs drawn from ``seed``.

    Args:
        rng: draw from this generator instead (a recording or a tape, see :mod:`.tape`).
        on_observation: called with each observation as soon as it is made, so a caller can
            pass it on before a later case hangs or kills the process.
    """
    if rng is None:
        rng = np.random.default_rng(seed)
    generator = check_.program(impl, rng)
    observations: list[Observation] = []
    to_send: Any = None
    times_seen: dict[str, int] = {}
    while True:
        try:
            case = generator.send(to_send)
        except StopIteration:
            break
        # A program that crashes outside a thunk is a bug in the check or in an impl the
        # program touched directly; record it and stop rather than lose the earlier cases.
        except Exception as error:  # noqa: BLE001
            observation = Observation(STOPPED, error=error)
            observations.append(observation)
            if on_observation is not None:
                on_observation(observation)
            break
        # Verdicts pair the student's observations with the reference's by label, so a label
        # drawn twice (a random case that lands on a planted one) must not hide one of them.
        times_seen[case.label] = times_seen.get(case.label, 0) + 1
        if times_seen[case.label] > 1:
            case = replace(case, label=f"{case.label} (case {times_seen[case.label]} of this name)")
        try:
            value = case.thunk()
            observation = Observation(case.label, value=value, case=case)
            to_send = value
        except Exception as error:  # noqa: BLE001 — any student error is an outcome
            observation = Observation(case.label, error=error, case=case)
            to_send = _FailedResult(case.label)
        observations.append(observation)
        if on_observation is not None:
            on_observation(observation)
    return observations
