"""DataLoader with worker processes: order, errors, dead workers, sharding, seeds.

Datasets here are tiny: each test starts two processes, and that start is most
of what these tests cost.
"""

from __future__ import annotations

import gc
import os
import random
import signal
import threading
import time

import numpy as np
import pytest

import coursekit.data as ckd
from machine_load import scaled

torch = pytest.importorskip("torch")


class SleepyDataset(ckd.Dataset):
    """Items sleep a random few milliseconds, so workers finish out of order."""

    def __init__(self, n, seed=0):
        self.delays = np.random.default_rng(seed).uniform(0.0, 0.012, size=n)

    def __getitem__(self, i):
        time.sleep(self.delays[i])
        return np.array([i, i * i])

    def __len__(self):
        return len(self.delays)


class FailingDataset(ckd.Dataset):
    def __init__(self, n, bad, how="raise"):
        self.n, self.bad, self.how = n, bad, how

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == "raise":
                raise ValueError(f"corrupt record {i}")
            if self.how == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "exit":
                os._exit(3)
            if self.how == "hang":
                time.sleep(60)
        return i

    def __len__(self):
        return self.n


class RangeStream(ckd.IterableDataset):
    """range(start, end) as a stream; shards across workers when `shard` is set."""

    def __init__(self, start, end, shard=True):
        self.start, self.end, self.shard = start, end, shard

    def __iter__(self):
        info = ckd.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.end))
        return iter(range(self.start + info.id, self.end, info.num_workers))


def _flat(batches):
    return [int(v) for b in batches for v in np.asarray(b).ravel()]


# --- order -------------------------------------------------------------------


@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_preserve_the_sampler_order_when_they_finish_out_of_order(shuffle):
    ds = SleepyDataset(24)
    reference = [b.tolist() for b in ckd.DataLoader(ds, batch_size=2, shuffle=shuffle, generator=3)]
    got = [b.tolist() for b in ckd.DataLoader(ds, batch_size=2, shuffle=shuffle, generator=3, num_workers=2)]
    assert got == reference
    if not shuffle:
        assert [row[0] for batch in got for row in batch] == list(range(24))


@pytest.mark.parametrize("prefetch_factor", [1, 5])
def test_prefetch_depth_changes_nothing_but_timing(prefetch_factor):
    ds = SleepyDataset(10, seed=1)
    got = [b.tolist() for b in ckd.DataLoader(ds, batch_size=3, num_workers=2, prefetch_factor=prefetch_factor)]
    assert got == [b.tolist() for b in ckd.DataLoader(ds, batch_size=3)]


def test_workers_pass_single_samples_through_when_batching_is_off():
    assert list(ckd.DataLoader(list("abcde"), batch_size=None, num_workers=2)) == list("abcde")


def test_workers_give_the_same_batches_as_the_main_process_for_torch_data():
    x, y = torch.randn(21, 3), torch.arange(21)
    kwargs = dict(batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(5))
    main = list(ckd.DataLoader(ckd.TensorDataset(x, y), **kwargs))
    kwargs["generator"] = torch.Generator().manual_seed(5)
    workers = list(ckd.DataLoader(ckd.TensorDataset(x, y), num_workers=2, **kwargs))
    assert len(main) == len(workers) == 6
    for (a, b), (c, d) in zip(main, workers):
        assert isinstance(c, torch.Tensor) and torch.equal(a, c) and torch.equal(b, d)


def test_tensors_torch_cannot_view_as_numpy_still_cross_from_workers():
    x = torch.arange(8, dtype=torch.bfloat16).reshape(4, 2)
    batches = list(ckd.DataLoader(ckd.TensorDataset(x), batch_size=2, num_workers=2))
    assert batches[1][0].dtype == torch.bfloat16 and torch.equal(batches[1][0], x[2:])


# --- errors ------------------------------------------------------------------


