"""The kernel's side of grading: the student's objects, driven by the grader one check at a time.

At grading time a checks cell's ``grade(check, impl, hidden=...)`` only *registers* ``impl``
here (:func:`register`). After the cell has run, the grader sends one request per call
(:func:`drive`): the tape of that check's inputs (:mod:`.tape`). The program runs on the
registered object against the tape and every observation is published as soon as it is made,
so the cases that finished count even if a later one hangs or kills the kernel.

Nothing here is trusted. The grader computed the expected values before it sent the tape and
only compares what comes back; code in this process may replace, wrap or skip every function
of this module, and gains nothing by it but its own failed cases. What :func:`drive` calls
outside the check's program is taken when this module is imported, before any student code:
a function the student put in ``gc`` or ``json`` later would run with this module's frame
below it, which the monitor takes for the grader's (red team 15 started a thread and a
process so).
"""
from __future__ import annotations

import gc
import json
import sys
from typing import Any

from .encoding import MIME_TYPE, encode, encode_error
from .monitor import DRIVE_EVENT
from .program import Observation, get_check, run_program
from .tape import TapeRng, load

_GC_ENABLED, _GC_DISABLE, _GC_ENABLE = gc.isenabled, gc.disable, gc.enable
_AUDIT = sys.audit
_DECODE = json.JSONDecoder().decode
try:
    from IPython.display import display as _DISPLAY
except ImportError:   # a run in this process without IPython: nothing is published
    _DISPLAY = None

# (check, hidden) -> the objects registered by the checks cells, in call order.
_REGISTERED: dict[tuple[str, bool], list[Any]] = {}


def register(check_name: str, hidden: bool, impl: Any) -> None:
    """Keep ``impl`` until the grader drives it, right after the checks cell: it asks for the
    latest registrations of a check, counted from the end."""
    _REGISTERED.setdefault((check_name, bool(hidden)), []).append(impl)


def registered(check_name: str, hidden: bool, from_end: int) -> Any:
    """The object registered for a check, counted from the latest (``from_end`` 1); raises
    LookupError when there is none."""
    slots = _REGISTERED.get((check_name, bool(hidden)), [])
    if not 0 < from_end <= len(slots):
        raise LookupError(f"no object registered for {check_name} (from the end: {from_end})")
    return slots[-from_end]


def forget() -> None:
    """Drop every registration: a run in this process starts with none (a kernel starts
    with none as it starts)."""
    _REGISTERED.clear()


def drive(request: str) -> None:
    """Run one check on a registered object against the grader's tape (see module docstring)."""
    _AUDIT(DRIVE_EVENT)   # a monitor switched off is back before the check runs
    message = _DECODE(request)
    ticket = message["ticket"]
    try:
        impl = registered(message["check"], message["hidden"], int(message["from_end"]))
    except LookupError:
        _publish({"ticket": ticket, "missing": True})
        return

    def publish(observation: Observation) -> None:
        try:
            value = (encode_error(observation.error) if observation.error is not None
                     else encode(observation.value))
        except Exception as error:  # noqa: BLE001 — a value that breaks encoding is an outcome
            value = {"opaque": f"a value that could not be sent to the grader "
                               f"({type(error).__name__})"}
        _publish({"ticket": ticket, "label": observation.label, "value": value})

    # A library finalizer run by the garbage collector amid the student's code would look, to
    # the monitor, like a call the student made: no collection while the check runs.
    collecting = _GC_ENABLED()
    _GC_DISABLE()
    try:
        run_program(get_check(message["check"]), impl,
                    rng=TapeRng(load(message["tape"])), on_observation=publish)
    finally:
        if collecting:
            _GC_ENABLE()
    _publish({"ticket": ticket, "done": True})


def _publish(item: dict) -> None:
    _DISPLAY({MIME_TYPE: item}, raw=True)
