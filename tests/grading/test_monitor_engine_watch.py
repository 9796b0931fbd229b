"""Red team 15: the engine watch of commit b8b79c1 (a global profiler session of every thread,
``profile_all_threads``; windows only where the nearest author above the engine's door is
not the student's; ``stop()`` trusting the canary alone). Each attempt is a test: stopped,
a plain passing test; gets through, a strict expected failure that says so. Six got
through at first and are stopped now (each test says how): a canary at each end, each
checked against the time it ran; too many nodes charged; windows only on the driving
thread; oracle.drive's own gc functions; torch's RecordFunction switch replaced.

Every attack answer computes the gradients with torch's engine (full marks by value) and
must be charged ``torch.autograd.engine`` by E4.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER, ENGINE
from test_monitor_same_package import fraction

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PRELUDE = E4_ANSWER + '''
import functools, threading, queue
import torch
from torch._C import _autograd as _A, _profiler as _P
from coursekit.grading import grade

_engine = torch.autograd.Variable._execution_engine


def _run(loss, inputs):     # the engine, started through C only (no Python call to see)
    return functools.partial(_engine.run_backward, (loss,), (torch.ones_like(loss),), False,
                             False, inputs, False, False)()


def by_engine(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(),) + tuple(_run(loss, (a, b)))
'''


def _engine_charged(found, label):
    return ENGINE in found.charged(label)


def _attack(tmp_path, body, label="attack"):
    found = run(tmp_path, PRELUDE + body, [E4])
    assert fraction(found, label) == 1.0, found.output[-3000:]   # full marks
    assert _engine_charged(found, label), (found.reports, found.output[-3000:])
    return found


# 0. Baseline: the engine through C on the driving thread, outside any window.
def test_baseline_the_engine_through_c_on_the_driving_thread_is_charged(tmp_path):
    _attack(tmp_path, 'answer("attack", grads=by_engine)\n')


# 1. Replace the global session after the engine ran (same thread: the old session's events are
# gone), then forge the canary: the watch trusts any SpecialErfcxBackward0 node as its marker.
REPLACE_AND_FORGE = '''
_cfg = _P.ProfilerConfig(_P.ProfilerState.KINETO, False, False, False, False, False,
                         _P._ExperimentalConfig(profile_all_threads=True))
_act, _scopes = {_P.ProfilerActivity.CPU}, {_P.RecordScope.BACKWARD_FUNCTION}
_restart = [functools.partial(_A._prepare_profiler, _cfg, _act),
            functools.partial(_A._enable_profiler, _cfg, _act, _scopes)]


def replaced(x, y, w1, w2):
    found = by_engine(x, y, w1, w2)
    for call in _restart:
        call()
    leaf = torch.ones(1, requires_grad=True)
    _run(torch.special.erfcx(leaf), (leaf,))     # the forged canary
    return found


answer("attack", grads=replaced)
'''


def test_a_replaced_session_with_a_forged_canary_is_charged(tmp_path):
    """Stopped: each canary must be in the events at the time it ran (engine.stop), and a session
    started later holds no node of the opening one."""
    _attack(tmp_path, REPLACE_AND_FORGE)


# 2. RecordFunction switched off for the driving thread (torch._C._autograd.
# _enable_record_function is thread-local): the engine's nodes reach no profiler at all.
RECORD_OFF = '''
_off = functools.partial(_A._enable_record_function, False)
_on = functools.partial(_A._enable_record_function, True)


def unrecorded(x, y, w1, w2):
    _off()
    try:
        return by_engine(x, y, w1, w2)
    finally:
        _on()


answer("attack", grads=unrecorded)
'''


def test_record_function_switched_off_on_the_driving_thread_is_charged(tmp_path):
    """Stopped: the monitor replaced torch's switch where torch keeps it by one that reports
    the call and switches nothing (monitor._keep_record_function_on)."""
    _attack(tmp_path, RECORD_OFF)


# 3. A flood of passive nodes (GraphRoot/AccumulateGrad: run_backward on a leaf itself) before
# the real backward: stop() keeps only the first 200,000 events.
FLOOD = '''
_leaves = [torch.ones(1, requires_grad=True) for _ in range(200_001)]   # an earlier cell
_passive = functools.partial(_engine.run_backward, tuple(_leaves),
                             tuple(torch.ones(1) for _ in _leaves), False, False, (), False,
                             True)   # backward() on leaves: AccumulateGrad nodes only
_flooded = []


def flooded(x, y, w1, w2):
    if not _flooded:
        _passive()
        _flooded.append(1)
    return by_engine(x, y, w1, w2)


answer("attack", grads=flooded)
'''


def test_a_flood_of_passive_nodes_before_the_backward_is_charged(tmp_path):
    """Stopped: more nodes than the watch reads is charged itself (engine.TOO_MANY)."""
    _attack(tmp_path, FLOOD)


# 4. A window of the check's own, opened by a thread that is nobody's: torch's own import
# statement (Tensor.resize imports torch.autograd._functions, a body judged the library's)
# runs FunctionMeta.__init__, which calls next() on a global of torch.autograd.function that
# the student set (red team 14's route) to an iterator that starts a thread. _thread_started
# stops at the body, so the thread is not the student's. Its target is C only: it raises its
# own autograd sequence number, then calls torch.autograd.backward on a leaf again and again,
# each time blocked in the leaf's hook (queue.get): _engine_run_backward with no student code
# above and no author above opens a window (a time interval, and that thread's sequence
# number) which the driving thread's nodes then fall into. The thread's own nodes are
# AccumulateGrad only (passive).
WINDOW_SETUP = '''
import collections, itertools, sys, time, warnings
import torch.autograd.function

warnings.simplefilter("ignore")
_gate = queue.Queue()
_leaf = torch.ones(1, requires_grad=True)
_leaf.register_hook(_gate.get)            # get(block=grad): waits for the driving thread
_bump = torch.ones(1, requires_grad=True)
_n = _A._get_sequence_nr() + 300_000      # above every node the driving thread will make
_work = itertools.chain(
    map(torch.mul, itertools.repeat(_bump, _n), itertools.repeat(2.0, _n)),
    map(torch.autograd.backward, itertools.repeat(_leaf), itertools.repeat(torch.ones(1))))
_thread = threading.Thread(target=functools.partial(collections.deque, _work, 0), daemon=True)
'''

WINDOW_ANSWER = '''

_waited = []


def _window_open():
    return len(_gate.not_empty._waiters) > 0


def in_a_window(x, y, w1, w2):
    # No window thread (it was never started): once 5 s have passed, the engine unwindowed.
    deadline = time.monotonic() + (0 if _waited else 5)
    _waited.append(1)
    while not _window_open() and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.002)
    found = by_engine(x, y, w1, w2)
    _gate.put(None)                        # closes this window; the thread opens the next
    return found


answer("attack", grads=in_a_window)
'''

WINDOW_THREAD = WINDOW_SETUP + '''
FUNCTION_MODULE = sys.modules["torch.autograd.function"]
NAMES = ("torch.autograd._functions", "torch.autograd._functions.tensor")
real = FUNCTION_MODULE.AUTOGRAD_FUNCTION_COUNTER
FUNCTION_MODULE.AUTOGRAD_FUNCTION_COUNTER = map(threading.Thread.start, [_thread])
for name in NAMES:
    sys.modules.pop(name, None)
try:
    torch.ones(2).resize(1)               # torch's own import statement
except Exception:
    pass
FUNCTION_MODULE.AUTOGRAD_FUNCTION_COUNTER = real
for name in NAMES:
    sys.modules.pop(name, None)
''' + WINDOW_ANSWER

# The same thread started by the student's own code (the control): its request is the
# student's, no window opens, and the driving thread's nodes are charged.
WINDOW_THREAD_OF_THE_STUDENTS = WINDOW_SETUP + "_thread.start()\n" + WINDOW_ANSWER


def test_a_window_thread_the_student_started_opens_no_window(tmp_path):
    _attack(tmp_path, WINDOW_THREAD_OF_THE_STUDENTS)


def test_a_window_opened_by_a_thread_that_is_nobodys_is_charged(tmp_path):
    """Stopped twice over: a window opens only on the thread that drives the check, and the
    walk from torch.autograd.backward goes on through the body (its frame was called by C, not
    by the body's code: NOTE [What a judged body calls])."""
    _attack(tmp_path, WINDOW_THREAD)


# Honest answers (gradients by hand) that the change might charge falsely.
HONEST = PRELUDE + '''
import concurrent.futures
import torch.profiler

_pool = concurrent.futures.ThreadPoolExecutor(2)


def prepared_in_a_pool(x, y, w1, w2):       # data prep on a pool's threads, no backward
    xs, ys = _pool.map(torch.clone, (x, y))
    return by_hand(xs, ys, w1, w2)


def labelled(x, y, w1, w2):                 # the lecture's profiling labels
    with torch.autograd.profiler.record_function("my step"):
        return by_hand(x, y, w1, w2)


_trainer_stop = threading.Event()


def other_model():                          # an earlier cell's toy model, trained meanwhile
    v = torch.ones(3, requires_grad=True)
    while not _trainer_stop.wait(0.005):
        (v * 2).sum().backward()            # autograd is allowed outside this exercise


answer("a thread pool for data prep", grads=prepared_in_a_pool)
answer("record_function labels", grads=labelled)
threading.Thread(target=other_model, daemon=True).start()
answer("another model trained in a thread meanwhile")
_trainer_stop.set()
'''


def test_honest_answers_around_the_engine_watch(tmp_path):
    found = run(tmp_path, HONEST, [E4])
    for label in ("a thread pool for data prep", "record_function labels"):
        assert found.charged(label) == set(), (label, found.reports)


@pytest.mark.xfail(strict=True, reason=(
    "FALSE ALARM (red team 15, not new in b8b79c1): an honest answer (gradients by hand) "
    "is charged when a thread of the student's, started in an earlier cell, trains another "
    "model with autograd while the check is driven: the engine watch charges every "
    "non-passive node on any thread but the driving one ('ran SumBackward0 on another "
    "thread'), and the thread's own .backward calls inside the drive are charged as the "
    "student's target calls too, whatever graph they belong to"))
def test_another_model_trained_in_a_thread_meanwhile_is_not_charged(tmp_path):
    found = run(tmp_path, HONEST, [E4])
    assert found.charged("another model trained in a thread meanwhile") == set(), found.reports


PROFILED = PRELUDE + '''
import torch.profiler


def profiled(x, y, w1, w2):                 # timing one's own step with torch's profiler
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        return by_hand(x, y, w1, w2)


answer("attack", grads=profiled)
'''


@pytest.mark.xfail(strict=True, reason=(
    "FALSE ALARM (red team 15): an honest answer that times its own step with "
    "torch.profiler.profile() replaces the monitor's global session (no error: "
    "_profiler_enabled() is thread-local and a global session is not seen) and is charged "
    "'stopped or replaced the engine watch'"))
def test_an_answer_that_profiles_itself_is_not_charged(tmp_path):
    found = run(tmp_path, PROFILED, [E4])
    assert fraction(found, "attack") == 1.0, found.output[-3000:]
    assert found.charged("attack") == set(), found.reports


# 5. The same window thread, started with no body at all: oracle.drive calls gc.disable()
# (looked up on the gc module, its result ignored) before the check's program runs. The
# student set gc.disable to functools.partial(next, map(Thread.start, [t]), None): Thread.start
# is then called from C with the grader's request right below, so _thread_started finds no
# student code above and the thread is nobody's.
WINDOW_THREAD_FROM_THE_DRIVE = WINDOW_SETUP + """
import gc
_real_disable = gc.disable
gc.disable = functools.partial(next, map(threading.Thread.start, [_thread]), None)
""" + WINDOW_ANSWER + """
gc.disable = _real_disable    # else the interpreter's own exit starts the thread, and aborts
"""


def test_a_window_thread_started_by_the_drive_itself_is_charged(tmp_path):
    """Stopped: oracle.drive calls the gc functions it took at import, not the gc module's (the
    planted one is never called), and a window opens only on the driving thread."""
    _attack(tmp_path, WINDOW_THREAD_FROM_THE_DRIVE)


# 6. The engine in another process, forked by the grader's request itself: gc.disable (see 5)
# replaced by a C chain that calls os.fork once. The audit hook judges os.fork by its origin,
# the first frame above that is not the standard library's: oracle.drive, grading code. The
# child runs the same check, and the answer, called there first, becomes a server of
# gradients (the engine through C only: no Python call for the child's monitor to report);
# the parent's answer sends it each step's weights. No profiler session of the parent sees
# another process's nodes.
FORKED = '''
import gc, itertools, os, pickle
from multiprocessing import Pipe

_parent_end, _child_end = Pipe()
_parent_pid = os.getpid()
gc.disable = functools.partial(next, itertools.starmap(os.fork, [()]), None)


def _serve():
    _parent_end.close()
    while True:
        try:
            args = pickle.loads(_child_end.recv_bytes())
        except EOFError:
            os._exit(0)
        _child_end.send_bytes(pickle.dumps(by_engine(*args)))


_alone = []                                       # no child answered once: none will


def in_a_child(x, y, w1, w2):
    if os.getpid() != _parent_pid:
        _serve()
    if not _alone:
        _parent_end.send_bytes(pickle.dumps((x, y, w1, w2)))
        if _parent_end.poll(20):
            return pickle.loads(_parent_end.recv_bytes())
        _alone.append(True)
    return by_engine(x, y, w1, w2)                # no child: the engine here


answer("attack", grads=in_a_child)
'''


def test_the_engine_in_a_process_the_drive_forked_is_charged(tmp_path):
    """Stopped: oracle.drive no longer calls the planted gc.disable (taken at import)."""
    _attack(tmp_path, FORKED)


# 7. The engine on one of torch's own inter-op pool threads: a TorchScript function that calls
# torch.autograd.grad, run through torch.jit._fork from another TorchScript function (no Python
# frame on the pool's thread at all; the profile function never sees it).
JIT_FORK = '''
from typing import List


@torch.jit.script
def _grads(loss: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> List[torch.Tensor]:
    g = torch.autograd.grad([loss], [a, b])
    g0, g1 = g[0], g[1]
    assert g0 is not None and g1 is not None
    return [g0, g1]


@torch.jit.script
def _forked(loss: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> List[torch.Tensor]:
    return torch.jit._wait(torch.jit._fork(_grads, loss, a, b))


def on_the_pool(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(),) + tuple(_forked(loss, a, b))


answer("attack", grads=on_the_pool)
'''


def test_the_engine_on_torchs_inter_op_pool_is_charged(tmp_path):
    found = _attack(tmp_path, JIT_FORK)
    assert any("on another thread" in what for what in found.kinds("engine")), found.reports


# 8. A global session of the student's own, started in an earlier cell from another thread (the
# driving thread's _profiler_enabled() reads False, so start() does not refuse): the watch's
# session replaces it and records as before.
OWN_SESSION_FIRST = '''
_cfg = _P.ProfilerConfig(_P.ProfilerState.KINETO, False, False, False, False, False,
                         _P._ExperimentalConfig(profile_all_threads=True))
_starter = threading.Thread(target=functools.partial(
    lambda: (_A._prepare_profiler(_cfg, {_P.ProfilerActivity.CPU}),
             _A._enable_profiler(_cfg, {_P.ProfilerActivity.CPU},
                                 {_P.RecordScope.USER_SCOPE}))))
_starter.start()
_starter.join()
answer("attack", grads=by_engine)
'''


def test_a_global_session_of_the_students_started_before_the_check_is_charged(tmp_path):
    _attack(tmp_path, OWN_SESSION_FIRST)
