"""The grading kernel imports the lab's setup imports before its monitor
(:mod:`coursekit.grading.kernel`): a real kernel finds them loaded and printed nothing, a
preload that starts a thread keeps the kernel from starting, what is preloaded is the
instructor's setup cell up to its last import, and each check module's warm-up runs once,
before the monitor."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import nbformat

from coursekit.notebook import kernels
from coursekit.notebook import cells as lab_cells
from coursekit import course as manifest
from autograder.isolation import sandbox
from coursekit.grading import monitor
from coursekit.grading.kernel import EXIT_PRELOAD_THREADS, PRELOAD_CHECKS_ENV, PRELOAD_ENV
from coursekit.grading.program import CHECK_PACKAGES_ENV
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]


def _drained_fifo(tmp_path):
    fifo = tmp_path / "monitor"
    os.mkfifo(fifo)
    lines: list[dict] = []

    def read():
        with open(fifo, "rb") as pipe:
            lines.extend(json.loads(line) for line in pipe)

    threading.Thread(target=read, daemon=True).start()
    return fifo, lines


def _printed_by_a_grading_kernel(tmp_path, preload: dict, code: str) -> str:
    """What ``code`` prints in the grader's own kernel, started with the ``preload`` settings
    (unsandboxed here: the sandbox is tested elsewhere)."""
    fifo, _ = _drained_fifo(tmp_path)
    runtime = kernels.runtime_dir()
    km = sandbox.kernel_manager(manifest.load_course(REPO), workdir=tmp_path,
                                runtime_dir=runtime, limits=None,
                                status=sandbox.SandboxStatus(False, "none"))
    env = {**os.environ, monitor.FIFO_ENV: str(fifo), monitor.TARGETS_ENV: "[]", **preload}

    async def run() -> str:
        await km.start_kernel(env=env, cwd=str(tmp_path))
        client = km.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=scaled(120))
            outputs: list[str] = []
            await client.execute_interactive(
                code, output_hook=lambda msg: outputs.append(msg["content"].get("text", "")),
                timeout=scaled(60))
            return "".join(outputs)
        finally:
            client.stop_channels()
            await km.shutdown_kernel(now=True)

    try:
        return asyncio.run(run())
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def test_a_grading_kernel_starts_with_the_setup_imports_loaded(tmp_path):
    # `this` prints the Zen of Python when imported: the preload's output reaches nobody.
    code = ("import os, sys; print(sorted(m for m in ('this', 'colorsys') if m in sys.modules),"
            f" {PRELOAD_ENV!r} in os.environ)")
    printed = _printed_by_a_grading_kernel(
        tmp_path, {PRELOAD_ENV: "import this\nimport colorsys\n"}, code)
    assert printed.strip() == "['colorsys', 'this'] False"


def test_the_warm_up_of_each_check_module_runs_once_before_the_monitor(tmp_path):
    package = tmp_path / "warmchecks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "labw.py").write_text(
        "import sys\n"
        "from coursekit.grading.program import check\n"
        "RUNS = []\n\n"
        "def warm_up():\n"
        "    RUNS.append(sys.getprofile() is None)\n\n"
        "for name in ('one', 'two'):\n"
        "    check(f'labw.{name}', reference=lambda: None)(lambda impl, rng: iter(()))\n")
    code = "import warmchecks.labw as w; print(w.RUNS)"
    printed = _printed_by_a_grading_kernel(tmp_path, {
        "PYTHONPATH": str(tmp_path), CHECK_PACKAGES_ENV: "warmchecks",
        PRELOAD_CHECKS_ENV: "labw.one,labw.two,labw.missing"}, code)
    # Ran once for the module of both checks, with no profile function yet; the unknown
    # check is the grader's to report, not the preload's.
    assert printed.strip() == "[True]"


def test_a_preload_that_starts_a_thread_keeps_the_kernel_from_starting(tmp_path):
    started = subprocess.run(
        [sys.executable, "-m", "coursekit.grading.kernel", "-f", str(tmp_path / "k.json")],
        env={**os.environ, monitor.FIFO_ENV: str(tmp_path / "never-opened"),
             PRELOAD_ENV: "import threading, time\n"
                          "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()"},
        capture_output=True, text=True, timeout=scaled(120))
    assert started.returncode == EXIT_PRELOAD_THREADS
    assert "started threads" in started.stderr and "not grading unwatched" in started.stderr


def _setup(source: str) -> lab_cells.LabNotebook:
    cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade_id": "setup", "locked": True, "solution": False, "grade": False}})
    return lab_cells.split(nbformat.v4.new_notebook(cells=[cell]))


def test_the_preload_is_the_setup_cell_up_to_its_last_import():
    source = ('import os\n\nos.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"\n\nimport numpy as np\n'
              'from math import (\n    pi,\n)\n\nnp.random.seed(0)\nprint("ready")\n')
    assert _setup(source).setup_imports == (
        'import os\n\nos.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"\n\nimport numpy as np\n'
        'from math import (\n    pi,\n)\n')
    assert _setup("x = 1\n").setup_imports == ""
    assert _setup("%matplotlib inline\nimport numpy\n").setup_imports == ""


def test_a_warm_up_that_starts_a_thread_keeps_the_kernel_from_starting(tmp_path):
    """A check package's warm_up() runs before the monitor too: a thread it starts would run
    unwatched, so the kernel refuses to start, as for the setup imports."""
    package = tmp_path / "threadchecks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "labt.py").write_text(
        "import threading, time\n"
        "from coursekit.grading.program import check\n\n"
        "def warm_up():\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n\n"
        "check('labt.one', reference=lambda: None)(lambda impl, rng: iter(()))\n")
    started = subprocess.run(
        [sys.executable, "-m", "coursekit.grading.kernel", "-f", str(tmp_path / "k.json")],
        env={**os.environ, monitor.FIFO_ENV: str(tmp_path / "never-opened"),
             "PYTHONPATH": str(tmp_path), CHECK_PACKAGES_ENV: "threadchecks",
             PRELOAD_CHECKS_ENV: "labt.one"},
        capture_output=True, text=True, timeout=scaled(120))
    assert started.returncode == EXIT_PRELOAD_THREADS
    assert "not grading unwatched" in started.stderr
