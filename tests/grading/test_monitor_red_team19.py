"""Red team 19: the wrapper rule (``_wraps_the_function_named``), nested drives (``_on_drive``,
``_runs_under``, ``_end_drive``), forward-mode AD (capabilities.FORWARD_MODE), refused
interpreter hooks raised by library code by their own name (``_handed_by_the_student``) and
the covered-targets fast path. Each attempt is a test; each docstring says what stops it
(five got through until the fixes named there).

Every attack answer computes E4's gradients with a way to derivatives that AUTODIFF forbids
(full marks by value) and must be charged something by E4.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_engine_watch import PRELUDE as ENGINE_PRELUDE
from test_monitor_identity import E4, E4_ANSWER, ENGINE
from test_monitor_same_package import fraction

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


def _charged(tmp_path, source, label="attack", pattern=None, profile="compiled"):
    """Full marks, and charged ``pattern`` (any pattern at all when None)."""
    found = run(tmp_path, source, [E4], profile=profile)
    assert fraction(found, label) == 1.0, found.output[-3000:]   # full marks
    charged = found.charged(label)
    assert (pattern in charged) if pattern else charged, (found.reports, found.output[-3000:])
    return found


PRELUDE = E4_ANSWER + '''
import functools, os, sys, threading, time
import torch
from coursekit.grading import grade


def _loss(x, y, w1, w2):
    return (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()


def _by_tangents(x, y, w1, w2, dual, tangent_of):
    """E4's gradients, one forward-mode JVP per weight entry: ``dual(primal, tangent)`` makes
    a dual tensor, ``tangent_of(out)`` reads the output's tangent."""
    weights = [w1.detach(), w2.detach()]
    grads = []
    for which in (0, 1):
        out = torch.zeros_like(weights[which])
        flat = out.view(-1)
        for i in range(flat.numel()):
            tangent = torch.zeros_like(out)
            tangent.view(-1)[i] = 1
            args = list(weights)
            args[which] = dual(weights[which], tangent)
            flat[i] = tangent_of(_loss(x, y, *args))
        grads.append(out)
    return (_loss(x, y, w1, w2).detach(), *grads)
'''


# 1. Forward mode through torch's own pre-dispatch wrappers. FORWARD_MODE names the module
# torch.autograd.forward_ad (by file), torch._make_dual and torch._C._enter_dual_level (C
# functions, seen only when student code calls them itself). forward_ad itself calls
# torch._functorch.predispatch's thin Python wrappers (_enter_dual_level, _make_dual,
# _unpack_dual, _exit_dual_level), which no pattern names; they call the C functions from a
# library frame (a quiet module: no c_call judged). torch._unpack_dual is no target at all.
PREDISPATCH = PRELUDE + '''
from torch._functorch import predispatch as _P
import torch._export.utils    # what the wrappers import when first called


def predispatch(x, y, w1, w2):
    level = _P._enter_dual_level()
    try:
        return _by_tangents(x, y, w1, w2,
                            lambda p, t: _P._make_dual(p, t, level=level),
                            lambda out: _P._unpack_dual(out, level=level)[1])
    finally:
        _P._exit_dual_level(level=level)


answer("attack", grads=predispatch)
'''


def test_forward_mode_through_torchs_predispatch_wrappers_is_charged(tmp_path):
    """Got through: torch._functorch.predispatch's wrappers are forward mode's Python doors
    (forward_ad is only one caller of them), and their C calls come from library frames,
    which monitor._on_c_call does not judge. Now capabilities.FORWARD_MODE names the module."""
    _charged(tmp_path, PREDISPATCH)


# 1b. The dispatcher's door: torch.ops.aten._make_dual (OpOverloadPacket.__call__, Python in
# torch/_ops.py, calls the operator from its own frame) and torch._unpack_dual (no target), in a
# dual level entered in an earlier cell, outside any drive: that call of torch._C.
# _enter_dual_level is reported outside every window, and forward-mode levels are global.
OPS_ATEN = PRELUDE + '''
_LEVEL = torch._C._enter_dual_level()   # an earlier cell: outside any drive


def by_ops(x, y, w1, w2):
    return _by_tangents(x, y, w1, w2,
                        lambda p, t: torch.ops.aten._make_dual(p, t, _LEVEL),
                        lambda out: torch._unpack_dual(out, _LEVEL).tangent)


answer("attack", grads=by_ops)
'''


def test_forward_mode_through_the_dispatcher_in_a_level_entered_earlier_is_charged(tmp_path):
    """Got through: torch.ops.aten._make_dual runs _make_dual from torch/_ops.py's frame (no
    Python target; monitor._on_c_call judges C calls of student frames only), and the level
    was entered before the drive. Now the engine watch charges a dual level open as the check
    starts or ends (engine.dual_level_open)."""
    _charged(tmp_path, OPS_ATEN)


# 1c. The public functional APIs: torch.func.jvp and jacfwd (torch._functorch, reached through
# torch.autograd.forward_ad's Python code) and torch.autograd.functional.jvp.
FUNCTIONAL = PRELUDE + '''
import torch.func, torch.autograd.functional


