"""Forked kernels and the grading monitor attacked by a student who has read the grader.

Two guarantees (README, *What grading guarantees*):

1. **Nothing of student A reaches a later student B of the same slot**, nor the slot's zygote
   (whose state every later kernel inherits). Student code reaches native code the sanctioned
   way: a ``multiprocessing`` spawn start, which the monitor reports to a TA but does not
   refuse, runs a fresh interpreter without the monitor, so the tests below keep their teeth
   whatever the monitor learns to refuse (``get_ipython().system``, the way in of
   ``test_forked_kernels``, is refused since shell escapes count as the student's). Real
   grader, real sandbox, real zygote (the helpers of ``test_forked_kernels``).
2. **Student code starts no program that runs without the monitor unless it is refused or
   reported.** Probed with a small harness (the monitor installed in a plain interpreter, the
   "student" code compiled under a file name outside the installation, as in
   ``tests/grading/test_monitor_processes.py``), and in a real forked kernel where the
   kernel's own event loop matters.

What the mechanism stops is kept as short passing tests; what gets through is a strict
expected failure with the evidence in its reason.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from autograder.isolation import sandbox
from autograder.pipeline.gradebook import OutcomeStatus
from machine_load import scaled, slowdown
from test_forked_kernels import (  # noqa: F401 — fixtures used by name
    LIMITS, WAIT_S, Slot, _left_after, course, make_slot)

pytestmark = pytest.mark.slow

ARCH = platform.machine()
SYS_ADD_KEY, SYS_KEYCTL = {"aarch64": (217, 219)}.get(ARCH, (248, 250))
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_UNLINK, KEYCTL_GET_PERSISTENT = 1, 7, 9, 22


@contextlib.contextmanager
def _setting_up():
    """A fixture of strict expected failures (``raises=AssertionError``): its own failure
    must not pass for the expected one."""
    try:
        yield
    except AssertionError as error:
        raise RuntimeError(f"the attack could not be set up: {error}") from error


def _require(condition, what) -> None:
    """The attack ran (else the test fails, whatever it expects)."""
    if not condition:
        pytest.fail(f"the attack did not run: {what}")


# --------------------------------------------------------------------------- the monitor

HARNESS = textwrap.dedent('''
    import json, os, sys, threading, time

    if __name__ == "__main__":
        fifo, patterns, pause = sys.argv[1], json.loads(sys.argv[3]), float(sys.argv[4])
        lines = []

        def read():
            with open(fifo, "rb") as pipe:
                for line in pipe:
                    lines.append(json.loads(line))

        threading.Thread(target=read, daemon=True).start()
        from coursekit.grading import monitor
        from coursekit.grading.targets import for_patterns
        monitor.install(fifo, for_patterns(patterns))
        student = open(sys.argv[2]).read()
        exec(compile(student, "/home/student/lab10.py", "exec"), {"__name__": "__main__"})
        time.sleep(pause)   # for the reader to take the last reports
        print("REPORTS", json.dumps(lines))
''')


def _monitored(tmp_path: Path, student: str, patterns=("torch.distributed.all_reduce",)):
    """Run ``student`` under the monitor, in ``tmp_path``; (every report with its time, what
    the student code wrote to ``probes.json``, the interpreter's output)."""
    fifo = tmp_path / "monitor"
    os.mkfifo(fifo)
    (tmp_path / "harness.py").write_text(HARNESS)
    (tmp_path / "student.py").write_text(textwrap.dedent(student))
    done = subprocess.run([sys.executable, str(tmp_path / "harness.py"), str(fifo),
                           str(tmp_path / "student.py"), json.dumps(list(patterns)),
                           str(scaled(0.5))],
                          cwd=tmp_path, capture_output=True, text=True, timeout=scaled(300),
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    reports = json.loads(done.stdout.split("REPORTS ", 1)[1].splitlines()[0])
    probes = json.loads((tmp_path / "probes.json").read_text())
    return reports, probes, done.stdout + done.stderr


def _during(reports: list[dict], probe: dict, kinds=("tamper", "refused", "call")) -> list:
    """The reports of ``kinds`` made while ``probe`` ran."""
    return [(r["kind"], r["what"]) for r in reports
            if r["kind"] in kinds and probe["t0"] <= r["t"] <= probe["t1"]]


# Each probe starts a program that touches ran-<name> (in the harness's folder), and records
# when it ran, so that reports can be told apart by their timestamps.
PROBE = '''
import json, os, sys, time
results = {}


def probe(name, start, marker=None):
    marker = marker or f"ran-{name}"
    t0 = time.monotonic()
    try:
        start()
        raised = ""
    except BaseException as error:
        raised = f"{type(error).__name__}: {error}"
    results[name] = {"t0": t0, "t1": time.monotonic(), "raised": raised,
                     "ran": os.path.exists(marker)}
    json.dump(results, open("probes.json", "w"))
'''

THROUGH_LIBRARIES = PROBE + '''
import gc, os, subprocess, weakref
import torch.utils._pytree as pytree
from jupyter_client.launcher import launch_kernel

# A library function that starts the program it is given: the first frame above subprocess
# that is not the standard library's is jupyter_client's, so the program counts as its.
probe("jupyter_client.launcher.launch_kernel",
      lambda: launch_kernel(["touch", "ran-jupyter_client.launcher.launch_kernel"]).wait())
# A library function that calls what it is given: os.system is called by pytree's frame.
probe("torch.utils._pytree.tree_map(os.system)",
      lambda: pytree.tree_map(os.system, "touch 'ran-torch.utils._pytree.tree_map(os.system)'"))


# A finalizer that the garbage collector runs while a library function allocates: the stack
# above subprocess is weakref's (standard library), then the library's.
class Box:
    pass


def collected_in_a_library():
    nested = [[i, [i]] for i in range(3000)]
    gc.collect()            # from here, the 700th allocation collects: one inside pytree's code
    box = Box()
    box.me = box
    weakref.finalize(box, subprocess.run, ["touch", "ran-weakref.finalize in a library frame"])
    del box
    pytree.tree_flatten(nested)


probe("weakref.finalize in a library frame", collected_in_a_library)
'''


@pytest.fixture(scope="module")
def through_libraries(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("jupyter_client")
    return _monitored(tmp_path_factory.mktemp("through_libraries"), THROUGH_LIBRARIES)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "BUG: the monitor asks who wanted a program by the first frame above subprocess/os that is "
    "not the standard library's or the shell's (monitor._origin); any site-packages frame "
    "there counts as the library's own decision. Student code that hands a command to a "
    "library function that runs it (jupyter_client.launcher.launch_kernel(argv)), that calls "
    "what it is given (torch.utils._pytree.tree_map(os.system, cmd)), or a weakref.finalize "
    "that the garbage collector runs inside a library function, starts a program without the "
    "monitor: it runs, and nothing is refused or reported"))
@pytest.mark.parametrize("name", ["jupyter_client.launcher.launch_kernel",
                                  "torch.utils._pytree.tree_map(os.system)",
                                  "weakref.finalize in a library frame"])
def test_a_program_started_through_a_library_function_is_refused_or_reported(
        through_libraries, name):
    reports, probes, output = through_libraries
    probe = probes[name]
    seen = _during(reports, probe)
    assert not probe["ran"] or seen, (
        f"{name}: the program ran ({probe}) and the monitor said nothing: {seen}")


STOPPED = PROBE + '''
import asyncio, atexit, concurrent.futures, ctypes.util, functools, multiprocessing, platform
import subprocess, threading, webbrowser, weakref

# Standard-library helpers that start programs themselves, called by student code.
probe("platform.architecture", lambda: platform.architecture("/bin/ls"))
probe("ctypes.util.find_library", lambda: ctypes.util.find_library("ck_no_such_library"))
probe("ProcessPoolExecutor",
      lambda: concurrent.futures.ProcessPoolExecutor(1).submit(os.getpid).result())


def forkserver():
    child = multiprocessing.get_context("forkserver").Process(target=os.getpid)
    child.start()
    child.join()
    open("ran-forkserver", "w").close()


probe("forkserver", forkserver)


async def spawn():
    process = await asyncio.create_subprocess_exec("touch", "ran-asyncio.run")
    await process.wait()


probe("asyncio.run", lambda: asyncio.run(spawn()))


class Box:
    pass


def finalized_here():
    box = Box()
    weakref.finalize(box, subprocess.run, ["touch", "ran-weakref.finalize"])
    del box


probe("weakref.finalize", finalized_here)


def excepthook():
    # threading.excepthook(args): Popen(cmd, -1, None, None, None, None, None, None, args)
    threading.excepthook = functools.partial(
        subprocess.Popen, "touch ran-threading.excepthook", -1, None, None, None, None, None, None)
    try:
        thread = threading.Thread(target=int, args=("x",))
        thread.start()
        thread.join()
    finally:
        threading.excepthook = threading.__excepthook__


probe("threading.excepthook", excepthook)
os.environ["BROWSER"] = "touch"    # webbrowser runs $BROWSER with the address
probe("webbrowser.open", lambda: webbrowser.open("ran-webbrowser.open"))
atexit.register(subprocess.run, ["touch", "ran-atexit"])
'''


def test_standard_library_helpers_pools_and_callbacks_that_start_programs_are_stopped(
        tmp_path):
    """Helpers that shell out (platform, ctypes.util, webbrowser), a process pool, asyncio's
    subprocesses, a finalizer, a thread's exception hook and an exit handler, with student
    code or nobody's code on the stack: each is refused (and reported), or, for a forkserver
    (a new interpreter), reported; none starts a program unnoticed."""
    reports, probes, output = _monitored(tmp_path, STOPPED, patterns=())
    refused = ("platform.architecture", "ctypes.util.find_library", "ProcessPoolExecutor",
               "asyncio.run", "weakref.finalize", "threading.excepthook", "webbrowser.open")
    assert set(probes) == {*refused, "forkserver"}, output[-3000:]
    for name in refused:
        probe = probes[name]
        assert not probe["ran"], (name, probe)
        assert any(kind == "tamper" and "from student code" in what
                   for kind, what in _during(reports, probe)), (name, probe, reports)
    # A forkserver is a new interpreter, which no audit event announces: reported, not refused.
    assert probes["forkserver"]["ran"], probes["forkserver"]
    assert any(kind == "tamper" and "monitor cannot follow" in what
               for kind, what in _during(reports, probes["forkserver"])), reports
    # The exit handler runs when nobody's code is on the stack: the student's, so refused.
    assert not (tmp_path / "ran-atexit").exists(), output[-3000:]


HONEST_THREAD = PROBE + '''
import json, threading


def bad_json_in_a_thread():
    thread = threading.Thread(target=json.loads, args=("{not json",))
    thread.start()      # raises JSONDecodeError there; Python prints its traceback
    thread.join()


probe("uncaught exception in a thread", bad_json_in_a_thread)
'''


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "BUG (an honest student flagged): an uncaught exception in a thread of honest code "
    "(Thread(target=json.loads, args=('{not json',))) is reported as tampering: to place its "
    "^ carets, Python 3.11's traceback printer parses a segment of each source line under that "
    "file's name, which raises a 'compile' audit event with a library file name and a text "
    "that is not the file's, so the hook reports 'compiled code under the name "
    ".../threading.py' (and .../json/decoder.py) as tamper and refuses it; the grader flags the "
    "submission for a TA"))
