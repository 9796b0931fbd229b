"""The sandbox a submission's kernel runs in: bubblewrap for isolation; a cgroup, an
unprivileged user and rlimits for limits.

The kernel command (``python -m ipykernel_launcher -f <connection file>``, or any other) is
wrapped as::

    sh (join the submission's cgroup) -- bwrap <namespaces and mounts> --
        setpriv (become the job's own unprivileged uid) -- prlimit --cpu --as --nproc --fsize --
            python -m ipykernel_launcher ...

What the kernel gets:

* **no network**: a fresh network namespace (``--unshare-net``) has only a loopback device.
  The kernel talks to the grader over Unix sockets (jupyter's IPC transport) in a per-kernel
  runtime folder that is bind-mounted at the same path on both sides;
* **only its own folder**: the root is an empty tmpfs; the system (``/usr``, ``/lib``, ``/etc``
  ...), the Python installation, the virtual environment and the ``coursekit`` package are
  mounted read-only; the submission's working folder is the one writable, visible folder on
  disk. ``course/`` (gradebook, secret, other students) and ``solutions/`` are simply not there;
* **sized tmpfs**: every tmpfs it can write has a size: ``/`` (ROOT_MB), ``/tmp`` (TMP_MB) and
  ``/dev/shm`` (SHM_MB). ``/dev`` itself (bubblewrap's ``--dev``, which takes no size) is
  owned by root and not writable by the kernel's user;
* **its own unprivileged user**: when the grader is root, the kernel runs as a uid of its
  own, leased so that no other kernel on the machine has it (:mod:`.leases`), that owns
  nothing on the system: ``/etc/shadow`` and
  every other root-only file are unreadable, and ``RLIMIT_NPROC``, which root ignores,
  counts this submission's processes alone;
* **a cgroup per submission** (:mod:`.cgroup`): memory for the kernel and everything it
  starts together, tmpfs pages included; a process count; an equal CPU weight, so a
  submission with 30 busy processes gets the same CPU share as its neighbour's one kernel;
* **rlimits** per process: CPU seconds, address space (a memory bomb gets ``MemoryError``
  before the cgroup has to kill it), processes, file size. Wall time is enforced by the
  grader (:mod:`.execute`), which kills the whole process group.

After the run, output kept in the grader is capped per notebook (:mod:`.execute`) and the
graded folder is trimmed to DISK_MB (:func:`autograder.isolation.graded_folder.trim`).

What holds depends on the machine (bubblewrap's version, root or not, which cgroups are
writable). :func:`probe` finds out once, runs a self-test with every mechanism it will use,
and its :class:`SandboxStatus` names the limits that hold and, loudly, those that do not
(CLI, gradebook). If bubblewrap is missing or fails its self-test, grading goes on
unsandboxed and says so.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from autograder.isolation import cgroup, leases
from coursekit.course import Course
from coursekit.grading import keyrings
from coursekit.grading.kernel import EXIT_KEYRINGS_KEPT
from coursekit.notebook.kernels import (
    DISK_MB,
    GradingKernelManager,
    Limits,
    limits_command,
    new_kernel_manager,
)

SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt/conda")
UNSANDBOXED_WARNING = ("!!! SANDBOX UNAVAILABLE — submissions ran WITHOUT isolation "
                       "(network, files of other students, gradebook and solutions/ were "
                       "reachable): {reason}. Install bubblewrap (apt-get install bubblewrap "
                       "util-linux) and grade again.")
UNENFORCED_WARNING = ("!!! LIMITS NOT ENFORCED on this machine — a submission can take more "
                      "than its share: {missing}.")

ROOT_MB = 16    # the sandbox's /: only mount points; the kernel's user cannot write it
TMP_MB = 512    # /tmp, in memory (counted by the memory cgroup where there is one)
SHM_MB = 256    # /dev/shm: multiprocessing's semaphores and shared tensors (DataLoader workers)


@dataclass(frozen=True)
class Enforcement:
    """The mechanisms this machine offers, found once (:func:`enforcement`)."""

    hierarchy: cgroup.Hierarchy | None = None
    cgroup_reason: str = ""
    drop_uid: bool = False      # the grader is root and can hand each kernel its own uid
    sized_tmpfs: bool = False   # bubblewrap knows --size and --perms (0.8 and later)
    grader_is_root: bool = False

    def has(self, controller: str) -> bool:
        return self.hierarchy is not None and controller in self.hierarchy.controllers

    def held(self) -> list[str]:
        """The limits that hold here, in words."""
        held = []
        where = self.hierarchy.describe() if self.hierarchy else ""
        if self.has("memory"):
            held.append(f"memory of the kernel and its children together, tmpfs included ({where})")
        if self.has("pids"):
            held.append(f"process count per submission ({where})")
        elif self.drop_uid:
            held.append("process count per submission (RLIMIT_NPROC of the job's own uid)")
        if self.has("cpu"):
            held.append(f"equal CPU share per submission ({where})")
        if self.sized_tmpfs:
            held.append(f"sized tmpfs (/ {ROOT_MB} MB, /tmp {TMP_MB} MB, /dev/shm {SHM_MB} MB)")
        if self.drop_uid:
            held.append("an unprivileged uid per job (root-only files unreadable)")
        held.append(f"kept output per notebook; graded folder trimmed to {DISK_MB} MB")
        return held

    def not_held(self) -> list[str]:
        """The limits that do not hold here, each with why."""
        missing = []
        why = f" ({self.cgroup_reason})" if self.cgroup_reason else ""
        if not self.has("memory"):
            missing.append("memory of the kernel and its children together: only per process "
                           f"(RLIMIT_AS), children and tmpfs are not added up{why}")
        if not self.has("pids") and not self.drop_uid:
            missing.append("process count per submission: RLIMIT_NPROC "
                           + ("does not apply to root" if self.grader_is_root else
                              "counts every process of the grader's user, all submissions "
                              "together") + why)
        if not self.has("cpu"):
            missing.append(f"CPU share between submissions graded at once: a submission with "
                           f"many busy processes slows its neighbours{why}")
        if not self.sized_tmpfs:
            missing.append("tmpfs size (bubblewrap older than 0.8: no --size)")
        if self.grader_is_root and not self.drop_uid:
            missing.append("a non-root kernel: it runs as root without capabilities, and "
                           "root-only files such as /etc/shadow are readable "
                           "(setpriv or bubblewrap's --perms missing)")
        return missing


@dataclass(frozen=True)
class SandboxStatus:
    """Whether kernels run isolated and which limits hold.

    ``warning`` is empty when kernels are isolated and every limit holds; it says loudly what
    is missing otherwise. ``kind`` names the mechanisms (it starts with "bubblewrap" exactly
    when kernels are isolated) and, after "NOT ENFORCED", the limits that do not hold.
    """

    sandboxed: bool
    kind: str
    warning: str = ""
    enforcement: Enforcement = field(default_factory=Enforcement, compare=False)

    @property
    def limits_held(self) -> list[str]:
        return self.enforcement.held() if self.sandboxed else []

    @property
    def limits_not_held(self) -> list[str]:
        return self.enforcement.not_held() if self.sandboxed else ["every limit but rlimits"]


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


@lru_cache(maxsize=1)
def _bwrap_options() -> frozenset[str]:
    """The options this bubblewrap knows (``--size`` and ``--perms`` came late)."""
    try:
        usage = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(w for w in (usage.stdout + usage.stderr).split() if w.startswith("--"))


def _tmp_size() -> tuple[str, ...]:
    """``--size`` for the private /tmp, where bubblewrap knows it (0.8 and later)."""
    return ("--size", str(TMP_MB * 2**20)) if "--size" in _bwrap_options() else ()


def _sized_tmpfs(path: str, size_mb: int, perms: str | None = None) -> list[str]:
    options = _bwrap_options()
    sized = ["--size", str(size_mb * 2**20)] if "--size" in options else []
    mode = ["--perms", perms] if perms and "--perms" in options else []
    return [*mode, *sized, "--tmpfs", path]


def bwrap_command(course: Course, *, workdir: Path, runtime_dir: Path,
                  drop_uid: bool = False) -> list[str]:
    """The bubblewrap prefix for a kernel working in ``workdir`` (see the module docstring).

    ``drop_uid``: keep the two capabilities the next command needs to switch to the job's
    uid (:func:`drop_uid_command`); it drops them, and every other one, when it does.
    """
    # Mount order matters: the sized root first (every later mount point is made in it), the
    # private /tmp before the read-only folders, so that folders below /tmp mounted after it
    # (a course or runtime folder under /tmp) stay visible.
    cmd = ["bwrap", *(_sized_tmpfs("/", ROOT_MB) if "--size" in _bwrap_options() else []),
           "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--cap-drop", "ALL",
           *(["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"] if drop_uid else []),
           "--hostname", "sandbox",
           "--proc", "/proc", "--dev", "/dev", *_sized_tmpfs("/dev/shm", SHM_MB, "01777"),
           *_sized_tmpfs("/tmp", TMP_MB, "01777")]
    made: set[Path] = set()
    for path in readonly_paths(course):
        cmd += [*_mount_point(path, made), "--ro-bind", str(path), str(path)]
    cmd += [*_mount_point(runtime_dir, made), "--bind", str(runtime_dir), str(runtime_dir),
            *_mount_point(workdir, made), "--bind", str(workdir), str(workdir),
            "--chdir", str(workdir),
            "--setenv", "HOME", "/tmp",
            # The job's uid has no /etc/passwd entry: getpass.getuser() reads these first.
            "--setenv", "USER", "student", "--setenv", "LOGNAME", "student",
            # ipykernel exits when its parent pid changes; inside the PID namespace its parent
            # is bubblewrap's init (pid 1), and parent 1 means "do not watch".
            "--setenv", "JPY_PARENT_PID", "1"]
    return cmd


def _mount_point(path: Path, made: set[Path]) -> list[str]:
    """Make ``path``'s parent folders world-searchable (0755) before it is mounted.

    bubblewrap copies the host's mode when it makes them, and the host's ``/root`` (where
    pyenv keeps Python) or ``/tmp/pytest-of-root`` are 0700: the job's uid could not reach
    the folder mounted below.
    """
    options = []
    for parent in reversed(Path(path).parents):
        if parent != Path("/") and parent not in made and "--perms" in _bwrap_options():
            options += ["--perms", "0755", "--dir", str(parent)]
            made.add(parent)
    return options


def drop_uid_command(uid: int) -> list[str]:
    """Become ``uid`` (group ``uid``, no supplementary groups, no capabilities), then exec."""
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--"]
    shim = (f"import os,sys\nos.setgroups([]);os.setgid({uid});os.setuid({uid})\n"
            "os.execvp(sys.argv[1],sys.argv[1:])")
    return [sys.executable, "-c", shim]


def _chown_tree(root: Path, uid: int) -> None:
    """Hand ``root`` and everything under it to ``uid`` (links themselves, never targets)."""
    os.chown(root, uid, uid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


@dataclass
class Confinement:
    """One submission's share of the machine: its uid and its cgroup (made at kernel start,
    removed, with anything still running in it, at cleanup).

    The uid is leased (:mod:`.leases`) for as long as the kernel may run, and the cgroup is
    named after it, so no other kernel on this machine shares either. The kernel empties the
    uid's keyrings before any student code runs (``keyrings.CLEAR_ENV``), so nothing a
    former holder of the uid stored there reaches it.
    """

    enforcement: Enforcement
    limits: Limits
    writable: tuple[Path, ...]   # folders the kernel's uid must own: workdir, runtime folder
    uid: int | None = None       # given: a forked kernel's slot lends its own, kept on close
    group: cgroup.Group | None = None
    lease: leases.UidLease | None = field(default=None, init=False)
    spoiled: bool = field(default=False, init=False)   # the uid's keys could not be cleared

    def __post_init__(self):
        if self.uid is None and (self.enforcement.drop_uid or self.enforcement.hierarchy):
            self.lease = leases.take_uid()
            if self.enforcement.drop_uid:
                self.uid = self.lease.uid

    @property
    def _group_uid(self) -> int:
        return self.uid if self.uid is not None else self.lease.uid

    def open(self) -> list[str]:
        """Make the cgroup and hand the folders to the uid; the prefix that joins the group."""
        if self.uid is not None:
            for folder in self.writable:
                _chown_tree(folder, self.uid)
        if self.enforcement.hierarchy is not None and self.group is None:
            self.group = cgroup.Group.create(self.enforcement.hierarchy, uid=self._group_uid,
                                             memory_mb=self.limits.memory_mb,
                                             nproc=self.limits.nproc)
        return self.group.join_command() if self.group is not None else []

    def inner(self) -> list[str]:
        """What runs inside bubblewrap before the kernel: the uid switch, the rlimits."""
        return ((drop_uid_command(self.uid) if self.uid is not None else [])
                + limits_command(self.limits))

    def close(self) -> None:
        """Remove the group (killing what runs in it), then give the uid back: never while
        a process of the kernel may still run as it."""
        if self.group is not None:
            self.group.remove()
            self.group = None
        if self.lease is not None:
            if self.spoiled:
                leases.spoil(self.lease.uid)
            self.lease.release()
            self.lease = None
            self.uid = None


class SandboxedKernelManager(GradingKernelManager):
    """A grading kernel manager whose kernel command runs under :func:`bwrap_command` and
    limits: set ``wrapper`` (the prefix) before starting, and ``confinement`` for a cgroup and
    uid (its group joins in front of ``wrapper``)."""

    confinement: Confinement | None = None

    def prefix(self) -> list[str]:
        # Called at start, after the connection file is written: the uid can be handed it.
        join = self.confinement.open() if self.confinement is not None else []
        return join + list(self.wrapper)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        process = getattr(self.provisioner, "process", None)
        if (self.confinement is not None and process is not None
                and process.poll() == EXIT_KEYRINGS_KEPT):
            self.confinement.spoiled = True   # a student left keys that cannot be cleared
        try:
            await super()._async_cleanup_resources(restart=restart)
        finally:
            if self.confinement is not None:
                # Removing a group waits for its processes to die: off the loop that drives
                # every other kernel.
                await asyncio.to_thread(self.confinement.close)

    cleanup_resources = _async_cleanup_resources


def kernel_manager(course: Course, *, workdir: Path, runtime_dir: Path, limits: Limits | None,
                   status: SandboxStatus) -> SandboxedKernelManager:
    """A kernel manager for one submission, sandboxed when ``status.sandboxed`` and limited
    by ``limits`` (None: no limits, for a student's own machine)."""
    km = new_kernel_manager(runtime_dir, SandboxedKernelManager)
    if status.sandboxed:
        confinement = Confinement(status.enforcement, limits or Limits(),
                                  (workdir, runtime_dir))
        km.confinement = confinement
        km.wrapper = (bwrap_command(course, workdir=workdir, runtime_dir=runtime_dir,
                                    drop_uid=confinement.uid is not None)
                      + (["--setenv", keyrings.CLEAR_ENV, "1"] if confinement.uid else [])
                      + ["--"] + (confinement.inner() if limits is not None else
                                  drop_uid_command(confinement.uid) if confinement.uid else []))
    else:
        km.wrapper = limits_command(limits) if limits is not None else []
    return km


@lru_cache(maxsize=1)
def enforcement() -> Enforcement:
    """Which limit mechanisms this machine offers (see :class:`Enforcement`)."""
    options = _bwrap_options()
    sized = "--size" in options and "--perms" in options
    root = os.geteuid() == 0
    hierarchy, reason = cgroup.detect()
    if hierarchy is not None:
        cgroup.remove_stale(hierarchy)
    return Enforcement(hierarchy, reason, drop_uid=root and sized, sized_tmpfs=sized,
                       grader_is_root=root)


def _self_test_script(hidden: list[str], uid: int | None) -> str:
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
    if uid is not None:
        script += (f"assert os.getuid() == {uid}, f'uid {{os.getuid()}}, not {uid}'\n"
                   "assert not os.access('/etc/shadow', os.R_OK), '/etc/shadow readable'\n"
                   "open('/tmp/probe', 'w').write('ok')\n")
    return script


@lru_cache(maxsize=None)
def _probe(course: Course) -> SandboxStatus:
    if not shutil.which("bwrap"):
        return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
            reason="bubblewrap (bwrap) is not installed"))
    mechanisms = enforcement()
    with tempfile.TemporaryDirectory(prefix="ck-probe-") as tmp:
        work, rt = Path(tmp) / "work", Path(tmp) / "rt"
        work.mkdir()
        rt.mkdir()
        # Secrets must be unreachable; an empty folder on the way to a mounted one is fine.
        hidden = [str(course.course_dir / "course.toml"), str(course.course_dir / ".secret"),
                  str(course.source_dir / "README.md"), str(course.submitted_dir)]
        hidden += [str(course.source_notebook(lab)) for lab in course.labs]
        # Every mechanism a kernel will run under, so a machine that refuses one fails here.
        confinement = Confinement(mechanisms, Limits(memory_mb=4096, cpu_s=60), (work, rt))
        try:
            cmd = (confinement.open()
                   + bwrap_command(course, workdir=work, runtime_dir=rt,
                                   drop_uid=confinement.uid is not None)
                   + ["--"] + confinement.inner()
                   + [sys.executable, "-c", _self_test_script(hidden, confinement.uid)])
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                    env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        except (OSError, subprocess.TimeoutExpired) as error:
            return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
                reason=f"bubblewrap self-test could not run: {error}"))
        finally:
            confinement.close()
        wrote = (work / "probe.txt").exists() and (work / "probe.txt").read_text() == "ok"
        if result.returncode != 0 or not wrote:
            detail = (result.stderr or result.stdout).strip().splitlines()
            return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
                reason="bubblewrap self-test failed"
                       + (f" ({detail[-1]})" if detail else f" (exit {result.returncode})")))
    limiter = "prlimit" if shutil.which("prlimit") else "Python rlimits (prlimit missing)"
    parts = ["bubblewrap", limiter]
    if mechanisms.hierarchy is not None:
        parts.append(mechanisms.hierarchy.describe())
    if mechanisms.drop_uid:
        parts.append("a uid per job")
    if mechanisms.sized_tmpfs:
        parts.append("sized tmpfs")
    kind = " + ".join(parts)
    missing = mechanisms.not_held()
    if missing:
        return SandboxStatus(True, f"{kind}; NOT ENFORCED: {'; '.join(missing)}",
                             UNENFORCED_WARNING.format(missing="; ".join(missing)), mechanisms)
    return SandboxStatus(True, kind, "", mechanisms)


