"""Red team 17: the fixes of commit 3949d45 (a dunder counted only for the instruction that
runs it, ``_DUNDERS_OF``; a wrapper known by the functions in its closure; the drive audit
event; torch's RecordFunction switch replaced), the engine watch's canaries and event
limit, and :mod:`.call_sites`'s reading of bytecode. Each attempt is a test: stopped, a
plain passing test; gets through, a strict expected failure that says so.

Every attack answer but the forward-mode one computes the gradients with torch's engine (full
marks by value) and must be charged ``torch.autograd.engine`` by E4; the forward-mode one must
be charged anything at all.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_body_calls import PRELUDE as BODY_PRELUDE
from test_monitor_engine_watch import PRELUDE
from test_monitor_identity import E4, E4_ANSWER, ENGINE
from test_monitor_same_package import fraction

BACKWARD = "torch.autograd.backward"

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


def _attack(tmp_path, body, label="attack"):
    found = run(tmp_path, PRELUDE + body, [E4])
    assert fraction(found, label) == 1.0, found.output[-3000:]   # full marks
    assert ENGINE in found.charged(label), (found.reports, found.output[-3000:])
    return found


# 1. oracle.drive is open to student code (the public door the grader's request uses), and the
# monitor's _on_drive runs for every call of it: a drive already watched is stopped and its
# events dropped (taken for "a drive whose return the monitor missed"), and a new session
# starts for the nested call. The nested request names the engine check but is not JSON, so
# drive raises before anything runs; its return ends the (new) session, s.engine is None, and
# the outer drive's own return finds no state (_end_drive raises, swallowed). The engine run
# before or after the nested call is seen by no session.
NESTED_DRIVE = '''
from coursekit.grading import oracle

_BOGUS = '{"check": "lab01.train_two_layer_torch", '
_nested = []


def nested(x, y, w1, w2):
    if not _nested:   # once, at the first step (no torch function mode pushed then)
        _nested.append(1)
        try:
            oracle.drive(_BOGUS)
        except Exception:
            pass
    return by_engine(x, y, w1, w2)


answer("attack", grads=nested)
'''


def test_a_nested_drive_from_the_answer_is_charged(tmp_path):
    """Stopped: a drive called while a watched drive runs below it leaves the watch running
    and is itself charged (monitor._on_drive, _runs_under)."""
    _attack(tmp_path, NESTED_DRIVE)


def _laundered(tmp_path, source, *patterns):
    """A body route (test_monitor_body_calls.PRELUDE's judged body): full marks, and every
    one of ``patterns`` charged."""
    found = run(tmp_path, source, [E4])
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    charged = found.charged("laundered")
    assert set(patterns) <= charged, (found.reports, found.output[-3000:])
    return found


# 2. A wrapper is known by *any* function in its closure, not by the one it wraps: torch's own
# context_decorator(ctx_factory, func) closes over both, and ctx_factory may be a function of
# the student's, named as they like ("func"). The gadget: dataclasses.Field.__set_name__ (a
# class statement's dunder, accepted from the body's CALL of __build_class__) makes the inlined
# call `func(self.default, owner, name)` of a LOAD_FAST "func": its callee decorate_context is
# taken for a wrapper of a function named "func" (_wraps_the_function_named), and it calls
# torch.autograd.backward by CALL_FUNCTION_EX of its LOAD_DEREF `func`. The gadget's
# `func` is type(self.default).__set_name__: self.default is a list of the loss, of a list
# class whose __set_name__ is the wrapper; backward fills a.grad and b.grad.
CLOSURE_OF_A_CONTEXT_FACTORY = BODY_PRELUDE + """
import contextlib, dataclasses
import torch.utils._contextlib


def func():                                          # the name the gadget's call loads
    return contextlib.nullcontext()


_wrapper = torch.utils._contextlib.context_decorator(func, torch.autograd.backward)


class Outputs(list):
    __set_name__ = _wrapper


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    holder = types.SimpleNamespace(default=Outputs([loss]))
    calls = itertools.starmap(dataclasses.Field.__set_name__, [(holder, None, None)])
    through_the_body(x, calls)
    return loss.detach(), a.grad, b.grad


answer("laundered", grads=laundered)
"""


def test_the_context_factory_chain_run_by_the_student_is_charged(tmp_path):
    """The control: the same chain run by the student's own code (no body)."""
    _laundered(tmp_path, CLOSURE_OF_A_CONTEXT_FACTORY.replace(
        "    through_the_body(x, calls)\n", "    list(calls)\n"), BACKWARD, ENGINE)


def test_a_wrapper_closing_over_a_students_function_of_the_loaded_name(tmp_path):
    """Stopped: a wrapper that closes over any function of the student's is no library
    wrapper (monitor._wraps_the_function_named)."""
    _laundered(tmp_path, CLOSURE_OF_A_CONTEXT_FACTORY, BACKWARD, ENGINE)


# 3. Forward-mode AD (torch.autograd.forward_ad): one JVP per weight gives the whole gradient,
# with no node of the reverse engine, and no pattern of AUTODIFF names torch.autograd.forward_ad
# ("every way to reverse-mode gradients"; torch.func's jvp and functional's forward-mode
# jacobian are forbidden, the module they are built on is not).
FORWARD_AD = '''
import torch.autograd.forward_ad as fwAD


def _loss(x, y, w1, w2):
    return (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()


def _forward_grad(x, y, w1, w2, which):
    weights = [w1.detach(), w2.detach()]
    out = torch.zeros_like(weights[which])
    flat = out.view(-1)
    for i in range(flat.numel()):
        tangent = torch.zeros_like(out)
        tangent.view(-1)[i] = 1
        with fwAD.dual_level():
            args = list(weights)
            args[which] = fwAD.make_dual(weights[which], tangent)
            flat[i] = fwAD.unpack_dual(_loss(x, y, *args)).tangent
    return out


def forward_mode(x, y, w1, w2):
    return (_loss(x, y, w1, w2).detach(), _forward_grad(x, y, w1, w2, 0),
            _forward_grad(x, y, w1, w2, 1))


answer("attack", grads=forward_mode)
'''


def test_gradients_by_forward_mode_ad_are_charged(tmp_path):
    """Stopped: forward mode is one of AUTODIFF's ways to gradients
    (capabilities.FORWARD_MODE)."""
    found = run(tmp_path, PRELUDE + FORWARD_AD, [E4])
    assert fraction(found, "attack") == 1.0, found.output[-3000:]   # full marks
    assert found.charged("attack"), (found.reports, found.output[-3000:])


# 4. Other switches of torch's RecordFunction and profiler than _enable_record_function, each
# made through a C wrapper (no Python call), before the engine runs on the driving thread:
# every RecordFunction callback cleared (the profiler's among them); a Kineto step; the legacy
# profiler's stop; a test observer added (sampled callbacks); the legacy profiler started (a
# second profiler on the thread).
SWITCHES = {
    "clear_callbacks": "functools.partial(_A._clear_callbacks)",
    "kineto_step": "functools.partial(_A._kineto_step)",
    "legacy_disable": "functools.partial(_A._disable_profiler_legacy, None)",
    "test_observer": "functools.partial(_A._set_empty_test_observer, True, 0.5)",
    "legacy_enable": ("functools.partial(_A._enable_profiler_legacy, _P.ProfilerConfig("
                      "_P.ProfilerState.CPU, False, False, False, False, False, "
                      "_P._ExperimentalConfig()))"),
}
SWITCHED = '''
_switch = {switch}
_switched = []


def switched(x, y, w1, w2):
    if not _switched:
        _switched.append(1)
        try:
            _switch()
        except Exception as error:
            print("SWITCH RAISED", type(error).__name__, error)
    return by_engine(x, y, w1, w2)


answer("attack", grads=switched)
'''


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_record_function_switched_other_ways_is_charged(tmp_path, switch):
    _attack(tmp_path, SWITCHED.format(switch=SWITCHES[switch]))


# 5. The audit events refused from student code (gc.get_objects, sys.settrace, ctypes, ...) are
# judged by the Python frame that raises them (_hook: `from_student` is the caller's kind; the
# _BY_ORIGIN ones by the first frame that is not the standard library's). A chain of C callables
# that a judged library body runs (the red team 14 route: test_monitor_body_calls.PRELUDE) has
# that body as its nearest Python frame, library code: gc.get_objects() is let through, in an
# earlier cell, outside any drive. The student's own code then finds the monitor's matcher (a
# plain dict, reached from the sealed _State) among the objects and empties it: no target, no
# engine check. Then the engine and torch.autograd.grad, called plainly.
REFUSED_UNDER_A_BODY = BODY_PRELUDE + """
import gc

_got = []
through_the_body(torch.zeros(2), map(_got.append, itertools.starmap(gc.get_objects, [()])))
_emptied = 0
for _each in (_got[0] if _got else ()):
    if type(_each) is dict and "engine_checks" in _each and "py" in _each:
        _each.update(py=(), c_owned=(), c_modules=(), files=("\\0",), c_names=frozenset(),
                     engine_checks=frozenset())
        _emptied += 1
del _got
print("EMPTIED", _emptied)


def plainly(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(), *torch.autograd.grad(loss, (a, b)))


answer("laundered", grads=plainly)
"""


def test_a_refused_event_raised_by_a_chain_under_a_judged_body(tmp_path):
    """Stopped: a refused event that reads the interpreter, raised by library code that does
    not call that function by name, is judged by the student code above it
    (monitor._handed_by_the_student)."""
    found = _laundered(tmp_path, REFUSED_UNDER_A_BODY, "torch.autograd.grad", ENGINE)
    assert "gc.get_objects from student code" in found.kinds("tamper"), found.reports


# 5b. The same without any body: a library function written in Python that calls what it is
# handed (torch.utils._pytree.tree_map calls func(leaf) in its own frame) is the nearest frame
# when gc.get_objects(None) raises its event.
REFUSED_UNDER_A_LIBRARY_CALL = REFUSED_UNDER_A_BODY.replace(
    "through_the_body(torch.zeros(2), map(_got.append, itertools.starmap(gc.get_objects, [()])))",
    "import torch.utils._pytree\ntry:\n    _got = torch.utils._pytree.tree_map(gc.get_objects, [None])\n"
    "except RuntimeError:   # refused: the attack goes on without the objects\n    _got = []")


def test_a_refused_event_raised_by_a_library_function_handed_it(tmp_path):
    """Stopped: as above (monitor._handed_by_the_student)."""
    found = _laundered(tmp_path, REFUSED_UNDER_A_LIBRARY_CALL, "torch.autograd.grad", ENGINE)
    assert "gc.get_objects from student code" in found.kinds("tamper"), found.reports


# 6. The drive's audit event raised by the student: from the answer itself, through a C
# wrapper, from a thread of theirs (the thread started and joined within 5 s), and from a
# library frame (tree_map) during the drive, before the engine runs. _on_drive_event acts only
# for the event raised by oracle.drive's own frame.
DRIVE_EVENTS = '''
import sys, torch.utils._pytree
_EVENT = "coursekit.grading.drive"


def raised(x, y, w1, w2):
    sys.audit(_EVENT)
    functools.partial(sys.audit, _EVENT)()
    torch.utils._pytree.tree_map(sys.audit, [_EVENT])
    t = threading.Thread(target=functools.partial(sys.audit, _EVENT), daemon=True)
    t.start()
    t.join(5)
    return by_engine(x, y, w1, w2)


answer("attack", grads=raised)
'''


def test_the_drive_event_raised_by_the_student_is_charged(tmp_path):
    _attack(tmp_path, DRIVE_EVENTS)


# 7. Known limit, kept in sight: ctypes's events are judged like a new program's, by the first
# frame above ctypes that is not the standard library's (monitor._origin). A ctypes function
# handed to a library function (tree_map calls it in its own frame) is judged the library's:
# the student reads memory at an address of their choosing.
CTYPES_HANDED = E4_ANSWER + '''
import ctypes
import torch.utils._pytree
from coursekit.grading import grade

try:
    torch.utils._pytree.tree_map(ctypes.string_at, [id(None)])
    print("READ MEMORY")
except RuntimeError as error:
    print("REFUSED", error)
answer("honest")
'''


@pytest.mark.xfail(strict=True, reason=(
    "GETS THROUGH (known limit, README): ctypes events are judged by monitor._origin, the first "
    "frame above ctypes that is not the standard library's; tree_map's frame is the library's"))
def test_a_ctypes_function_handed_to_a_library_function_is_refused(tmp_path):
    found = run(tmp_path, CTYPES_HANDED, [E4])
    assert "READ MEMORY" not in found.output, found.output[-3000:]
    assert any(what.startswith("ctypes.") for what in found.kinds("tamper")), found.reports
