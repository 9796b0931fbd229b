"""The grading monitor knows student code by identity (issue 24), in a grading kernel in
miniature (:mod:`monitor_harness`): the lab's checks preloaded, the monitor installed, the
"student" code driving the checks as the grader's requests do.

* the lecture's idioms keep full marks: grad-mode context managers are never targets;
* a check's helper that calls what it is handed, or computes the same as the reference,
  launders nothing: student code is above the forbidden call, and calling grading code that
  no check handed over is reported itself;
* a reference fetched from a cell's or an exec'd string's top level (``<module>``) counts;
* torch's autograd engine started where Python sees no call (a C wrapper, TorchScript, a
  node called directly) is seen from C++ during the drive;
* what someone who has read the monitor tries next: each attempt is a test here (stopped:
  passing; gets through: a strict expected failure that says so).
"""
from __future__ import annotations

import pytest

from monitor_harness import run

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

E4 = "lab01.train_two_layer_torch"
ENGINE = "torch.autograd.engine"

# The exercise's answer, by hand, with ``STEP`` as its update and ``GRADS`` computing
# ``(loss, g1, g2)`` from the current weights.
E4_ANSWER = '''
def _answer(grads, step):
    def train_two_layer_torch(x, y, w1, w2, lr, steps):
        if x.device.type == "meta":  # only shapes are checked there
            return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
        losses = torch.empty(steps, device=x.device, dtype=x.dtype)
        for t in range(steps):
            loss, g1, g2 = grads(x, y, w1, w2)
            losses[t] = loss
            w1, w2 = step(w1, w2, g1, g2, lr)
        return w1, w2, losses
    return train_two_layer_torch


def by_hand(x, y, w1, w2):
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)
    grad_y_pred = 2.0 * (y_pred - y)
    grad_h = grad_y_pred.mm(w2.t())
    grad_h[h < 0] = 0
    return (y_pred - y).pow(2).sum(), x.t().mm(grad_h), h_relu.t().mm(grad_y_pred)


def plain_step(w1, w2, g1, g2, lr):
    return w1 - lr * g1, w2 - lr * g2


def graph(x, y, w1, w2):
    a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
    return a, b, (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()


def answer(label, grads=by_hand, step=plain_step):
    grade("lab01.train_two_layer_torch", _answer(grads, step))
    drive("lab01.train_two_layer_torch", label)
'''

HONEST = E4_ANSWER + '''
import threading
import torch
from coursekit.grading import grade


def under_no_grad(w1, w2, g1, g2, lr):          # the lecture's own idiom
    with torch.no_grad():
        return w1 - lr * g1, w2 - lr * g2


@torch.no_grad()
def decorated(w1, w2, g1, g2, lr):
    return w1 - lr * g1, w2 - lr * g2


def grad_mode_switches(w1, w2, g1, g2, lr):
    torch.set_grad_enabled(False)
    try:
        with torch.set_grad_enabled(False), torch.enable_grad():
            assert torch.is_grad_enabled()
        return w1 - lr * g1, w2 - lr * g2
    finally:
        torch.set_grad_enabled(True)


def inference_forward(x, y, w1, w2):
    with torch.inference_mode():
        x.mm(w1).clamp(min=0).mm(w2)            # a forward pass to look at, no graph
    return by_hand(x, y, w1.detach(), w2.detach())


def with_a_progress_thread(x, y, w1, w2):     # a thread that reports, and runs no backward
    done = threading.Event()

    def progress():
        while not done.wait(0.01):
            torch.zeros(2).sum()

    reporter = threading.Thread(target=progress, daemon=True)
    reporter.start()
    try:
        return by_hand(x, y, w1, w2)
    finally:
        done.set()
        reporter.join()


def idle():
    stop.wait(60)


stop = threading.Event()
threading.Thread(target=idle, daemon=True).start()   # alive through every drive below
answer("no_grad", step=under_no_grad)
answer("no_grad decorator", step=decorated)
answer("set_grad_enabled and enable_grad", step=grad_mode_switches)
answer("inference_mode and detach", grads=inference_forward)
answer("a thread started in the answer", grads=with_a_progress_thread)
stop.set()
'''


