"""Red-team tests of the limits (issue 8, "limits that hold"): each attack runs for real, in
the sandbox a kernel gets (bubblewrap, the submission's cgroup and uid, rlimits), either as a
plain process under the kernel's own prefix or as a real kernel driven by the grader.

Where this machine cannot enforce a limit, the sandbox's status must say so: the test then
checks the warning instead of the limit.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from coursekit.notebook import kernels
from coursekit.notebook import execute
from autograder.isolation import sandbox
from autograder.isolation.graded_folder import KEEP_FILE_MB, trim
from coursekit.notebook.execute import run_notebook
from machine_load import scaled


@pytest.fixture
def status(fixture_course) -> sandbox.SandboxStatus:
    found = sandbox.probe(fixture_course)
    if not found.sandboxed:
        pytest.skip(f"no sandbox on this machine: {found.warning}")
    return found


def confined(course, status, folder: Path, script: str, limits: kernels.Limits,
             timeout: float = 60, popen: bool = False):
    """Run ``python -c script`` exactly as a kernel runs (cgroup, bubblewrap, uid, rlimits),
    in ``folder``; returns the finished process (or, with ``popen``, the running one and its
    confinement, to close after). ``timeout`` is an idle machine's, scaled to this one's load."""
    folder.mkdir(parents=True, exist_ok=True)
    runtime = kernels.runtime_dir()
    confinement = sandbox.Confinement(status.enforcement, limits, (folder, runtime))
    cmd = (confinement.open()
           + sandbox.bwrap_command(course, workdir=folder, runtime_dir=runtime,
                                   drop_uid=confinement.uid is not None)
           + ["--"] + confinement.inner() + [sys.executable, "-c", textwrap.dedent(script)])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_NUM_THREADS": "1"}
    if popen:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True), confinement
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=scaled(timeout))
    finally:
        confinement.close()
        shutil.rmtree(runtime, ignore_errors=True)


def _groups_of_this_process() -> list[Path]:
    found = []
    hierarchy = sandbox.enforcement().hierarchy
    for _, base in hierarchy.bases if hierarchy else ():
        found += list(base.glob(f"ck-{os.getpid()}-*"))
    return found


def test_the_status_names_what_holds_and_what_does_not(status):
    assert status.kind.startswith("bubblewrap")
    missing = status.limits_not_held
    if missing:
        assert "NOT ENFORCED" in status.kind and "LIMITS NOT ENFORCED" in status.warning
        assert all(m in status.warning for m in missing)
    else:
        assert status.warning == "" and "NOT ENFORCED" not in status.kind
    assert status.limits_held, "at least the output and disk caps always hold"


def test_writing_past_a_tmpfs_size_fails(fixture_course, status, tmp_path):
    if not status.enforcement.sized_tmpfs:
        assert any("tmpfs size" in m for m in status.limits_not_held)
        pytest.skip("bubblewrap cannot size tmpfs here, and the status says so")
    result = confined(fixture_course, status, tmp_path / "work", f"""
        import json, os
        def fill(path, limit_mb):
            written = 0
            try:
                with open(path, "wb") as f:
                    while written < limit_mb * 2**20:
                        f.write(b"x" * 2**22)
                        f.flush()
                        written += 2**22
                return "wrote all"
            except OSError as error:
                return f"{{type(error).__name__}} after {{written // 2**20}} MB"
            finally:
                if os.path.exists(path):
                    os.remove(path)
        print(json.dumps({{"root": fill("/filler", 64), "tmp": fill("/tmp/filler", {sandbox.TMP_MB + 64}),
                          "shm": fill("/dev/shm/filler", {sandbox.SHM_MB + 64}),
                          "dev": fill("/dev/filler", 8)}}))
    """, kernels.Limits(memory_mb=2048, cpu_s=60))
    assert result.returncode == 0, result.stderr
    wrote = json.loads(result.stdout)

    def megabytes(outcome: str) -> int:  # "OSError after 508 MB" -> 508
        assert outcome.startswith("OSError after"), outcome
        return int(outcome.split()[2])

    assert sandbox.TMP_MB - 8 <= megabytes(wrote["tmp"]) <= sandbox.TMP_MB
    assert megabytes(wrote["shm"]) <= sandbox.SHM_MB
    for fixed in ("root", "dev"):  # not writable by the job's uid at all (as root: sized)
        assert wrote[fixed].startswith("PermissionError") or megabytes(wrote[fixed]) <= 16
    assert not _groups_of_this_process()


def test_children_together_cannot_exceed_the_memory_budget(fixture_course, status, tmp_path):
    if not status.enforcement.has("memory"):
        assert any(m.startswith("memory of the kernel and its children together")
                   for m in status.limits_not_held)
        assert "LIMITS NOT ENFORCED" in status.warning
        pytest.skip("no memory cgroup here, and the status says so loudly")
    # Each child stays under the per-process address-space limit; together they do not fit
    # (each holds its block long enough for the other to make its own, on a busy machine too).
    result = confined(fixture_course, status, tmp_path / "work", f"""
        import json, os, time
        children = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                block = b"x" * (170 * 2**20)
                time.sleep({scaled(1.5)})
                os._exit(0)
            children.append(pid)
        codes = [os.waitpid(pid, 0)[1] for pid in children]
        print(json.dumps(codes))
    """, kernels.Limits(memory_mb=256, cpu_s=60))
    assert result.returncode == 0, result.stderr
    codes = json.loads(result.stdout)
    assert codes != [0, 0], "two children used 340 MB under a 256 MB budget"

    # tmpfs counts too: 200 MB in /tmp, then 120 MB in the process.
    result = confined(fixture_course, status, tmp_path / "work", """
        with open("/tmp/filler", "wb") as f:
            for _ in range(50):
                f.write(b"x" * 2**22)
        block = b"x" * (120 * 2**20)
        print("fits")
    """, kernels.Limits(memory_mb=256, cpu_s=60))
    assert "fits" not in result.stdout and result.returncode != 0
    assert not _groups_of_this_process()


def test_root_only_files_are_unreadable(fixture_course, status, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the grader is not root: its kernels are not root either")
    if not status.enforcement.drop_uid:
        assert any("non-root kernel" in m for m in status.limits_not_held)
        pytest.skip("kernels run as root here, and the status says so")
    result = confined(fixture_course, status, tmp_path / "work", """
        import os
        try:
            open("/etc/shadow").read()
            print("read")
        except PermissionError:
            print(f"denied to uid {os.getuid()}")
        open("mine.txt", "w").write("the job's uid owns its folder")
    """, kernels.Limits(memory_mb=1024, cpu_s=60))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("denied to uid ") and "uid 0" not in result.stdout
    assert (tmp_path / "work" / "mine.txt").is_file()


def test_a_fork_bomb_is_capped(fixture_course, status, tmp_path):
    held = status.enforcement.has("pids") or status.enforcement.drop_uid
    if not held:
        assert any(m.startswith("process count") for m in status.limits_not_held)
        pytest.skip("no per-submission process cap here, and the status says so")
    # The sleepers outlive any wait below, unless they go with the sandbox.
    started = time.monotonic()
    result = confined(fixture_course, status, tmp_path / "work", """
        import os, time
        born = 0
        try:
            while born < 1000:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
                born += 1
        except OSError as error:
            print(born, type(error).__name__)
    """, kernels.Limits(memory_mb=1024, cpu_s=60, nproc=40), timeout=60)
    assert result.returncode == 0, result.stderr
    born, error = result.stdout.split()
    assert int(born) < 40 and error == "BlockingIOError"
    assert time.monotonic() - started < scaled(20)  # the sleepers went with the sandbox
    assert not _groups_of_this_process()


BUSY_NEIGHBOUR = """
    import os, subprocess, sys
    # 30 busy processes, each in a session of its own (an autogroup each, without cgroups)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(30)]
    print("busy", flush=True)
    busy[0].wait()