def test_a_worker_exception_is_reraised_with_worker_sample_index_and_traceback():
    loader = ckd.DataLoader(FailingDataset(12, bad=7), batch_size=3, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1, 2] and next(it).tolist() == [3, 4, 5]  # earlier batches still arrive
    with pytest.raises(ValueError, match="corrupt record 7") as info:
        next(it)
    err = info.value
    notes = "\n".join(err.__notes__)
    assert "DataLoader worker 0" in notes, notes  # batch 2 went to worker 0 (round robin)
    assert "sample index 7 of batch 2 (sample indices [6, 7, 8])" in notes
    cause = str(err.__cause__)
    assert isinstance(err.__cause__, ckd.WorkerTraceback)
    assert "Traceback (most recent call last)" in cause and "in __getitem__" in cause
    assert 'raise ValueError(f"corrupt record {i}")' in cause
    assert next(it).tolist() == [9, 10, 11], "the loader goes on after a reported error"


class _HoldsALock(Exception):
    # A lock pickles in no way, so this cannot cross processes even where tblib (which
    # dask.distributed installs) teaches pickle to rebuild exceptions with their __dict__.
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.lock = threading.Lock()


class _UnrebuildableError(ckd.Dataset):
    def __getitem__(self, i):
        raise _HoldsALock(42, "cannot be rebuilt from its message alone")

    def __len__(self):
        return 2


def test_an_exception_that_cannot_cross_processes_arrives_as_runtime_error_with_its_text():
    with pytest.raises(RuntimeError, match="_HoldsALock: 42: cannot be rebuilt") as info:
        list(ckd.DataLoader(_UnrebuildableError(), batch_size=1, num_workers=2))
    assert "DataLoader worker" in "\n".join(info.value.__notes__)


def test_an_error_in_worker_init_fn_is_reported():
    def init(worker_id):
        raise RuntimeError(f"cannot open the data file in worker {worker_id}")

    with pytest.raises(RuntimeError, match="cannot open the data file in worker 0") as info:
        list(ckd.DataLoader(list(range(4)), num_workers=2, worker_init_fn=init))
    assert "while starting" in "\n".join(info.value.__notes__)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how, pattern", [("sigkill", "killed by SIGKILL"), ("exit", "exit code 3")])
def test_a_killed_worker_gives_an_error_not_a_hang(how, pattern):
    loader = ckd.DataLoader(FailingDataset(12, bad=4, how=how), batch_size=2, num_workers=2)
    start = time.monotonic()
    with pytest.raises(ckd.WorkerDiedError, match=rf"worker 0 \(pid \d+\) exited unexpectedly \({pattern}\) "
                                                  r"while it was loading batch 2 \(sample indices \[4, 5\]\)"):
        list(loader)
    assert time.monotonic() - start < scaled(20), "death must be noticed at once, not after a long poll"