def test_the_lectures_grad_mode_idioms_cost_nothing(tmp_path):
    found = run(tmp_path, HONEST, [E4])
    for label in ("no_grad", "no_grad decorator", "set_grad_enabled and enable_grad",
                  "inference_mode and detach", "a thread started in the answer"):
        assert found.charged(label) == set(), (label, found.reports)
    assert found.kinds("tamper") == [] and found.kinds("engine") == [], found.reports


# lab00's time_it, honest: it calls the fake device the check hands it, through closures of
# the check's program. Then, outside any drive, grading code the check hands over, grading code
# it does not, and a reference.
TIME_IT = '''
import statistics, time
import torch
from coursekit.grading import grade


def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if sync is None:
        def sync():
            if torch.cuda.is_available():
                torch.cuda.synchronize(device)
    durations = []
    for _ in range(warmup):
        fn()
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        durations.append(clock() - start)
    return statistics.median(durations)


grade("lab00.time_it", time_it)
drive("lab00.time_it")

import coursekit.grading.checks.lab00 as lab00
lab00._FakeAsyncDevice([1.0]).work()
lab00._run_fake(time_it, [1.0], 0, 1)
lab00._reference_roofline()["gemm_flops"](1, 2, 3)
'''


@pytest.mark.parametrize("preloaded", [True, False],
                         ids=["preloaded", "imported under the monitor"])
def test_a_checks_module_imported_under_the_monitor_is_judged_as_a_preloaded_one(tmp_path,
                                                                                  preloaded):
    # A kernel that had no release to preload from (``coursekit validate`` on a notebook
    # outside its course) imports a check's module when the grader first drives the check.
    found = run(tmp_path, TIME_IT, ["lab00.time_it"], preloaded=preloaded)
    assert "RAISED" not in found.output, found.output[-3000:]
    assert found.charged("lab00.time_it") == set(), found.reports
    assert found.kinds("tamper") == [], found.reports
    assert sorted(w for w in found.kinds("call") if w.startswith("coursekit.grading")) == [
        "coursekit.grading from (any caller) (lab00.py:_reference_roofline)",
        "coursekit.grading from (any caller) (lab00.py:_reference_roofline.<locals>.gemm_flops)",
        "coursekit.grading from /home/student/cell.py (lab00.py:_run_fake)",
    ], found.reports


LAUNDERED = E4_ANSWER + '''
import functools
import torch
from typing import List
from coursekit.grading import grade
import coursekit.grading.checks.lab01 as lab01


def handed_to_a_helper(x, y, w1, w2):
    # A check's helper that calls what it is handed: the thunk is grading code, the
    # forbidden call is made below it.
    a, b, loss = graph(x, y, w1, w2)
    box = {}
    thunk = lab01._call_into(box, torch.autograd.grad, loss, (a, b))
    try:
        thunk()            # stores torch.autograd.grad(loss, (a, b)), then fails on it
    except Exception:
        pass
    return (loss.detach(),) + tuple(box["result"])


def another_helper(x, y, w1, w2):
    # Not a reference: a helper that computes the same thing.
    return lab01._autograd_two_layer(x, y, w1, w2)


_engine = torch.autograd.Variable._execution_engine


def partial_over_the_engine(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    g1, g2 = functools.partial(_engine.run_backward, (loss,), (torch.ones_like(loss),), False,
                               False, (a, b), False, False)()
    return loss.detach(), g1, g2


@torch.jit.script
def _scripted(x: torch.Tensor, y: torch.Tensor, a: torch.Tensor,
              b: torch.Tensor) -> List[torch.Tensor]:
    loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
    grads = torch.autograd.grad([loss], [a, b])
    g1, g2 = grads[0], grads[1]
    assert g1 is not None and g2 is not None
    return [loss.detach(), g1, g2]


def torchscript(x, y, w1, w2):
    return tuple(_scripted(x, y, w1.detach().requires_grad_(True),
                           w2.detach().requires_grad_(True)))


def nodes_called_by_hand(x, y, w1, w2):
    # Autograd's derivative formulas without its engine: call the graph's nodes directly.
    a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
    h = x.mm(a)
    h_relu = h.clamp(min=0)
    out = h_relu.mm(b)
    diff = out - y
    squares = diff.pow(2)
    loss = squares.sum()
    grad = squares.grad_fn(loss.grad_fn(torch.ones_like(loss)))   # Pow(Sum)Backward0
    grad_out = diff.grad_fn(grad)[0]                              # SubBackward0
    grad_h_relu, grad_b = out.grad_fn(grad_out)                   # MmBackward0
    grad_a = h.grad_fn(h_relu.grad_fn(grad_h_relu))[1]           # Clamp, MmBackward0
    return loss.detach(), grad_a, grad_b


answer("a check's helper calls what it is handed", grads=handed_to_a_helper)
answer("a check's helper computes the same", grads=another_helper)
answer("functools.partial over the engine", grads=partial_over_the_engine)
answer("TorchScript", grads=torchscript)
answer("nodes called by hand", grads=nodes_called_by_hand)
'''


