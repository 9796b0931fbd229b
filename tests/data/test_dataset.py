"""Datasets: TensorDataset, ConcatDataset, Subset, ChainDataset, random_split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import coursekit.data as ckd

torch = pytest.importorskip("torch")
import torch.utils.data as tud


def _coursekit_tensor():
    import coursekit

    if not hasattr(coursekit, "Tensor"):
        pytest.skip("coursekit.Tensor is not available yet (autograd not landed)")
    return coursekit


def _assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b)
    else:  # a coursekit tensor
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# --- TensorDataset --------------------------------------------------------------


def test_tensor_dataset_sample_is_the_row_of_every_tensor():
    x = np.arange(12.0).reshape(6, 2)
    y = torch.arange(6)
    ds = ckd.TensorDataset(x, y)
    assert len(ds) == 6
    sx, sy = ds[4]
    np.testing.assert_array_equal(sx, x[4])
    assert sy.item() == 4


def test_tensor_dataset_rejects_tensors_of_different_lengths():
    with pytest.raises(ValueError, match=r"same first dimension.*\[5, 4\]"):
        ckd.TensorDataset(np.zeros((5, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="at least one"):
        ckd.TensorDataset()
    with pytest.raises(ValueError, match="first dimension"):
        ckd.TensorDataset(np.float32(1.0))


@pytest.mark.parametrize("kind", ["numpy", "torch", "coursekit", "mixed"])
def test_batched_fetch_equals_collating_single_samples(kind):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 3, 2)).astype(np.float32)
    y = rng.integers(0, 5, size=20)
    if kind == "torch":
        tensors = (torch.from_numpy(x), torch.from_numpy(y))
    elif kind == "coursekit":
        ck = _coursekit_tensor()
        tensors = (ck.tensor(x), ck.tensor(y))
    elif kind == "mixed":
        tensors = (x, torch.from_numpy(y))
    else:
        tensors = (x, y)
    ds = ckd.TensorDataset(*tensors)
    indices = [7, 0, 19, 7, 3]
    batched = ds.__getitems__(indices)
    # Seen as a sequence, the batched fetch is exactly the list of samples ...
    assert len(batched) == len(indices)
    for got, i in zip(batched, indices):
        _assert_same(tuple(got), ds[i])
    # ... and it collates to what the single samples collate to.
    _assert_same(ckd.default_collate(ds.__getitems__(indices)), ckd.default_collate([ds[i] for i in indices]))


def test_a_subclass_that_overrides_getitem_is_not_bypassed_by_the_batched_fetch():
    class Doubled(ckd.TensorDataset):
        def __getitem__(self, i):
            (x,) = super().__getitem__(i)
            return (2 * x,)

    ds = Doubled(np.arange(6))
    (batch,) = next(iter(ckd.DataLoader(ds, batch_size=3)))
    np.testing.assert_array_equal(batch, [0, 2, 4])
    (sub,) = next(iter(ckd.DataLoader(ckd.Subset(ds, [5, 4]), batch_size=2)))
    np.testing.assert_array_equal(sub, [10, 8])

    class Shifted(ckd.Subset):
        def __getitem__(self, idx):
            return super().__getitem__(idx) + 100

    np.testing.assert_array_equal(next(iter(ckd.DataLoader(Shifted(list(range(5)), [1, 2]), batch_size=2))), [101, 102])


def test_torch_default_collate_reads_a_sample_batch_like_a_list():
    x, y = torch.randn(10, 4), torch.arange(10)
    batch = ckd.TensorDataset(x, y).__getitems__([1, 5, 2])
    bx, by = tud.default_collate(batch)
    assert torch.equal(bx, x[[1, 5, 2]]) and torch.equal(by, y[[1, 5, 2]])


# --- ConcatDataset ---------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=5))
def test_concat_dataset_indexes_like_one_concatenated_list(sizes):
    parts, start = [], 0
    for size in sizes:
        parts.append(list(range(start, start + size)))
        start += size
    flat = [x for part in parts for x in part]
    ds = ckd.ConcatDataset(parts)
    assert len(ds) == len(flat)
    for i in range(-len(flat), len(flat)):  # negative indices included
        assert ds[i] == flat[i]
    for bad in (len(flat), -len(flat) - 1):
        with pytest.raises(IndexError, match=rf"index {bad} is out of range for {len(flat)} samples"):
            ds[bad]


def test_concat_dataset_of_tensor_datasets_and_plus_operator():
    a = ckd.TensorDataset(np.arange(3))
    b = ckd.TensorDataset(np.arange(10, 14))
    ds = a + b
    assert isinstance(ds, ckd.ConcatDataset)
    assert [int(ds[i][0]) for i in range(len(ds))] == [0, 1, 2, 10, 11, 12, 13]
    assert int(ds[-1][0]) == 13 and int(ds[-5][0]) == 2
    assert ds.cumulative_sizes == [3, 7]
    # IndexError at the end lets plain iteration stop, as for a list.
    assert [int(s[0]) for s in ds] == [0, 1, 2, 10, 11, 12, 13]


def test_concat_dataset_rejects_nothing_streams_and_non_integer_indices():
    with pytest.raises(ValueError, match="at least one dataset"):
        ckd.ConcatDataset([])

    class Stream(ckd.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match="dataset 1 is an IterableDataset"):
        ckd.ConcatDataset([[1, 2], Stream()])
    with pytest.raises(TypeError, match="integers, got float"):
        ckd.ConcatDataset([[1, 2]])[0.5]


def test_concat_dataset_agrees_with_torch_for_valid_indices():
    parts = [list(range(4)), list(range(100, 101)), list(range(200, 205))]
    ours, theirs = ckd.ConcatDataset(parts), tud.ConcatDataset(parts)
    assert [ours[i] for i in range(-10, 10)] == [theirs[i] for i in range(-10, 10)]


# --- Subset, ChainDataset ------------------------------------------------------------


def test_subset_reads_through_its_indices_and_keeps_the_batched_fetch():
    x = np.arange(10) * 10
    sub = ckd.Subset(ckd.TensorDataset(x), [9, 2, 4])
    assert len(sub) == 3
    assert int(sub[0][0]) == 90 and int(sub[-1][0]) == 40
    assert [int(s[0]) for s in sub[[0, 2]]] == [90, 40]
    batch = sub.__getitems__([2, 0])
    assert isinstance(batch, ckd.SampleBatch)
    np.testing.assert_array_equal(ckd.default_collate(batch)[0], [40, 90])
    plain = ckd.Subset(list("abcdef"), [5, 0])
    assert plain.__getitems__([0, 1]) == ["f", "a"]


def test_chain_dataset_reads_streams_in_turn():
    class Count(ckd.IterableDataset):
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __iter__(self):
            return iter(range(self.a, self.b))

        def __len__(self):
            return self.b - self.a

    chained = Count(0, 3) + Count(10, 12)
    assert isinstance(chained, ckd.ChainDataset)
    assert list(chained) == [0, 1, 2, 10, 11] and len(chained) == 5


def test_base_classes_say_what_to_implement():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        ckd.Dataset()[0]
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(ckd.IterableDataset())


# --- random_split ----------------------------------------------------------------


def _check_partition(splits, n):
    together = sorted(i for s in splits for i in s.indices)
    assert together == list(range(n)), "splits must cover every index exactly once"


def test_random_split_with_lengths_partitions_the_dataset():
    splits = ckd.random_split(range(10), [3, 7], generator=0)
    assert [len(s) for s in splits] == [3, 7]
    _check_partition(splits, 10)
    assert all(isinstance(s, ckd.Subset) for s in splits)
    assert [splits[0][k] for k in range(3)] == [splits[0].indices[k] for k in range(3)]


@pytest.mark.filterwarnings("ignore:Length of split at index")  # torch's note on empty splits
@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(0, 60),
    fractions=st.lists(st.integers(0, 20), min_size=1, max_size=4).filter(lambda w: sum(w) > 0),
)
def test_random_split_fractions_give_torchs_sizes(n, fractions):
    total = sum(fractions)
    fracs = [f / total for f in fractions]
    # torch reads fractions only when they sum to at most 1 (not 1 + rounding error).
    assume(sum(fracs) <= 1.0)
    ours = ckd.random_split(range(n), fracs, generator=1)
    theirs = tud.random_split(range(n), fracs, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    _check_partition(ours, n)


def test_random_split_fraction_rule_example():
    # floor(10 * 0.25) = 2 and floor(10 * 0.75) = 7; the leftover sample goes to the first split.
    assert [len(s) for s in ckd.random_split(range(10), [0.25, 0.75], generator=0)] == [3, 7]


def test_random_split_same_seed_same_split_different_seed_different_split():
    def split(seed):
        return [s.indices for s in ckd.random_split(range(50), [0.5, 0.5], generator=seed)]

    assert split(3) == split(3)
    assert split(3) != split(4)
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    assert ckd.random_split(range(20), [5, 15], generator=rng_a)[0].indices == \
        ckd.random_split(range(20), [5, 15], generator=rng_b)[0].indices


def test_random_split_with_a_torch_generator_equals_torchs_split():
    ours = ckd.random_split(range(30), [10, 5, 15], generator=torch.Generator().manual_seed(11))
    theirs = tud.random_split(range(30), [10, 5, 15], generator=torch.Generator().manual_seed(11))
    assert [list(s.indices) for s in ours] == [list(s.indices) for s in theirs]


@pytest.mark.parametrize(
    "lengths, error, pattern",
    [
        ([3, 6], ValueError, r"lengths \[3, 6\] sum to 9, but the dataset has 10 samples"),
        ([-1, 11], ValueError, "non-negative"),
        ([0.5, 0.6], ValueError, "must sum to 1"),
        ([1.5, -0.5], ValueError, r"fraction 0 must lie in \[0, 1\], got 1.5"),
        ([0.5, 5], ValueError, r"fraction 1 must lie in \[0, 1\], got 5"),
        (["3", 7], TypeError, "all integer lengths or all fractions"),
        ([], ValueError, "at least one"),
    ],
)
def test_random_split_rejects_bad_lengths_with_expected_and_got(lengths, error, pattern):
    with pytest.raises(error, match=pattern):
        ckd.random_split(range(10), lengths, generator=0)


def test_random_split_rejects_a_bad_generator():
    with pytest.raises(TypeError, match="expected None, an int seed, a numpy.random.Generator or a torch.Generator, got str"):
        ckd.random_split(range(4), [2, 2], generator="seed")
