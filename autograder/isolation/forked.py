"""Forked kernels: each job slot keeps a sandboxed process that has imported the lab's
frameworks once (:mod:`coursekit.grading.zygote`), and every submission's kernel is a fresh
fork of it. A fresh kernel pays the interpreter's start and the imports of torch,
TensorFlow or JAX for every notebook; a forked one pays a fork.

What a forked kernel gets is what a fresh one gets (:mod:`.sandbox`): the same bubblewrap
namespaces and read-only mounts, a private ``/tmp`` and ``/dev/shm`` (wiped between two
students, never shared by two at once), the submission's cgroup, the slot's unprivileged uid
and the same rlimits. Its working folder and runtime folder are made fresh, inside the
slot's two bound folders, for each submission; the working folder is then moved to
``course/autograded/<student>/<lab>/``, so the next student of the slot never sees it.

Forking needs a grader that can hand each kernel its own uid (root, bubblewrap 0.8 or later):
the zygote keeps only CAP_SETUID and CAP_SETGID, and kills what a student left behind as
that uid. Without them, or for a lab whose imports leave threads running (a fork keeps only
the forking thread), the grader starts fresh kernels and says why (``fallbacks``).
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from autograder.isolation import leases, sandbox
from coursekit.course import Course
from coursekit.grading.zygote import KILL_WAIT_S, running_as
from coursekit.notebook import kernels

STARTUP_TIMEOUT_S = 180
# NOTE [settling]: between two students the zygote kills the slot's uid and deletes what it
# left, which takes as long as the student's leftovers and the machine's load make it
# (200,000 empty files in /tmp: 3 s on a quiet machine). So no fixed deadline: the grader
# waits for the zygote's answer as long as the zygote says, at least every SETTLE_QUIET_S,
# that its cleaner still runs (it says so every BEAT_S), and never longer than
# SETTLE_CEILING_S in all. A zygote that goes quiet or runs past the ceiling is stopped
# (killing its sandbox frees all the student left at once), and the outcome and the run's
# ``kernels:`` line say so; so does a clean-up that took longer than SETTLE_QUIET_S.
SETTLE_QUIET_S = 30
SETTLE_CEILING_S = 600


@dataclass(frozen=True)
class Settling:
    """How a zygote came back after a kernel: whether it said it is idle, after how long, and
    why not."""

    settled: bool
    seconds: float
    why: str = ""


class _Quiet(Exception):
    """The zygote stopped saying it cleans up, or took longer than it is ever given."""


@dataclass
class Zygote:
    """One slot's pre-warmed process, and the two folders bound into its sandbox."""

    key: tuple
    lease: leases.UidLease
    work_root: Path     # on the course's file system: a graded folder is moved out in one rename
    runtime_root: Path  # short, under /tmp: Unix socket paths stay under ~100 characters
    process: asyncio.subprocess.Process
    busy: bool = False

    @property
    def uid(self) -> int:
        return self.lease.uid

    @property
    def socket(self) -> Path:
        return self.runtime_root / "zygote.sock"

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def fresh_folders(self) -> tuple[Path, Path]:
        """This submission's working and runtime folders, empty."""
        work, runtime = self.work_root / "w", self.runtime_root / "r"
        for folder in (work, runtime):
            if folder.exists():
                kernels.remove_tree(folder)
            folder.mkdir()
        return work, runtime

    async def settle(self) -> Settling:
        """Wait until the zygote has ended the last kernel and wiped what it left (see NOTE
        [settling]). When it does not say so, it must be stopped: stopping its sandbox kills
        everything in it."""
        started = time.monotonic()
        why = await self._why_not_idle(started)
        return Settling(not why, time.monotonic() - started, why)

    async def _why_not_idle(self, started: float) -> str:
        """Why the zygote did not answer that it is idle ("" once it did)."""
        if not self.alive:
            return f"it had ended ({_ended(self.process.returncode)})"
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(self.socket)), SETTLE_QUIET_S)
        except (OSError, asyncio.TimeoutError) as error:
            return f"its socket did not answer ({type(error).__name__}: {error})"
        try:
            writer.write(b'{"sync": true}\n')
            await writer.drain()
            answer = await self._while_cleaning(reader.readline(), started)
        except _Quiet as quiet:
            return str(quiet)
        except (OSError, ValueError) as error:
            return f"talking to it failed ({type(error).__name__}: {error})"
        finally:
            writer.close()
        try:
            said = json.loads(answer)
        except ValueError:
            said = None
        if isinstance(said, dict) and said.get("idle") is True:
            return ""
        return f"it answered {answer[:100]!r}" if answer else "it ended while cleaning up"

    async def _while_cleaning(self, answer, started: float) -> bytes:
        """``answer`` (a coroutine), awaited while the zygote says on stdout that its cleaner
        runs; _Quiet, saying why, once it is quiet for SETTLE_QUIET_S or the wait reaches
        SETTLE_CEILING_S."""
        answer = asyncio.ensure_future(answer)
        try:
            while True:
                left = SETTLE_CEILING_S - (time.monotonic() - started)
                if left <= 0:
                    raise _Quiet(f"still cleaning up after {SETTLE_CEILING_S} s, the most "
                                 f"a clean-up is given")
                said = asyncio.ensure_future(self.process.stdout.readline())
                done, _ = await asyncio.wait({answer, said}, timeout=min(SETTLE_QUIET_S, left),
                                             return_when=asyncio.FIRST_COMPLETED)
                if answer in done:
                    said.cancel()
                    return answer.result()
                if said not in done:
                    said.cancel()
                    if left > SETTLE_QUIET_S:
                        raise _Quiet(f"no answer and no sign of its clean-up for "
                                     f"{SETTLE_QUIET_S} s")
                elif not said.result():   # its stdout closed: it ended, and its socket with it
                    done, _ = await asyncio.wait({answer}, timeout=SETTLE_QUIET_S)
                    if not done:
                        raise _Quiet("it closed its stdout but not its socket")
                    return answer.result()
        finally:
            answer.cancel()

    async def kill(self) -> None:
        """Kill the sandbox, and with it the zygote and every process in it (the PID
        namespace ends with its first process, a moment after the sandbox's parent)."""
        if self.alive:
            self.process.kill()
        await self.process.wait()
        deadline = time.monotonic() + KILL_WAIT_S
        while running_as(self.uid) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        await self.kill()
        try:
            for folder in (self.work_root, self.runtime_root):
                try:
                    await asyncio.to_thread(kernels.remove_tree, folder)
                except OSError:
                    pass   # a later grader's stale sweep finds it: its uid is no one's
        finally:
            self.lease.release()


