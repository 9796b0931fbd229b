"""The sandbox a submission's kernel runs in: bubblewrap for isolation, prlimit for limits.

The kernel command (``python -m ipykernel_launcher -f <connection file>``) is wrapped as::

    bwrap <namespaces and mounts> -- prlimit --cpu --as --nproc -- python -m ipykernel_launcher ...

What the kernel gets:

* **no network**: a fresh network namespace (``--unshare-net``) has only a loopback device.
  The kernel talks to the grader over Unix sockets (jupyter's IPC transport) in a per-kernel
  runtime folder that is bind-mounted at the same path on both sides;
* **only its own folder**: the root is an empty tmpfs; the system (``/usr``, ``/lib``, ``/etc``
  ...), the Python installation, the virtual environment and the ``coursekit`` package are
  mounted read-only; the submission's working folder is the one writable, visible folder
  (plus a private ``/tmp`` of at most TMP_MB). ``course/`` (gradebook, secret, other students) and
  ``solutions/`` are simply not there;
* **limits**: CPU seconds (``RLIMIT_CPU``), address space (``RLIMIT_AS``, so a memory bomb
  gets ``MemoryError``), processes (``RLIMIT_NPROC``), file size; wall time is enforced by
  the grader (:mod:`.execute`), which kills the whole process group.

NOTE [processes and root]: the kernel of a grader that runs as root is root too (with every
capability dropped), and the kernel ignores ``RLIMIT_NPROC`` for root. The process limit then
comes from bubblewrap's PID namespace: the kernel and its children cannot see or signal
anything outside it, and when the kernel is killed the namespace's init takes every
process in it along (``--die-with-parent``). A fork bomb is still bounded by the CPU and
wall-time limits but not by a count; run the grader as an unprivileged user (or under a
cgroup with ``pids.max``) for a hard count.

If bubblewrap is missing or fails its self-test, grading goes on unsandboxed and says so
loudly (CLI, feedback, gradebook): :func:`probe` returns the reason.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from .manifest import Course

SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt/conda")
UNSANDBOXED_WARNING = ("!!! SANDBOX UNAVAILABLE — submissions ran WITHOUT isolation "
                       "(network, files of other students, gradebook and solutions/ were "
                       "reachable): {reason}. Install bubblewrap (apt-get install bubblewrap "
                       "util-linux) and grade again.")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one kernel."""

    memory_mb: int = 6144
    cpu_s: int = 900
    nproc: int = 256
    file_mb: int = 1024


@dataclass(frozen=True)
class SandboxStatus:
    """Whether kernels run isolated; ``warning`` is empty when they do."""

    sandboxed: bool
    kind: str
    warning: str = ""


def _python_dirs() -> list[Path]:
    """Folders the kernel's Python needs: the installation and the virtual environment."""
    import coursekit
    dirs = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
            Path(sys.executable).resolve().parent.parent,
            Path(coursekit.__file__).resolve().parent}
    for entry in sys.path:  # site-packages folders outside the prefixes (rare: user site)
        path = Path(entry or ".").resolve()
        if "site-packages" in path.parts and path.exists():
            dirs.add(path)
    return sorted(dirs)


def readonly_paths(course: Course) -> list[Path]:
    """Every folder mounted read-only into the sandbox."""
    paths = [Path(p) for p in SYSTEM_DIRS if Path(p).exists()]
    paths += _python_dirs()
    paths += [p for p in course.check_path if p.exists()]
    return paths


def bwrap_command(course: Course, *, workdir: Path, runtime_dir: Path) -> list[str]:
    """The bubblewrap prefix for a kernel working in ``workdir`` (see the module docstring)."""
    cmd = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--cap-drop", "ALL",
           "--hostname", "sandbox",
           # Mount order matters: the private /tmp first, so that folders below /tmp mounted
           # after it (a course or runtime folder under /tmp) stay visible.
           "--proc", "/proc", "--dev", "/dev", *_tmp_size(), "--tmpfs", "/tmp"]
    for path in readonly_paths(course):
        cmd += ["--ro-bind", str(path), str(path)]
    cmd += ["--bind", str(runtime_dir), str(runtime_dir),
            "--bind", str(workdir), str(workdir), "--chdir", str(workdir),
            "--setenv", "HOME", "/tmp",
            # ipykernel exits when its parent pid changes; inside the PID namespace its parent
            # is bubblewrap's init (pid 1), and parent 1 means "do not watch".
            "--setenv", "JPY_PARENT_PID", "1"]
    return cmd


