"""Forked kernels (``Grader(fork_kernels=True)``: :mod:`autograder.isolation.forked`,
:mod:`autograder.isolation.kernel_proxy`, :mod:`coursekit.grading.zygote`) attacked for real: the fixture
lab graded by ``Grader.grade`` in a pool of ONE slot, so every student of a test runs in the
same pre-warmed zygote (each test asserts it is the same process), next to the previous
student's leftovers if there were any. No mock: real sandbox, real zygote, real proxy, real
cgroups.

* what a student leaves in ``/tmp``, ``/dev/shm`` (a folder it locked, a tree deeper than
  PATH_MAX, an IPython startup script) and in System V IPC is gone for the next student;
* a daemon it leaves behind is dead before the next student runs, with or without the
  submission's cgroup, and no process of the slot's uid is left between two students;
* a running kernel is the slot's uid with no capability, in the submission's cgroup (the
  zygote, its parent, is not), under the grader's rlimits, and holds no socket or pipe of the
  zygote, whose socket it cannot connect to;
* an infinite loop (interruptible or not) and a dying kernel are reported as with fresh
  kernels (a death by signal N may be named by the signal where a fresh kernel reports
  bubblewrap's exit code 128+N), and the slot grades the next student with full marks;
* a student's working folder leaves the slot with the student (moved to
  ``course/autograded/<student>/<lab>/``): the next one cannot read it.

Student code starts its programs the one way the grading monitor lets it (``SHELL``): a
multiprocessing spawn start, reported to a TA but not refused; shell escapes and
``subprocess`` from student code are refused.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import signal
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from coursekit.notebook import kernels
from autograder.demo import demo_class
from autograder.isolation import forked
from autograder.isolation import sandbox
from autograder.pipeline.grader import Grader, Overrides, prepare_lab
from autograder.pipeline.collect import Submission, SubmissionStatus
from conftest import make_fixture_course
from machine_load import scaled, slowdown

pytestmark = pytest.mark.slow

MEMORY_MB = 2048
# Generous, and longer on a busy machine (machine_load): a loaded CI machine (two test workers
# and their kernels on two cores) is slow.
LIMITS = Overrides(cell_timeout_s=scaled(60), time_limit_s=scaled(180), memory_mb=MEMORY_MB)
# How long a student's cell waits for the test (or for its own daemons): within its timeout.
WAIT_S = LIMITS.cell_timeout_s - 10


# --------------------------------------------------------------------------- the slot

@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_fixture_course(tmp_path_factory.mktemp("forked") / "tree")
    status = sandbox.probe(course)
    reason = forked.ZygotePool(course, status, 1).unavailable()
    if reason:
        pytest.skip(f"this machine cannot fork kernels: {reason}"
                    + (f" ({status.warning})" if status.warning else ""))
    return course


class Slot:
    """A grader whose pool holds one zygote: every submission runs in the same slot.

    Students are named per slot (``ann`` is ``ann-3`` in the course of the third slot), so
    the tests of this module can share one course."""

    made = 0

    def __init__(self, course, status: sandbox.SandboxStatus, overrides: Overrides):
        Slot.made += 1
        self.tag = Slot.made
        self.course, self.status, self.overrides = course, status, overrides
        self.lab = course.labs[0]
        self.demo = demo_class.demo_lab(course, self.lab)
        self.context = prepare_lab(course, self.lab)
        self.loop = asyncio.new_event_loop()
        self.grader = Grader(course, status, overrides, fork_kernels=True)
        self.grader.zygotes = forked.ZygotePool(course, status, 1)
        self.grading = 0   # gradings running now

    def notebook(self, extra: str | None = None, answers: dict[str, str] | None = None):
        """The solution (``answers`` replace some answer cells) with ``extra`` as a cell the
        student added at the end (run after the checks)."""
        nb = self.demo.notebook(answers)
        if extra is not None:
            nb.cells.append(new_code_cell(extra))
        return nb

    def who(self, student: str) -> str:
        return f"{student}-{self.tag}"

    def submission(self, student: str, nb) -> Submission:
        student = self.who(student)
        folder = self.course.submitted_dir / student / self.lab.id
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / self.lab.notebook))
        return Submission(student, self.lab.id, SubmissionStatus.FOUND, folder, folder / self.lab.notebook, nb)

    async def agrade(self, student: str, nb, *, fresh: bool = False):
        """Grade ``nb`` as ``student``: forked in the slot, or in a fresh kernel."""
        sub = self.submission(student, nb)
        grader = Grader(self.course, self.status, self.overrides) if fresh else self.grader
        self.grading += 1
        try:
            outcome = await grader.grade(sub, self.context)
        finally:
            self.grading -= 1
        if not fresh:
            assert self.grader.zygotes.fallbacks == {}, "graded in a fresh kernel, not forked"
        return outcome

    async def kernel_says_ready(self) -> forked.Zygote | None:
        """The slot's zygote, once its kernel has written ``ready`` in its working folder; None
        when the grading ended first. No deadline of its own: on a busy machine the kernel
        takes longer, and the grading ends within its time limit anyway."""
        while self.grading:
            zygotes = self.grader.zygotes.zygotes
            if zygotes and (zygotes[0].work_root / "w" / "ready").exists():
                return zygotes[0]
            await asyncio.sleep(0.02)
        return None

    def run(self, *work) -> list:
        """The coroutines ``work`` run together (at most one of them grades in the slot at a
        time: a pool of one starts a second zygote for a second kernel)."""
        async def together():
            return await asyncio.gather(*work)

        return self.loop.run_until_complete(together())

    def grade(self, student: str, nb, *, fresh: bool = False, beside=None):
        """``agrade``, with ``beside`` (a coroutine) run while it grades."""
        return self.run(self.agrade(student, nb, fresh=fresh), *([beside] if beside else []))[0]

    @property
    def zygote(self) -> forked.Zygote:
        zygotes = self.grader.zygotes.zygotes
        assert len(zygotes) == 1 and zygotes[0].alive, (
            f"the slot holds no live zygote: {zygotes}; stopped: {self.grader.zygotes.stopped}")
        return zygotes[0]

    def identity(self) -> tuple[int, int, int]:
        """Which zygote the slot holds: its object, its process, its uid."""
        zygote = self.zygote
        return id(zygote), zygote.process.pid, zygote.uid

    def graded(self, student: str) -> Path:
        return self.course.autograded_dir / self.who(student) / self.lab.id

    def read_json(self, student: str, name: str) -> dict:
        path = self.graded(student) / name
        assert path.is_file(), f"{student}'s code did not write {name}: {self.outputs(student)}"
        return json.loads(path.read_text())

    def outputs(self, student: str) -> str:
        """What the graded notebook's added cell printed (for assertion messages)."""
        nb = nbformat.read(str(self.graded(student) / self.lab.notebook), 4)
        return "\n".join(str(o.get("text") or o.get("evalue") or o)
                         for o in nb.cells[-1].get("outputs", []))

    def close(self) -> None:
        self.loop.run_until_complete(self.grader.zygotes.close())
        self.loop.close()