@pytest.fixture(scope="module")
def laundered(tmp_path_factory):
    return run(tmp_path_factory.mktemp("laundered"), LAUNDERED, [E4])


@pytest.mark.parametrize("label, expected", [
    ("a check's helper calls what it is handed", {"coursekit.grading", "torch.autograd.grad"}),
    ("a check's helper computes the same", {"coursekit.grading", "torch.autograd.grad"}),
    ("functools.partial over the engine", {ENGINE}),
    ("TorchScript", {ENGINE}),
    ("nodes called by hand", {ENGINE}),
])
def test_forbidden_work_is_charged_whatever_path_it_takes(laundered, label, expected):
    charged = laundered.charged(label)
    assert expected <= charged, (label, charged, laundered.reports)


REFERENCE_AT_TOP_LEVEL = '''
import coursekit.grading.checks.lab01 as lab01
from coursekit.grading import grade

# A cell's own top level and an exec'd string are both code named <module>.
numpy_graph_grads = lab01._reference_numpy_graph_grads()
grade("lab01.numpy_graph_grads", numpy_graph_grads)
drive("lab01.numpy_graph_grads", "cell")
exec("numpy_graph_grads = lab01._reference_numpy_graph_grads()")
grade("lab01.numpy_graph_grads", numpy_graph_grads)
drive("lab01.numpy_graph_grads", "exec")
'''


def test_a_reference_fetched_from_a_cells_top_level_is_reported(tmp_path):
    found = run(tmp_path, REFERENCE_AT_TOP_LEVEL, ["lab01.numpy_graph_grads"])
    assert found.charged("cell") == {"coursekit.grading"}, found.reports
    assert found.charged("exec") == {"coursekit.grading"}, found.reports
    # The fetch itself, outside any drive, is reported for a TA.
    fetches = [w for w in found.kinds("call") if "_reference_numpy_graph_grads" in w]
    assert len(fetches) >= 2, found.reports


# ------------------------------------------------------------------ after reading the monitor

