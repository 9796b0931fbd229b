"""default_collate: structure kept, leaves stacked into the samples' own kind."""

from __future__ import annotations

import collections
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import coursekit.data as ckd
from coursekit.data import CollateError, default_collate

torch = pytest.importorskip("torch")
import torch.utils.data as tud
from machine_load import scaled


def _coursekit():
    import coursekit

    if not hasattr(coursekit, "Tensor"):
        pytest.skip("coursekit.Tensor is not available yet (autograd not landed)")
    return coursekit


def test_tuple_of_numpy_arrays_and_numbers_becomes_a_tuple_of_numpy_batches():
    rng = np.random.default_rng(0)
    samples = [(rng.standard_normal(3).astype(np.float32), i, 0.5 * i, i % 2 == 0) for i in range(4)]
    x, label, weight, flag = default_collate(samples)
    assert isinstance(x, np.ndarray) and x.shape == (4, 3) and x.dtype == np.float32
    np.testing.assert_array_equal(x, np.stack([s[0] for s in samples]))
    assert label.dtype == np.int64 and label.tolist() == [0, 1, 2, 3]
    assert weight.dtype == np.float64 and weight.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert flag.dtype == np.bool_ and flag.tolist() == [True, False, True, False]


def test_numpy_scalars_keep_their_dtype():
    batch = default_collate([np.float32(1.5), np.float32(2.0)])
    assert batch.dtype == np.float32 and batch.tolist() == [1.5, 2.0]
    assert default_collate([np.int8(1), np.int8(-3)]).dtype == np.int8


def test_dicts_namedtuples_lists_and_nesting_keep_their_structure():
    Point = collections.namedtuple("Point", "x y")
    samples = [
        {"image": np.full((2, 2), i, dtype=np.uint8), "meta": {"id": i, "name": f"s{i}"}, "pt": Point(i, -i), "pair": [i, 2 * i]}
        for i in range(3)
    ]
    batch = default_collate(samples)
    assert set(batch) == {"image", "meta", "pt", "pair"}
    assert batch["image"].shape == (3, 2, 2) and batch["image"].dtype == np.uint8
    assert batch["meta"]["id"].tolist() == [0, 1, 2]
    assert batch["meta"]["name"] == ["s0", "s1", "s2"], "strings stay a list"
    assert isinstance(batch["pt"], Point) and batch["pt"].y.tolist() == [0, -1, -2]
    assert isinstance(batch["pair"], list) and batch["pair"][1].tolist() == [0, 2, 4]


def test_torch_samples_give_torch_batches_equal_to_torchs_collate():
    samples = [(torch.randn(3, 2), torch.tensor(i)) for i in range(5)]
    ours = default_collate(samples)
    theirs = tud.default_collate(samples)
    assert isinstance(ours, tuple) and len(ours) == 2
    for a, b in zip(ours, theirs):
        assert isinstance(a, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)


def test_torch_dict_samples_equal_torchs_collate():
    samples = [{"x": torch.full((2,), float(i)), "y": torch.tensor([i, i])} for i in range(3)]
    ours, theirs = default_collate(samples), tud.default_collate(samples)
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)


def test_coursekit_samples_give_a_coursekit_batch():
    ck = _coursekit()
    samples = [(ck.tensor(np.full((2, 3), i, dtype=np.float64)), ck.tensor(np.int64(i))) for i in range(4)]
    x, y = default_collate(samples)
    assert isinstance(x, ck.Tensor) and isinstance(y, ck.Tensor)
    assert x.shape == (4, 2, 3) and x.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(x.numpy()[:, 0, 0], [0, 1, 2, 3])
    assert not x.requires_grad


def test_coursekit_samples_that_require_grad_stay_in_the_graph():
    ck = _coursekit()
    w = ck.tensor(np.array([1.0, 2.0]), requires_grad=True)
    batch = default_collate([w * 2.0, w * 3.0])
    assert batch.requires_grad
    batch.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 5.0])


def test_mixed_kinds_at_one_position_are_refused_with_both_named():
    with pytest.raises(CollateError, match=r"numpy.ndarray.*sample 1 has torch.Tensor"):
        default_collate([np.zeros(2), torch.zeros(2)])
    with pytest.raises(TypeError):  # CollateError is a TypeError ...
        default_collate([np.zeros(2), "text"])


def test_mismatched_shapes_keys_and_lengths_say_expected_and_got():
    with pytest.raises(ValueError, match=r"share one shape.*\(2,\).*\(3,\)"):  # ... and a ValueError
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(CollateError, match=r"torch tensors must share one shape"):
        default_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(CollateError, match=r"keys of sample 0 \['x', 'y'\], but sample 1 has \['x'\]"):
        default_collate([{"x": 1, "y": 2}, {"x": 1}])
    with pytest.raises(CollateError, match="length 2 like sample 0, but sample 1 has length 3"):
        default_collate([(1, 2), (1, 2, 3)])


def test_empty_batch_and_unbatchable_leaves_are_refused():
    with pytest.raises(CollateError, match="empty batch"):
        default_collate([])
    with pytest.raises(CollateError, match="cannot batch a sample of type NoneType"):
        default_collate([None, None])


def test_default_convert_passes_samples_through():
    sample = (np.ones(2), 3)
    assert ckd.default_convert(sample) is sample


def test_importing_coursekit_data_does_not_import_torch():
    # A fresh interpreter: this test process has torch loaded already.
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        import coursekit.data as d
        assert "torch" not in sys.modules, "import coursekit.data loaded torch"
        ds = d.TensorDataset(np.arange(10.0), np.arange(10))
        batches = list(d.DataLoader(ds, batch_size=4, shuffle=True, generator=0))
        batches += list(d.DataLoader(ds, batch_size=4, num_workers=2))
        assert len(batches) == 6 and isinstance(batches[0][0], np.ndarray)
        assert "torch" not in sys.modules, "loading NumPy data loaded torch"
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=scaled(120))
    assert result.returncode == 0, result.stderr