@pytest.fixture
def make_slot(course):
    slots = []

    def make(status: sandbox.SandboxStatus | None = None, overrides: Overrides = LIMITS):
        slots.append(Slot(course, status or sandbox.probe(course), overrides))
        return slots[-1]

    yield make
    for slot in slots:
        slot.close()


def _without_cgroups(status: sandbox.SandboxStatus) -> sandbox.SandboxStatus:
    """The same sandbox on a machine with no writable cgroup: only the zygote's own cleanup
    stands between two students."""
    return dataclasses.replace(status, enforcement=dataclasses.replace(
        status.enforcement, hierarchy=None, cgroup_reason="switched off by the test"))


# --------------------------------------------------------------------------- host side

def _status_fields(pid: int | str) -> dict[str, str]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {key: value.strip() for key, value in
            (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def _processes_of(uid: int) -> list[str]:
    """Live processes (not zombies) of ``uid`` on the whole machine, as "pid: command"."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _status_fields(entry.name)
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(uid) in fields.get("Uid", "").split() and fields.get("State", "")[:1] not in "ZX":
            found.append(f"{entry.name}: {command[:120]}")
    return found


def _left_after(uid: int, within_s: float = 5.0) -> list[str]:
    """Processes of ``uid`` still alive ``within_s`` (an idle machine's, scaled to this one's
    load) after a grading returned (a little patience for the kernel's own exit; a survivor
    never goes away)."""
    deadline = time.monotonic() + scaled(within_s)
    while (left := _processes_of(uid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _descriptors(pid: int) -> set[str]:
    """The sockets and pipes a process holds (``socket:[inode]``, ``pipe:[inode]``)."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(("socket:", "pipe:")):
            found.add(target)
    return found


def _cgroups(pid: int) -> dict[str, str]:
    """``{controller: path}`` from ``/proc/PID/cgroup`` ("" for cgroup v2)."""
    groups = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in (names.split(",") if names else [""]):
            groups[name] = path
    return groups


def _limits(pid: int) -> dict[str, tuple[str, str]]:
    """``/proc/PID/limits`` as ``{name: (soft, hard)}``."""
    found = {}
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]:
        name, soft, hard = line[:26].strip(), *line[26:].split()[:2]
        found[name] = (soft, hard)
    return found


# --------------------------------------------------------------------------- 1. leftovers

# A shell command, from a spawn start's child (a new interpreter, without the monitor).
SHELL = r'''
import multiprocessing, subprocess
def shell(command):
    child = multiprocessing.get_context("spawn").Process(
        target=subprocess.run, args=(command,), kwargs={"shell": True})
    child.start()
    child.join(120)
'''

LEAVE_LEFTOVERS = SHELL + r'''
import json, os
for root in ("/tmp", "/dev/shm"):
    open(f"{root}/left_by_a", "w").write("A")
    open(f"{root}/-rf by_a\nwith a newline", "w").write("A")   # a name to trip find and rm
    os.makedirs(f"{root}/locked_by_a/inner")
    open(f"{root}/locked_by_a/inner/kept", "w").write("A")
    os.chmod(f"{root}/locked_by_a/inner", 0o500)
    os.chmod(f"{root}/locked_by_a", 0o000)
    fd = os.open(root, os.O_RDONLY)          # 500 levels: a path longer than PATH_MAX
    for _ in range(500):
        os.mkdir("deep_by_a", dir_fd=fd)
        inner = os.open("deep_by_a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("kept", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    os.close(fd)
# The next kernel would run this at its start, were /tmp (its HOME) kept.
startup = os.path.expanduser("~/.ipython/profile_default/startup")
os.makedirs(startup, exist_ok=True)
open(f"{startup}/00-by_a.py", "w").write("open('startup_by_a_ran', 'w').write('A')\n")
shell("ipcmk -M 4096 >/dev/null && ipcmk -Q >/dev/null && ipcmk -S 2 >/dev/null")
json.dump({"home": os.path.expanduser("~"),
           "listed": {root: sorted(os.listdir(root)) for root in ("/tmp", "/dev/shm")},
           "ipc": {kind: open(f"/proc/sysvipc/{kind}").read().splitlines()[1:]
                   for kind in ("shm", "msg", "sem")}},
          open("a_seen.json", "w"))
'''

LOOK_FOR_LEFTOVERS = r'''
import json, os
seen = {}


def same_device(path, device):
    try:
        return os.lstat(path).st_dev == device
    except OSError:        # a path longer than PATH_MAX: its top folder is listed already
        return False


for root in ("/tmp", "/dev/shm"):
    device, found = os.lstat(root).st_dev, []
    for folder, dirs, files in os.walk(root):
        found += [os.path.join(folder, name) for name in dirs + files]
        # not into the folders bound below /tmp (the course's checks, the kernel's own)
        dirs[:] = [d for d in dirs if same_device(os.path.join(folder, d), device)]
    seen[root] = found
seen["ipc"] = {kind: open(f"/proc/sysvipc/{kind}").read().splitlines()[1:]
               for kind in ("shm", "msg", "sem")}
seen["cwd"] = sorted(os.listdir("."))
json.dump(seen, open("b_seen.json", "w"))
'''


def test_files_and_ipc_objects_a_student_leaves_never_reach_the_next(make_slot):
    slot = make_slot()
    a = slot.grade("ann_leaves", slot.notebook(LEAVE_LEFTOVERS))
    after_a = slot.identity()
    left = slot.read_json("ann_leaves", "a_seen.json")
    # The attack ran: every leftover existed when ann's kernel ended.
    assert left["home"] == "/tmp"
    for root in ("/tmp", "/dev/shm"):
        assert {"left_by_a", "locked_by_a", "deep_by_a"} <= set(left["listed"][root]), left
    assert all(len(left["ipc"][kind]) == 1 for kind in ("shm", "msg", "sem")), left["ipc"]
    assert a.score == pytest.approx(a.auto_max_score), a.reasons

    b = slot.grade("bob_looks", slot.notebook(LOOK_FOR_LEFTOVERS))
    assert slot.identity() == after_a, "bob did not run in ann's zygote"
    seen = slot.read_json("bob_looks", "b_seen.json")
    for root in ("/tmp", "/dev/shm"):
        assert [path for path in seen[root] if "by_a" in path] == [], seen[root]
    assert seen["ipc"] == {"shm": [], "msg": [], "sem": []}
    assert "startup_by_a_ran" not in seen["cwd"]
    assert b.score == pytest.approx(b.auto_max_score), b.reasons


# --------------------------------------------------------------------------- 2. daemons

START_DAEMONS = SHELL + f"WAIT_S = {WAIT_S}\n" + r'''
import json, os, time
# Orphans of a shell that exits at once (reparented to the sandbox's init): one in a session
# of its own that ignores SIGHUP and SIGTERM and writes every 50 ms, in /tmp and in its
# working folder (which follows the folder when the grader moves it out), and a sleeper.
beat = "while :; do echo x >> /tmp/beat_by_a; echo x >> beat.txt; sleep 0.05; done"
shell(f"trap '' HUP TERM; setsid sh -c '{beat}' </dev/null >/dev/null 2>&1 & "
          "sleep 1000 </dev/null >/dev/null 2>&1 & echo started")
deadline = time.monotonic() + WAIT_S
while time.monotonic() < deadline and (not os.path.exists("beat.txt")
                                       or os.path.getsize("beat.txt") < 6):
    time.sleep(0.05)
commands = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            commands.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode())
        except OSError:
            pass
json.dump({"beats": os.path.getsize("beat.txt"), "commands": commands}, open("a_seen.json", "w"))
'''

LOOK_FOR_DAEMONS = f"PAUSE_S = {0.3 * slowdown()}\n" + r'''
import json, os, time
before = os.path.exists("/tmp/beat_by_a")
time.sleep(PAUSE_S)      # a live daemon writes six times meanwhile
commands = []
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            commands.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode())
        except OSError:
            pass
json.dump({"beat": [before, os.path.exists("/tmp/beat_by_a")], "commands": commands,
           "cwd": sorted(os.listdir("."))}, open("b_seen.json", "w"))
'''


@pytest.mark.parametrize("cgroups", [True, False], ids=["with-cgroup", "zygote-cleanup-only"])
def test_a_daemon_a_student_leaves_is_dead_before_the_next_student(course, make_slot,
                                                                   cgroups):
    status = sandbox.probe(course)
    if cgroups and status.enforcement.hierarchy is None:
        pytest.skip("no writable cgroup on this machine (the other case covers it)")
    slot = make_slot(status if cgroups else _without_cgroups(status))
    ann, bob = "ann_daemon", "bob_after_daemon"
    a = slot.grade(ann, slot.notebook(START_DAEMONS))
    assert a.score == pytest.approx(a.auto_max_score), a.reasons
    zygote, after_a = slot.zygote, slot.identity()
    started = slot.read_json(ann, "a_seen.json")
    # The attack ran: the daemons were alive and writing when ann's kernel ended.
    assert started["beats"] >= 6, slot.outputs(ann)
    assert any("beat_by_a" in c for c in started["commands"]), started["commands"]
    assert any(c.startswith("sleep 1000") for c in started["commands"]), started["commands"]

    # Between two students (no kernel runs), nothing of the slot's uid runs anywhere, and
    # nothing writes into ann's graded folder any more.
    assert _left_after(zygote.uid) == []
    beats = slot.graded(ann) / "beat.txt"
    size = beats.stat().st_size
    time.sleep(0.3 * slowdown())   # a live daemon writes six times meanwhile
    assert beats.stat().st_size == size, "a daemon still writes into ann's graded folder"

    b = slot.grade(bob, slot.notebook(LOOK_FOR_DAEMONS))
    assert slot.identity() == after_a, "bob did not run in ann's zygote"
    seen = slot.read_json(bob, "b_seen.json")
    assert seen["beat"] == [False, False]
    assert not any("beat_by_a" in c or c.startswith("sleep 1000") for c in seen["commands"]), \
        seen["commands"]
    assert "beat.txt" not in seen["cwd"]
    assert b.score == pytest.approx(b.auto_max_score), b.reasons
    assert _left_after(zygote.uid) == []
    assert beats.stat().st_size == size


# --------------------------------------------------------------------------- 3. confinement

PROBE_CONFINEMENT = f"WAIT_S = {WAIT_S}\n" + r'''
import glob, json, os, resource, socket, sys, time
report = {"uid": os.getresuid(), "gid": os.getresgid(), "groups": os.getgroups(),
          "limits": {name: list(resource.getrlimit(getattr(resource, "RLIMIT_" + name)))
                     for name in ("AS", "CPU", "NPROC", "FSIZE")},
          "caps": {key: value.strip() for key, value in
                   (line.split(":", 1) for line in open("/proc/self/status"))
                   if key.startswith("Cap") or key == "NoNewPrivs"}}
# The zygote's socket: the runtime folders are below /tmp, and the connection file's is
# beside it (autograder.isolation.forked.Zygote.socket).
connection = sys.argv[sys.argv.index("-f") + 1]
paths = set(glob.glob("/tmp/*/zygote.sock"))
paths.add(os.path.join(os.path.dirname(os.path.dirname(connection)), "zygote.sock"))
report["connect"] = {}
for path in sorted(paths):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(path)
        client.sendall(b'{"env": {}}\n')
        report["connect"][path] = "connected"
    except OSError as error:
        report["connect"][path] = type(error).__name__
    finally:
        client.close()
# Sockets bound to (or accepted on) zygote.sock, and the ones this kernel holds.
zygote_inodes = {line.split()[6] for line in open("/proc/net/unix").read().splitlines()[1:]
                 if line.rstrip().endswith("/zygote.sock")}
mine = f"/proc/{os.getpid()}/fd"
held = []
for fd in os.listdir(mine):
    try:
        held.append(os.readlink(f"{mine}/{fd}"))
    except OSError:
        pass
report["zygote_inodes"] = sorted(zygote_inodes)
report["held_zygote_sockets"] = [t for t in held if t[len("socket:["):-1] in zygote_inodes]
report["held"] = held
json.dump(report, open("kernel_report.json", "w"))
open("ready", "w").close()
deadline = time.monotonic() + WAIT_S   # the test looks at this process from the host
while not os.path.exists("go") and time.monotonic() < deadline:
    time.sleep(0.02)
'''


@pytest.fixture(scope="module")
def confined(course):
    """One kernel's view of itself and the host's view of it while it runs."""
    slot = Slot(course, sandbox.probe(course), LIMITS)
    host: dict = {}

    async def look():
        try:
            zygote = await slot.kernel_says_ready()
            if zygote is None:
                host["error"] = "the kernel never said it was ready"
                return
            host["uid"] = zygote.uid
            host["processes"] = _processes_of(zygote.uid)
            (kernel,) = [int(p.split(":")[0]) for p in host["processes"]]
            status = _status_fields(kernel)
            parent = int(status["PPid"])
            host.update(
                status={k: status[k] for k in ("Uid", "Gid", "Groups")},
                parent=Path(f"/proc/{parent}/cmdline").read_bytes().replace(b"\0", b" ").decode(),
                limits=_limits(kernel), cgroups=_cgroups(kernel),
                parent_cgroups=_cgroups(parent),
                kernel_fds=sorted(_descriptors(kernel)), zygote_fds=sorted(_descriptors(parent)),
                procs={}, knobs={})
            hierarchy = slot.status.enforcement.hierarchy
            for controller, base in (hierarchy.bases if hierarchy else ()):
                key = controller if hierarchy.version == 1 else ""
                folder = base / Path(host["cgroups"][key]).name
                if not folder.name.startswith("ck-"):   # not in a submission's group
                    continue
                host["procs"][controller] = [int(p) for p in
                                             (folder / "cgroup.procs").read_text().split()]
                for knob in ("memory.limit_in_bytes", "memory.max", "pids.max"):
                    if (folder / knob).exists():
                        host["knobs"][knob] = (folder / knob).read_text().strip()
            host["kernel"] = kernel
        finally:
            for zygote in slot.grader.zygotes.zygotes:
                if (zygote.work_root / "w").is_dir():
                    (zygote.work_root / "w" / "go").touch()

    try:
        outcome = slot.grade("cai_confined", slot.notebook(PROBE_CONFINEMENT), beside=look())
        report = slot.read_json("cai_confined", "kernel_report.json")
        yield slot, outcome, report, host
    finally:
        slot.close()


def test_a_forked_kernel_is_the_slots_uid_in_its_cgroup_under_its_rlimits(confined):
    slot, outcome, report, host = confined
    assert "error" not in host, host
    uid = host["uid"]
    assert outcome.score == pytest.approx(outcome.auto_max_score), outcome.reasons
    # The kernel's own view: the slot's uid everywhere, no group, no capability left.
    assert report["uid"] == [uid] * 3 and report["gid"] == [uid] * 3 and report["groups"] == []
    assert uid != 0
    for key in ("CapPrm", "CapEff", "CapAmb"):
        assert int(report["caps"][key], 16) == 0, report["caps"]
    assert report["caps"]["NoNewPrivs"] == "1"
    cpu_s = int(LIMITS.time_limit_s) + 60
    limits = kernels.Limits(memory_mb=MEMORY_MB, cpu_s=cpu_s)
    expected = {"AS": limits.memory_mb * 2**20, "CPU": limits.cpu_s, "NPROC": limits.nproc,
                "FSIZE": limits.file_mb * 2**20}
    assert report["limits"] == {name: [value, value] for name, value in expected.items()}
    # The host's view of the same process while it ran.
    assert host["status"]["Uid"].split() == [str(uid)] * 4, host["status"]
    assert host["status"]["Gid"].split() == [str(uid)] * 4 and host["status"]["Groups"] == ""
    assert "coursekit.grading.zygote" in host["parent"], host["parent"]
    assert host["limits"]["Max address space"] == (str(expected["AS"]),) * 2
    assert host["limits"]["Max cpu time"] == (str(cpu_s),) * 2
    assert host["limits"]["Max processes"] == (str(limits.nproc),) * 2
    assert host["limits"]["Max file size"] == (str(expected["FSIZE"]),) * 2


def test_a_forked_kernel_runs_in_its_submissions_cgroup_and_the_zygote_does_not(confined):
    slot, _, _, host = confined
    hierarchy = slot.status.enforcement.hierarchy
    if hierarchy is None:
        pytest.skip("no writable cgroup on this machine")
    assert "error" not in host, host
    kernel = host["kernel"]
    for controller, _ in hierarchy.bases:
        key = controller if hierarchy.version == 1 else ""
        group = Path(host["cgroups"][key]).name
        # The group of the slot's leased uid (autograder.isolation.leases.group_name), holding the
        # kernel, ...
        assert group.startswith(f"ck-u{slot.zygote.uid}-"), host["cgroups"]
        assert kernel in host["procs"][controller], host["procs"]
        # ... into which the proxy moved it: its parent, the zygote, stays outside.
        assert Path(host["parent_cgroups"][key]).name != group, host["parent_cgroups"]
    if "memory" in hierarchy.controllers:
        limit = host["knobs"].get("memory.limit_in_bytes", host["knobs"].get("memory.max"))
        assert limit == str(MEMORY_MB * 2**20), host["knobs"]
    if "pids" in hierarchy.controllers:
        assert host["knobs"]["pids.max"] == str(kernels.Limits().nproc), host["knobs"]


def test_a_forked_kernel_holds_no_socket_of_the_zygote_and_cannot_reach_it(confined):
    slot, _, report, host = confined
    assert "error" not in host, host
    # The kernel found the zygote's socket (so it did try) and was refused.
    assert str(slot.zygote.socket) in report["connect"], report["connect"]
    assert set(report["connect"].values()) <= {"PermissionError", "ConnectionRefusedError"}, \
        report["connect"]
    assert report["zygote_inodes"], "the zygote's socket is not in /proc/net/unix"
    assert report["held_zygote_sockets"] == [], report["held"]
    # Seen from the host: no socket or pipe is shared by the zygote and the kernel.
    assert host["kernel_fds"] and host["zygote_fds"]
    assert set(host["kernel_fds"]) & set(host["zygote_fds"]) == set(), host


def test_a_forked_kernel_has_no_inheritable_capability_like_a_fresh_one(confined):
    _, _, report, host = confined
    assert "error" not in host, host
    assert int(report["caps"]["CapInh"], 16) == 0, report["caps"]


# --------------------------------------------------------------------------- 4. loops

LOOP = "def relu(x):\n    return np.maximum(x, 0.0)\n\nwhile True:\n    pass\n"
DEAF_LOOP = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n\n"
             "def relu(x):\n    return np.maximum(x, 0.0)\n\nwhile True:\n    pass\n")


