"""Record lab09's training loop under ``torch.profiler`` on a device and write the rows of
``key_averages()`` as JSON: the ground truth for the drawn GPU profile of ``lab09.read_profile``
(``tests/labs/test_lab09_profiles.py`` keeps the drawn rows among the recorded ones).

On a lent GPU machine, after ``gpu_check.py``::

    python3 tests/gpu/record_profile.py --device cuda --out "$OUT/lab09_profile_cuda.json"

Without CUDA it records on the CPU, which is what the lab's own cell 3 does here.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("KINETO_LOG_LEVEL", "6")

import torch
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.data import DataLoader, Dataset

from coursekit.grading.checks import lab09


class SlowSamples(Dataset):
    """The lab's SlowDigits, smaller: each sample sleeps before it is returned."""

    def __init__(self, n=256, delay=2e-3):
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 64, generator=generator)
        self.y = torch.randint(0, 10, (n,), generator=generator)
        self.delay = delay

    def __len__(self):
        return len(self.y)

    def __getitem__(self, index):
        time.sleep(self.delay)
        return self.x[index], self.y[index]


def record(device: torch.device, loader: DataLoader, steps: int = 4):
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = iter(loader)

    def train(count):
        for _ in range(count):
            with record_function("wait for batch"):
                x, y = next(batches)
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with record_function("train step"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()

    train(2)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        train(steps)
    return prof


def rows(prof) -> list[dict]:
    """Every row of key_averages(), in its order, with what read_profile may look at."""
    return [{"key": row.key, "device_type": str(row.device_type).split(".")[-1],
             "is_user_annotation": bool(getattr(row, "is_user_annotation", False)),
             "count": row.count, "self_cpu_time_total": row.self_cpu_time_total,
             "cpu_time_total": row.cpu_time_total}
            for row in prof.key_averages()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    device = torch.device(args.device)
    single = DataLoader(SlowSamples(), batch_size=32, shuffle=True)
    workers = lab09._reference_faster_loader()(single, device, num_workers=2)
    recorded = {"torch": torch.__version__, "device": str(device),
                "device_name": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
                "loaders": {}}
    for name, loader in (("single", single), ("workers", workers)):
        prof = record(device, loader)
        recorded["loaders"][name] = {"rows": rows(prof),
                                     "read_profile": _read(prof)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(recorded, indent=1) + "\n")
    for name, found in recorded["loaders"].items():
        print(name, found["read_profile"])
    return 0


def _read(prof) -> dict | str:
    """What the check's reference reads from the recording (or the error it raises)."""
    try:
        return lab09._reference_read_profile()(prof)
    except Exception as error:  # noqa: BLE001 — the error is the finding
        return f"{type(error).__name__}: {error}"


if __name__ == "__main__":
    sys.exit(main())
