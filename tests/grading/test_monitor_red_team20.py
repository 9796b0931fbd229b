"""Red team 20: red team 19's fixes attacked by someone who read them: the dual-level probe
(``engine.dual_level_open``, run only as a check's drive starts and ends), forward mode's C
doors reached with no ``c_call`` event of the student's (``monitor._on_c_call``), other hooks
that run code where nothing is profiled, and drives from other threads and generators.
Each attempt is a test; its docstring says what stops it, or (a strict xfail) why it still
gets through.

Every attack answer computes E4's gradients with a way to derivatives that AUTODIFF forbids
(full marks by value) and must be charged something by E4.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_engine_watch import PRELUDE as ENGINE_PRELUDE
from test_monitor_identity import E4, ENGINE
from test_monitor_red_team19 import PRELUDE, _charged

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


def _fraction_of_ticket(found, ticket="t"):
    """The grader's score for the harness's drive (ticket "t"), as test_monitor_same_package.
    fraction, but of that ticket's observations only (the grader reads its own ticket; a
    drive of the student's publishes under another)."""
    import ast
    from coursekit.grading.verdict import decode_payload, judge
    items = []
    for line in found.output.splitlines():
        if line.startswith("{'application/vnd.coursekit.observations+json'"):
            item = ast.literal_eval(line)["application/vnd.coursekit.observations+json"]
            if item.get("ticket") == ticket and "label" in item:
                items.append(item)
    return judge(E4, 1, decode_payload({"observations": items}), hidden=False).fraction


def _charged_ticket(tmp_path, source, label="attack", pattern=None):
    """_charged, scored on the harness's ticket alone."""
    found = run(tmp_path, source, [E4])
    assert [w[0] for w in found.windows] == [label], found.windows
    assert _fraction_of_ticket(found) == 1.0, found.output[-3000:]   # full marks
    charged = found.charged(label)
    assert (pattern in charged) if pattern else charged, (found.reports, found.output[-3000:])
    return found


# 1. Forward mode entered and left *inside* the drive, every C door of it called through a C
# callable (functools.partial): CPython 3.11 makes a c_call profile event only when the
# callable a CALL instruction calls is itself a builtin function (or a method descriptor); a
# partial is neither, and the partial calls the builtin from C, with no event at all. So
# monitor._on_c_call never sees torch._C._enter_dual_level, torch._make_dual or
# torch._unpack_dual, none of them is Python code for the call rule, and the level is closed
# again before the drive ends: engine.dual_level_open, probed at the drive's start and end
# only, finds no level open. Forward mode runs no node of the engine.
PARTIAL_DOORS = PRELUDE + '''
import operator
_hide = {hide}
_enter = _hide(torch._C._enter_dual_level)
_exit = _hide(torch._C._exit_dual_level)
_make = _hide(torch._make_dual)
_unpack = _hide(torch._unpack_dual)


def by_partials(x, y, w1, w2):
    level = _enter()
    try:
        return _by_tangents(x, y, w1, w2, lambda p, t: _make(p, t, level=level),
                            lambda out: _unpack(out, level=level)[1])
    finally:
        _exit(level=level)


answer("attack", grads=by_partials)
'''


@pytest.mark.xfail(strict=True, reason=(
    "GETS THROUGH (known limit, README): a forbidden C function behind a C wrapper makes no "
    "c_call event (monitor._on_c_call), and a dual level opened and closed inside the drive "
    "is missed by engine.dual_level_open, probed as the drive starts and ends"))
@pytest.mark.parametrize("hide", [
    "functools.partial",
    "lambda f: lambda *a, **k: operator.call(f, *a, **k)"], ids=["partial", "operator.call"])
def test_forward_mode_through_partials_inside_the_drive_is_charged(tmp_path, hide):
    """Gets through (strict xfail): monitor._on_c_call judges only the C calls CPython
    reports as c_call events, and a functools.partial around a builtin raises none (nor does
    map, operator.call's inner call, or any C callable calling C); the level opened and
    closed inside the drive is missed by engine.dual_level_open (probed by monitor._on_drive
    and monitor._end_drive only). The same limit as
    test_monitor_identity.py::test_a_forbidden_c_function_behind_a_c_wrapper_is_charged."""
    _charged(tmp_path, PARTIAL_DOORS.replace("{hide}", hide))


