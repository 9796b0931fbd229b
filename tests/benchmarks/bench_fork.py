"""What a pre-warmed, forking kernel would save, framework by framework, and which frameworks
survive a fork (``make bench``; figures are printed with ``-s``).

Every graded notebook today starts a Python process and imports the lab's frameworks before
its first cell (:mod:`coursekit.grading.kernel`). A zygote that imported them once could hand
each submission a forked child instead. For each framework this measures, in fresh processes:

* **cold**: a new interpreter imports the framework and runs one small op (what a kernel start
  pays today, the kernel machinery itself left out);
* **fork**: a process that imported the framework (and ran nothing) forks; the child runs the
  same op (what a zygote's child would pay);
* **survives**: the child's result is right and it exits within its time limit. A framework
  whose import started native threads may deadlock in the child (a lock held by a thread that
  the fork did not copy): the parent's thread count after import is printed beside it;
* **after use**: the same fork after the parent has *run* the op once (pools started), the
  state a zygote reaches if anything in it ever computes.

Nothing is asserted on time; a framework that does not survive is printed as such.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import pytest

REPEATS = int(os.environ.get("COURSEKIT_BENCH_REPEATS", "3"))
CHILD_TIMEOUT_S = 60

# One small op per framework, returning a number the parent can check.
OPS = {
    "numpy": ("import numpy as fw", "float((fw.ones((64, 64)) @ fw.ones((64, 64))).sum())"),
    "torch": ("import torch as fw", "float((fw.ones(64, 64) @ fw.ones(64, 64)).sum())"),
    "tensorflow": ("import tensorflow as fw",
                   "float(fw.reduce_sum(fw.ones((64, 64)) @ fw.ones((64, 64))))"),
    "jax": ("import jax.numpy as fw",
            "float((fw.ones((64, 64)) @ fw.ones((64, 64))).sum().block_until_ready())"),
    "ipykernel": ("import ipykernel.kernelapp, ipykernel.ipkernel as fw", "64.0 ** 3"),
}
EXPECTED = 64.0 ** 3

_COLD = r'''
import sys, time
started = time.perf_counter()
exec(sys.argv[1])
value = eval(sys.argv[2])
print(time.perf_counter() - started, value)
'''

# The parent imports (and, for "after use", computes), then times fork → child's op → exit.
_FORK = r'''
import json, os, select, signal, sys, time
exec(sys.argv[1])
if sys.argv[3] == "used":
    eval(sys.argv[2])
threads = len(os.listdir("/proc/self/task"))
read, write = os.pipe()
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.close(read)
    try:
        value = eval(sys.argv[2])
        os.write(write, repr(value).encode())
    finally:
        os._exit(0)
os.close(write)
ready, _, _ = select.select([read], [], [], float(sys.argv[4]))
if not ready:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print(json.dumps({"threads": threads, "hung": True}))
    sys.exit(0)
value = os.read(read, 64).decode()
_, status = os.waitpid(pid, 0)
print(json.dumps({"threads": threads, "hung": False, "seconds": time.perf_counter() - started,
                  "value": float(value) if value else None, "status": status}))
'''


def _env() -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
            "JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}


def _cold(framework: str) -> float:
    setup, op = OPS[framework]
    out = subprocess.run([sys.executable, "-c", _COLD, setup, op], capture_output=True,
                         text=True, timeout=300, env=_env(), check=True)
    seconds, value = out.stdout.split()[-2:]
    assert float(value) == EXPECTED
    return float(seconds)


def _fork(framework: str, used: bool) -> dict:
    setup, op = OPS[framework]
    out = subprocess.run([sys.executable, "-c", _FORK, setup, op, "used" if used else "fresh",
                          str(CHILD_TIMEOUT_S)], capture_output=True, text=True, timeout=600,
                         env=_env(), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.benchmark
@pytest.mark.parametrize("framework", list(OPS))
def test_fork_from_a_warm_process_against_a_cold_start(framework):
    cold = statistics.median(_cold(framework) for _ in range(REPEATS))
    line = [f"\n[{framework}] cold import + op {cold:.3f}s"]
    for used in (False, True):
        runs = [_fork(framework, used) for _ in range(REPEATS)]
        label = "fork after use" if used else "fork"
        good = [r for r in runs if not r["hung"] and r["value"] == EXPECTED and r["status"] == 0]
        if len(good) < len(runs):
            line.append(f"{label}: FAILS in {len(runs) - len(good)}/{len(runs)} "
                        f"(hung {sum(r['hung'] for r in runs)}; parent threads "
                        f"{runs[0]['threads']})")
            continue
        seconds = statistics.median(r["seconds"] for r in good)
        line.append(f"{label} {seconds:.3f}s → {cold / seconds:.0f}× cheaper (parent threads "
                    f"{runs[0]['threads']})")
    print("; ".join(line))