def test_an_honest_threads_uncaught_exception_is_not_flagged(tmp_path):
    reports, probes, output = _monitored(tmp_path, HONEST_THREAD, patterns=())
    probe = probes["uncaught exception in a thread"]
    _require("JSONDecodeError" in output, output[-3000:])   # the thread did raise
    assert _during(reports, probe, kinds=("tamper",)) == [], reports


FROZEN_NAME = PROBE + '''
import gc, importlib._bootstrap as bootstrap
import torch
import torch.distributed as dist

HELPERS = """
import gc
import torch.distributed as dist


def cheat(tensor):
    try:
        dist.all_reduce(tensor)        # a forbidden target, from inside an answer
    except ValueError:                 # no process group: the call itself is what counts
        pass
    return len(gc.get_objects())       # refused to student code
"""


def cheat_in_the_open():
    try:
        dist.all_reduce(torch.ones(1))
    except ValueError:
        pass


probe("student code", cheat_in_the_open)
# "<frozen " is one of the monitor's library prefixes, and compile() under a library name is
# allowed when the name's file holds the same text: a relative name opens the student's own
# file. Exec of library code is refused to student code, but not to importlib's frame.
open("<frozen lab10>", "w").write(HELPERS)
helpers = {"__name__": "lab10_helpers"}
try:
    bootstrap._call_with_frames_removed(exec, compile(HELPERS, "<frozen lab10>", "exec"), helpers)
except RuntimeError:     # refused: then "cheat" is not there, and the probe says it raised
    pass
probe("<frozen lab10>", lambda: results.setdefault("objects", helpers["cheat"](torch.ones(1))))
'''