# 2. The reverse of red team 19's thread drive: the *student's* thread drives first, and the
# grader's drive comes while it runs. The student registers a "blocker" for E4 and drives it
# from a thread of theirs (a request of their own, with a tape they recorded from the check's
# program in an earlier cell); the blocker waits, inside that drive, until the grader's
# drive of the real answer has been quiet for a second. monitor._on_drive then takes the
# grader's drive for a nested one (another thread than the watched drive's: red team 19's
# fix) and starts no watch of its own; the engine session is the student's drive's, whose
# problems (the grader's thread's nodes, "called oracle.drive inside the check") are
# written only when the student's drive ends, after the check's window. The answer runs the
# engine through C only (no Python target).
FIRST_DRIVE = ENGINE_PRELUDE + '''
import json, time
import numpy as np
from coursekit.grading import oracle
from coursekit.grading.program import get_check, run_program
from coursekit.grading.tape import dump


class _Recorder:                     # an earlier cell: a tape of the student's own
    def __init__(self):
        self.rng, self.tape = np.random.default_rng(0), []

    def __getattr__(self, name):
        method = getattr(self.rng, name)

        def draw(*args, **kwargs):
            value = method(*args, **kwargs)
            self.tape.append((name, value))
            return value
        return draw


_recorder = _Recorder()
run_program(get_check("lab01.train_two_layer_torch"), _answer(by_hand, plain_step),
            rng=_recorder)
_REQUEST = json.dumps({"ticket": "mine", "check": "lab01.train_two_layer_torch",
                       "hidden": True, "from_end": 1, "tape": dump(_recorder.tape)})
_started, _last = threading.Event(), [None]


def _blocker(x, y, w1, w2, lr, steps):
    if not _started.is_set():
        _started.set()
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up and (
                _last[0] is None or time.monotonic() - _last[0] < 1.0):
            time.sleep(0.05)
    return w1, w2, torch.zeros(steps)


grade("lab01.train_two_layer_torch", _blocker, hidden=True)


def _driver():
    try:
        oracle.drive(_REQUEST)
    except Exception as error:
        print("THREAD DRIVE", type(error).__name__, error)


_t = threading.Thread(target=_driver, daemon=True)
_t.start()
_started.wait(30)


def {name}(x, y, w1, w2):
    try:
        return by_engine(x, y, w1, w2)
    finally:
        _last[0] = time.monotonic()


answer("attack", grads={name})
_t.join(70)
print("THREAD ALIVE", _t.is_alive())
'''


def test_the_graders_drive_during_a_drive_from_a_students_thread_is_charged(tmp_path):
    """Got through red team 19's fix: monitor._on_drive took any drive from another thread
    than the watched drive's for a nested one, also the grader's own drive when the drive
    being watched was one the student started on a thread of theirs. Now only the thread
    that runs cells (the monitor's ``driver``) starts a watch; another thread's drive never
    does, and is charged to the check it runs in."""
    _charged_ticket(tmp_path, FIRST_DRIVE.replace("{name}", "first"), pattern=ENGINE)


# 3. A profiler of the standard library's with a timer of the student's: cProfile.Profile
# (C, _lsprof) calls its timer at every event, from inside its own profile callback, where
# CPython profiles nothing; the timer computes the gradients by forward mode. _lsprof's
# enable() sets its callback through PyEval_SetProfile, which raises sys.setprofile.
CPROFILE = PRELUDE + '''
import cProfile
import torch.autograd.forward_ad as fwAD


def _forward(x, y, w1, w2):
    with fwAD.dual_level():
        return _by_tangents(x, y, w1, w2, fwAD.make_dual,
                            lambda out: fwAD.unpack_dual(out).tangent)


_job, _found = [], []


def _timer():
    if _job:
        _found.append(_forward(*_job.pop()))
    return 0


def profiled(x, y, w1, w2):
    profiler = cProfile.Profile(_timer)
    try:
        profiler.enable()
        _job.append((x, y, w1, w2))
        len(())                     # an event: the timer runs
        profiler.disable()
        return _found.pop()
    except RuntimeError:            # refused: the same gradients, plainly
        return _forward(x, y, w1, w2)


answer("attack", grads=profiled)
'''


def test_forward_mode_in_a_cprofile_timer_is_charged(tmp_path):
    """Stopped: _lsprof's enable() sets its callback with PyEval_SetProfile, whose
    sys.setprofile event monitor._on_setprofile refuses while a call is made."""
    _charged(tmp_path, CPROFILE)