def test_an_infinite_loop_is_stopped_as_in_a_fresh_kernel_and_the_slot_goes_on(make_slot):
    # Short, to keep the loops cheap; longer on a busy machine, where an honest check of the
    # same notebook may take over 2 s.
    timeout = scaled(2)
    slot = make_slot(overrides=dataclasses.replace(LIMITS, cell_timeout_s=timeout))
    honest = slot.notebook()
    loop, deaf = (slot.notebook(answers={"relu": code}) for code in (LOOP, DEAF_LOOP))

    async def in_the_slot():
        seen = {"loop": await slot.agrade("lou_loop", loop), "first": slot.identity()}
        seen["after_loop"] = await slot.agrade("ida_after_loop", honest)
        seen["second"] = slot.identity()
        # A loop that ignores the interrupt: the kernel is stopped (the grader kills the
        # proxy; the zygote kills the kernel), and the slot grades the next student.
        seen["deaf"] = await slot.agrade("dee_deaf", deaf)
        seen["left"] = _left_after(slot.zygote.uid)
        seen["after_deaf"] = await slot.agrade("ida_after_deaf", honest)
        seen["third"] = slot.identity()
        return seen

    seen, loop_fresh = slot.run(in_the_slot(), slot.agrade("lou_loop_fresh", loop, fresh=True))
    assert any(r.startswith("infinite loop? ") and f"ran over {timeout}s and was interrupted" in r
               for r in seen["loop"].reasons), seen["loop"].reasons
    assert (seen["loop"].reasons, seen["loop"].score) == (loop_fresh.reasons, loop_fresh.score)
    # (the very reason a fresh kernel gets: checked once, it costs 8 s more to run again)
    assert f"infinite loop? the cell 'relu' ran over {timeout}s; the kernel ignored the " \
           "interrupt and was stopped, so later cells did not run" in seen["deaf"].reasons, \
        seen["deaf"].reasons
    assert seen["deaf"].score == 0.0
    assert seen["left"] == [], "the kernel that ignored the interrupt outlived its grading"
    assert seen["first"] == seen["second"] == seen["third"], "the slot's zygote was replaced"
    for after in (seen["after_loop"], seen["after_deaf"]):
        assert after.score == pytest.approx(after.auto_max_score), after.reasons
        assert not after.flagged and not after.reasons


