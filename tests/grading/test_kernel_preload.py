"""The grading kernel imports the lab's setup imports before its monitor
(:mod:`coursekit.grading.kernel`): a real kernel finds them loaded and printed nothing, a
preload that starts a thread keeps the kernel from starting, and what is preloaded is the
instructor's setup cell up to its last import."""
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

from autograder import cells as lab_cells, manifest, sandbox
from coursekit.grading import monitor
from coursekit.grading.kernel import EXIT_PRELOAD_THREADS, PRELOAD_ENV

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


def test_a_grading_kernel_starts_with_the_setup_imports_loaded(tmp_path):
    """The grader's own kernel manager (unsandboxed here: the sandbox is tested elsewhere)."""
    fifo, _ = _drained_fifo(tmp_path)
    runtime = sandbox.runtime_dir()
    km = sandbox.kernel_manager(manifest.load_course(REPO), workdir=tmp_path,
                                runtime_dir=runtime, limits=None,
                                status=sandbox.SandboxStatus(False, "none"))
    # `this` prints the Zen of Python when imported: the preload's output reaches nobody.
    env = {**os.environ, monitor.FIFO_ENV: str(fifo), monitor.TARGETS_ENV: "[]",
           PRELOAD_ENV: "import this\nimport colorsys\n"}
    code = ("import os, sys; print(sorted(m for m in ('this', 'colorsys') if m in sys.modules),"
            f" {PRELOAD_ENV!r} in os.environ)")

    async def run() -> str:
        await km.start_kernel(env=env, cwd=str(tmp_path))
        client = km.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=120)
            outputs: list[str] = []
            await client.execute_interactive(
                code, output_hook=lambda msg: outputs.append(msg["content"].get("text", "")),
                timeout=60)
            return "".join(outputs)
        finally:
            client.stop_channels()
            await km.shutdown_kernel(now=True)

    try:
        printed = asyncio.run(run())
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    assert printed.strip() == "['colorsys', 'this'] False"


def test_a_preload_that_starts_a_thread_keeps_the_kernel_from_starting(tmp_path):
    started = subprocess.run(
        [sys.executable, "-m", "coursekit.grading.kernel", "-f", str(tmp_path / "k.json")],
        env={**os.environ, monitor.FIFO_ENV: str(tmp_path / "never-opened"),
             PRELOAD_ENV: "import threading, time\n"
                          "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()"},
        capture_output=True, text=True, timeout=120)
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