def test_code_that_claims_a_frozen_file_name_is_still_the_students(tmp_path):
    pytest.importorskip("torch")
    reports, probes, output = _monitored(tmp_path, FROZEN_NAME)
    # The control: the same call from ordinary student code is reported.
    _require(("call", "torch.distributed.all_reduce from /home/student/lab10.py") in _during(
        reports, probes["student code"]), reports)
    _require("<frozen lab10>" in probes, output[-3000:])
    frozen = probes["<frozen lab10>"]
    assert frozen["raised"] or _during(reports, frozen), (
        f"the forbidden call and gc.get_objects ran unreported and unrefused from "
        f"'<frozen lab10>' code ({probes.get('objects')} objects seen): {frozen}")


# --------------------------------------------------------------------------- a real kernel

UNMONITORED_IN_A_KERNEL = r'''
import asyncio, ctypes, functools, signal, subprocess
# ctypes: foreign function calls raise no audit event (only dlopen and dlsym do, and those
# are raised in ctypes' own frames, the standard library's).
try:
    ctypes.CDLL(None).system(b"id > by_ctypes.txt")
except Exception as error:
    print("ctypes:", error)
# A callback the kernel's own event loop runs: the frames above subprocess are asyncio's
# (standard library), then the loop's runner (a library's), never the student's.
try:
    asyncio.get_event_loop().call_soon(subprocess.run,
                                       ["sh", "-c", "id > by_loop_callback.txt"])
except Exception as error:
    print("loop callback:", error)
# A signal handler that arrives while the kernel's loop waits: Popen(cmd, -1, None, None,
# None, None, None, signum, frame), so close_fds=signum and shell=frame (true).
try:
    signal.signal(signal.SIGALRM, functools.partial(
        subprocess.Popen, "id > by_signal_handler.txt", -1, None, None, None, None, None))
    signal.setitimer(signal.ITIMER_REAL, 0.3)
except Exception as error:
    print("signal handler:", error)
await asyncio.sleep(PAUSE_S)
'''
STARTED_IN_A_KERNEL = ("by_ctypes.txt", "by_loop_callback.txt", "by_signal_handler.txt")


