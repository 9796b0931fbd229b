"""Cgroups: one control group per submission, so its limits hold for the kernel and every
process it starts, together.

rlimits are per process: two children each get their own address space, a tmpfs write
counts against no process, and CPU time is shared per task, so 30 busy processes in one
submission take 30 shares from a neighbour's kernel. A cgroup counts the group instead:

* ``memory``: every page the group's processes use, tmpfs pages they write included
  (v1 ``memory.limit_in_bytes``, v2 ``memory.max``; swap is not an escape: v1
  ``memory.memsw.limit_in_bytes`` where the kernel has it, v2 ``memory.swap.max = 0``);
* ``pids``: how many processes and threads exist at once (``pids.max``), root or not;
* ``cpu``: one equal weight per submission (v1 ``cpu.shares``, v2 ``cpu.weight``), so
  submissions graded at the same time split the CPU by group, not by process.

Groups are made inside the grader's own cgroup (never beside it), so whatever limits the
machine puts on the grader still hold for its kernels. cgroup v2 is used where the grader's
cgroup is a writable, delegated v2 subtree with the three controllers; otherwise each
writable v1 hierarchy that has one of them (the hybrid layout: v2 mounted but its
controllers bound to v1). What is found is reported (:func:`detect`); a controller that
cannot be used is named there, and the sandbox's status says so loudly.

A kernel joins its group before bubblewrap starts (see :meth:`Group.join_command`): its
pid is written into ``cgroup.procs`` by a one-line shell that then execs the rest of the
command, so nothing the kernel starts can be born outside the group.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.isolation import leases

CONTROLLERS = ("memory", "pids", "cpu")
PREFIX = "ck-"  # the grader's own leaf and probes; a kernel's group: leases.group_name


@dataclass(frozen=True)
class Hierarchy:
    """Where submission groups are made: per controller, the grader's own cgroup folder.

    ``version`` 2 has one folder for every controller; version 1 one folder per controller
    (folders may repeat when controllers are mounted together, e.g. ``cpu,cpuacct``).
    """

    version: int
    bases: tuple[tuple[str, Path], ...]  # (controller, folder)

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.bases)

    def describe(self) -> str:
        return f"cgroup v{self.version} ({', '.join(self.controllers)})"


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """``(mount point, root in the hierarchy, fs type, super options)`` of cgroup mounts."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((fields[4], fields[3], tail[0], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """``{controller list or '' for v2: path}`` from ``/proc/self/cgroup``."""
    paths = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        paths[controllers] = path
    return paths


def _inside(mount: str, root: str, path: str) -> Path:
    """The folder of cgroup ``path`` under a hierarchy mounted at ``mount`` from ``root``."""
    if root != "/" and path.startswith(root):
        path = path[len(root):]
    return Path(mount) / path.lstrip("/")


def _writable(base: Path) -> bool:
    probe = base / f"{PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


def _v2(mount: str, root: str, own: str) -> tuple[Hierarchy | None, str]:
    base = _inside(mount, root, own)
    try:
        available = set((base / "cgroup.controllers").read_text().split())
    except OSError as error:
        return None, f"cgroup v2 at {base} is not readable ({error})"
    missing = [c for c in CONTROLLERS if c not in available]
    if missing:
        return None, (f"cgroup v2 at {base} lacks the {', '.join(missing)} controller(s) "
                      f"(bound to cgroup v1, or not delegated to the grader)")
    if not _writable(base):
        return None, f"cgroup v2 at {base} is not writable (not delegated to the grader)"
    enabled = set((base / "cgroup.subtree_control").read_text().split())
    if not set(CONTROLLERS) <= enabled:
        # "No internal processes": controllers can be handed to children only by a group
        # with no processes of its own (the root excepted). The grader moves itself into a
        # leaf of its own subtree first, as a delegated service is expected to.
        leaf = base / f"{PREFIX}grader-{os.getpid()}"
        try:
            leaf.mkdir(exist_ok=True)
            (leaf / "cgroup.procs").write_text(str(os.getpid()))
            (base / "cgroup.subtree_control").write_text(
                " ".join(f"+{c}" for c in CONTROLLERS))
        except OSError as error:
            return None, (f"cgroup v2 at {base}: cannot enable {', '.join(CONTROLLERS)} for "
                          f"child groups ({error}); run the grader in a delegated cgroup of "
                          f"its own (systemd-run --scope -p Delegate=yes ...)")
    return Hierarchy(2, tuple((c, base) for c in CONTROLLERS)), ""


def detect() -> tuple[Hierarchy | None, str]:
    """The cgroup hierarchy submission groups can be made in, or None and why not.

    A v1 hierarchy may hold only some of the controllers: the others are named in the
    reason, which is then non-empty next to a usable hierarchy.
    """
    mounts, own = _mounts(), _own_paths()
    v2_reason = "no cgroup v2 mounted"
    for mount, root, fstype, _ in mounts:
        if fstype == "cgroup2" and "" in own:
            hierarchy, v2_reason = _v2(mount, root, own[""])
            if hierarchy is not None:
                return hierarchy, ""
            break
    bases, missing = [], []
    for controller in CONTROLLERS:
        base = None
        for mount, root, fstype, options in mounts:
            if fstype != "cgroup" or controller not in options:
                continue
            path = next((p for names, p in own.items() if controller in names.split(",")), None)
            if path is not None:
                base = _inside(mount, root, path)
            break
        if base is not None and base.is_dir() and _writable(base):
            bases.append((controller, base))
        else:
            missing.append(controller)
    if not bases:
        return None, f"{v2_reason}; no writable cgroup v1 hierarchy for {', '.join(CONTROLLERS)}"
    reason = (f"{v2_reason}; no writable cgroup v1 hierarchy for {', '.join(missing)}"
              if missing else "")
    return Hierarchy(1, tuple(bases)), reason


def remove_stale(hierarchy: Hierarchy) -> None:
    """Remove empty groups left by graders that are gone (a crash skips their cleanup): a
    kernel's group is named after its uid, and nobody leases that uid any more."""
    for _, base in hierarchy.bases:
        for group in base.glob(f"{leases.GROUP_PREFIX}*"):
            if leases.group_is_stale(group.name):
                try:
                    group.rmdir()  # only succeeds when no process is left in it
                except OSError:
                    pass


