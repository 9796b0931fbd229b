"""What the grading monitor costs a JAX lab (``make bench``; figures are printed with ``-s``).

JAX traces a function by running a great deal of Python, and the monitor's profile function
sees every Python call. This runs lab08's checks on its solution in a fresh process twice,
once plain and once with the real monitor installed (``coursekit.grading.monitor.install``,
the lab's forbidden targets, a pipe drained by a thread), and prints the time of each check
and the ratio. Each process starts cold, as a grading kernel does: JAX compiles everything
once per process, and that is part of what a student's grading pays.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = "lab08_jax"
REPEATS = int(os.environ.get("COURSEKIT_BENCH_REPEATS", "3"))

_RUN = r'''
import ast, json, os, sys, tempfile, threading, time
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
from coursekit.notebook import cells
from coursekit import course as manifest
from coursekit.grading import monitor
from coursekit.grading.program import get_check, run_program
from coursekit.grading.seeds import public_seed
from coursekit.grading.targets import targets

course = manifest.load_course()
lab = course.lab(sys.argv[2])
source = cells.load(course.source_notebook(lab))
calls = [(node.args[0].value, node.args[1].id)  # grade("<check>", impl) in a checks cell
         for cell in source.with_role(cells.CHECKS) for node in ast.walk(ast.parse(cell.source))
         if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "grade"
         and not node.keywords]
if sys.argv[1] == "monitor":
    fifo = os.path.join(tempfile.mkdtemp(), "monitor")
    os.mkfifo(fifo)
    drained = threading.Thread(target=lambda: open(fifo, "rb").read(), daemon=True)
    drained.start()
    monitor.install(fifo, targets([check for check, _ in calls]))
namespace = {"__name__": "__main__"}
for cell in source.with_role(cells.SETUP, cells.ANSWER):
    exec(compile(cell.source, cell.grade_id or "cell", "exec"), namespace)
seconds = {}
for check, impl in calls:
    start = time.perf_counter()
    run_program(get_check(check), namespace[impl], public_seed(check))
    seconds[check] = time.perf_counter() - start
print(json.dumps(seconds))
'''


def _run(mode: str) -> dict[str, float]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", _RUN, mode, LAB], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=900, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.benchmark
def test_monitor_cost_on_the_jax_lab():
    plain, watched = [], []
    for _ in range(REPEATS):  # interleaved, so drifting machine load hits both alike
        plain.append(_run("plain"))
        watched.append(_run("monitor"))
    checks = list(plain[0])
    print(f"\n[{LAB}] each check on the solution in a cold process, median of {REPEATS}:")
    totals = {"plain": 0.0, "monitor": 0.0}
    for check in checks:
        p = sorted(run[check] for run in plain)[len(plain) // 2]
        m = sorted(run[check] for run in watched)[len(watched) // 2]
        totals["plain"] += p
        totals["monitor"] += m
        print(f"  {check:28s} plain {p:6.2f}s  under the monitor {m:6.2f}s  → {m / p:.2f}×")
    print(f"  {'all checks':28s} plain {totals['plain']:6.2f}s  under the monitor "
          f"{totals['monitor']:6.2f}s  → {totals['monitor'] / totals['plain']:.2f}×")
