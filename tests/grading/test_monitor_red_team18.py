"""Red team 18: the "covered" targets of commit d6062cb (a target set reported in the current
drive is not judged again until the next drive: fast_profile.c ``covered_now``, numbered by
``new_drive``) and red team 17's fixes of commit a6909c6 (``_handed_by_the_student``,
``_wraps_the_function_named``, ``_on_drive``'s nested drives, forward-mode AD patterns). Each
attempt is a test: stopped, a plain passing test; gets through, a strict expected failure
that says so.

Every attack answer computes the gradients with a forbidden target (full marks by value) and
must be charged ``torch.autograd.grad`` (or, for engine-only routes, the engine) by E4.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER
from test_monitor_same_package import fraction

GRAD = "torch.autograd.grad"

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


def _charged(tmp_path, source, pattern=GRAD, label="attack", profile="compiled"):
    found = run(tmp_path, source, [E4], profile=profile)
    assert fraction(found, label) == 1.0, found.output[-3000:]   # full marks
    assert pattern in found.charged(label), (found.reports, found.output[-3000:])
    return found


PRELUDE = E4_ANSWER + '''
import functools, os, pickle, select, sys, threading, time
import torch
from coursekit.grading import grade


def plainly(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    return (loss.detach(), *torch.autograd.grad(loss, (a, b)))


def _cover(times=3):
    """torch.autograd.grad from student code, outside any drive: reported, and covered."""
    leaf = torch.ones(2, requires_grad=True)
    for _ in range(times):
        torch.autograd.grad((leaf * 2).sum(), (leaf,))
        time.sleep(0.01)
'''


# 1. A forked worker keeps the drive number it was forked with. new_drive() bumps a C static
# of the kernel process; a process that library code forks (coursekit.distributed.launch, the
# lab's own launcher, run from a thread of the student's so that it does not block) keeps a
# copy of the counter and of `covered` that no later drive of the grader's ever bumps. The rank
# calls torch.autograd.grad once before any drive (reported from the rank's pid, outside every
# window: covered at the rank's drive number); during the drive the answer hands each step's
# tensors to the rank over a pipe made before the fork, and the rank's calls of the same
# target are passed over by covered_now: no report in the window. (Before d6062cb the rank's
# calls in the window were reported with its pid, and charged: see the control below.)
# Measured: torch.autograd.grad is not charged; E4 is still charged torch.autograd.engine,
# since grad's engine entry (_engine_run_backward) is special code, which covered_now never
# passes over. A check whose forbidden Python targets reach no special code (lab03's "torch",
# lab08's "jax") would be charged nothing; 1b drops the engine entry too.
FORKED_WORKER = PRELUDE + '''
from coursekit.distributed import launch

_tasks_r, _tasks_w = os.pipe()
_results_r, _results_w = os.pipe()


def _send(fd, obj):
    view = memoryview(pickle.dumps(obj))
    view = memoryview(len(view).to_bytes(8, "little").__add__(bytes(view)))
    while view:
        view = view[os.write(fd, view):]


def _recv(fd, timeout):
    deadline = time.monotonic() + timeout
    data = b""
    while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "little"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return "TIMEOUT"
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return "CLOSED"
        data += chunk
    return pickle.loads(data[8:])


def _worker():
    sys._getframe()   # an audited event: this thread's C profile function is set again
    if WARM:
        _cover()
    _send(_results_w, "ready")
    while True:
        task = _recv(_tasks_r, 60)
        if not isinstance(task, tuple):
            return 0
        x, y, w1, w2 = (torch.from_numpy(t) for t in task)
        a, b, loss = graph(x, y, w1, w2)
        _send(_results_w, tuple(t.detach().numpy()
                                for t in (loss, *torch.autograd.grad(loss, (a, b)))))


_launcher = threading.Thread(target=functools.partial(launch, _worker, 1, timeout=120),
                             daemon=True)
_launcher.start()
print("WORKER", _recv(_results_r, 60))


def remote(x, y, w1, w2):
    _send(_tasks_w, tuple(t.detach().numpy() for t in (x, y, w1, w2)))
    got = _recv(_results_r, 30)
    if not isinstance(got, tuple):
        raise RuntimeError("worker: " + str(got))
    return tuple(torch.from_numpy(t) for t in got)


answer("attack", grads=remote)
_send(_tasks_w, "stop")
_launcher.join(30)
'''


def test_a_forked_worker_not_warmed_is_charged(tmp_path):
    """The control: the rank's first call of the target is in the window, from its pid."""
    _charged(tmp_path, "WARM = False\n" + FORKED_WORKER)