MAX_PROGRAM_FILES = 20_000   # files of coursekit and the check packages looked at


def unreadable_by_kernels(course: Course) -> list[str]:
    """Files and folders of the grading code (coursekit, the course's check packages) that a
    kernel running as a job's own uid cannot read. Such a kernel has no supplementary groups,
    so only the "other" permission bits count; the folders above them do not (bubblewrap
    mounts each one where the kernel sees it). A check program it cannot import fails every
    check, and honest students would get zero: grading refuses to start instead."""
    import coursekit
    found: list[str] = []
    seen = 0
    for top in [Path(coursekit.__file__).resolve().parent, *course.check_path]:
        if not top.exists():
            continue
        for folder, dirs, files in os.walk(top):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                seen += 1
                if seen > MAX_PROGRAM_FILES:
                    return found
                mode = os.stat(name).st_mode
                needed = (stat.S_IROTH | stat.S_IXOTH) if stat.S_ISDIR(mode) else stat.S_IROTH
                if mode & needed != needed:
                    found.append(name)
            dirs[:] = [d for d in dirs if d != "__pycache__"]
    return found


def probe(course: Course, *, disabled: bool = False) -> SandboxStatus:
    """Can kernels be sandboxed here, and which limits hold? Runs bubblewrap's self-test
    once per course."""
    if disabled:
        return SandboxStatus(False, "none", UNSANDBOXED_WARNING.format(
            reason="the sandbox was switched off (--no-sandbox)"))
    return _probe(course)
