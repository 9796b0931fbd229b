"""Samplers: orders, seeds, weights, batching; torch.utils.data as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coursekit.data as ckd

torch = pytest.importorskip("torch")
import torch.utils.data as tud


def test_sequential_sampler_visits_indices_in_order():
    s = ckd.SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 2**32))
def test_random_sampler_epoch_is_a_permutation(n, seed):
    s = ckd.RandomSampler(range(n), generator=seed)
    for _ in range(2):  # every epoch, not only the first
        order = list(s)
        assert sorted(order) == list(range(n))
        assert len(s) == n


def test_random_sampler_new_order_each_epoch_and_seeds_reproduce():
    s = ckd.RandomSampler(range(100), generator=5)
    first, second = list(s), list(s)
    assert first != second, "each epoch draws a fresh order"
    again = ckd.RandomSampler(range(100), generator=5)
    assert [list(again), list(again)] == [first, second], "the same seed gives the same epochs"
    assert list(ckd.RandomSampler(range(100), generator=6)) != first, "another seed gives another order"


def test_random_sampler_without_a_generator_follows_numpys_global_seed():
    np.random.seed(123)
    a = list(ckd.RandomSampler(range(50)))
    np.random.seed(123)
    b = list(ckd.RandomSampler(range(50)))
    assert a == b


def test_random_sampler_num_samples_beyond_n_chains_permutations():
    order = list(ckd.RandomSampler(range(4), num_samples=10, generator=0))
    assert len(order) == 10
    assert sorted(order[:4]) == sorted(order[4:8]) == [0, 1, 2, 3]
    assert set(order[8:]) <= {0, 1, 2, 3} and len(set(order[8:])) == 2


def test_random_sampler_with_replacement_draws_in_range():
    order = list(ckd.RandomSampler(range(3), replacement=True, num_samples=100, generator=0))
    assert len(order) == 100 and set(order) == {0, 1, 2}


@pytest.mark.parametrize("replacement, num_samples", [(False, None), (False, 25), (True, 70), (True, 5)])
def test_random_sampler_with_a_torch_generator_equals_torchs(replacement, num_samples):
    ours = ckd.RandomSampler(range(10), replacement, num_samples, generator=torch.Generator().manual_seed(9))
    theirs = tud.RandomSampler(range(10), replacement, num_samples, generator=torch.Generator().manual_seed(9))
    assert [list(ours), list(ours)] == [list(theirs), list(theirs)]


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"num_samples": 0}, "num_samples should be a positive integer, got 0"),
        ({"num_samples": 2.5}, "num_samples should be a positive integer, got 2.5"),
        ({"replacement": 1}, r"replacement should be a bool \(True or False\), got 1"),
    ],
)
def test_random_sampler_rejects_bad_arguments(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        ckd.RandomSampler(range(4), **kwargs)


def test_random_sampler_of_an_empty_dataset_is_refused():
    with pytest.raises(ValueError, match="positive integer, got 0"):
        ckd.RandomSampler([])


def test_subset_random_sampler_permutes_its_indices():
    indices = [10, 3, 7, 42]
    s = ckd.SubsetRandomSampler(indices, generator=0)
    assert sorted(s) == sorted(indices) and len(s) == 4
    ours = ckd.SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(2))
    theirs = tud.SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(2))
    assert list(ours) == list(theirs)


# --- WeightedRandomSampler ------------------------------------------------------------


@pytest.mark.parametrize("generator", [0, "torch"])
def test_weighted_sampler_frequencies_follow_the_weights(generator):
    weights = np.array([1.0, 2.0, 0.0, 5.0, 2.0])
    p = weights / weights.sum()
    draws = 200_000
    gen = torch.Generator().manual_seed(0) if generator == "torch" else generator
    counts = np.bincount(list(ckd.WeightedRandomSampler(weights, draws, generator=gen)), minlength=5)
    freq = counts / draws
    # The seed is fixed, so this cannot flake; the tolerance is still a fair one:
    # six standard deviations of a binomial frequency at these p and draws.
    tolerance = 6 * np.sqrt(p * (1 - p) / draws) + 1e-12
    assert np.all(np.abs(freq - p) <= tolerance), f"frequencies {freq} vs weights {p}"
    assert counts[2] == 0, "a zero weight is never drawn"


def test_weighted_sampler_balances_an_imbalanced_dataset():
    labels = np.array([0] * 90 + [1] * 10)
    weights = 1.0 / np.bincount(labels)[labels]  # one over the class frequency
    drawn = labels[list(ckd.WeightedRandomSampler(weights, 20_000, generator=1))]
    share_of_rare = drawn.mean()
    assert abs(share_of_rare - 0.5) < 0.03


def test_weighted_sampler_without_replacement_draws_distinct_indices():
    s = ckd.WeightedRandomSampler([1, 1, 10, 1, 0], 4, replacement=False, generator=0)
    order = list(s)
    assert len(order) == 4 and len(set(order)) == 4 and 4 not in order


def test_weighted_sampler_with_a_torch_generator_equals_torchs():
    for replacement in (True, False):
        ours = ckd.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 3, replacement, generator=torch.Generator().manual_seed(4))
        theirs = tud.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 3, replacement, generator=torch.Generator().manual_seed(4))
        assert list(ours) == list(theirs)


@pytest.mark.parametrize(
    "weights, num_samples, replacement, pattern",
    [
        ([1, -1], 2, True, "non-negative"),
        ([0, 0], 2, True, "not all zero"),
        ([1, float("nan")], 2, True, "finite"),
        ([[1, 2]], 2, True, r"1-D sequence, got shape \(1, 2\)"),
        ([1, 2], 0, True, "num_samples should be a positive integer, got 0"),
        ([1, 0, 2], 3, False, r"at most the number of non-zero weights \(2\), got num_samples=3"),
    ],
)
def test_weighted_sampler_rejects_impossible_requests(weights, num_samples, replacement, pattern):
    with pytest.raises(ValueError, match=pattern):
        ckd.WeightedRandomSampler(weights, num_samples, replacement)


# --- BatchSampler --------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), batch_size=st.integers(1, 12), drop_last=st.booleans(), seed=st.integers(0, 1000))
def test_batch_sampler_batches_equal_torchs_for_the_same_order(n, batch_size, drop_last, seed):
    order = np.random.default_rng(seed).permutation(n).tolist()
    ours = ckd.BatchSampler(order, batch_size, drop_last)
    theirs = tud.BatchSampler(order, batch_size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


def test_batch_sampler_partial_last_batch_and_drop_last():
    assert [len(b) for b in ckd.BatchSampler(range(10), 3, drop_last=False)] == [3, 3, 3, 1]
    assert [len(b) for b in ckd.BatchSampler(range(10), 3, drop_last=True)] == [3, 3, 3]
    assert len(ckd.BatchSampler(range(10), 3, False)) == 4 and len(ckd.BatchSampler(range(10), 3, True)) == 3


@pytest.mark.parametrize(
    "batch_size, drop_last, pattern",
    [
        (0, False, "batch_size should be a positive integer, got 0"),
        (True, False, "batch_size should be a positive integer, got True"),
        (2, "yes", r"drop_last should be a bool \(True or False\), got 'yes'"),
    ],
)
def test_batch_sampler_rejects_bad_arguments(batch_size, drop_last, pattern):
    with pytest.raises(ValueError, match=pattern):
        ckd.BatchSampler(range(4), batch_size, drop_last)


def test_sampler_base_class_says_what_to_implement():
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(ckd.Sampler())
