"""The engine watch: torch's autograd engine, seen from C++ while a check is driven.

Python's profile hook sees only the calls Python makes. The engine can be started where no
Python frame is: a C callable that calls another (``functools.partial(engine.run_backward,
...)()``), or a TorchScript function that calls ``torch.autograd.grad`` inside the TorchScript
interpreter. Every path ends in the engine itself, and the engine reports each node it runs
to torch's profiler (``RecordScope.BACKWARD_FUNCTION``), whichever path started it. So, for a
check that forbids torch's autograd, the monitor runs the profiler for that scope only while
the check is driven (:func:`start`, :func:`stop`), and afterwards asks of every node the
engine ran (:func:`unasked`):

* did it run on the thread that drives the check? (the check never backpropagates elsewhere;
  the session sees every thread, so a thread the student started earlier, or a library's
  worker it hands work to, shows its nodes on its own thread)
* did it run inside one of the check's own requests? The monitor marks each call the check's
  program makes into ``torch.autograd.graph._engine_run_backward`` (the one Python door to
  the engine): a window of time, and the thread's autograd sequence number when it opened.
  A call is the check's own only when the nearest code above it that is not the library's
  is the check's, whatever library frames lie between (a module body torch imports while
  student code runs is no check's request);
* was the node made before that request began? A node made during the request belongs to a
  graph built while the check's backward ran (the student's ``backward`` starting an engine
  of its own): a nested run nobody asked for.

A tiny backward of the check's own at the start (the canary) marks the driving thread, and
another at the end proves that the session still records it. Each must be in the events at
the time it ran, which nothing run later can forge: a session the student stopped, replaced
(a profiler of theirs: torch runs one at a time, and a second one silently takes its place)
or kept from recording the driving thread loses one of them, and the check is charged
(failing closed). So is a drive that runs more nodes than the watch reads.

Forward mode runs no node of the engine, and needs a dual level, which torch keeps for the
whole process and allows one at a time: a level open as the check starts or ends
(:func:`dual_level_open`) was entered for the answer, whatever way it was entered.

The functions here run inside the monitor. They call only C functions the monitor took from
torch when it was installed, before any student code ran (:func:`capture`), so nothing the
student replaces later runs inside the monitor; with a torch function or dispatch mode
pushed (Python code torch would call back), the watch does not start, and says so.
"""
from __future__ import annotations

import os
import time

CANARY = "SpecialErfcxBackward0"   # a node no check makes: the canary's own
_MAX_EVENTS = 200_000
TOO_MANY = "(more nodes than the watch reads)"
# Nodes that compute no derivative: they pass gradients on, store them, or stand for an
# undefined one. Library code calls some directly, outside any backward (gradcheck makes
# UndefinedGrad nodes), and a backward that computes anything runs other nodes too.
PASSIVE = ("torch::autograd::UndefinedGrad", "torch::autograd::DelayedError",
           "torch::autograd::Error", "torch::autograd::GraphRoot",
           "torch::autograd::AccumulateGrad")


def capture():
    """References to what the watch uses, taken now (before any student code): None when
    torch is not loaded or lacks the profiler's entry points."""
    import sys
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        from torch._C import _autograd as autograd
        from torch._C import _profiler as profiler

        event = autograd._KinetoEvent
        try:   # every thread's nodes, not only the driving thread's (torch >= 2.8)
            experimental, all_threads = profiler._ExperimentalConfig(profile_all_threads=True), True
        except TypeError:
            experimental, all_threads = profiler._ExperimentalConfig(), False
        refs = {
            "prepare": autograd._prepare_profiler, "enable": autograd._enable_profiler,
            "disable": autograd._disable_profiler, "enabled": autograd._profiler_enabled,
            "sequence_nr": autograd._get_sequence_nr,
            "config": profiler.ProfilerConfig(profiler.ProfilerState.KINETO, False, False, False,
                                              False, False, experimental),
            "all_threads": all_threads,
            "activities": {profiler.ProfilerActivity.CPU},
            "scopes": {profiler.RecordScope.BACKWARD_FUNCTION},
            "events": autograd._ProfilerResult.events,
            "name": event.name, "start_ns": event.start_ns, "duration_ns": event.duration_ns,
            "thread": event.start_thread_id, "seq": event.sequence_nr,
            "canary": torch._C._special.special_erfcx, "ones": torch.ones,
            "grad_enabled": torch._C.is_grad_enabled, "set_grad": torch._C._set_grad_enabled,
            "now": time.time_ns, "ran": [],
            "run_backward": torch.autograd.Variable._execution_engine.run_backward,
            "enter_dual_level": torch._C._enter_dual_level,
            "exit_dual_level": torch._C._exit_dual_level,
            "modes": (torch._C._len_torch_function_stack, torch._C._len_torch_dispatch_stack),
            "dup": os.dup, "dup2": os.dup2, "open": os.open, "close": os.close,
            "devnull": os.devnull, "write_only": os.O_WRONLY,
        }
    except (ImportError, AttributeError):
        return None
    return refs