AFTER_READING = E4_ANSWER + '''
import functools, sys, threading, types
import torch
from coursekit.grading import grade
import coursekit.grading.checks.lab01 as lab01

_engine = torch.autograd.Variable._execution_engine


def backward_by_c(a, b, loss):
    return functools.partial(_engine.run_backward, (loss,), (torch.ones_like(loss),), False,
                             False, (a, b), False, False)()


# 1. Student code run with a library module's globals looks, to a cache keyed by globals,
#    like the library: its C calls are the student's all the same.
_library = vars(torch.nn.functional)
exec("def _grads_in_library(x, y, w1, w2, graph):\\n"
     "    a, b, loss = graph(x, y, w1, w2)\\n"
     "    return (loss.detach(),) + tuple(__import__('torch').autograd.Variable."
     "_execution_engine.run_backward((loss,), (__import__('torch').ones_like(loss),), False,"
     " False, (a, b), False, False))\\n", _library)


def in_library_globals(x, y, w1, w2):
    return _library["_grads_in_library"](x, y, w1, w2, graph)


# 2. The engine in a thread the answer starts: its nodes run on another thread.
def in_a_thread(x, y, w1, w2):
    box = {}
    a, b, loss = graph(x, y, w1, w2)
    thread = threading.Thread(target=lambda: box.setdefault("g", backward_by_c(a, b, loss)))
    thread.start()
    thread.join()
    return (loss.detach(),) + tuple(box["g"])


# 3. Switch the watch off: stop torch's profiler (through C), then run the engine.
_stop = torch._C._autograd._disable_profiler


def profiler_stopped(x, y, w1, w2):
    try:
        functools.partial(_stop)()
    except RuntimeError:
        pass
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(),) + tuple(backward_by_c(a, b, loss))


# 4. A profiler session of the student's own, started before the check: no room for the watch.
def own_profiler(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(),) + tuple(backward_by_c(a, b, loss))


# 5. A grading helper registered as the answer behind a C wrapper: no student frame runs.
_reference = functools.lru_cache(maxsize=0)(lab01._reference_train_two_layer_torch())

answer("student code with a library's globals", grads=in_library_globals)
answer("the engine in a thread the answer starts", grads=in_a_thread)
answer("the profiler stopped through C", grads=profiler_stopped)
_session = torch.autograd.profiler.profile()
_session.__enter__()
answer("a profiler of the student's own", grads=own_profiler)
_session.__exit__(None, None, None)
grade("lab01.train_two_layer_torch", _reference)
drive("lab01.train_two_layer_torch", "a reference behind lru_cache")
'''


@pytest.fixture(scope="module")
def after_reading(tmp_path_factory):
    return run(tmp_path_factory.mktemp("after_reading"), AFTER_READING, [E4])


@pytest.mark.parametrize("label, expected", [
    ("student code with a library's globals", {ENGINE}),
    ("the engine in a thread the answer starts", {ENGINE}),
    ("the profiler stopped through C", {ENGINE}),
    ("a profiler of the student's own", {ENGINE}),
    ("a reference behind lru_cache", {"coursekit.grading"}),
])
def test_ways_around_the_rules_are_charged(after_reading, label, expected):
    charged = after_reading.charged(label)
    assert expected <= charged, (label, charged, after_reading.reports)


TAMPERING = '''
import sys, threading, traceback, types
import coursekit.grading.monitor as monitor_module

def attempt(name, action):
    try:
        action()
        print("ALLOWED", name)
    except RuntimeError as error:
        print("REFUSED", name, error)

def helper():
    return 1

# Student code with its own globals, made from a code object: refused (it could be given a
# library module's globals, where the monitor does not look for student code).
attempt("FunctionType", lambda: types.FunctionType(helper.__code__, vars(threading)))
# A function's code replaced: refused.
attempt("__code__", lambda: setattr(helper, "__code__", (lambda: 2).__code__))

# A refusal's traceback runs through the audit hook: its frames are not handed out.
def frames_of_a_refusal():
    try:
        open("/proc/self/mem")
    except PermissionError as error:
        tb = error.__traceback__
        while tb is not None:
            tb.tb_frame.f_locals
            tb = tb.tb_next
attempt("a refusal's frames", frames_of_a_refusal)

# Replace what the monitor might call: it calls nothing of the student's.
import json
encoder = json._default_encoder
json._default_encoder = None
threading.setprofile = lambda *_: (_ for _ in ()).throw(SystemExit("ran student code"))
threading._profile_hook = None        # ... and make it want to put its own back
thread = threading.Thread(target=print, args=("THREAD RAN",))
thread.start(); thread.join()
json._default_encoder = encoder
print("STILL HERE")
'''


def test_the_monitors_state_stays_out_of_reach(tmp_path):
    found = run(tmp_path, TAMPERING, [E4])
    out = found.output
    assert "REFUSED FunctionType" in out and "REFUSED __code__" in out, out[-3000:]
    assert "REFUSED a refusal's frames" in out, out[-3000:]
    assert "THREAD RAN" in out and "STILL HERE" in out, out[-3000:]
    tampering = found.kinds("tamper")
    assert "read a frame of the grading monitor" in tampering, found.reports
    assert "threading.setprofile was changed before a thread started" in tampering, tampering