def _jvp_func(x, y, w1, w2):
    def one(which):
        return lambda w, t: torch.func.jvp(
            lambda v: _loss(x, y, *((v, w2) if which == 0 else (w1, v))), (w,), (t,))[1]
    return one


def functional(x, y, w1, w2):
    w1, w2 = w1.detach(), w2.detach()
    g1 = torch.func.jacfwd(lambda v: _loss(x, y, v, w2))(w1)
    g2 = torch.autograd.functional.jacobian(lambda v: _loss(x, y, w1, v), w2,
                                            strategy="forward-mode", vectorize=True)
    return _loss(x, y, w1, w2), g1, g2


answer("attack", grads=functional)
'''


def test_forward_mode_through_torch_func_and_autograd_functional_is_charged(tmp_path):
    """Stopped: torch.func's transforms reach torch.autograd.forward_ad's Python code, and
    torch.autograd.functional is a pattern itself."""
    _charged(tmp_path, FUNCTIONAL)


# 2. A drive started from a thread of the student's while the check's drive runs. _on_drive
# keeps the watch going only for a drive that runs under the watched drive's frame
# (_runs_under, red team 17's nested call from the answer); a drive on another thread is not
# under it, and is taken for "a drive whose return the monitor missed": the check's watch is
# stopped and its events dropped, a new session starts for the thread's drive, whose bogus
# request (not JSON) makes it return at once, and its _end_drive finds no node in its short
# window. The check's own drive then runs with no session at all (s.engine is None), and its
# return finds nothing to report. The engine runs through C only (no Python target).
THREAD_DRIVE = ENGINE_PRELUDE + '''
import time
from coursekit.grading import oracle

_BOGUS = '{"check": "lab01.train_two_layer_torch", '
_go, _done = threading.Event(), threading.Event()


def _driver():                       # started in an earlier cell, waits for the answer
    _go.wait(60)
    try:
        oracle.drive(_BOGUS)
    except Exception:
        pass
    _done.set()


_t = threading.Thread(target=_driver, daemon=True)
_t.start()


def {name}(x, y, w1, w2):
    if not _go.is_set():
        {before}
        _go.set()
        _done.wait(30)
    return by_engine(x, y, w1, w2)


answer("attack", grads={name})
_t.join(5)
'''


@pytest.mark.parametrize("before", ["pass", "by_engine(x, y, w1, w2)"],
                         ids=["engine after", "engine before and after"])
def test_a_drive_from_a_students_thread_during_the_check_is_charged(tmp_path, before):
    """Got through: monitor._on_drive stopped the check's engine watch for a drive that is not
    under its frame (another thread's), and nothing watched the rest of the check. Now a drive
    from another thread while the watched one runs is nested: the watch goes on."""
    _charged(tmp_path, THREAD_DRIVE.replace("{name}", "threaded").replace("{before}", before),
             pattern=ENGINE)


# 3. A trace function of the student's, set by the standard library's own call of
# sys.settrace by name: trace.Trace.runfunc calls `sys.settrace(self.globaltrace)`, and
# globaltrace is an attribute the student sets. _handed_by_the_student lets the event through
# (the library frame's CALL loads `settrace` by LOAD_METHOD). CPython runs a trace function
# with the thread "tracing", so no profile event is made for anything it calls: the student's
# tracer, called at the 'call' of the student's own marker function, computes the gradients
# with torch.autograd.forward_ad (a target by file, whose calls are never seen; forward mode
# runs no node of the engine).
TRACED = PRELUDE + '''
import trace
import torch.autograd.forward_ad as fwAD


def _forward(x, y, w1, w2):
    with fwAD.dual_level():
        return _by_tangents(x, y, w1, w2, fwAD.make_dual,
                            lambda out: fwAD.unpack_dual(out).tangent)


_found = []


def _marker(x, y, w1, w2):
    return _found.pop()


def _tracer(frame, event, arg):
    if event == "call" and frame.f_code is _marker.__code__:
        _found.append({inside}(**frame.f_locals))
    return None


_tracing = trace.Trace(count=0, trace=0)
_tracing.donothing = 0
_tracing.globaltrace = _tracer


def traced(x, y, w1, w2):
    try:
        return _tracing.runfunc(_marker, x, y, w1, w2)
    except RuntimeError:   # the tracer refused: the same gradients, plainly
        return {inside}(x, y, w1, w2)