# --------------------------------------------------------------------------- 5. deaths

@pytest.fixture(scope="module")
def deaths_slot(course):
    """One slot for every death below: each must leave it ready for the next student."""
    slot = Slot(course, sandbox.probe(course), LIMITS)
    yield slot
    slot.close()


def _without_detail(reasons: list[str]) -> list[str]:
    """The reasons with the kernel's end ("(exit code 3)", "(segmentation fault)") left out."""
    return [re.sub(r"^(the kernel died in .*') \(.*\)(; checks after it could not run)$",
                   r"\1\2", reason) for reason in reasons]


# A fresh kernel's death by signal N reaches the grader as bubblewrap's exit code 128+N; the
# proxy ends by the kernel's own signal, which execute.exit_detail names. Either says it.
@pytest.mark.parametrize("code, details", [
    pytest.param("import os\nos._exit(86)\n", [" (exit code 86: "], id="exit-86"),
    pytest.param("import os\nos.kill(os.getpid(), 11)\n",
                 [" (segmentation fault); ", " (exit code 139); "], id="segfault"),
    pytest.param("import os\nos.kill(os.getpid(), 9)\n",
                 [" (killed (SIGKILL: ", " (exit code 137); "], id="sigkill"),
])
def test_a_kernel_that_dies_is_reported_as_a_fresh_one_and_the_slot_goes_on(deaths_slot, code,
                                                                             details, request):
    slot, death = deaths_slot, request.node.callspec.id
    answer = {"relu": code + "\ndef relu(x):\n    return np.maximum(x, 0.0)\n"}

    async def in_the_slot():
        died = await slot.agrade(f"dan_died_{death}", slot.notebook(answers=answer))
        first = slot.identity()
        after = await slot.agrade(f"ida_after_{death}", slot.notebook())
        return died, after, first == slot.identity()

    (died, after, same), fresh = slot.run(
        in_the_slot(), slot.agrade(f"dan_fresh_{death}", slot.notebook(answers=answer),
                                   fresh=True))
    assert same, "the slot's zygote did not survive the kernel's death"
    assert after.score == pytest.approx(after.auto_max_score), after.reasons
    assert (_without_detail(died.reasons), died.score, died.status) == (
        _without_detail(fresh.reasons), fresh.score, fresh.status)
    assert any(r.startswith("the kernel died in ") and any(d in r for d in details)
               for r in died.reasons), died.reasons


