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

from coursekit.grading.zygote import KILL_WAIT_S, running_as

from . import leases, sandbox
from .manifest import Course

STARTUP_TIMEOUT_S = 180
SETTLE_TIMEOUT_S = 30   # the zygote's cleaner gives up after 10 s


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
                sandbox.remove_tree(folder)
            folder.mkdir()
        return work, runtime

    async def settled(self) -> bool:
        """Wait until the zygote has ended the last kernel and wiped what it left; False
        when it did not say so in time (then it must be stopped: stopping its sandbox kills
        everything in it)."""
        if not self.alive:
            return False
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(self.socket)), SETTLE_TIMEOUT_S)
            writer.write(b'{"sync": true}\n')
            await writer.drain()
            answer = await asyncio.wait_for(reader.readline(), SETTLE_TIMEOUT_S)
            writer.close()
            return json.loads(answer or b"{}").get("idle") is True
        except (OSError, ValueError, asyncio.TimeoutError):
            return False

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
                    await asyncio.to_thread(sandbox.remove_tree, folder)
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

    async def release(self, zygote: Zygote, move_out) -> None:
        """Take ``zygote`` back once its kernel and everything that kernel left are gone,
        then await ``move_out()``, so nothing of the student writes in the working folder
        after it has left the slot. A zygote that does not settle has its sandbox killed,
        and is removed once the folder is out."""
        settled = await zygote.settled()
        if not settled:
            await zygote.kill()
        try:
            await move_out()
        finally:
            if not settled:
                async with self._lock:
                    if zygote in self.zygotes:
                        self.zygotes.remove(zygote)
                await zygote.stop()
            zygote.busy = False

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
        _remove_stale(self._slots, "slot-", uid)
        _remove_stale(Path(tempfile.gettempdir()), "ck-z", uid)
        work = Path(tempfile.mkdtemp(prefix=f"slot-{uid}-", dir=self._slots))
        runtime = Path(tempfile.mkdtemp(prefix=f"ck-z{uid}-"))
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
        lines = log.read_text(errors="replace").strip().splitlines()
        await zygote.stop()
        return None, (said.get("reason") or "the pre-warmed kernel process did not start"
                      + (f" ({lines[-1][:300]})" if lines else ""))


def _remove_stale(folder: Path, prefix: str, own: int) -> None:
    """Delete slot folders (``<prefix><uid>-…``) whose uid nobody else leases: their grader
    no longer runs (one killed mid-run leaves them behind). ``own`` is the uid this process
    has just leased, so its old folders are stale too. (Named by pid, a folder of a live
    grader in another container could be taken for stale.)"""
    for path in folder.glob(f"{prefix}*-*"):
        uid = path.name[len(prefix):].split("-", 1)[0]
        if uid.isdigit() and (int(uid) == own or not leases.is_leased(int(uid))):
            try:
                sandbox.remove_tree(path)
            except OSError:
                pass   # left for the next sweep; a slot of its own is made anyway


class ForkedKernelManager(sandbox.SandboxedKernelManager):
    """A kernel manager whose kernel is forked by ``zygote``; the process it starts and
    watches is the proxy (:mod:`autograder.kernel_proxy`)."""

    zygote: Zygote | None = None
    rlimits: dict[str, int] = {}

    def format_kernel_cmd(self, extra_arguments=None):  # noqa: D102 — jupyter_client API
        join = self.confinement.open()
        command = AsyncKernelManager.format_kernel_cmd(self, extra_arguments)
        kernel_args = command[command.index("ipykernel_launcher") + 1:]
        group = self.confinement.group
        procs = [part for folder in (group.folders if group else ())
                 for part in ("--procs", str(folder / "cgroup.procs"))]
        handoff = Path(self.connection_file).parent / "handoff.sock"
        return [*join, sys.executable, "-m", "autograder.kernel_proxy", str(self.zygote.socket),
                str(handoff), *procs, "--limits", json.dumps(self.rlimits), "--", *kernel_args]


def kernel_manager(zygote: Zygote, *, workdir: Path, runtime_dir: Path, limits: sandbox.Limits,
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