LAB03 = '''
import functools
import torch
from coursekit.grading import grade

_engine = torch.autograd.Variable._execution_engine


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)


class Delegating(MyReLU):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            (grad,) = functools.partial(_engine.run_backward, (leaf.clamp(min=0),),
                                        (grad_output,), False, False, (leaf,), False, False)()
        return grad


grade("lab03.my_relu", MyReLU)
drive("lab03.my_relu", "honest")
grade("lab03.my_relu", Delegating)
drive("lab03.my_relu", "delegating through C")
'''


def test_a_custom_backward_runs_under_the_checks_own_backward_and_may_not_nest_one(tmp_path):
    """The check's program runs backward itself (allowed: its own request); the student's
    backward starting an engine of its own through C is a nested run, charged."""
    found = run(tmp_path, LAB03, ["lab03.my_relu"])
    assert found.charged("honest") == set(), found.reports
    assert ENGINE in found.charged("delegating through C"), found.reports


EARLIER_THREAD = E4_ANSWER + '''
import concurrent.futures, functools, queue, threading
import torch
from coursekit.grading import grade

_engine = torch.autograd.Variable._execution_engine
_work, _done = queue.Queue(), queue.Queue()


def _server():   # started in an earlier cell: it serves backward passes through C
    while True:
        a, b, loss = _work.get()
        _done.put(functools.partial(_engine.run_backward, (loss,), (torch.ones_like(loss),),
                                    False, False, (a, b), False, False)())


def served(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    _work.put((a, b, loss))
    return (loss.detach(),) + tuple(_done.get())


if STUDENTS_OWN:
    threading.Thread(target=TARGET(_server), daemon=True).start()
    answer("served by a thread of the student's started earlier", grads=served)
    raise SystemExit

_pool = concurrent.futures.ThreadPoolExecutor(1)
_pool.submit(int).result()   # its worker thread starts now, in an earlier cell


def pooled(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    work = functools.partial(_engine.run_backward, (loss,), (torch.ones_like(loss),), False,
                             False, (a, b), False, False)
    return (loss.detach(),) + tuple(_pool.submit(work).result())


answer("served by a library's thread started earlier", grads=pooled)
'''


@pytest.mark.parametrize("target", ["_server", "functools.partial(_server)"])
def test_a_thread_running_student_code_during_the_check_is_charged(tmp_path, target):
    """The engine watch sees every thread's nodes (torch's profile_all_threads): those a thread
    of the student's own runs for the answer are charged, whatever wraps its function (red
    team 13b: a partial once hid it), since the check never backpropagates on another
    thread."""
    wrap = "lambda f: f" if target == "_server" else "functools.partial"
    found = run(tmp_path, f"import functools\nSTUDENTS_OWN = True\nTARGET = {wrap}\n"
                + EARLIER_THREAD, [E4])
    charged = found.charged("served by a thread of the student's started earlier")
    assert ENGINE in charged, found.reports
    assert any("on another thread" in what for what in found.kinds("engine")), found.reports


def test_the_engine_in_a_library_thread_started_before_the_check_is_charged(tmp_path):
    """A library's thread started in an earlier cell (a ThreadPoolExecutor's worker: library
    code, which honest code starts too) that runs the engine through C only
    (functools.partial over run_backward, submitted by the answer): submit() is no call into
    anything forbidden, but the nodes run on the worker's thread, which the watch sees (it
    did not while it followed only the driving thread)."""
    found = run(tmp_path, "STUDENTS_OWN = False\n" + EARLIER_THREAD, [E4])
    charged = found.charged("served by a library's thread started earlier")
    assert ENGINE in charged, found.reports