WORK_THEN_WAIT = f"WAIT_S = {WAIT_S}\n" + r'''
import os, time
open("kept_by_student.txt", "w").write("written before the kernel died")
open("ready", "w").close()
deadline = time.monotonic() + WAIT_S   # the test kills the slot's zygote meanwhile
while time.monotonic() < deadline:
    time.sleep(0.05)
'''


def test_a_slot_whose_zygote_dies_keeps_the_students_work_and_grade(make_slot):
    """The zygote killed from outside while its kernel runs (the host's OOM killer, say):
    the kernel dies with it; the submission is graded up to there, as with a fresh kernel
    that dies, and the slot starts a new zygote for the next student."""
    slot = make_slot()

    async def kill_the_zygote():
        zygote = await slot.kernel_says_ready()
        if zygote is not None:
            zygote.process.kill()

    orphan = slot.grade("zoe_orphan", slot.notebook(WORK_THEN_WAIT), beside=kill_the_zygote())
    after = slot.grade("ida_after_zygote", slot.notebook())
    assert after.score == pytest.approx(after.auto_max_score), after.reasons
    assert any(r.startswith("the kernel died in ") for r in orphan.reasons), orphan.reasons
    assert orphan.status == "graded", orphan.reasons
    assert orphan.score == pytest.approx(orphan.auto_max_score), orphan.reasons
    assert (slot.graded("zoe_orphan") / "kept_by_student.txt").is_file()


