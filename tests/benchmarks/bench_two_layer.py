"""Benchmark: one training step of the seed's two-layer ReLU net, coursekit vs PyTorch vs NumPy.

N=64, D_in=1000, H=100, D_out=10, float32, one BLAS/torch thread. One step is forward,
backward and an SGD update, written as in the lecture's seed:

    h = relu(x @ w1); y_pred = h @ w2; loss = ((y_pred - y) ** 2).sum()
    loss.backward(); w -= lr * w.grad; w.grad = None

Prints CPU microseconds per step (the best of several interleaved rounds) and the ratios. Run with
``make bench`` (``pytest -m benchmark -s tests/benchmarks``) or directly as a script.
Not a timed test: it asserts nothing about speed.
"""
from __future__ import annotations

import os

# One thread everywhere, set before NumPy (and its BLAS) is first imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import time
from typing import Callable

import numpy as np
import pytest

N, D_IN, H, D_OUT = 64, 1000, 100, 10
LR = 1e-6
ROUNDS = 5


def _data(seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return (rng.standard_normal((N, D_IN)).astype(f32), rng.standard_normal((N, D_OUT)).astype(f32),
            rng.standard_normal((D_IN, H)).astype(f32), rng.standard_normal((H, D_OUT)).astype(f32))


def numpy_step_factory() -> Callable[[], float]:
    """The seed's hand-written NumPy version: forward, manual backward, update."""
    x, y, w1, w2 = _data()

    def step() -> float:
        h = x @ w1
        h_relu = np.maximum(h, 0)
        y_pred = h_relu @ w2
        diff = y_pred - y
        loss = np.square(diff).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = grad_y_pred @ w2.T
        grad_h[h < 0] = 0
        grad_w1 = x.T @ grad_h
        np.subtract(w1, LR * grad_w1, out=w1)
        np.subtract(w2, LR * grad_w2, out=w2)
        return float(loss)

    return step


def coursekit_step_factory() -> Callable[[], float]:
    import coursekit as ck

    x, y, w1, w2 = _data()
    x, y = ck.tensor(x), ck.tensor(y)
    w1, w2 = ck.tensor(w1, requires_grad=True), ck.tensor(w2, requires_grad=True)

    def step() -> float:
        y_pred = (x @ w1).relu() @ w2
        loss = ((y_pred - y) ** 2).sum()
        loss.backward()
        w1.data -= LR * w1.grad.data
        w2.data -= LR * w2.grad.data
        w1.grad = None
        w2.grad = None
        return loss.item()

    return step


def torch_step_factory() -> Callable[[], float]:
    import torch

    torch.set_num_threads(1)
    x, y, w1, w2 = (torch.from_numpy(a) for a in _data())
    w1.requires_grad_()
    w2.requires_grad_()

    def step() -> float:
        y_pred = (x @ w1).relu() @ w2
        loss = ((y_pred - y) ** 2).sum()
        loss.backward()
        with torch.no_grad():
            w1.sub_(LR * w1.grad)
            w2.sub_(LR * w2.grad)
        w1.grad = None
        w2.grad = None
        return loss.item()

    return step


def _time(step: Callable[[], float], steps: int = 200, repeats: int = 5) -> float:
    """Fastest, over `repeats`, of the mean µs per step over `steps` steps, after a warm-up.

    CPU time of this process (``time.process_time``), not wall time: the course machines
    are shared, and time spent waiting for a core is not the code's. Each contender runs
    single-threaded, so its CPU time is its running time.
    """
    for _ in range(20):
        step()
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(steps):
            step()
        samples.append((time.process_time() - start) / steps * 1e6)
    return min(samples)


def run() -> dict[str, float]:
    try:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(limits=1)  # in case NumPy was imported before this module
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        limiter = None
    steps = {"numpy": numpy_step_factory(), "torch": torch_step_factory(), "coursekit": coursekit_step_factory()}
    # The three use the same data and update rule, so their losses agree on the first steps.
    first = {name: step() for name, step in steps.items()}
    assert np.allclose(first["coursekit"], first["numpy"], rtol=1e-4), first
    assert np.allclose(first["coursekit"], first["torch"], rtol=1e-4), first
    # Interleave the measurements so drift in machine load hits all three alike.
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(ROUNDS):
        for name, step in steps.items():
            times[name].append(_time(step))
    result = {name: min(values) for name, values in times.items()}
    if limiter is not None:
        limiter.restore_original_limits()
    return result


def report(result: dict[str, float]) -> str:
    lines = [f"two-layer ReLU net, N={N} D_in={D_IN} H={H} D_out={D_OUT}, float32, 1 thread: one training step"]
    for name in ("numpy", "torch", "coursekit"):
        lines.append(f"  {name:<10} {result[name]:8.1f} µs/step")
    lines.append(f"  coursekit / torch = {result['coursekit'] / result['torch']:.2f}x   (goal <= 1.0x)")
    lines.append(f"  coursekit / numpy = {result['coursekit'] / result['numpy']:.2f}x   (goal <= 1.3x)")
    return "\n".join(lines)


@pytest.mark.benchmark
def test_two_layer_step_timings_print_ratios_to_torch_and_numpy() -> None:
    print()
    print(report(run()))


if __name__ == "__main__":
    print(report(run()))
