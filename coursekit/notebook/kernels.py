"""The kernel a notebook is run in, as grading runs it: the grading kernel (ipykernel with the
monitor installed first, :mod:`coursekit.grading.kernel`), on jupyter's IPC transport, with
sockets that refuse oversized messages, and under rlimits.

This is the student's own machine's kernel (``coursekit validate``): it runs as the student,
in the notebook's folder. The grader's sandbox (``autograder.isolation.sandbox``) builds its
kernel manager on :class:`GradingKernelManager` and adds bubblewrap, a uid and a cgroup.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Type

from coursekit.caps import MAX_MESSAGE_BYTES, MAX_QUEUED_MESSAGES

GRADING_KERNEL = "coursekit.grading.kernel"
DISK_MB = 512   # what a kernel may write, and what a graded folder keeps, all files together


@dataclass(frozen=True)
class Limits:
    """Resource limits of one kernel (with a cgroup: of the kernel and its children together)."""

    memory_mb: int = 6144
    cpu_s: int = 900
    nproc: int = 256
    file_mb: int = DISK_MB


def limits_command(limits: Limits) -> list[str]:
    """``prlimit`` (or, without it, a Python shim that sets the same limits and execs)."""
    values = {"cpu": limits.cpu_s, "as": limits.memory_mb * 2**20, "nproc": limits.nproc,
              "fsize": limits.file_mb * 2**20}
    if shutil.which("prlimit"):
        return ["prlimit", *(f"--{name}={value}" for name, value in values.items()), "--"]
    shim = ("import os,resource,sys\n"
            f"for n,v in {[('RLIMIT_' + k.upper(), v) for k, v in values.items()]!r}:\n"
            "    resource.setrlimit(getattr(resource,n),(v,v))\n"
            "os.execvp(sys.argv[1],sys.argv[1:])")
    return [sys.executable, "-c", shim]


def capped_context() -> zmq.asyncio.Context:
    """A context whose sockets refuse a message part over MAX_MESSAGE_BYTES unread and queue
    at most MAX_QUEUED_MESSAGES (NOTE [capped before decoded] in :mod:`.execute`): the
    kernel manager's and its clients' sockets to a kernel are all made in one."""
    context = zmq.asyncio.Context()
    context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
    context.setsockopt(zmq.RCVHWM, MAX_QUEUED_MESSAGES)
    return context


class CappedKernelClient(AsyncKernelClient):
    """jupyter's asyncio kernel client, with its sockets made in a :func:`capped_context`."""

    def _context_default(self) -> zmq.asyncio.Context:
        self._created_context = True
        return capped_context()


class GradingKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel is the grading kernel, started behind ``wrapper`` (a
    command prefix: rlimits here, the sandbox in the grader), with capped sockets, and
    interrupted by message (a signal to the process group would hit the wrapper)."""

    wrapper: list[str] = []
    client_factory = Type(CappedKernelClient, klass=AsyncKernelClient)

    def _context_default(self) -> zmq.asyncio.Context:
        self._created_context = True   # destroyed with the kernel's resources
        return capped_context()

    def prefix(self) -> list[str]:
        """What runs in front of the kernel's command (called at start)."""
        return list(self.wrapper)

    def format_kernel_cmd(self, extra_arguments=None):  # jupyter_client's API
        command = super().format_kernel_cmd(extra_arguments)
        # The grading kernel is ipykernel with the monitor installed before anything else runs.
        command = [GRADING_KERNEL if arg == "ipykernel_launcher" else arg for arg in command]
        return self.prefix() + command


def new_kernel_manager(runtime_dir: Path, cls: type[GradingKernelManager] = GradingKernelManager
                       ) -> GradingKernelManager:
    """A kernel manager of ``cls``, its connection file and sockets in ``runtime_dir``."""
    km = cls(transport="ipc", ip=str(runtime_dir / "k"),
             connection_file=str(runtime_dir / "kernel.json"), kernel_name="python3")
    km.kernel_spec.interrupt_mode = "message"
    return km


def local_kernel_manager(*, runtime_dir: Path, limits: Limits | None) -> GradingKernelManager:
    """A kernel manager for a kernel of this machine's user, under ``limits`` (None: none)."""
    km = new_kernel_manager(runtime_dir)
    km.wrapper = limits_command(limits) if limits is not None else []
    return km


def remove_tree(path: Path) -> None:
    """Delete a folder a kernel could write, whatever it left there: ``rm -rf`` walks by
    descriptor, never follows a link and has no depth limit (shutil.rmtree recurses once per
    level and holds a descriptor per level: a student's tree outlasts both, and its errors
    would pass unseen). ``path`` itself is the caller's: the folders above it are its own."""
    if not os.path.lexists(path):
        return
    done = subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], check=False,
                          capture_output=True, timeout=600)
    if done.returncode != 0 and os.path.lexists(path):
        raise OSError(f"could not remove {path}: "
                      f"{done.stderr.decode(errors='replace')[-300:].strip()}")


def runtime_dir() -> Path:
    """A fresh, short folder for a kernel's connection file and sockets (Unix socket paths
    must stay under ~100 characters)."""
    return Path(tempfile.mkdtemp(prefix="ck-"))