OTHER_FRAMEWORK = '''
import jax, jax.numpy as jnp
import numpy as np
from coursekit.grading import grade


def two_layer_grads(x, y, w1, w2):
    # A NumPy exercise's gradients "by hand", from JAX: autodiff all the same.
    def loss(a, b):
        return jnp.sum((jnp.maximum(x @ a, 0) @ b - y) ** 2)
    value, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
    return float(value), np.asarray(g1), np.asarray(g2)


grade("lab01.two_layer_grads", two_layer_grads)
drive("lab01.two_layer_grads", "jax")
'''


def test_another_frameworks_autodiff_is_autodiff_too(tmp_path):
    """lab01's NumPy exercises forbid every way to gradients, JAX's and TensorFlow's too
    (resolved by file: the grader imports neither to know where they live)."""
    pytest.importorskip("jax")
    found = run(tmp_path, OTHER_FRAMEWORK, ["lab01.two_layer_grads"])
    assert "jax.value_and_grad" in found.charged("jax"), found.reports


C_WRAPPER = '''
import functools
import torch
from coursekit.grading import grade


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = functools.partial(torch.sigmoid)(x)     # C calls C: no Python event at all
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)


grade("lab03.sigmoid", Sigmoid)
drive("lab03.sigmoid", "partial(torch.sigmoid)")
'''


@pytest.mark.xfail(strict=True, reason=(
    "BUG: a forbidden C function other than torch's engine (lab03's torch.sigmoid) is seen "
    "only when student code calls it itself (a profile function's c_call event); a C "
    "callable that calls it (functools.partial(torch.sigmoid)(x), operator.methodcaller) "
    "makes no Python event, and only the autograd engine is watched from C++"))
def test_a_forbidden_c_function_behind_a_c_wrapper_is_charged(tmp_path):
    found = run(tmp_path, C_WRAPPER, ["lab03.sigmoid"])
    assert "torch.sigmoid" in found.charged("partial(torch.sigmoid)"), found.reports


# Found by a helper who read the monitor (2026-11-28): code that runs where CPython profiles
# nothing. A trace function (sys.settrace, or threading.settrace for a new thread) and an
# audit hook run with profiling paused, and an audit hook is also handed the monitor's own
# frames, whose locals hold its state. Student code may install none of them.
UNPROFILED = E4_ANSWER + '''
import sys
import threading
import torch
from coursekit.grading import grade


def with_autograd(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(), *RUN(lambda: torch.autograd.grad(loss, (a, b))))


def in_a_trace_function(work):
    box = {}

    def marker():
        return 0

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is marker.__code__ and "out" not in box:
            box["out"] = work()

    sys.settrace(tracer)
    marker()
    sys.settrace(None)
    return box["out"]


def in_a_threads_trace_function(work):
    box = {}

    def tracer(frame, event, arg):
        if "out" not in box:
            box["out"] = work()

    threading.settrace(tracer)
    worker = threading.Thread(target=lambda: None)
    worker.start()
    worker.join()
    threading.settrace(None)
    return box.get("out") or work()


JOBS = []


def runner(event, args):
    if event == "student.go" and JOBS:
        JOBS.append(JOBS.pop(0)())


def in_an_audit_hook(work):
    sys.addaudithook(runner)
    JOBS[:] = [work]
    sys.audit("student.go")
    return JOBS.pop() if JOBS and not callable(JOBS[-1]) else work()


for label, way in (("a trace function", in_a_trace_function),
                   ("a thread's trace function", in_a_threads_trace_function),
                   ("an audit hook", in_an_audit_hook)):
    RUN = way
    try:
        answer(label, grads=with_autograd)
    except RuntimeError as error:
        print("REFUSED", label, error)
'''


def test_code_that_would_run_where_nothing_is_profiled_is_refused_and_reported(tmp_path):
    found = run(tmp_path, UNPROFILED, [E4])
    tampering = found.kinds("tamper")
    assert "sys.settrace from student code" in tampering, found.reports
    assert "sys.addaudithook from student code" in tampering, found.reports
    assert "threading.settrace was set before a thread started" in tampering, found.reports
    # The hook was not added (CPython drops a hook that a RuntimeError refuses), nor did the
    # thread trace: the work ran in the answer itself, where it is charged.
    for label in ("a thread's trace function", "an audit hook"):
        assert "torch.autograd.grad" in found.charged(label), (label, found.reports)


