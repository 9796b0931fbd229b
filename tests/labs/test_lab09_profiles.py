"""lab09's profiler exercises: the drawn profiles plant what the lab says for every seed and have
the rows of a real recording of the lab's loop; the faster loader's reference yields the
single-process loader's batches and leaves no worker behind."""
from __future__ import annotations

import multiprocessing
import os
import time
import warnings

import numpy as np
import pytest

from coursekit.grading.checks import lab09
from coursekit.grading.program import get_check, run_program
from machine_load import slowdown

torch = pytest.importorskip("torch")

SEEDS = range(40)


def _readings(prof) -> dict:
    """What the right reading and each usual slip find in one profile."""
    rows = {row.key: row for row in prof.key_averages()}
    ops = sorted((row for row in rows.values() if row.key.startswith("aten::")),
                 key=lambda row: row.self_cpu_time_total, reverse=True)
    calls = [e for e in prof.events() if e.name.startswith("aten::")]
    return {"costliest": ops[0].key,
            "margin": ops[0].self_cpu_time_total / ops[1].self_cpu_time_total,
            "by CPU total": max(ops, key=lambda row: row.cpu_time_total).key,
            "top row": max(rows.values(), key=lambda row: row.self_cpu_time_total).key,
            "longest call": max(calls, key=lambda e: e.self_cpu_time_total).name}


def _trials(seed: int) -> list[dict]:
    check = get_check("lab09.read_profile")
    found: list[dict] = []

    def probe(prof):
        found.append(_readings(prof))
        return check.reference_impl()(prof)

    observations = run_program(check, probe, seed)
    assert all(o.error is None for o in observations), observations
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_every_seed_plants_the_answer_where_each_slip_finds_another(seed):
    stall, workers, gpu = _trials(seed)
    assert [t["costliest"] for t in (stall, workers, gpu)] == ["aten::addmm", "aten::mm",
                                                               "aten::copy_"]
    assert all(t["margin"] > 1.4 for t in (stall, workers, gpu))
    assert stall["by CPU total"] == "aten::linear"
    assert stall["top row"].startswith("enumerate(DataLoader)")
    assert workers["longest call"] == "aten::addmm"


class _SlowSamples:
    """The lab's SlowDigits, smaller: every sample sleeps before it is returned."""

    def __init__(self, n=64, delay=5e-3):
        generator = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 32, generator=generator), torch.arange(n) % 10
        self.delay = delay

    def __len__(self):
        return len(self.y)

    def __getitem__(self, index):
        time.sleep(self.delay)
        return self.x[index], self.y[index]


def _record(loader, steps=4):
    """The lab's loop under torch.profiler, on the CPU, after two warm-up steps."""
    from torch.profiler import ProfilerActivity, profile, record_function

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = iter(loader)

    def train(count):
        for _ in range(count):
            with record_function("wait for batch"):
                x, y = next(batches)
                x, y = x.to("cpu", non_blocking=True), y.to("cpu", non_blocking=True)
            with record_function("train step"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()

    train(2)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train(steps)
    return prof


def _names(rows) -> set[str]:
    return {row[0] for row in rows}.union(*(_names(row[2]) for row in rows))


@pytest.fixture(scope="module")
def recorded():
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    from torch.utils.data import DataLoader

    # The samples sleep longer on a busy machine, where each step computes longer too.
    single = DataLoader(_SlowSamples(delay=2e-2 * slowdown()), batch_size=4, shuffle=True)
    workers = lab09._reference_faster_loader()(single, torch.device("cpu"), num_workers=2)
    return {"single": _record(single), "workers": _record(workers)}


@pytest.mark.parametrize("loader", ["single", "workers"])
def test_drawn_profiles_hold_only_rows_a_real_recording_has(recorded, loader):
    real = {row.key for row in recorded[loader].key_averages()}
    rng = np.random.default_rng(0)
    loop = lab09._draw_loop(rng, 3, 3, loader, "cpu")
    drawn = _names(lab09._planted_loop(loop, "aten::addmm", 0.5))
    assert drawn <= real, sorted(drawn - real)


def test_the_reading_rule_finds_an_operator_and_the_stall_in_a_real_recording(recorded):
    read_profile = get_check("lab09.read_profile").reference_impl()
    found = read_profile(recorded["single"])
    assert found["costliest op"].startswith("aten::")
    # Each batch sleeps 80 ms; a step of this MLP computes for about 1 ms (on an idle machine):
    # the margin holds when a busy machine or the profiler's first step stretches one step.
    assert found["waiting share"] > 0.5


@pytest.mark.parametrize("shuffle, drop_last, custom", [(True, False, False), (False, True, True)])
def test_faster_loader_reference_yields_the_single_process_batches(shuffle, drop_last, custom):
    rng = np.random.default_rng(1)
    values = {"x": rng.standard_normal((29, 3)).astype(np.float32), "y": rng.integers(0, 10, 29)}
    setting = (4, shuffle, drop_last, custom)
    torch.manual_seed(7)
    expected = list(lab09._slow_loader(values, *setting))
    got = lab09._batches(lab09._reference_faster_loader(), values, setting, 2, 7)
    assert len(got) == len(expected) == (7 if drop_last else 8)
    for mine, theirs in zip(got, expected):
        keys = mine.keys() if custom else range(2)
        assert all(torch.equal(mine[k], theirs[k]) for k in keys)
    assert not multiprocessing.active_children(), "the workers outlive the loader"


def test_a_cuda_configuration_builds_without_a_gpu_and_without_a_warning():
    values = {"x": np.zeros((8, 2), np.float32), "y": np.zeros(8, np.int64)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for device in ("cuda", "cuda:1", "meta", "cpu"):
            config = lab09._configuration(lab09._reference_faster_loader(), values,
                                          (4, True, False, False), device, 2)
            assert config["pin_memory"] == device.startswith("cuda")