answer("attack", grads=traced)
'''


def test_a_tracer_set_by_the_standard_librarys_settrace_is_charged(tmp_path):
    """Got through: a refused interpreter hook (sys.settrace) raised by library code that
    calls it by its own name, with a function of the student's as the argument
    (monitor._handed_by_the_student judged the name loaded, not what is handed); what the
    trace function calls is never profiled. Now sys.settrace and sys.addaudithook are judged
    by the student code above, always (monitor._HANDS_A_FUNCTION)."""
    _charged(tmp_path, TRACED.replace("{inside}", "_forward"))


def test_the_engine_under_such_a_tracer_is_charged(tmp_path):
    """Stopped for the engine only: the engine watch is C++, and sees nodes that the tracer
    runs (torch.autograd.grad itself is not reported)."""
    _charged(tmp_path, TRACED.replace("{inside}", "plainly").replace(
        "_found = []", '''_found = []


def plainly(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(), *torch.autograd.grad(loss, (a, b)))'''), pattern=ENGINE)


# 4. The class of the monitor's sealed state. NOTE [Sealed state]: the state lives in a
# _State object reached only through the monitor's defaults; its *class* is a plain module
# attribute (coursekit.grading.monitor._State), and neither it nor the object is one of
# s.ours, the objects whose changes _on_setattr refuses. A __getattribute__ of the student's
# set on the class (or a class of theirs swapped in as the object's __class__) runs student
# code inside the monitor at its next read of the state (the audit hook's, at an `open`), with
# the state as `self`: the student keeps it, empties the matcher (no target, no engine check)
# and forgets what was learnt; torch.autograd.grad is then called plainly in the drive.
STATE_CLASS = PRELUDE + '''
from coursekit.grading import monitor as _m

_box = []


def _peek(self, name, _get=object.__getattribute__):
    if not _box:
        _box.append(self)
    return _get(self, name)


{capture}

_emptied = False
if _box:
    _s = _box[0]
    _s.matcher.update(py=(), c_owned=(), c_modules=(), files=("\\\\0",), c_names=frozenset(),
                      engine_checks=frozenset())
    _s.infos.clear()
    _s.c_infos.clear()
    _emptied = True
print("EMPTIED", _emptied)


def plainly(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(), *torch.autograd.grad(loss, (a, b)))


answer("attack", grads=plainly)
'''
ON_THE_CLASS = '''
try:
    _m._State.__getattribute__ = _peek
    open(os.devnull).close()                # an audited event: the hook reads the state
    del _m._State.__getattribute__
except (RuntimeError, TypeError) as error:
    print("REFUSED", error)
'''
# The same through a library function that calls gc.get_referrers by its own name (IPython's
# autoreload: every instance of `old` gets `new` as its class), for a fix that refuses changes
# to the class alone: the state object itself gets a class of the student's, of the same
# slots, and back.
SWAPPED_CLASS = '''
from IPython.extensions.autoreload import update_instances


class _Peeking:
    __slots__ = getattr(_m._State, "__slots__", ())
    __getattribute__ = _peek


try:
    update_instances(_m._State, _Peeking)
    sys._getframe()
    import this_module_does_not_exist_rt19   # an event the hook handles: reads the state
except (RuntimeError, ImportError, TypeError) as error:
    print("RAISED", type(error).__name__, error)
if _box:
    object.__setattr__(_box[0], "__class__", _m._State)
'''


@pytest.mark.parametrize("capture", [ON_THE_CLASS, SWAPPED_CLASS],
                         ids=["set on the class", "class swapped by autoreload"])
def test_the_monitors_state_through_its_class_is_charged(tmp_path, capture):
    """Got through (a full escape: every target of every check, and the engine watch): a
    class's attributes are set without an audited event, and the state's class was a class
    of the monitor's module; an object's __class__ assignment refused only s.ours, which held
    the monitor's functions, not its state. Now the state is a SimpleNamespace (a C type: its
    attributes cannot be set, nor an instance's class changed) and one of s.ours."""
    found = _charged(tmp_path, STATE_CLASS.replace("{capture}", capture))
    assert "EMPTIED False" in found.output, found.output[-3000:]


# 2b. The control for 2: the same bogus drive from a generator the answer resumes (same
# thread: the generator's frame runs under the check's drive frame).
GENERATOR_DRIVE = ENGINE_PRELUDE + '''
from coursekit.grading import oracle

_BOGUS = '{"check": "lab01.train_two_layer_torch", '


def _driver():
    yield
    try:
        oracle.drive(_BOGUS)
    except Exception:
        pass
    yield


_gen = _driver()
next(_gen)                           # started in an earlier cell


def resumed(x, y, w1, w2):
    next(_gen, None)
    return by_engine(x, y, w1, w2)


answer("attack", grads=resumed)
'''


def test_a_drive_from_a_generator_during_the_check_is_charged(tmp_path):
    """Stopped: a generator resumed by the answer runs under the check's drive frame
    (monitor._runs_under): the watch goes on."""
    _charged(tmp_path, GENERATOR_DRIVE, pattern=ENGINE)