WAIT_FOR_GO = f"WAIT_S = {WAIT_S}\n" + r'''
import os, time
open("ready", "w").close()
deadline = time.monotonic() + WAIT_S   # the test stops the slot's zygote meanwhile
while not os.path.exists("go") and time.monotonic() < deadline:
    time.sleep(0.02)
'''


def test_a_zygote_that_does_not_settle_is_stopped_and_the_outcome_and_the_run_say_so(
        make_slot, monkeypatch):
    """The slot's zygote stopped (SIGSTOP) while its kernel runs never says it is idle, nor
    that it cleans up: its sandbox is killed, with the kernel and all the student left; the
    student keeps the grade; the outcome and the run's ``kernels:`` line say the zygote was
    stopped; the slot starts a new one for the next student."""
    monkeypatch.setattr(forked, "SETTLE_QUIET_S", 3.0)   # 30 s: a stopped process never answers
    slot = make_slot()
    seen: dict = {}

    async def stop_the_zygote():
        try:
            zygote = seen["zygote"] = await slot.kernel_says_ready()
            if zygote is None:
                return
            (kernel,) = [int(p.split(":")[0]) for p in _processes_of(zygote.uid)]
            seen["stopped"] = int(_status_fields(kernel)["PPid"])
            os.kill(seen["stopped"], signal.SIGSTOP)
        finally:
            for zygote in slot.grader.zygotes.zygotes:
                if (zygote.work_root / "w").is_dir():
                    (zygote.work_root / "w" / "go").touch()

    quiet = slot.grade("quinn_quiet", slot.notebook(WAIT_FOR_GO), beside=stop_the_zygote())
    assert "stopped" in seen, "the kernel never said it was ready"
    zygote = seen["zygote"]
    assert "; the slot's pre-warmed kernel process did not settle after this kernel (no " \
           "answer and no sign of its clean-up for 3.0 s) and was stopped" in quiet.sandbox, \
        quiet.sandbox
    assert quiet.score == pytest.approx(quiet.auto_max_score), quiet.reasons
    assert (slot.graded("quinn_quiet") / "ready").is_file()
    assert not zygote.alive and slot.grader.zygotes.zygotes == []
    assert _left_after(zygote.uid) == [], "the stopped zygote's sandbox outlived it"
    assert slot.grader.zygotes.stopped == [f"{slot.lab.id}: no answer and no sign of its "
                                           f"clean-up for 3.0 s"]
    after = slot.grade("ida_after_quiet", slot.notebook())
    assert after.score == pytest.approx(after.auto_max_score), after.reasons
    assert slot.identity()[1] != zygote.process.pid
    assert "did not settle" not in after.sandbox, after.sandbox