TMP_MB = 512  # /tmp is a tmpfs in memory, which the kernel's memory limit does not count


@lru_cache(maxsize=1)
def _tmp_size() -> tuple[str, ...]:
    """``--size`` for the private /tmp, where bubblewrap knows it (0.8 and later)."""
    try:
        usage = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ()
    return ("--size", str(TMP_MB * 2**20)) if "--size" in usage.stdout + usage.stderr else ()


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


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel command runs under :func:`bwrap_command` and limits.

    Set ``wrapper`` (the prefix) before starting. The kernel uses the IPC transport with its
    connection file and sockets in ``runtime_dir``, and is interrupted by message (a signal to
    the process group would hit bubblewrap, not the kernel).
    """

    wrapper: list[str] = []

    def format_kernel_cmd(self, extra_arguments=None):  # noqa: D102 — jupyter_client API
        return list(self.wrapper) + super().format_kernel_cmd(extra_arguments)


def kernel_manager(course: Course, *, workdir: Path, runtime_dir: Path, limits: Limits | None,
                   status: SandboxStatus) -> SandboxedKernelManager:
    """A kernel manager for one submission, sandboxed when ``status.sandboxed`` and limited
    by ``limits`` (None: no limits, for a student's own machine)."""
    km = SandboxedKernelManager(transport="ipc", ip=str(runtime_dir / "k"),
                                connection_file=str(runtime_dir / "kernel.json"),
                                kernel_name="python3")
    prefix = bwrap_command(course, workdir=workdir, runtime_dir=runtime_dir) + ["--"] \
        if status.sandboxed else []
    km.wrapper = prefix + (limits_command(limits) if limits is not None else [])
    km.kernel_spec.interrupt_mode = "message"
    return km


def runtime_dir() -> Path:
    """A fresh, short folder for a kernel's connection file and sockets (Unix socket paths
    must stay under ~100 characters)."""
    return Path(tempfile.mkdtemp(prefix="ck-"))


@lru_cache(maxsize=None)
def _probe(course: Course) -> SandboxStatus:
    if not shutil.which("bwrap"):
        return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
            reason="bubblewrap (bwrap) is not installed"))
    with tempfile.TemporaryDirectory(prefix="ck-probe-") as tmp:
        work, rt = Path(tmp) / "work", Path(tmp) / "rt"
        work.mkdir()
        rt.mkdir()
        # Secrets must be unreachable; an empty folder on the way to a mounted one is fine.
        hidden = [str(course.course_dir / "course.toml"), str(course.course_dir / ".secret"),
                  str(course.source_dir / "README.md"), str(course.submitted_dir)]
        hidden += [str(course.source_notebook(lab)) for lab in course.labs]
        script = ("import os, socket, sys\n"
                  "import coursekit.grading\n"
                  f"visible = [p for p in {hidden!r} if os.path.exists(p)]\n"
                  "assert not visible, f'visible: {visible}'\n"
                  "open('probe.txt', 'w').write('ok')\n"
                  "try:\n"
                  "    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
                  "    sys.exit('network reachable')\n"
                  "except OSError:\n"
                  "    pass\n")
        cmd = (bwrap_command(course, workdir=work, runtime_dir=rt) + ["--"]
               + limits_command(Limits(memory_mb=4096, cpu_s=60))
               + [sys.executable, "-c", script])
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                    env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        except (OSError, subprocess.TimeoutExpired) as error:
            return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
                reason=f"bubblewrap self-test could not run: {error}"))
        wrote = (work / "probe.txt").exists() and (work / "probe.txt").read_text() == "ok"
        if result.returncode != 0 or not wrote:
            detail = (result.stderr or result.stdout).strip().splitlines()
            return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
                reason="bubblewrap self-test failed"
                       + (f" ({detail[-1]})" if detail else f" (exit {result.returncode})")))
    limiter = "prlimit" if shutil.which("prlimit") else "Python rlimits (prlimit missing)"
    return SandboxStatus(True, f"bubblewrap + {limiter}")


def probe(course: Course, *, disabled: bool = False) -> SandboxStatus:
    """Can kernels be sandboxed here? Runs bubblewrap's self-test once per course."""
    if disabled:
        return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
            reason="the sandbox was switched off (--no-sandbox)"))
    return _probe(course)
