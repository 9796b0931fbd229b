"""DataLoader in the main process: epochs, batches, seeds, arguments, torch interplay."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coursekit.data as ckd

torch = pytest.importorskip("torch")
import torch.utils.data as tud


def _ids(loader):
    """The sample ids of each batch (datasets here carry their index as the last field)."""
    return [np.asarray(batch[-1]).tolist() for batch in loader]


def _dataset(n, kind="numpy"):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    ids = np.arange(n)
    if kind == "torch":
        return ckd.TensorDataset(torch.from_numpy(x), torch.from_numpy(ids))
    return ckd.TensorDataset(x, ids)


# --- epochs and batches ------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 50), batch_size=st.integers(1, 16), drop_last=st.booleans(), shuffle=st.booleans())
def test_every_epoch_is_a_permutation_with_the_right_batch_sizes(n, batch_size, drop_last, shuffle):
    loader = ckd.DataLoader(_dataset(n), batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, generator=0)
    full, rest = divmod(n, batch_size)
    expected_sizes = [batch_size] * full + ([rest] if rest and not drop_last else [])
    for _ in range(2):
        batches = _ids(loader)
        assert [len(b) for b in batches] == expected_sizes
        assert len(loader) == len(expected_sizes)
        seen = [i for b in batches for i in b]
        if drop_last:
            assert len(set(seen)) == len(seen) == full * batch_size, "no sample twice, only the tail dropped"
        else:
            assert sorted(seen) == list(range(n)), "each sample exactly once per epoch"
        if not shuffle:
            assert seen == list(range(len(seen)))


def test_partial_last_batch_keeps_its_samples_and_drop_last_drops_them():
    kept = _ids(ckd.DataLoader(_dataset(10), batch_size=4))
    assert kept == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _ids(ckd.DataLoader(_dataset(10), batch_size=4, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_batches_have_the_samples_kind_and_values():
    ds = _dataset(6, "torch")
    x, ids = next(iter(ckd.DataLoader(ds, batch_size=3)))
    assert isinstance(x, torch.Tensor) and x.shape == (3, 2) and x.dtype == torch.float32
    assert torch.equal(x, ds.tensors[0][:3]) and ids.tolist() == [0, 1, 2]


def test_batch_size_none_yields_single_samples_unbatched():
    samples = list(ckd.DataLoader([(1, "a"), (2, "b")], batch_size=None))
    assert samples == [(1, "a"), (2, "b")]


def test_custom_sampler_batch_sampler_and_collate_fn_are_used():
    ds = list(range(10))
    assert list(ckd.DataLoader(ds, batch_size=3, sampler=[9, 8, 7, 6], collate_fn=list)) == [[9, 8, 7], [6]]
    assert list(ckd.DataLoader(ds, batch_sampler=[[0, 5], [1]], collate_fn=tuple)) == [(0, 5), (1,)]
    assert len(ckd.DataLoader(ds, batch_sampler=[[0, 5], [1]])) == 2


def test_iterable_dataset_in_the_main_process_batches_the_stream():
    class Stream(ckd.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    assert _ids_plain(ckd.DataLoader(Stream(), batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _ids_plain(ckd.DataLoader(Stream(), batch_size=3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(ckd.DataLoader(Stream(), batch_size=3)) == 3 and len(ckd.DataLoader(Stream(), batch_size=3, drop_last=True)) == 2
    assert list(ckd.DataLoader(Stream(), batch_size=None)) == list(range(7))


def _ids_plain(loader):
    return [np.asarray(b).tolist() for b in loader]


# --- seeds ----------------------------------------------------------------------------


def test_same_seed_same_order_and_different_seeds_differ():
    def epochs(generator, count=2):
        loader = ckd.DataLoader(_dataset(40), batch_size=8, shuffle=True, generator=generator)
        return [_ids(loader) for _ in range(count)]

    first, second = epochs(7)
    assert first != second, "successive epochs are shuffled anew"
    assert epochs(7) == [first, second], "an int seed reproduces every epoch"
    assert epochs(np.random.default_rng(7)) == epochs(np.random.default_rng(7)), "so does a NumPy Generator"
    assert epochs(8)[0] != first, "another seed gives another order"


def test_without_a_generator_numpys_global_seed_reproduces_the_order():
    np.random.seed(0)
    a = _ids(ckd.DataLoader(_dataset(30), batch_size=5, shuffle=True))
    np.random.seed(0)
    b = _ids(ckd.DataLoader(_dataset(30), batch_size=5, shuffle=True))
    assert a == b


@pytest.mark.parametrize("drop_last", [False, True])
def test_a_torch_generator_gives_exactly_torchs_batches(drop_last):
    x, y = torch.randn(37, 3), torch.arange(37)
    ours = ckd.DataLoader(ckd.TensorDataset(x, y), batch_size=8, shuffle=True, drop_last=drop_last,
                          generator=torch.Generator().manual_seed(21))
    theirs = tud.DataLoader(tud.TensorDataset(x, y), batch_size=8, shuffle=True, drop_last=drop_last,
                            generator=torch.Generator().manual_seed(21))
    for _ in range(2):  # both epochs
        for (ox, oy), (tx, ty) in zip(ours, theirs, strict=True):
            assert torch.equal(ox, tx) and torch.equal(oy, ty)


# --- invalid arguments ------------------------------------------------------------


class _Stream(ckd.IterableDataset):
    def __iter__(self):
        return iter(range(4))


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"batch_size": 0}, r"batch_size should be a positive integer, or None.*got batch_size=0"),
        ({"batch_size": 2.5}, r"got batch_size=2\.5"),
        ({"num_workers": -1}, r"num_workers should be a non-negative integer.*got num_workers=-1"),
        ({"shuffle": True, "sampler": [0, 1]}, "sampler and shuffle=True both choose the order"),
        ({"batch_sampler": [[0]], "batch_size": 4}, r"must keep their defaults; got batch_size=4"),
        ({"batch_sampler": [[0]], "shuffle": True}, r"got shuffle=True"),
        ({"batch_sampler": [[0]], "sampler": [0]}, r"got sampler=\[0\]"),
        ({"batch_sampler": [[0]], "drop_last": True}, r"got drop_last=True"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None turns batching off.*got drop_last=True"),
        ({"timeout": -1}, r"timeout should be a non-negative number of seconds, got timeout=-1"),
        ({"timeout": 5}, r"needs num_workers > 0; got timeout=5 with num_workers=0"),
        ({"prefetch_factor": 2}, r"needs num_workers > 0; got prefetch_factor=2 with num_workers=0"),
        ({"num_workers": 1, "prefetch_factor": 0}, r"prefetch_factor should be a positive integer, got 0"),
        ({"persistent_workers": True}, r"persistent_workers=True .* needs num_workers > 0; got num_workers=0"),
        ({"num_workers": 1, "multiprocessing_context": "teleport"}, r"should be one of \[.*\], got 'teleport'"),
        ({"multiprocessing_context": "spawn"}, r"only matters with worker processes"),
        ({"collate_fn": 3}, r"collate_fn should be callable or None, got int 3"),
        ({"worker_init_fn": "f"}, r"worker_init_fn should be callable or None"),
        ({"shuffle": "yes"}, r"shuffle should be True, False or None, got 'yes'"),
        ({"drop_last": 1}, r"drop_last should be True or False, got 1"),
        ({"pin_memory": None}, r"pin_memory should be True or False, got None"),
    ],
)
def test_invalid_arguments_are_rejected_with_what_was_given(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        ckd.DataLoader(list(range(8)), **kwargs)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"shuffle": True}, r"IterableDataset decides its own order.*got shuffle=True"),
        ({"sampler": [0, 1]}, r"IterableDataset has no indices for a sampler; got sampler=\[0, 1\]"),
        ({"batch_sampler": [[0]]}, r"no indices for a batch_sampler"),
    ],
)
def test_an_iterable_dataset_refuses_orderings(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        ckd.DataLoader(_Stream(), **kwargs)


def test_datasets_without_indexing_or_length_are_refused():
    with pytest.raises(ValueError, match="expected a map-style dataset .* got generator"):
        ckd.DataLoader(x for x in range(3))

    class NoLen:
        def __getitem__(self, i):
            return i

    with pytest.raises(ValueError, match="needs len\\(dataset\\), but NoLen has no __len__"):
        ckd.DataLoader(NoLen())
    assert list(ckd.DataLoader(NoLen(), sampler=[2, 0], batch_size=None)) == [2, 0]


def test_a_bad_generator_is_refused():
    with pytest.raises(TypeError, match="got float"):
        ckd.DataLoader([1, 2], shuffle=True, generator=0.5)
    with pytest.raises(ValueError, match="non-negative integer, got -3"):
        ckd.DataLoader([1, 2], shuffle=True, generator=-3)


def test_batching_attributes_cannot_change_after_construction():
    loader = ckd.DataLoader(list(range(8)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size cannot change after the DataLoader is built"):
        loader.batch_size = 4
    loader.num_workers = 0  # harmless attributes stay writable, as in PyTorch


# --- errors in the main process --------------------------------------------------------


def test_an_error_in_getitem_names_the_sample_and_batch():
    class Broken(ckd.Dataset):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError(f"no label for sample {i}")
            return i

        def __len__(self):
            return 8

    with pytest.raises(KeyError, match="no label for sample 5") as info:
        list(ckd.DataLoader(Broken(), batch_size=3))
    notes = "\n".join(info.value.__notes__)
    assert "sample index 5 of batch 1 (sample indices [3, 4, 5])" in notes and "main process" in notes


class _StopsEarly(ckd.Dataset):
    def __getitem__(self, i):
        if i == 3:
            raise StopIteration
        return i

    def __len__(self):
        return 6


@pytest.mark.parametrize("num_workers", [0, 2])
def test_stop_iteration_from_a_map_dataset_is_an_error_not_a_short_epoch(num_workers):
    with pytest.raises(RuntimeError, match="StopIteration"):
        list(ckd.DataLoader(_StopsEarly(), batch_size=2, num_workers=num_workers))


# --- torch interplay -----------------------------------------------------------------


def test_a_coursekit_loader_feeds_a_torch_model_for_a_training_step():
    torch.manual_seed(0)
    x = torch.randn(64, 5)
    y = (x.sum(dim=1) > 0).long()
    loader = ckd.DataLoader(ckd.TensorDataset(x, y), batch_size=16, shuffle=True, generator=0)
    model = torch.nn.Linear(5, 2)

    def sgd_step(xb, yb):
        # Plain SGD by hand: torch.optim's first use costs seconds of imports.
        model.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
        return loss.item()

    before = model.weight.detach().clone()
    xb, yb = next(iter(loader))
    assert isinstance(xb, torch.Tensor) and xb.dtype == torch.float32 and yb.dtype == torch.int64
    sgd_step(xb, yb)
    assert not torch.equal(model.weight, before)
    # A few epochs actually learn the (linearly separable) task.
    for _ in range(5):
        for xb, yb in loader:
            sgd_step(xb, yb)
    accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    assert accuracy > 0.9


def test_a_torch_iterable_dataset_is_read_as_a_stream():
    class TorchStream(tud.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in ckd.DataLoader(TorchStream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="IterableDataset decides its own order"):
        ckd.DataLoader(TorchStream(), shuffle=True)


def test_pin_memory_without_cuda_is_a_noop_with_one_clear_warning():
    if torch.cuda.is_available():
        pytest.skip("CUDA present: pinning is real here (see the CUDA test)")
    loader = ckd.DataLoader(_dataset(6, "torch"), batch_size=3, pin_memory=True)
    with pytest.warns(ckd.PinMemoryWarning, match="no effect here: torch sees no CUDA device"):
        batches = list(loader)
    assert len(batches) == 2 and not batches[0][0].is_pinned()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(loader)  # said once per loader, not every epoch


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: pinned memory only exists with a GPU")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_pin_memory_with_cuda_pins_torch_tensors(num_workers):
    loader = ckd.DataLoader(_dataset(8, "torch"), batch_size=4, pin_memory=True, num_workers=num_workers)
    for x, ids in loader:
        assert x.is_pinned() and ids.is_pinned()
        assert torch.equal(x.to("cuda", non_blocking=True).cpu(), x)


def test_len_matches_torch_for_map_style_loaders():
    for n, b, drop in [(10, 3, False), (10, 3, True), (9, 3, False), (1, 5, False)]:
        assert len(ckd.DataLoader(list(range(n)), batch_size=b, drop_last=drop)) == \
            len(tud.DataLoader(list(range(n)), batch_size=b, drop_last=drop)) == \
            (n // b if drop else math.ceil(n / b))
