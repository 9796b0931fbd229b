"""DataLoader throughput: coursekit.data against torch.utils.data, side by side.

Prints samples/s for each loader and the ratio coursekit / torch (goal: >= 1.0)
for a TensorDataset of 50,000 x 256 float32 samples with int64 labels, batch 64,
shuffled, at num_workers 0 and 2. One epoch per measurement, worker start-up
included (that is what a training loop pays), best of a few repeats.

Rows:
  tensor/torch  both loaders over torch tensors, each with its own TensorDataset
                (coursekit's gathers a batch with one index per tensor);
  tensor/numpy  coursekit over NumPy arrays, torch over the same data as torch tensors;
  per-sample    a dataset with only __getitem__ (no batched fetch) in both loaders,
                i.e. the loaders' own per-sample machinery.

Run: make bench   (or: .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/bench_dataloader.py)
"""

from __future__ import annotations

import os

# Thread counts are fixed before torch loads, so both loaders run alike.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.utils.data as tud

import coursekit.data as ckd

N, D, BATCH = 50_000, 256, 64
REPEATS = 3


class PerSample:
    """Map-style dataset with only __getitem__ / __len__ (no __getitems__)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def _epoch_rate(loader) -> float:
    """Samples/s over one epoch of ``loader``."""
    start = time.perf_counter()
    seen = 0
    for x, _y in loader:
        seen += len(x)
    elapsed = time.perf_counter() - start
    assert seen == N
    return seen / elapsed


def _best_rates(make_torch, make_ck) -> tuple[float, float]:
    """Best samples/s of each loader, measured in alternation so that a burst of
    load from elsewhere on the machine hits both alike."""
    t_best = c_best = 0.0
    for _ in range(REPEATS):
        t_best = max(t_best, _epoch_rate(make_torch()))
        c_best = max(c_best, _epoch_rate(make_ck()))
    return t_best, c_best


def run() -> list[tuple[str, int, float, float]]:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((N, D), dtype=np.float32)
    y_np = rng.integers(0, 10, size=N).astype(np.int64)
    x_t, y_t = torch.from_numpy(x_np), torch.from_numpy(y_np)

    cases = {
        "tensor/torch": (lambda: tud.TensorDataset(x_t, y_t), lambda: ckd.TensorDataset(x_t, y_t)),
        "tensor/numpy": (lambda: tud.TensorDataset(x_t, y_t), lambda: ckd.TensorDataset(x_np, y_np)),
        "per-sample": (lambda: PerSample(x_t, y_t), lambda: PerSample(x_t, y_t)),
    }
    rows = []
    for name, (torch_ds, ck_ds) in cases.items():
        for workers in (0, 2):
            # The factories are called inside _best_rates, in this iteration (B023).
            t_rate, c_rate = _best_rates(
                lambda: tud.DataLoader(torch_ds(), batch_size=BATCH, shuffle=True, num_workers=workers),  # noqa: B023
                lambda: ckd.DataLoader(ck_ds(), batch_size=BATCH, shuffle=True, num_workers=workers),  # noqa: B023
            )
            rows.append((name, workers, t_rate, c_rate))
    return rows


def report(rows) -> str:
    lines = [
        f"DataLoader throughput, {N} x {D} float32 + int64 labels, batch {BATCH}, shuffle, best of {REPEATS} epochs "
        f"(torch {torch.__version__}, 1 intra-op thread, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the end)",
        f"{'dataset':<14}{'workers':>8}{'torch samples/s':>18}{'coursekit samples/s':>22}{'ratio ck/torch':>16}",
    ]
    for name, workers, t_rate, c_rate in rows:
        lines.append(f"{name:<14}{workers:>8}{t_rate:>18,.0f}{c_rate:>22,.0f}{c_rate / t_rate:>15.2f}x")
    return "\n".join(lines)


@pytest.mark.benchmark
def test_dataloader_throughput_against_torch():
    rows = run()
    print()
    print(report(rows))


if __name__ == "__main__":
    print(report(run()))