@pytest.mark.timeout(60)
def test_timeout_bounds_the_wait_for_a_stuck_worker():
    loader = ckd.DataLoader(FailingDataset(4, bad=0, how="hang"), batch_size=1, num_workers=2, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(ckd.DataLoaderTimeoutError, match=r"batch 0 \(sample indices \[0\]\) did not arrive from worker 0 within timeout=0.5 s"):
        next(iter(loader))
    assert time.monotonic() - start < scaled(10)


# --- iterable datasets ---------------------------------------------------------------


def test_iterable_dataset_with_two_workers_yields_each_sample_once_when_sharded():
    got = _flat(ckd.DataLoader(RangeStream(0, 23), batch_size=4, num_workers=2))
    assert sorted(got) == list(range(23))


def test_iterable_dataset_without_sharding_yields_every_sample_once_per_worker():
    # Documented PyTorch behaviour: each worker iterates its own full copy.
    got = _flat(ckd.DataLoader(RangeStream(0, 5, shard=False), batch_size=2, num_workers=2))
    assert sorted(got) == sorted(list(range(5)) * 2)


def test_iterable_dataset_batches_alternate_between_workers_and_drop_last_applies_per_worker():
    batches = [np.asarray(b).tolist() for b in ckd.DataLoader(RangeStream(0, 10), batch_size=2, num_workers=2)]
    assert batches == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    dropped = [np.asarray(b).tolist() for b in ckd.DataLoader(RangeStream(0, 10), batch_size=2, num_workers=2, drop_last=True)]
    assert dropped == [[0, 2], [1, 3], [4, 6], [5, 7]]


# --- worker info and seeds -------------------------------------------------------------


class WhoAmI(ckd.Dataset):
    def __getitem__(self, i):
        info = ckd.get_worker_info()
        return np.array([info.id, info.num_workers, info.seed % 2**31, np.random.randint(2**31),
                         random.randrange(2**31), int(torch.randint(2**31, ()).item()), int(info.dataset is self)])

    def __len__(self):
        return 4


def test_get_worker_info_is_none_in_the_main_process_and_describes_each_worker():
    assert ckd.get_worker_info() is None
    rows = np.concatenate(list(ckd.DataLoader(WhoAmI(), batch_size=1, num_workers=2, generator=0)))
    assert rows[:, 0].tolist() == [0, 1, 0, 1] and set(rows[:, 1]) == {2}
    assert rows[0, 2] != rows[1, 2], "workers get different seeds"
    # NumPy, Python and torch generators differ between workers (no shared "random" augmentations) ...
    for column in (3, 4, 5):
        assert rows[0, column] != rows[1, column]
    # ... and info.dataset is the copy of the dataset that this worker reads from.
    assert set(rows[:, 6]) == {1}


def test_worker_seeds_follow_the_loader_generator():
    def draws(seed):
        return np.concatenate(list(ckd.DataLoader(WhoAmI(), batch_size=1, num_workers=2, generator=seed)))[:, 2:6]

    assert np.array_equal(draws(11), draws(11))
    assert not np.array_equal(draws(11), draws(12))


def test_worker_init_fn_runs_in_each_worker_with_its_id():
    def init(worker_id):
        info = ckd.get_worker_info()
        assert info.id == worker_id
        np.random.seed(1000 + worker_id)

    class Draw(ckd.Dataset):
        def __getitem__(self, i):
            return np.random.randint(10**6)

        def __len__(self):
            return 2

    got = [int(b[0]) for b in ckd.DataLoader(Draw(), num_workers=2, worker_init_fn=init)]
    assert got == [np.random.RandomState(1000).randint(10**6), np.random.RandomState(1001).randint(10**6)]


# --- lifecycle -----------------------------------------------------------------------


class Pid(ckd.Dataset):
    def __getitem__(self, i):
        return os.getpid()

    def __len__(self):
        return 4


def test_persistent_workers_serve_several_epochs():
    loader = ckd.DataLoader(Pid(), batch_size=2, num_workers=2, persistent_workers=True)
    first = set(_flat(loader))
    second = set(_flat(loader))
    assert first == second and len(first) == 2 and os.getpid() not in first
    stream = ckd.DataLoader(RangeStream(0, 6), batch_size=2, num_workers=2, persistent_workers=True)
    assert sorted(_flat(stream)) == sorted(_flat(stream)) == list(range(6))


def test_workers_are_new_each_epoch_without_persistence_and_stop_when_abandoned():
    loader = ckd.DataLoader(Pid(), batch_size=1, num_workers=2)
    assert set(_flat(loader)).isdisjoint(_flat(loader))
    it = iter(loader)
    pids = {int(next(it)[0]), int(next(it)[0])}
    del it
    gc.collect()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "abandoned iterators must not leave workers behind"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.timeout(120)
def test_spawned_workers_work_too():
    # spawn is the default start method on macOS and Windows: everything handed
    # to a worker must then survive pickling.
    ds = ckd.TensorDataset(np.arange(20.0).reshape(10, 2), np.arange(10))
    kwargs = dict(batch_size=3, shuffle=True, generator=4)
    spawned = list(ckd.DataLoader(ds, num_workers=2, multiprocessing_context="spawn", **kwargs))
    assert [b[1].tolist() for b in spawned] == [b[1].tolist() for b in ckd.DataLoader(ds, **kwargs)]