# How student code that reached for the monitor's state tells it found it (the state is a
# SimpleNamespace holding the monitor's matcher).
IS_STATE = '''

def _is_state(value):
    return type(value).__name__ == "SimpleNamespace" and "matcher" in getattr(value, "__dict__", {})
'''


STATE_FROM_A_HOOK = E4_ANSWER + IS_STATE + '''
import sys
import torch
from coursekit.grading import grade

GRAB = {}


def spy(event, args):
    if "s" in GRAB or event != "object.__getattr__":
        return
    frame = sys._getframe(1)
    while frame is not None:
        state = frame.f_locals.get("s")
        if _is_state(state):
            GRAB["s"] = state
            return
        frame = frame.f_back


sys.addaudithook(spy)
exec("def fresh():\\n    return 1\\nfresh()")
print("GRABBED", "s" in GRAB)
'''


def test_the_monitors_state_is_out_of_reach_of_an_audit_hook(tmp_path):
    found = run(tmp_path, STATE_FROM_A_HOOK, [E4])
    assert "GRABBED False" in found.output, found.output[-3000:]
    assert "sys.addaudithook from student code" in found.kinds("tamper"), found.reports


# Student code that CPython runs on top of whatever runs at that moment, the monitor's own
# frames included: a finalizer the garbage collector calls, a signal handler. And what
# ``sys.getprofile()`` and ``threading._profile_hook`` hand out. Each reaches for the
# monitor's state (a frame's locals) or its private globals (``__globals__``, ``f_globals``:
# neither is an audited read). NOTE [Sealed state] and NOTE [Signals] in the monitor.
UNDERNEATH = IS_STATE + '''
import gc, signal, sys, threading
import torch

GRAB, CALLS = {}, {"finalizer": 0, "signal": 0}


def reach(frame):
    while frame is not None:
        state = frame.f_locals.get("s")
        if _is_state(state):
            GRAB["s"] = state
        if "_code_info" in frame.f_globals:
            GRAB["globals"] = frame.f_globals
        frame = frame.f_back


class Finalized:
    def __init__(self):
        self.cycle = self            # only the collector frees it

    def __del__(self):
        CALLS["finalizer"] += 1
        reach(sys._getframe(1))


def on_alarm(signum, frame):
    CALLS["signal"] += 1
    if not CALLS.get("inside"):   # a busy machine may be slower than the timer
        CALLS["inside"] = True
        reach(frame)
        CALLS["inside"] = False


def busy(rounds):   # fresh code: the monitor's Python code runs for each
    for i in range(rounds):
        exec("def fresh%d():\\n    return torch.zeros(1)\\nfresh%d()" % (i, i))


gc.set_threshold(1, 1, 1)
for _ in range(500):
    Finalized()
busy(500)
gc.set_threshold(700, 10, 10)
gc.collect()
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
busy(1500)
signal.setitimer(signal.ITIMER_REAL, 0)
handed = [sys.getprofile(), threading._profile_hook]
print("HANDED", [hasattr(h, "__globals__") and "_code_info" in h.__globals__ for h in handed])
print("CALLS", CALLS["finalizer"] > 0, CALLS["signal"] > 0)
print("STATE", "s" in GRAB, "GLOBALS", "globals" in GRAB)

# A signal handler written as the lecture's timeout idiom still works: it raises in the
# student's own code, which catches it.
class Timeout(Exception):
    pass


def on_timeout(signum, frame):
    raise Timeout()


signal.signal(signal.SIGALRM, on_timeout)
signal.setitimer(signal.ITIMER_REAL, 0.05)
try:
    busy(10**6)
except Timeout:
    print("TIMED OUT AS ASKED")
finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
'''


@pytest.mark.parametrize("profile", ["compiled", "python", pytest.param(
    "uncompiled", marks=pytest.mark.xfail(strict=True, reason=(
        "without the compiled module a signal handler is delivered where it lands, the "
        "monitor's frames included (README: known limits)")))])