@pytest.fixture(scope="module")
def unmonitored(course):  # noqa: F811 — the imported fixture
    slot = Slot(course, sandbox.probe(course), LIMITS)
    try:
        with _setting_up():
            outcome = slot.grade("cal_unmonitored", slot.notebook(
                f"PAUSE_S = {scaled(1.5)}\n" + UNMONITORED_IN_A_KERNEL))
            folder = slot.graded("cal_unmonitored")
            ran = {name: (folder / name).read_text().strip() if (folder / name).exists()
                   else None for name in STARTED_IN_A_KERNEL}
            found = outcome, ran, slot.zygote.uid, slot.outputs("cal_unmonitored")
        yield found
    finally:
        slot.close()


def _unnoticed(outcome, ran: str | None, uid: int) -> bool:
    """The program ran as the kernel's uid, and the grading was neither flagged nor told."""
    return ran is not None and f"uid={uid}" in ran and not outcome.flagged


def test_ctypes_in_a_cell_starts_no_unnoticed_program(unmonitored):
    outcome, ran, uid, output = unmonitored
    assert not _unnoticed(outcome, ran["by_ctypes.txt"], uid), (ran, outcome.reasons, output)


@pytest.mark.parametrize("name", ["by_loop_callback.txt", "by_signal_handler.txt"])
def test_a_callback_the_kernel_runs_later_starts_no_unnoticed_program(unmonitored, name):
    outcome, ran, uid, output = unmonitored
    assert not _unnoticed(outcome, ran[name], uid), (ran, outcome.reasons, output)