def _quiet(refs, call):
    """``call()`` with fd 2 pointed at /dev/null: Kineto prints a line to stderr whenever a
    session starts or stops, which a grading kernel would pass on as the cell's output."""
    saved = refs["dup"](2)
    null = refs["open"](refs["devnull"], refs["write_only"])
    try:
        refs["dup2"](null, 2)
        return call()
    finally:
        refs["dup2"](saved, 2)
        refs["close"](null)
        refs["close"](saved)


def start(refs) -> bool:
    """Start a session for the engine's nodes only, then run the canary (see module docstring).
    False when a session could not be started (another profiler is running)."""
    if refs["enabled"]() or refs["modes"][0]() or refs["modes"][1]():
        return False

    def begin():
        refs["prepare"](refs["config"], refs["activities"])
        refs["enable"](refs["config"], refs["activities"], refs["scopes"])

    refs["ran"] = []
    try:
        _quiet(refs, begin)
    except Exception:  # noqa: BLE001 — no watch: the caller fails closed
        return False
    return _canary(refs)


def _canary(refs) -> bool:
    """Run the canary's backward, and remember when it ran. Only its node runs: the leaf's
    gradient is captured (as torch.autograd.grad does), and the output's gradient is given.
    Grad mode is on for it whatever the student's code left (``torch.set_grad_enabled(False)``
    at a cell's top level is an honest idiom)."""
    was = refs["grad_enabled"]()
    try:
        refs["set_grad"](True)
        began = refs["now"]()
        leaf = refs["ones"](1, requires_grad=True)
        refs["run_backward"]((refs["canary"](leaf),), (refs["ones"](1),), False, False, (leaf,),
                             False, False)
        refs["ran"].append((began, refs["now"]()))
    except Exception:  # noqa: BLE001 — no canary: the caller fails closed
        return False
    finally:
        refs["set_grad"](was)
    return True


def stop(refs):
    """End the session: ``[(name, start_ns, end_ns, thread, sequence_nr), ...]``, the opening
    canary first, or None when the session was stopped, replaced or kept from recording by
    someone else (a canary missing at the time it ran)."""
    try:
        if refs["modes"][0]() or refs["modes"][1]():   # the canary would call Python code
            closed = False
        else:
            closed = _canary(refs)
        # A session of every thread is global: the driving thread's own flag does not show it
        # (a session that is not there any more gives no events, so no canary).
        if not refs["all_threads"] and not refs["enabled"]():
            return None
        result = _quiet(refs, refs["disable"])
        events = refs["events"](result)
    except Exception:  # noqa: BLE001 — no events: the caller fails closed
        return None
    found = []
    for event in events[:_MAX_EVENTS]:
        begin = refs["start_ns"](event)
        found.append((refs["name"](event), begin, begin + refs["duration_ns"](event),
                      refs["thread"](event), refs["seq"](event)))
    truncated = len(events) > _MAX_EVENTS   # charged all the same: the closing canary may
    if not closed or len(refs["ran"]) != 2:  # be among the nodes not read
        return None
    canaries = []
    for began, ended in refs["ran"][:1 if truncated else 2]:
        marks = [e for e in found if CANARY in e[0] and began <= e[1] and e[2] <= ended]
        if not marks:
            return None
        canaries.append(marks[0])
    if canaries[0][3] != canaries[-1][3]:
        return None
    if truncated:
        found.append((TOO_MANY, 0, 0, canaries[0][3], -1))
    return [canaries[0], *found]


def dual_level_open(refs) -> bool:
    """Whether a forward-mode AD level is open: torch allows one at a time, so entering one
    fails then; else the level entered here is left at once."""
    try:
        level = refs["enter_dual_level"]()
    except RuntimeError:
        return True
    refs["exit_dual_level"](level=level)
    return False


def unasked(events, windows) -> list[str]:
    """What the engine ran that the check's program did not ask for: one line per kind.

    ``events`` as :func:`stop` returns them; ``windows``: ``(start_ns, end_ns, sequence_nr)``
    of each request the check's own code made (see module docstring)."""
    canary = [e for e in events if CANARY in e[0]]
    thread = canary[0][3] if canary else None
    problems = {}
    for name, begin, end, where, seq in events:
        if name == TOO_MANY:
            problems.setdefault("many", f"ran more than {_MAX_EVENTS} nodes, more than the "
                                        f"watch reads")
            continue
        if CANARY in name or name in PASSIVE:
            continue
        if where != thread:
            problems.setdefault("thread", f"ran {name} on another thread")
            continue
        inside = [w for w in windows if w[0] <= begin and end <= w[1]]
        if not inside:
            problems.setdefault("unasked", f"ran {name}, which the check did not ask for")
        elif seq >= 0 and seq >= max(inside)[2]:
            problems.setdefault("nested", f"ran {name} inside the check's backward "
                                          f"(a graph built while it ran)")
    return list(problems.values())