# --------------------------------------------------------------------------- 6. work folders

KEEP_A_SECRET = r'''
import json, os, secrets, sys
token = "secret-of-a-" + secrets.token_hex(16)
open("a_private.txt", "w").write(token)
os.makedirs("sub/deeper")
open("sub/deeper/a_private_too.txt", "w").write(token)
os.chmod(".", 0o777)                          # leave the folder open to anyone
runtime = os.path.dirname(sys.argv[sys.argv.index("-f") + 1])    # the kernel's own, "r"
open(os.path.join(runtime, "a_runtime.txt"), "w").write(token)
tried = {}   # the slot's two folders, which every student of the slot passes through
for path in ("../a_planted.txt", os.path.join(runtime, "..", "a_planted.txt")):
    try:
        open(path, "w").write(token)
        tried[path] = "written"
    except OSError as error:
        tried[path] = type(error).__name__
json.dump(tried, open("a_tried.json", "w"))
'''

LOOK_FOR_A_SECRET = r'''
import json, os
open("b_own.txt", "w").write("written by b")
seen, errors = {}, {}
roots = ["/tmp", "/dev/shm", os.getcwd(), os.path.dirname(os.getcwd()), FORKED, AUTOGRADED]
for root in roots:
    try:
        device = os.lstat(root).st_dev
    except OSError as error:
        errors[root] = type(error).__name__
        continue
    for folder, dirs, files in os.walk(root, onerror=lambda e: errors.setdefault(
            e.filename, type(e).__name__)):
        # Not into other file systems mounted below (each root is walked on its own): under
        # /tmp they include the read-only Python environment when the checkout lives there.
        dirs[:] = [d for d in dirs if os.lstat(os.path.join(folder, d)).st_dev == device]
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as handle:
                    seen[path] = handle.read(4096).decode("latin-1")
            except OSError as error:
                errors[path] = type(error).__name__
for path in A_FILES:
    try:
        with open(path, "rb") as handle:
            seen[path] = handle.read().decode("latin-1")
    except OSError as error:
        errors[path] = type(error).__name__
json.dump({"seen": seen, "errors": errors}, open("b_seen.json", "w"))
'''