@dataclass
class ZygotePool:
    """The zygotes of one class run: at most ``capacity`` alive, one kernel each at a time."""

    course: Course
    status: sandbox.SandboxStatus
    capacity: int
    zygotes: list[Zygote] = field(default_factory=list)
    fallbacks: dict[str, str] = field(default_factory=dict)   # lab id -> why it runs fresh
    stopped: list[str] = field(default_factory=list)   # "lab: why" per zygote that did not settle
    slow: list[float] = field(default_factory=list)    # clean-ups over SETTLE_QUIET_S, in s
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def unavailable(self) -> str:
        """Why this machine cannot fork kernels ("" when it can)."""
        if not self.status.sandboxed:
            return "kernels are not sandboxed"
        if not self.status.enforcement.drop_uid:
            return ("each kernel needs a uid of its own, which only a root grader with "
                    "bubblewrap 0.8 or later can hand out")
        return ""

    async def lease(self, lab: str, env: dict[str, str]) -> Zygote | None:
        """An idle zygote for ``lab`` preloaded with ``env`` (started if none is idle), or
        None where the lab's kernels start fresh (the reason is in ``fallbacks``)."""
        if lab in self.fallbacks:
            return None
        reason = self.unavailable()
        if reason:
            self.fallbacks[lab] = reason
            return None
        key = (lab, tuple(sorted(env.items())))
        async with self._lock:
            for zygote in [z for z in self.zygotes if not z.alive]:
                self.zygotes.remove(zygote)
                await zygote.stop()
            for zygote in self.zygotes:
                if zygote.key == key and not zygote.busy:
                    zygote.busy = True
                    return zygote
            idle = [z for z in self.zygotes if not z.busy]
            while idle and len(self.zygotes) >= self.capacity:
                self.zygotes.remove(idle[0])
                await idle.pop(0).stop()
            zygote, reason = await self._start(key, env)
            if zygote is None:
                self.fallbacks[lab] = reason
                return None
            zygote.busy = True
            self.zygotes.append(zygote)
            return zygote

    async def release(self, zygote: Zygote, move_out) -> str:
        """Take ``zygote`` back once its kernel and everything that kernel left are gone,
        then await ``move_out()``, so nothing of the student writes in the working folder
        after it has left the slot. A zygote that does not settle has its sandbox killed,
        and is removed once the folder is out. Returns what the submission's outcome should
        say about it ("" when the zygote settled in the usual time)."""
        settling = await zygote.settle()
        if not settling.settled:
            await zygote.kill()
        try:
            await move_out()
        finally:
            if not settling.settled:
                async with self._lock:
                    if zygote in self.zygotes:
                        self.zygotes.remove(zygote)
                # Its cleaner may have failed on keys a student made impossible to clear.
                leases.spoil(zygote.uid)
                await zygote.stop()
            zygote.busy = False
        if not settling.settled:
            self.stopped.append(f"{zygote.key[0]}: {settling.why}")
            return (f"the slot's pre-warmed kernel process did not settle after this kernel "
                    f"({settling.why}) and was stopped")
        if settling.seconds > SETTLE_QUIET_S:
            self.slow.append(settling.seconds)
            return f"the slot's clean-up after this kernel took {settling.seconds:.0f} s"
        return ""

    def troubles(self) -> str:
        """Zygotes stopped because they did not settle, and slow clean-ups, in words ("" when
        none): a class run reports them in its ``kernels:`` line."""
        said = []
        if self.stopped:
            said.append(f"{len(self.stopped)} pre-warmed kernel process(es) did not settle "
                        f"after a kernel and were stopped ({'; '.join(self.stopped)})")
        if self.slow:
            said.append(f"{len(self.slow)} clean-up(s) between two students took over "
                        f"{SETTLE_QUIET_S} s (the longest {max(self.slow):.0f} s)")
        return "; ".join(said)

    async def close(self) -> None:
        for zygote in self.zygotes:
            await zygote.stop()
        self.zygotes.clear()
        # The slots' folder stays: another grader of the course may be making a slot in it.

    @property
    def _slots(self) -> Path:
        return self.course.autograded_dir.parent / ".forked-kernels"

    async def _start(self, key: tuple, env: dict[str, str]) -> tuple[Zygote | None, str]:
        lease = leases.take_uid()
        uid = lease.uid
        self._slots.mkdir(exist_ok=True)
        # Named after the leased uid ("u": never read as an older grader's pid-named one).
        _remove_stale(self._slots, "slot-u", uid)
        _remove_stale(Path(tempfile.gettempdir()), "ck-zu", uid)
        work = Path(tempfile.mkdtemp(prefix=f"slot-u{uid}-", dir=self._slots))
        runtime = Path(tempfile.mkdtemp(prefix=f"ck-zu{uid}-"))
        for folder in (work, runtime):  # the slot's uid may pass through, never list
            folder.chmod(0o711)
        # A mqueue file system of its own, so the zygote can see and delete the POSIX
        # message queues a student left in the slot's IPC namespace (shared by its kernels).
        command = (sandbox.bwrap_command(self.course, workdir=work, runtime_dir=runtime,
                                         drop_uid=True)
                   + ["--mqueue", "/dev/mqueue", "--", sys.executable, "-m", "coursekit.grading.zygote",
                      str(runtime / "zygote.sock"), str(uid)])
        log = runtime / "zygote.log"   # root's, outside the kernels' reach: 0600 in a 0711 folder
        with open(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as errors:
            process = await asyncio.create_subprocess_exec(
                *command, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=errors)
        zygote = Zygote(key, lease, work, runtime, process)
        try:
            line = await asyncio.wait_for(process.stdout.readline(), STARTUP_TIMEOUT_S)
            said = json.loads(line) if line else {}
        except (asyncio.TimeoutError, ValueError):
            said = {}
        if said.get("ready"):
            return zygote, ""
        if said.get("spoiled"):
            leases.spoil(uid)   # never this uid again: the next zygote takes another
        lines = log.read_text(errors="replace").strip().splitlines()
        await zygote.stop()
        return None, (said.get("reason") or "the pre-warmed kernel process did not start"
                      + (f" ({lines[-1][:300]})" if lines else ""))


def _ended(code: int | None) -> str:
    return f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"


def _remove_stale(folder: Path, prefix: str, own: int) -> None:
    """Delete slot folders (``<prefix><uid>-…``) whose uid nobody else leases: their grader
    no longer runs (one killed mid-run leaves them behind). ``own`` is the uid this process
    has just leased, so its old folders are stale too. (Named by pid, a folder of a live
    grader in another container could be taken for stale.)"""
    for path in folder.glob(f"{prefix}*-*"):
        uid = path.name[len(prefix):].split("-", 1)[0]
        if uid.isdigit() and (int(uid) == own or not leases.is_leased(int(uid))):
            try:
                kernels.remove_tree(path)
            except OSError:
                pass   # left for the next sweep; a slot of its own is made anyway


class ForkedKernelManager(sandbox.SandboxedKernelManager):
    """A kernel manager whose kernel is forked by ``zygote``; the process it starts and
    watches is the proxy (:mod:`autograder.isolation.kernel_proxy`)."""

    zygote: Zygote | None = None
    rlimits: dict[str, int] = {}

    def format_kernel_cmd(self, extra_arguments=None):  # jupyter_client's API
        join = self.confinement.open()
        command = AsyncKernelManager.format_kernel_cmd(self, extra_arguments)
        kernel_args = command[command.index("ipykernel_launcher") + 1:]
        group = self.confinement.group
        procs = [part for folder in (group.folders if group else ())
                 for part in ("--procs", str(folder / "cgroup.procs"))]
        handoff = Path(self.connection_file).parent / "handoff.sock"
        return [*join, sys.executable, "-m", "autograder.isolation.kernel_proxy", str(self.zygote.socket),
                str(handoff), *procs, "--limits", json.dumps(self.rlimits), "--", *kernel_args]


def kernel_manager(zygote: Zygote, *, workdir: Path, runtime_dir: Path, limits: kernels.Limits,
                   status: sandbox.SandboxStatus) -> ForkedKernelManager:
    """A kernel manager for one submission whose kernel ``zygote`` forks."""
    km = ForkedKernelManager(transport="ipc", ip=str(runtime_dir / "k"),
                             connection_file=str(runtime_dir / "kernel.json"),
                             kernel_name="python3")
    km.zygote = zygote
    km.confinement = sandbox.Confinement(status.enforcement, limits, (workdir, runtime_dir),
                                         uid=zygote.uid)
    km.rlimits = {"cpu": limits.cpu_s, "as": limits.memory_mb * 2**20, "nproc": limits.nproc,
                  "fsize": limits.file_mb * 2**20}
    km.kernel_spec.interrupt_mode = "message"
    return km
