"""The monitor's fast paths in C (``coursekit/grading/fast_profile.c``, issue 24's cost).

* they are built and used by the development install (``make .venv``), as by ``pip install``
  where a compiler is at hand;
* they decide as the Python profile function does: the same events are passed on to the
  monitor's handlers, run for run (every branch of ``monitor._profile``'s first lines);
* student code that imports the compiled module can neither replace its state nor set it
  again behind the audit hook, nor set a copy of it (its own state) that shows the monitor's
  profile function to ``sys.getprofile()``; it is still charged afterwards, whichever profile
  function the monitor runs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from monitor_harness import run

pytestmark = pytest.mark.slow

# Modules of each kind the monitor keeps (monitor.QUIET, WATCHED, CELLS and both), one it
# does not know, and one whose entry is another module's globals; C functions the fast paths
# know to be no target, one entry that is not the function, and a stand-in for fork_exec.
DECISIONS = textwrap.dedent('''
    import json, math, operator, sys, types
    from coursekit.grading import monitor

    SOURCE = """
    import math, operator
    def leaf(x):
        return abs(x) + len([x]) + operator.neg(x)
    def remember_me(x):
        return leaf(x) + math.floor(x)
    def run(x, other):
        total = 0
        for i in range(3):
            total += leaf(x + i) + remember_me(i) + other.leaf(i)
        return total + math.sqrt(4)
    """
    made = {}
    for name in ("quiet", "watched", "cells", "both", "unknown", "stale", "patterned", "graded"):
        module = types.ModuleType(name)
        exec(compile(SOURCE, f"/somewhere/{name}.py", "exec"), vars(module))
        made[name] = module
    modules, c_seen, returns, passed, calls = {}, {}, {}, [], [0]
    for name, kind in (("quiet", monitor.QUIET), ("watched", monitor.WATCHED),
                       ("cells", monitor.CELLS), ("both", monitor.WATCHED | monitor.CELLS),
                       ("patterned", monitor.WATCHED), ("graded", monitor.WATCHED)):
        modules[id(vars(made[name]))] = (vars(made[name]), kind)
    modules[id(vars(made["stale"]))] = (vars(made["quiet"]), monitor.QUIET)
    c_seen[id(len)] = len
    c_seen[id(abs)] = len
    # What the monitor learnt of code objects: in a watched module, library code that is no
    # target, nor special, is all a call event can be about; anything else is passed on.
    infos = {}
    watched, both = vars(made["watched"]), vars(made["both"])
    for code, info in ((watched["leaf"].__code__, (monitor.LIBRARY, (), None)),
                       (watched["remember_me"].__code__, (monitor.LIBRARY, (), monitor.DRIVE)),
                       (watched["run"].__code__, (monitor.LIBRARY, (), None)),
                       (both["leaf"].__code__, (monitor.LIBRARY, ("torch.x",), None)),
                       (both["run"].__code__, (monitor.GRADING, (), None))):
        infos[id(code)] = (code, *info)
    infos[id(watched["run"].__code__)] = (both["run"].__code__, monitor.LIBRARY, (), None)
    # A target (patterns): passed on unless its caller's kept walk found no student code.
    # Grading code: passed on unless called by grading code.
    patterned, graded = vars(made["patterned"]), vars(made["graded"])
    for code, info in ((patterned["leaf"].__code__, (monitor.LIBRARY, ("lib.target",), None)),
                       (patterned["run"].__code__, (monitor.LIBRARY, (), None)),
                       (patterned["remember_me"].__code__, (monitor.LIBRARY, (), None)),
                       (graded["leaf"].__code__, (monitor.GRADING, (), None)),
                       (graded["run"].__code__, (monitor.GRADING, (), None)),
                       (graded["remember_me"].__code__, (monitor.LIBRARY, (), None))):
        infos[id(code)] = (code, *info)

    def on_call(frame):
        passed.append(["call", frame.f_globals["__name__"], frame.f_code.co_name])
        if frame.f_code.co_name == "remember_me":
            returns[id(frame)] = (frame, None, None)
        if frame.f_globals["__name__"] == "patterned" and frame.f_code.co_name == "leaf":
            back = frame.f_back   # its walk, as _student_above keeps it
            returns[id(back)] = (back, "" if back.f_code.co_name == "run" else "cell.py", None)

    def on_c_call(frame, arg):
        passed.append(["c_call", frame.f_globals["__name__"], arg.__name__])

    def on_return(frame):
        passed.append(["return", frame.f_globals["__name__"], frame.f_code.co_name])
        returns.pop(id(frame), None)

    def profile(frame, event, arg):
        calls[0] += 1
        return monitor._profile(frame, event, arg, modules, on_call, on_c_call, on_return,
                                returns, c_seen, math.sqrt, operator.neg, infos)

    if sys.argv[1] == "python":
        sys.setprofile(profile)
    else:
        from coursekit.grading import _fast_profile
        _fast_profile.install(modules, c_seen, returns, infos, {},
                              (monitor.LIBRARY, monitor.GRADING, monitor.OPEN, monitor.REFERENCE),
                              math.sqrt, operator.neg, profile, True)
    for name in made:
        made[name].run(1.5, made["quiet" if name != "quiet" else "cells"])
    sys.setprofile(None)
    print("PASSED", json.dumps({"passed": passed, "calls": calls[0]}))
''')


def _passed_on(tmp_path, mode: str) -> dict:
    script = tmp_path / "decisions.py"
    script.write_text(DECISIONS)
    done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0 and "PASSED " in done.stdout, done.stdout + done.stderr
    return json.loads(done.stdout.split("PASSED ", 1)[1])


def test_the_fast_paths_pass_on_what_the_python_profile_function_acts_on(tmp_path):
    python, compiled = _passed_on(tmp_path, "python"), _passed_on(tmp_path, "c")
    assert compiled["passed"] == python["passed"]
    # The Python profile function ran for every event in one run, and in the other only for
    # those it acts on.
    assert python["calls"] > 3 * len(python["passed"]), python["calls"]
    assert compiled["calls"] == len(compiled["passed"]), compiled["calls"]
    seen = {tuple(event) for event in python["passed"]}
    # Each branch was taken: the events the fast paths must pass on...
    assert {("call", "watched", "remember_me"), ("call", "watched", "run"),
            ("call", "both", "leaf"), ("call", "both", "run"), ("call", "unknown", "leaf"),
            ("call", "stale", "leaf"), ("c_call", "cells", "abs"), ("c_call", "cells", "floor"),
            ("c_call", "unknown", "floor"), ("c_call", "stale", "floor"),
            ("c_call", "quiet", "sqrt"), ("c_call", "quiet", "neg"),
            ("return", "watched", "remember_me")} <= seen, sorted(seen)
    events = [tuple(event) for event in python["passed"]]
    # A target: from run, only the first call (then run's walk is kept); from each
    # remember_me, whose walk found student code. Grading code: not when grading code calls.
    assert events.count(("call", "patterned", "leaf")) == 1 + 3, events
    assert events.count(("call", "graded", "leaf")) == 3, events      # from remember_me
    assert events.count(("call", "graded", "run")) == 1, events       # from the script
    # ...and those they return from at once.
    assert not {("call", "quiet", "leaf"), ("call", "cells", "leaf"), ("call", "watched", "leaf"),
                ("c_call", "quiet", "floor"),
                ("c_call", "watched", "floor"), ("c_call", "cells", "len"),
                ("return", "watched", "leaf")} & seen, sorted(seen)


def test_the_development_install_uses_the_compiled_fast_paths_in_every_thread():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent('''
        import os, tempfile, threading
        from coursekit.grading import monitor, _fast_profile
        fifo = os.path.join(tempfile.mkdtemp(), "monitor")
        os.mkfifo(fifo)
        threading.Thread(target=lambda: open(fifo, "rb").read(), daemon=True).start()
        monitor.install(fifo, [])
        try:
            _fast_profile.install({}, {}, {}, {}, {}, (1, 2, 3, 4), None, None, print, True)
        except RuntimeError as error:
            print("INSTALLED ALREADY:", error)
        print("MAIN THREAD", _fast_profile.is_set())

        def thread():
            open(os.devnull).close()   # an audited event: the thread's profile becomes C
            print("NEW THREAD", _fast_profile.is_set())

        started = threading.Thread(target=thread)
        started.start()
        started.join()
    ''')], capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert "INSTALLED ALREADY: the monitor's profile function is set already" in out, out
    assert "MAIN THREAD True" in out and "NEW THREAD True" in out, out


E4 = "lab01.train_two_layer_torch"
STUDENT = '''
import torch
from coursekit.grading import _fast_profile, grade

try:
    _fast_profile.install({}, {}, {}, {}, {}, (1, 2, 3, 4), None, None, print, True)   # a blind state
    print("INSTALLED")
except RuntimeError as error:
    print("REFUSED install:", error)
_fast_profile.resume()   # refused by the audit hook (CPython reports it, raises nothing)
import _signal
try:   # signals watched with no code of the monitor's: every handler delivered anywhere
    _fast_profile.watch_signals(_signal.signal, _signal.getsignal, frozenset())
    print("WATCHED")
except RuntimeError as error:
    print("REFUSED watch_signals:", error)
print("OWN NAMES", sorted(n for n in dir(_fast_profile) if not n.startswith("__")))


def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
        loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
        g1, g2 = torch.autograd.grad(loss, (a, b))
        _fast_profile.new_drive()   # numbers drives: calling it only makes the monitor work more
        losses[t] = loss.detach()
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2, losses


grade("lab01.train_two_layer_torch", train_two_layer_torch)
drive("lab01.train_two_layer_torch", "after")
'''


def test_student_code_cannot_replace_or_set_again_the_compiled_fast_paths(tmp_path):
    found = run(tmp_path, STUDENT, [E4])
    out = found.output
    assert "REFUSED install: the monitor's profile function is set already" in out, out[-3000:]
    assert "REFUSED watch_signals: signals are watched already" in out, out[-3000:]
    assert ("OWN NAMES ['current_drive', 'getsignal', 'guard', 'install', 'is_set', 'keep', "
            "'new_drive', 'resume', 'watch_signals', 'wrap_handlers']") in out, out[-3000:]
    assert "sys.setprofile from student code" in found.kinds("refused"), found.reports
    assert "torch.autograd.grad" in found.charged("after"), found.reports


# A profile function that raises, as an interrupt inside the monitor's would; with and without
# an audit hook that refuses switching it off.
RAISES = textwrap.dedent('''
    import json, sys
    refuse = sys.argv[2] == "refuse"

    def hook(event, args):
        if event == "sys.setprofile" and refuse and sys.getprofile() is not None:
            raise RuntimeError("refused")

    sys.addaudithook(hook)
    sys.unraisablehook = lambda unraisable: print("UNRAISABLE", unraisable.exc_value)

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "target":
            raise ValueError("inside the profile function")

    def target():
        return 1

    if sys.argv[1] == "python":
        sys.setprofile(profile)
    else:
        from coursekit.grading import _fast_profile
        _fast_profile.install({}, {}, {}, {}, {}, (1, 2, 3, 4), None, None, profile, True)
    try:
        target()
        raised = None
    except BaseException as error:
        raised = type(error).__name__ + ": " + str(error)
    on = sys.getprofile() is profile
    if not on and sys.argv[1] == "c":
        _fast_profile.resume()
    print("RAISES", json.dumps([raised, on, sys.getprofile() is profile]))
''')


@pytest.mark.parametrize("refused", ["allow", "refuse"])
def test_an_exception_in_the_python_profile_function_leaves_as_from_cpythons_own(tmp_path,
                                                                              refused):
    script = tmp_path / "raises.py"
    script.write_text(RAISES)
    found = {}
    for mode in ("python", "c"):
        done = subprocess.run([sys.executable, str(script), mode, refused], capture_output=True,
                              text=True, timeout=300)
        assert "RAISES " in done.stdout, done.stdout + done.stderr
        assert "UNRAISABLE" not in done.stdout, done.stdout   # no code of anyone's runs there
        found[mode] = json.loads(done.stdout.split("RAISES ", 1)[1])
    # Switched off as CPython switches a Python profile function off (and set again by
    # resume), or kept where the audit hook refused that.
    assert found["c"][1] is found["python"][1] is (refused == "refuse"), found
    assert found["c"][2] is True, found
    # The exception goes on as it came (an interrupt stays one); CPython's own trampoline
    # lets the audit hook's refusal replace it.
    assert found["c"][0] == "ValueError: inside the profile function", found
    assert found["python"][0] == ("RuntimeError: refused" if refused == "refuse"
                                  else found["c"][0]), found


# A copy of the compiled module, loaded from another file, has state of its own: set with a
# profile function that does nothing, shown to sys.getprofile() as the monitor's, through a
# slot (the frame is at no call instruction, so the audit hook lets a profile change through
# as it lets CPython's own switching off through). Found by a helper who read the change.
COPY = '''
import functools, importlib.util, os, shutil, sys, tempfile
import torch
from coursekit.grading import _fast_profile, grade

copy = os.path.join(tempfile.mkdtemp(), os.path.basename(_fast_profile.__file__))
shutil.copyfile(_fast_profile.__file__, copy)
twin = importlib.util.module_from_spec(importlib.util.spec_from_file_location("_fast_profile",
                                                                              copy))
shown = sys.getprofile()
# Every module known, and quiet: the Python profile function would never hear of a call.
quiet = {id(vars(m)): (vars(m), 0) for m in list(sys.modules.values())
         if type(getattr(m, "__dict__", None)) is dict}
quiet[id(globals())] = (globals(), 0)


class Setter:
    __getitem__ = functools.partial(twin.install, quiet, {}, {}, {}, {}, (1, 2, 3, 4), None,
                                    None, shown)
    __setitem__ = functools.partial(_fast_profile.install, quiet, {}, {}, {}, {}, (1, 2, 3, 4),
                                    None, None)


try:
    Setter()[shown] = True          # the monitor's own module, unused by a Python monitor
except RuntimeError as error:
    print("REFUSED own:", error)
Setter()[True]
print("COPY SET")
''' + STUDENT.split("print(\"OWN NAMES\"", 1)[1].split("\n", 1)[1]


@pytest.mark.parametrize("profile", ["compiled", "python"])
def test_a_copy_of_the_compiled_module_set_by_student_code_blinds_nothing(tmp_path, monkeypatch,
                                                                        profile):
    if profile == "python":
        monkeypatch.setenv("COURSEKIT_MONITOR_PROFILE", "python")
    found = run(tmp_path, COPY, [E4])
    assert "REFUSED own: the monitor's profile function is set already" in found.output, (
        found.output[-3000:])
    assert "torch.autograd.grad" in found.charged("after"), found.reports
