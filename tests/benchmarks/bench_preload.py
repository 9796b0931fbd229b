"""What importing a lab's frameworks costs under the grading monitor, and so what the grading
kernel's preload saves (``make bench``; figures are printed with ``-s``).

The monitor's profile function sees every Python call, an import's too. Each framework is
imported in a fresh process twice: plain, and with the real monitor installed
(``coursekit.grading.monitor.install``, a pipe drained by a thread). Grading kernels run the
lab's setup imports before the monitor (:mod:`coursekit.grading.kernel`), so they pay the
plain figure; the ratio is what every graded notebook paid before.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys

import pytest

REPEATS = int(os.environ.get("COURSEKIT_BENCH_REPEATS", "3"))
FRAMEWORKS = ["torch", "tensorflow", "jax"]

_IMPORT = r'''
import os, sys, tempfile, threading, time
if sys.argv[1] == "monitor":
    fifo = os.path.join(tempfile.mkdtemp(), "monitor")
    os.mkfifo(fifo)

    def drain():
        with open(fifo, "rb") as pipe:
            while pipe.read(1 << 16):
                pass

    threading.Thread(target=drain, daemon=True).start()
    from coursekit.grading import monitor
    monitor.install(fifo, [])
started = time.perf_counter()
__import__(sys.argv[2])
print(time.perf_counter() - started)
'''


def _import_seconds(mode: str, module: str) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-c", _IMPORT, mode, module], env=env,
                          capture_output=True, text=True, timeout=900, check=True)
    return float(done.stdout.strip().splitlines()[-1])


@pytest.mark.benchmark
@pytest.mark.parametrize("module", FRAMEWORKS)
def test_import_under_the_monitor_against_plain(module):
    pytest.importorskip(module)
    plain, monitored = [], []
    for _ in range(REPEATS):  # interleaved, so drifting machine load hits both alike
        plain.append(_import_seconds("plain", module))
        monitored.append(_import_seconds("monitor", module))
    p, m = statistics.median(plain), statistics.median(monitored)
    print(f"\nimport {module}: plain {p:.2f}s, under the monitor {m:.2f}s → {m / p:.2f}× "
          f"(median of {REPEATS}); a preloaded grading kernel pays the plain figure")