@dataclass
class Group:
    """One submission's cgroup, in every controller of ``hierarchy``."""

    hierarchy: Hierarchy
    folders: tuple[Path, ...]

    @classmethod
    def create(cls, hierarchy: Hierarchy, *, uid: int, memory_mb: int, nproc: int) -> "Group":
        """Make the group of a kernel running as ``uid`` (leased: :mod:`.leases`) and set
        its limits; raises OSError if the kernel refuses one."""
        name = leases.group_name(uid)
        folders = tuple(dict.fromkeys(base / name for _, base in hierarchy.bases))
        group = cls(hierarchy, folders)
        try:
            for folder in folders:
                folder.mkdir()
            group._set_limits(memory_mb * 2**20, nproc)
        except OSError:
            group.remove()
            raise
        return group

    def _folder(self, controller: str) -> Path:
        name = self.folders[0].name
        return dict(self.hierarchy.bases)[controller] / name

    def _set_limits(self, memory: int, nproc: int) -> None:
        controllers = self.hierarchy.controllers
        if self.hierarchy.version == 2:
            settings = [("memory", "memory.max", memory), ("memory", "memory.swap.max", 0),
                        ("pids", "pids.max", nproc), ("cpu", "cpu.weight", 100)]
        else:
            settings = [("memory", "memory.limit_in_bytes", memory),
                        ("memory", "memory.memsw.limit_in_bytes", memory),
                        ("pids", "pids.max", nproc), ("cpu", "cpu.shares", 1024)]
        for controller, knob, value in settings:
            if controller not in controllers:
                continue
            folder = self._folder(controller)
            if not (folder / knob).exists() and knob.endswith(("memsw.limit_in_bytes",
                                                                "swap.max")):
                continue  # a kernel built without swap accounting: there is no swap to escape to
            (folder / knob).write_text(str(value))

    def join_command(self) -> list[str]:
        """A prefix that moves itself into the group, then execs the rest of the command."""
        script = ('while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; '
                  'shift; exec "$@"')
        return ["/bin/sh", "-c", script, "cgroup-join",
                *(str(f / "cgroup.procs") for f in self.folders), "--"]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return found

    def remove(self, timeout: float = 5.0) -> None:
        """Kill whatever still runs in the group, then delete it (best effort, never raises)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.hierarchy.version == 2 and (self.folders[0] / "cgroup.kill").exists():
                try:
                    (self.folders[0] / "cgroup.kill").write_text("1")
                except OSError:
                    pass
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for folder in self.folders:
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:
                    continue
            if not any(f.exists() for f in self.folders) or time.monotonic() > deadline:
                return
            time.sleep(0.02)