def test_a_students_working_folder_leaves_the_slot_with_the_student(make_slot):
    slot = make_slot()
    a = slot.grade("ann_secret", slot.notebook(KEEP_A_SECRET))
    first, zygote = slot.identity(), slot.zygote
    moved = slot.graded("ann_secret")
    token = (moved / "a_private.txt").read_text()
    assert token.startswith("secret-of-a-")
    assert (moved / "sub" / "deeper" / "a_private_too.txt").read_text() == token
    assert a.score == pytest.approx(a.auto_max_score), a.reasons
    # ann could not write into the slot's folders, only into its own; both are gone.
    assert set(slot.read_json("ann_secret", "a_tried.json").values()) == {"PermissionError"}
    assert not (zygote.work_root / "w").exists()
    assert not (zygote.runtime_root / "r").exists()

    forked_dir = slot.course.autograded_dir.parent / ".forked-kernels"
    a_files = [str(path) for path in (moved / "a_private.txt",
                                      moved / "sub" / "deeper" / "a_private_too.txt",
                                      zygote.work_root / "w" / "a_private.txt",
                                      zygote.work_root / "a_planted.txt",
                                      zygote.runtime_root / "r" / "a_runtime.txt",
                                      zygote.runtime_root / "a_planted.txt")]
    code = (f"FORKED, AUTOGRADED = {str(forked_dir)!r}, {str(slot.course.autograded_dir)!r}\n"
            f"A_FILES = {a_files!r}\n" + LOOK_FOR_A_SECRET)
    b = slot.grade("bob_snoops", slot.notebook(code))
    assert slot.identity() == first, "bob did not run in ann's zygote"
    found = slot.read_json("bob_snoops", "b_seen.json")
    # bob's search works (it reads its own file) and finds nothing of ann's.
    assert any(text == "written by b" for text in found["seen"].values()), found
    assert [path for path, text in found["seen"].items() if token in text] == []
    for path in a_files:
        assert path not in found["seen"] and path in found["errors"], (path, found["errors"])
    assert b.score == pytest.approx(b.auto_max_score), b.reasons
    assert not (zygote.work_root / "w").exists()
    assert list(zygote.work_root.iterdir()) == []


# --------------------------------------------------------------------------- known gaps

# Student code reaches libc through a Python program it starts (the grading monitor is in the
# kernel only): POSIX message queues and the user keyring are kernel objects, not files.
LEAVE_KERNEL_OBJECTS = r'''
import ctypes, os, platform
ADD_KEY, REQUEST_KEY, KEYCTL = {"aarch64": (217, 218, 219)}.get(platform.machine(), (248, 249, 250))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
rt = ctypes.CDLL("librt.so.1", use_errno=True)
queue = rt.mq_open(b"/from_a", os.O_CREAT | os.O_RDWR, 0o600, None)
assert queue >= 0 and rt.mq_send(queue, b"SECRET", 6, 0) == 0, ctypes.get_errno()
# add_key("user", "from_a", "SECRET", 6, KEY_SPEC_USER_KEYRING)
assert libc.syscall(ADD_KEY, b"user", b"from_a", b"SECRET", 6, -4) > 0, ctypes.get_errno()
'''
LOOK_FOR_KERNEL_OBJECTS = r'''
import ctypes, json, os, platform
ADD_KEY, REQUEST_KEY, KEYCTL = {"aarch64": (217, 218, 219)}.get(platform.machine(), (248, 249, 250))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
rt = ctypes.CDLL("librt.so.1", use_errno=True)
found = {}
buf = ctypes.create_string_buffer(8192)
queue = rt.mq_open(b"/from_a", os.O_RDONLY | os.O_NONBLOCK, 0, None)
size = rt.mq_receive(queue, buf, 8192, None) if queue >= 0 else -1
found["posix message queue"] = buf.raw[:size].decode() if size >= 0 else "not found"
key = libc.syscall(REQUEST_KEY, b"user", b"from_a", None, 0)
size = libc.syscall(KEYCTL, 11, ctypes.c_long(key), buf, 100) if key >= 0 else -1  # KEYCTL_READ
found["user keyring"] = buf.raw[:size].decode() if size >= 0 else "not found"
print(json.dumps(found))
'''

RUN_PROGRAM = SHELL + r'''
import sys
open("program.py", "w").write(PROGRAM)
shell(f"{sys.executable} program.py > program.out 2>&1")
print(open("program.out").read())
'''


def test_kernel_objects_a_student_leaves_never_reach_the_next(make_slot):
    slot = make_slot()
    a = slot.grade("ann_objects", slot.notebook(f"PROGRAM = {LEAVE_KERNEL_OBJECTS!r}\n"
                                                + RUN_PROGRAM))
    first = slot.identity()
    assert slot.outputs("ann_objects").strip() == "", slot.outputs("ann_objects")  # it worked
    assert a.score == pytest.approx(a.auto_max_score), a.reasons
    slot.grade("bob_objects", slot.notebook(f"PROGRAM = {LOOK_FOR_KERNEL_OBJECTS!r}\n"
                                            + RUN_PROGRAM))
    assert slot.identity() == first
    found = json.loads(slot.outputs("bob_objects"))
    assert found == {"posix message queue": "not found", "user keyring": "not found"}