# --------------------------------------------------------------------------- A, then B

# Run by a spawn child of A's kernel (no monitor), as the slot's uid, in A's working folder.
_SYSCALLS = f"ADD_KEY, KEYCTL = {SYS_ADD_KEY}, {SYS_KEYCTL}\n"

ZOMBIE_LEADER = r"""
import ctypes, os, threading, time
def beat():
    while True:
        with open("beat-zombie-leader.txt", "a") as out:
            out.write("x\n")
        time.sleep(0.05)
threading.Thread(target=beat).start()
time.sleep(0.2)
ctypes.CDLL(None).syscall(60 if os.uname().machine == "x86_64" else 93, 0)  # SYS_exit: one thread
"""

TRACER = """
import ctypes, subprocess, time
child = subprocess.Popen(["sleep", "1002"])
time.sleep(0.2)
ctypes.CDLL(None).ptrace(16, child.pid, None, None)   # PTRACE_ATTACH: the child stops
time.sleep(1000)
"""

NATIVE_A = (_SYSCALLS + f"ZOMBIE_LEADER, TRACER = {ZOMBIE_LEADER!r}, {TRACER!r}\n"
            + f"WAIT_S = {WAIT_S}\n") + r"""
import ctypes, json, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
done = {}


def add_key(name, keyring):
    key = libc.syscall(ADD_KEY, b"user", name.encode(), b"SECRET-OF-A", 11,
                       ctypes.c_long(keyring))
    return key if key > 0 else -ctypes.get_errno()


# The uid's persistent keyring (KEYCTL_GET_PERSISTENT): it outlives every process of the uid.
persistent = libc.syscall(KEYCTL, 22, -1, -3)
done["persistent"] = [persistent if persistent > 0 else -ctypes.get_errno()]
if persistent > 0:
    done["persistent"].append(add_key("from_a_persistent", persistent))
# The session keyring, inherited from the kernel, which inherited it from the zygote.
done["session"] = [libc.syscall(KEYCTL, 0, -3, 0), add_key("from_a_session", -3)]


def beat(name):
    return f"while :; do echo x >> beat-{name}.txt; sleep 0.05; done"


# Processes that try to outlive the kernel, most of them beating into the working folder.
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
             start_new_session=True)
# root of a user namespace of its own, and init of a PID namespace of its own
subprocess.Popen(["unshare", "-Ur", "-p", "--fork", "sh", "-c", beat("userns-pidns")], **quiet)
# user, IPC, mount, network and UTS namespaces of its own
subprocess.Popen(["unshare", "-Urimnu", "sh", "-c", beat("namespaces")], **quiet)
# a stopped process, and one stopped under ptrace by a tracer of the uid
subprocess.Popen(["sh", "-c", "sleep 1001 & sleep 0.1; kill -STOP $!"], **quiet)
subprocess.Popen([sys.executable, "-c", TRACER], **quiet)
# a process whose main thread has exited (it reads as a zombie) while another thread runs
zombie = subprocess.Popen([sys.executable, "-c", ZOMBIE_LEADER], **quiet)
# new processes all the time, while the cleaner runs (each lives 0.2 s)
subprocess.Popen(["sh", "-c", "while :; do (sleep 0.2 &); echo x >> beat-churn.txt; "
                  "sleep 0.01; done"], **quiet)


def running():
    found = []
    for pid in os.listdir("/proc"):
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
            command = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
            found.append(f"{state} {command[:80]}")
        except (OSError, IndexError):
            pass
    return found


# Until every kind runs and beats (a busy machine starts them slowly), at most WAIT_S.
KINDS = ("T sleep 1001", "t sleep 1002", "beat-userns-pidns", "beat-namespaces", "beat-churn")
BEATS = ("userns-pidns", "namespaces", "zombie-leader", "churn")
deadline = time.monotonic() + WAIT_S
while True:
    done["pids"] = running()
    listed = "\n".join(done["pids"])
    if time.monotonic() > deadline or (all(kind in listed for kind in KINDS) and all(
            os.path.exists(f"beat-{name}.txt") for name in BEATS)):
        break
    time.sleep(0.05)
def leader_state():
    return [line.split()[1] for line in open(f"/proc/{zombie.pid}/status")
            if line[:6] == "State:"][0]
# Its main thread exits 0.2 s after it starts beating: on a busy machine, later.
while leader_state() != "Z" and time.monotonic() < deadline:
    time.sleep(0.05)
size = os.path.getsize("beat-zombie-leader.txt")
while os.path.getsize("beat-zombie-leader.txt") == size and time.monotonic() < deadline:
    time.sleep(0.05)
done["zombie_leader"] = [leader_state(), os.path.getsize("beat-zombie-leader.txt") - size]
done["unshare"] = subprocess.run(["unshare", "-Ur", "true"], capture_output=True).returncode
json.dump(done, open("a_native.json", "w"))
"""