"""


def _spin(n: int) -> float:
    started = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    return time.perf_counter() - started


@pytest.mark.slow
def test_a_busy_neighbour_does_not_push_an_honest_kernel_over_its_timeout(
        fixture_course, status, tmp_path):
    if not status.enforcement.has("cpu"):
        assert any(m.startswith("CPU share") for m in status.limits_not_held)
        pytest.skip("no CPU cgroup: the CPU share between submissions is reported as not "
                    "enforced on this machine")
    if os.getloadavg()[0] > 2 * (os.cpu_count() or 1):
        pytest.skip(f"the machine is too busy for a timing comparison (load "
                    f"{os.getloadavg()[0]:.0f} on {os.cpu_count()} cores)")
    n = int(1_000_000 / max(_spin(1_000_000), 1e-3))  # about 1 s of work, alone
    neighbour, confinement = confined(fixture_course, status, tmp_path / "neighbour",
                                      BUSY_NEIGHBOUR, kernels.Limits(memory_mb=2048, nproc=64),
                                      popen=True)
    try:
        assert neighbour.stdout.readline().strip() == "busy"
        time.sleep(0.5)
        # The same work in this process, now: what a fair share gives under today's load of
        # the machine (other tests may share it); this process competes with the neighbour's
        # group as one task against one group.
        fair = _spin(n)
        nb = new_notebook(cells=[new_code_cell(
            f"import time\nt = time.perf_counter()\ntotal = 0\nfor i in range({n}):\n"
            f"    total += i\nprint(time.perf_counter() - t)")])
        workdir = tmp_path / "honest"
        workdir.mkdir()
        execution = _run(fixture_course, status, nb, workdir, cell_timeout=4 * fair + 2)
    finally:
        neighbour.kill()
        neighbour.wait()
        confinement.close()
    # With a group of its own the kernel gets what this process gets. Measured on 2 cores
    # without the cpu cgroup, 30 busy processes in sessions of their own made the same work
    # 5.6 times slower (15 times, on a machine otherwise idle with more cores).
    # The guarantee is the one a student needs: the honest cell finishes inside its timeout.
    # (Its time against this process's is a figure for `make bench`, not an assertion: other
    # work on a 2-core machine moves it.)
    assert execution.cells[0].status == "ok", execution


def _run(course, status, nb, workdir, *, cell_timeout: float, limits=None):
    runtime = kernels.runtime_dir()
    try:
        km = sandbox.kernel_manager(course, workdir=workdir, runtime_dir=runtime,
                                    limits=limits or kernels.Limits(memory_mb=2048, cpu_s=120),
                                    status=status)
        return asyncio.run(run_notebook(nb, km, cwd=workdir, env={"PATH": "/usr/bin:/bin"},
                                        cell_timeout=cell_timeout, time_limit=scaled(120)))
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
def test_a_print_flood_keeps_the_graders_memory_bounded(fixture_course, status, tmp_path,
                                                         monkeypatch):
    cap = 10_000_000
    monkeypatch.setattr(execute, "MAX_NOTEBOOK_CHARS", cap)
    # Every output is under the per-output caps; together they are 20 times the notebook's.
    display = ("from IPython.display import display\n"
               "for i in range(150):\n    display({'text/plain': str(i) * 1_000_000}, raw=True)")
    prints = "print('y' * 199_000)\n" * 2
    nb = new_notebook(cells=[new_code_cell(display)] + [new_code_cell(prints) for _ in range(20)]
                      + [new_code_cell("raise ValueError('still seen')")])
    workdir = tmp_path / "work"
    workdir.mkdir()
    before = _rss_mb()
    execution = _run(fixture_course, status, nb, workdir, cell_timeout=scaled(60))
    grown = _rss_mb() - before
    kept = sum(len(json.dumps(o)) for c in nb.cells for o in c.get("outputs", []))
    assert kept < cap * 1.1
    assert grown < 100, f"the grader grew by {grown:.0f} MB on a 154 MB flood"
    assert any("output limit reached" in o.get("data", {}).get("text/plain", "")
               for c in nb.cells for o in c.get("outputs", []))
    last = max(execution.cells)
    assert execution.cells[last].status == "error" and execution.cells[last].ename == "ValueError"


def test_a_disk_flood_of_files_under_the_size_cap_is_trimmed_to_the_folders_cap(
        fixture_course, status, tmp_path):
    workdir = tmp_path / "work"
    count = kernels.DISK_MB // (KEEP_FILE_MB - 1) + 10
    result = confined(fixture_course, status, workdir, f"""
        import os
        for i in range({count}):
            with open(f"filler-{{i:03}}.bin", "wb") as f:
                f.truncate({KEEP_FILE_MB - 1} * 2**20)
        open("notes.txt", "w").write("mine")
    """, kernels.Limits(memory_mb=1024, cpu_s=60))
    assert result.returncode == 0, result.stderr
    notebook = workdir / "labfx.ipynb"
    nbformat.write(new_notebook(), str(notebook))
    notes = trim(workdir, keep=notebook.name)
    left = [p for p in workdir.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in left) <= kernels.DISK_MB * 2**20
    assert notebook in left
    assert len(notes) == 1 and f"at most {kernels.DISK_MB} MB in all" in notes[0]
    assert notebook.is_file()