def test_a_forked_worker_covered_before_the_drive(tmp_path):
    """Stopped: nothing is covered in a process forked from the kernel (fast_profile.c
    in_forked_child)."""
    _charged(tmp_path, "WARM = True\n" + FORKED_WORKER)


# 1b. The same worker without torch.autograd.grad: the engine started through C only
# (test_monitor_engine_watch's `_run`: functools.partial around run_backward, no Python call
# and no c_call event to see). The engine watch runs in the kernel process only, from the
# drive's start; the rank was forked before it and never watches. Not d6062cb's doing: shown
# for the report, since the forked worker's engine is the charge left to 1 above.
FORKED_ENGINE = FORKED_WORKER.replace(
    "for t in (loss, *torch.autograd.grad(loss, (a, b)))))",
    "for t in (loss, *_run(loss, (a, b)))))").replace(
    "from coursekit.distributed import launch", '''from coursekit.distributed import launch
_engine = torch.autograd.Variable._execution_engine


def _run(loss, inputs):     # the engine, started through C only (no Python call to see)
    return functools.partial(_engine.run_backward, (loss,), (torch.ones_like(loss),), False,
                             False, inputs, False, False)()''')


@pytest.mark.xfail(strict=True, reason="GETS THROUGH (not d6062cb): a rank forked before the "
                   "drive is outside the engine watch, and a C-only engine run calls no target")
def test_a_forked_worker_running_the_engine_through_c(tmp_path):
    found = run(tmp_path, "WARM = False\n" + FORKED_ENGINE, [E4])
    assert fraction(found, "attack") == 1.0, found.output[-3000:]   # full marks
    assert found.charged("attack"), (found.reports, found.output[-3000:])


def _beside_a_thread(source, target, grads):
    """``source``, then the answer ``grads`` driven while a thread of the student's runs
    ``target`` (which stops when ``_stop`` is set)."""
    return PRELUDE + source + f'''
_stop = threading.Event()
_t = threading.Thread(target={target}, daemon=True)
_t.start()
time.sleep(0.05)
answer("attack", grads={grads})
_stop.set()
_t.join(5)
'''


# 2. The student's own calls of the C module's public new_drive/current_drive: the counter only
# ever goes up, so a student's new_drive uncovers (more reports); current_drive only reads.
# The answer bumps it before and after each grad, and a thread bumps it all through the drive.
OWN_DRIVE_CALLS = _beside_a_thread('''
from coursekit.grading import _fast_profile as _fp


def _bump():
    while not _stop.wait(0.0005):
        _fp.new_drive()


def bumped(x, y, w1, w2):
    _fp.new_drive()
    found = plainly(x, y, w1, w2)
    _fp.current_drive()
    return found


_cover()
''', "_bump", "bumped")


def test_the_students_own_new_drive_calls_are_charged(tmp_path):
    _charged(tmp_path, OWN_DRIVE_CALLS)


# 3. A thread of the student's covers the target in a tight loop across the drive's start, so
# that the cover is set as close as it gets to the bump: whatever it reads from current_drive
# was read before its report was written, so a cover of the new drive is a report inside the
# window (charged), and a cover read before the bump is stale.
RACING_THREAD = _beside_a_thread('''
def _race():
    leaf = torch.ones(2, requires_grad=True)
    deadline = time.monotonic() + 20
    while not _stop.is_set() and time.monotonic() < deadline:
        torch.autograd.grad((leaf * 2).sum(), (leaf,))
''', "_race", "plainly")


def test_a_thread_covering_across_the_drive_start_is_charged(tmp_path):
    _charged(tmp_path, RACING_THREAD)


# 4. A nested oracle.drive from the answer (a request that is not JSON) after the target was
# covered in an earlier cell: the nested call bumps the counter again, inside the outer window.
NESTED_AFTER_COVER = PRELUDE + '''
from coursekit.grading import oracle
_cover()
_nested = []


def nested(x, y, w1, w2):
    if not _nested:
        _nested.append(1)
        try:
            oracle.drive('{"check": "lab01.train_two_layer_torch", ')
        except Exception:
            pass
    return plainly(x, y, w1, w2)


answer("attack", grads=nested)
'''


def test_a_nested_drive_after_a_cover_is_charged(tmp_path):
    _charged(tmp_path, NESTED_AFTER_COVER)