NATIVE_B = _SYSCALLS + r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
found = {}


def read(keyring, name):
    key = libc.syscall(KEYCTL, 10, ctypes.c_long(keyring), b"user", name.encode(), 0)  # SEARCH
    if key <= 0:
        return None
    buf = ctypes.create_string_buffer(64)
    size = libc.syscall(KEYCTL, 11, ctypes.c_long(key), buf, 64)                      # READ
    return buf.raw[:size].decode() if size >= 0 else None


persistent = libc.syscall(KEYCTL, 22, -1, -3)
found["persistent"] = read(persistent, "from_a_persistent") if persistent > 0 else None
found["session"] = read(-3, "from_a_session")
found["commands"] = []
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            found["commands"].append(open(f"/proc/{pid}/cmdline", "rb").read()
                                     .replace(b"\0", b" ").decode())
        except OSError:
            pass
json.dump(found, open("b_native.json", "w"))
"""

# The sanctioned way to a program without the monitor: a spawn start (reported, not refused).
SPAWN = f"WAIT_S = {WAIT_S}\n" + r'''
import multiprocessing
_child = multiprocessing.get_context("spawn").Process(target=exec,
                                                     args=(NATIVE, {"__name__": "native"}))
_child.start()
_child.join(WAIT_S)
print("native exit", _child.exitcode)
'''

# A's kernel itself (monitored): what it shares with the zygote, and where it can write.
LOOK_AROUND = r'''
import json, os, sys
own = (os.getcwd(), os.path.dirname(sys.argv[sys.argv.index("-f") + 1]))
writable = set()
for line in open("/proc/self/mounts"):
    _, top, kind, options = line.split()[:4]
    if "rw" not in options.split(",") or kind == "proc":
        continue
    try:
        device = os.lstat(top).st_dev
    except OSError:
        continue
    for folder, dirs, _ in os.walk(top):
        if folder.startswith(own):
            dirs[:] = []
            continue
        wiped = folder.startswith(("/tmp/", "/dev/shm/", "/dev/mqueue/"))
        if os.access(folder, os.W_OK) and not (wiped and os.stat(folder).st_uid == os.getuid()):
            writable.add(folder)   # (the uid's own below the wiped folders go with them)
        # the same file system only: another mount is its own line
        dirs[:] = [d for d in dirs if os.lstat(os.path.join(folder, d)).st_dev == device]
shared = [line.strip() for line in open("/proc/self/maps") if line.split()[1][1::2] == "ws"]
zygote = f"/proc/{os.getppid()}"
reachable = []   # the zygote's files in /proc that this uid reads beyond its status, or writes
for name in os.listdir(zygote):
    path = os.path.join(zygote, name)
    try:
        if name in ("environ", "maps", "auxv", "stack", "syscall", "personality"):
            with open(path, "rb") as handle:
                if handle.read(64):
                    reachable.append(f"read {name}")
        elif os.path.isfile(path) and os.access(path, os.W_OK):
            with open(path, "rb+") as handle:   # the value it holds, written back
                handle.write(handle.read() or b"0")
            reachable.append(f"wrote {name}")
    except OSError:
        pass
json.dump({"writable": sorted(writable), "shared_writable_memory": shared,
           "zygote": open(f"{zygote}/cmdline").read(), "zygote_files": reachable},
          open("a_kernel.json", "w"))
'''


def _keyctl(*args) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(SYS_KEYCTL, *(ctypes.c_long(a) if isinstance(a, int) else a
                                      for a in args))


def _in_a_session_keyring(work):
    """``work()`` in a thread that joined a new session keyring of its own, as a grader run
    by systemd (each service has one) or from a PAM login (pam_keyinit) has; a bubblewrap
    started from that thread, and every zygote and kernel below it, inherit it. Returns
    (the keyring's id, what ``work`` returned)."""
    box: dict = {}

    def run():
        try:
            box["session"] = _keyctl(KEYCTL_JOIN_SESSION_KEYRING, None)
            box["value"] = work()
        except BaseException as error:  # noqa: BLE001 — raised again in the test's thread
            box["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["session"], box["value"]


@pytest.fixture(scope="module")
def ann_then_bob(course):  # noqa: F811 — the imported fixture
    """A leaves everything it can (as native code), then B looks, in the same zygote, both
    graded from a thread that has a session keyring of its own."""
    slot = Slot(course, sandbox.probe(course), LIMITS)
    seen: dict = {}

    def grade():
        seen["a"] = slot.grade("ann_escapes", slot.notebook(
            f"NATIVE = {NATIVE_A!r}\n" + SPAWN + LOOK_AROUND))
        seen["after_a"] = slot.identity()
        seen["uid"] = slot.zygote.uid
        # Between the two students: no process of the uid anywhere, and no beat grows.
        seen["left"] = _left_after(slot.zygote.uid)
        folder = slot.graded("ann_escapes")
        sizes = {p.name: p.stat().st_size for p in folder.glob("beat-*.txt")}
        time.sleep(0.3 * slowdown())   # a live beat writes six times meanwhile
        seen["beats"] = {name: (size, (folder / name).stat().st_size)
                         for name, size in sizes.items()}
        seen["b"] = slot.grade("bob_looks", slot.notebook(f"NATIVE = {NATIVE_B!r}\n" + SPAWN))
        seen["after_b"] = slot.identity()
        seen["left_after_b"] = _left_after(slot.zygote.uid)
        return seen

    try:
        with _setting_up():
            session, seen = _in_a_session_keyring(grade)
            seen["session"] = session
            seen["a_native"] = slot.read_json("ann_escapes", "a_native.json")
            seen["a_kernel"] = slot.read_json("ann_escapes", "a_kernel.json")
            seen["b_native"] = slot.read_json("bob_looks", "b_native.json")
        yield seen
    finally:
        uid = seen.get("uid")
        if uid is not None:   # the uid's persistent keyring outlives the test: empty it
            persistent = _keyctl(KEYCTL_GET_PERSISTENT, uid, -3)
            if persistent > 0:
                _keyctl(KEYCTL_CLEAR, persistent)
                _keyctl(KEYCTL_UNLINK, persistent, -3)
        slot.close()


def test_no_process_a_student_leaves_outlives_its_grading(ann_then_bob):
    """A process in a user and PID namespace of its own, one in five new namespaces, a
    stopped one, a ptrace-stopped one, one whose main thread exited (it reads as a zombie),
    and a loop that starts a process every 10 ms while the cleaner runs: all dead before B."""
    seen = ann_then_bob
    started, pids = seen["a_native"], "\n".join(seen["a_native"]["pids"])
    if started["unshare"] != 0:
        pytest.skip("no unprivileged user namespaces on this machine")
    # The attack ran: each kind was alive when A's kernel ended.
    for marker in ("sleep 1001", "sleep 1002", "beat-userns-pidns", "beat-namespaces",
                   "beat-churn"):
        assert marker in pids, (marker, pids)
    assert "T sleep 1001" in pids and "t sleep 1002" in pids, pids   # stopped, traced
    state, grew = started["zombie_leader"]
    assert state == "Z" and grew > 0, started["zombie_leader"]    # reads as a zombie, runs
    assert set(seen["beats"]) >= {"beat-userns-pidns.txt", "beat-namespaces.txt",
                                  "beat-zombie-leader.txt", "beat-churn.txt"}, seen["beats"]
    assert seen["after_a"] == seen["after_b"], "B did not run in A's zygote"
    assert seen["left"] == [] and seen["left_after_b"] == [], seen
    assert all(before == after for before, after in seen["beats"].values()), seen["beats"]
    assert not [c for c in seen["b_native"]["commands"]
                if "beat-" in c or "sleep 100" in c or "unshare -Ur" in c], seen["b_native"]
    assert seen["b"].score == pytest.approx(seen["b"].auto_max_score), seen["b"].reasons


def test_a_kernel_shares_no_writable_memory_and_finds_no_unwiped_writable_folder(ann_then_bob):
    """The zygote's child shares no writable mapping with it (which every later kernel would
    share too), can neither write nor read the inside of the zygote through /proc, and outside
    its own working and runtime folders the only folders the uid can write are the three the
    cleaner wipes."""
    report = ann_then_bob["a_kernel"]
    assert "coursekit.grading.zygote" in report["zygote"], report
    assert report["zygote_files"] == [], report
    assert report["shared_writable_memory"] == [], report
    assert set(report["writable"]) == {"/tmp", "/dev/shm", "/dev/mqueue"}, report["writable"]


def test_a_key_in_the_uids_persistent_keyring_never_reaches_the_next_student(ann_then_bob):
    seen = ann_then_bob
    planted = seen["a_native"]["persistent"]
    if planted[0] < 0:
        pytest.skip(f"no persistent keyrings here (errno {-planted[0]})")
    _require(len(planted) == 2 and planted[1] > 0, planted)
    assert seen["b_native"]["persistent"] is None, seen["b_native"]


def test_a_key_in_the_inherited_session_keyring_never_reaches_the_next_student(ann_then_bob):
    """The kernel joins a session keyring of its own: A's key lands there, not in the
    grader's, and B does not find it."""
    seen = ann_then_bob
    session_id, added = seen["a_native"]["session"]
    _require(added > 0, (session_id, seen["session"], added))   # the attack ran
    assert session_id != seen["session"], "the kernel kept the grader's session keyring"
    assert seen["b_native"]["session"] is None, seen["b_native"]


# --------------------------------------------------------------------------- the slot's folders

DEEP_RUNTIME = r'''
import os, sys
runtime = os.path.dirname(sys.argv[sys.argv.index("-f") + 1])   # the kernel's own, "r"
fd = os.open(runtime, os.O_RDONLY)
for _ in range(1500):            # deeper than Python's recursion limit
    os.mkdir("deep", dir_fd=fd)
    inner = os.open("deep", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
os.close(fd)
'''


def test_what_a_student_leaves_in_its_runtime_folder_never_keeps_the_slot(make_slot):  # noqa: F811 — the fixture
    slot = make_slot()
    try:
        a = slot.grade("ann_deep", slot.notebook(DEEP_RUNTIME))
        first = slot.identity()
        b = slot.grade("bob_after_deep", slot.notebook())
        zygotes = slot.grader.zygotes.zygotes
        evidence = (f"A: {a.status} {a.reasons}; zygotes after B: "
                    f"{[(z.process.pid, z.busy) for z in zygotes]}")
        _require(b.score == pytest.approx(b.auto_max_score), f"B was not graded: {b.reasons}")
        assert a.status != OutcomeStatus.ERROR, evidence
        assert (slot.graded("ann_deep") / slot.lab.notebook).is_file(), evidence
        assert len(zygotes) == 1 and zygotes[0].process.pid == first[1], evidence
    finally:   # the pool's own cleanup would trip on the same tree
        for zygote in slot.grader.zygotes.zygotes:
            subprocess.run(["rm", "-rf", str(zygote.runtime_root / "r")], check=False)