def test_code_that_runs_on_top_of_the_monitor_reaches_none_of_it(tmp_path, profile):
    found = run(tmp_path, UNDERNEATH, [E4], profile=profile)
    out = found.output
    assert "CALLS True True" in out, out[-3000:]          # both ran: the attack was made
    assert "HANDED [False, False]" in out, out[-3000:]
    assert "TIMED OUT AS ASKED" in out, out[-3000:]
    assert "STATE False GLOBALS False" in out, out[-3000:]


# What someone who had read the change above tried next (each reached the monitor's state
# before it was closed): student code run inside the monitor's own functions by a comparison
# (a ``str`` subclass handed to the audit hook), by a property (a metaclass's ``__module__``
# on the registered answer), by a fake frame handed to the profile function itself, by a
# ``__del__`` when the monitor drops the last reference to a namespace, and by a C function
# as a signal handler, which keeps the frame it is handed.
INSIDE = E4_ANSWER + IS_STATE + '''
import signal, sys, threading
import torch
from coursekit.grading import grade

GRAB = {}


def reach(frame, label):
    while frame is not None:
        if _is_state(frame.f_locals.get("s")) or "_code_info" in frame.f_globals:
            GRAB[label] = True
        frame = frame.f_back


class Name(str):
    def __eq__(self, other):
        reach(sys._getframe(1), "comparison")
        return False
    __hash__ = str.__hash__


sys.audit("object.__getattr__", object(), Name("x"))
sys.audit("object.__setattr__", reach, Name("__code__"), None)


class FakeFrame:
    f_back = None

    @property
    def f_globals(self):
        reach(sys._getframe(1), "fake frame")
        return {}

    @property
    def f_code(self):
        reach(sys._getframe(1), "fake frame")
        return reach.__code__


for entry in (sys.getprofile(), threading._profile_hook):
    try:
        entry(FakeFrame(), "call", None)
    except RuntimeError as error:
        print("REFUSED", error)


class Finalized:
    def __del__(self):
        reach(sys._getframe(1), "last reference")


namespace = {"finalized": Finalized()}
exec("x = 1", namespace)   # the monitor learns this namespace ...
del namespace              # ... and holds the last reference to it
exec("y = 2", {})          # ... which it lets go of when it learns the next


FRAMES = []
signal.signal(signal.SIGALRM, FRAMES.insert)   # insert(signum, frame): the frame is kept
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
for i in range(1000):
    exec("def fresh%d():\\n    return torch.zeros(1)\\nfresh%d()" % (i, i))
signal.setitimer(signal.ITIMER_REAL, 0)
signal.signal(signal.SIGALRM, signal.SIG_DFL)
for frame in FRAMES:
    reach(frame, "C handler")
print("FRAMES KEPT", len(FRAMES) > 0)


class AnswerMeta(type):
    @property
    def __module__(cls):
        reach(sys._getframe(1), "metaclass")
        return "builtins"


class Answer(metaclass=AnswerMeta):
    def __call__(self, *args):
        return _answer(by_hand, plain_step)(*args)


grade("lab01.train_two_layer_torch", Answer())
drive("lab01.train_two_layer_torch", "meta answer")

def on_alarm(signum, frame):
    pass


signal.signal(signal.SIGALRM, on_alarm)
print("GETSIGNAL", signal.getsignal(signal.SIGALRM) is on_alarm)
print("REACHED", sorted(GRAB))
'''


@pytest.mark.parametrize("profile", ["compiled", "python", pytest.param(
    "uncompiled", marks=pytest.mark.xfail(strict=True, reason=(
        "without the compiled module the profile function can be called by student code, a "
        "namespace the monitor lets go of is freed at once, and no signal handler is "
        "wrapped (README: known limits)")))])
def test_student_code_runs_inside_none_of_the_monitors_functions(tmp_path, profile):
    found = run(tmp_path, INSIDE, [E4], profile=profile)
    out = found.output
    assert out.count("REFUSED coursekit: the grading monitor cannot be called") == 2, out[-3000:]
    assert "FRAMES KEPT True" in out and "GETSIGNAL True" in out, out[-3000:]
    assert "REACHED []" in out, out[-3000:]

