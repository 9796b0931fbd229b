"""lab09's references against what they stand for: the saved-bytes rule against a count by
hand, GradScaler on the CPU against its documented rule, and the bf16 report against the
rounding bound of bfloat16 (and its tolerance against another thread count)."""
from __future__ import annotations

import numpy as np
import pytest

from coursekit.grading.program import get_check

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_saved_bytes_of_a_relu_mlp_are_its_input_and_every_hidden_output(device):
    saved_bytes = get_check("lab09.saved_bytes").reference_impl()
    widths, rows = [7, 11, 5, 9, 3], 6
    layers = []
    for i, (d_in, d_out) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(d_in, d_out))
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(device)
    x = torch.randn(rows, widths[0], device=device)
    # The first Linear keeps x (for its weight's gradient); each ReLU keeps its output, which
    # the next Linear keeps too (one storage); the weights' transposed views are parameters.
    assert saved_bytes(model, x) == 4 * rows * sum(widths[:-1])
    with torch.no_grad():
        assert saved_bytes(model, x) == 0


def test_gradscaler_on_the_cpu_follows_the_documented_rule():
    """The loss-scaler reference is torch.amp.GradScaler("cpu"): skip and back off on inf/NaN,
    grow after growth_interval good steps in a row."""
    make = get_check("lab09.loss_scaler").reference_impl()
    scaler = make(init_scale=2.0**10, growth_factor=2.0, backoff_factor=0.5, growth_interval=2)
    w = torch.zeros(3, requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=1.0)
    scale, good, expected_w = 2.0**10, 0, torch.zeros(3)
    for step, bad in enumerate([False, False, True, False, True, False, False, False]):
        g = torch.tensor([1.0, -2.0, 0.5]) * (step + 1)
        if bad:
            g[1] = float("nan") if step == 4 else float("inf")
        optimizer.zero_grad(set_to_none=True)
        scaler.scale((w * g).sum()).backward()
        scaler.step(optimizer)
        scaler.update()
        if bad:
            scale, good = scale * 0.5, 0
        else:
            expected_w -= g
            good += 1
            if good == 2:
                scale, good = scale * 2.0, 0
        assert scaler.get_scale() == scale, step
        assert torch.equal(w.detach(), expected_w), step


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    a = torch.from_numpy(rng.standard_normal((96, 300)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((300, 80)).astype(np.float32))
    x = torch.from_numpy((rng.standard_normal((8, 700)) * 5 + 2).astype(np.float32))
    return a, b, x


def test_bf16_report_is_one_rounding_of_the_product_and_exact_for_float32_ops():
    report = get_check("lab09.bf16_report").reference_impl()(*_inputs(0))
    assert report["matmul"]["autocast dtype"] == "torch.bfloat16"
    assert 0 < report["matmul"]["autocast error"] <= 2.0**-8 * 1.01
    for op in ("sum", "softmax"):
        assert report[op]["autocast dtype"] == "torch.float32"
        assert report[op]["autocast error"] == 0.0
        assert report[op]["bf16 error"] > 0


def test_bf16_errors_agree_within_the_check_tolerance_across_thread_counts():
    bf16_report = get_check("lab09.bf16_report").reference_impl()
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = bf16_report(*_inputs(1))
        torch.set_num_threads(2)
        two = bf16_report(*_inputs(1))
    finally:
        torch.set_num_threads(threads)
    for op in one:
        for key in ("autocast error", "bf16 error"):
            assert one[op][key] == pytest.approx(two[op][key], rel=0.1, abs=1e-6), (op, key)
