"""state_dict / load_state_dict: round trips with torch in both directions, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit import nn, optim

SIZES = [(6, 16), (16, 8), (8, 3)]


def _ck_mlp(dtype=np.float64):
    layers = []
    for i, (n_in, n_out) in enumerate(SIZES):
        layers.append(nn.Linear(n_in, n_out, dtype=dtype))
        if i < len(SIZES) - 1:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _torch_mlp(dtype=torch.float64):
    layers = []
    for i, (n_in, n_out) in enumerate(SIZES):
        layers.append(torch.nn.Linear(n_in, n_out, dtype=dtype))
        if i < len(SIZES) - 1:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def _inputs(seed=0):
    return np.random.default_rng(seed).normal(size=(10, SIZES[0][0]))


def _assert_same_outputs(ours, theirs):
    x = _inputs()
    with torch.no_grad():
        expected = theirs(torch.tensor(x)).numpy()
    # Equal up to rounding: torch's addmm and NumPy's BLAS sum the products in different orders.
    np.testing.assert_allclose(ours(ck.tensor(x)).data, expected, rtol=1e-13, atol=1e-15)


def test_coursekit_state_dict_loads_into_torch_and_outputs_match():
    ours, theirs = _ck_mlp(), _torch_mlp()
    state = ours.state_dict()
    assert list(state) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()})
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), state[k].numpy(), err_msg=k)
    _assert_same_outputs(ours, theirs)


def test_torch_state_dict_loads_into_coursekit_and_outputs_match():
    ours, theirs = _ck_mlp(), _torch_mlp()
    result = ours.load_state_dict(theirs.state_dict())  # torch tensors, taken as they are
    assert result.missing_keys == [] and result.unexpected_keys == []
    for k, v in ours.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), theirs.state_dict()[k].numpy(), err_msg=k)
    _assert_same_outputs(ours, theirs)


def test_numpy_arrays_are_accepted_as_state_dict_values():
    ours, theirs = _ck_mlp(), _torch_mlp()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    _assert_same_outputs(ours, theirs)


def test_round_trip_through_torch_save_gives_back_identical_values(tmp_path):
    ours = _ck_mlp()
    torch.save({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()}, tmp_path / "mlp.pt")
    restored = _ck_mlp()
    restored.load_state_dict(torch.load(tmp_path / "mlp.pt"))
    for (k, a), b in zip(restored.state_dict().items(), ours.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_state_dict_values_are_detached_and_share_memory_with_the_parameters():
    model = _ck_mlp()
    state = model.state_dict()
    weight = state["0.weight"]
    assert not weight.requires_grad and weight.grad_fn is None
    assert not isinstance(weight, nn.Parameter)
    assert weight.data is model[0].weight.data
    assert model.state_dict(keep_vars=True)["0.weight"] is model[0].weight


def test_load_state_dict_copies_in_place_so_an_optimizer_stays_valid():
    model = _ck_mlp()
    weight = model[0].weight
    opt = optim.SGD(model.parameters(), lr=0.1)
    model.load_state_dict(_torch_mlp().state_dict())
    assert model[0].weight is weight and opt.param_groups[0]["params"][0] is weight


def test_load_state_dict_casts_values_to_each_parameters_dtype():
    model = _ck_mlp(dtype=np.float32)
    theirs = _torch_mlp()  # float64
    model.load_state_dict(theirs.state_dict())
    assert all(p.dtype == np.float32 for p in model.parameters())
    np.testing.assert_allclose(model[0].weight.data, theirs[0].weight.detach().numpy().astype(np.float32))


def test_strict_load_raises_naming_missing_and_unexpected_keys():
    model = _ck_mlp()
    state = dict(_torch_mlp().state_dict())
    del state["2.bias"]
    state["3.weight"] = state["2.weight"]
    before = model[0].weight.data.copy()
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    assert "Error(s) in loading state_dict for Sequential" in message
    assert 'Missing key(s) in state_dict: "2.bias".' in message
    assert 'Unexpected key(s) in state_dict: "3.weight".' in message
    np.testing.assert_array_equal(model[0].weight.data, before)  # nothing copied on failure


def test_non_strict_load_returns_missing_and_unexpected_keys_and_loads_the_rest():
    model = _ck_mlp()
    theirs = _torch_mlp()
    state = dict(theirs.state_dict())
    del state["4.weight"]
    state["extra.bias"] = torch.zeros(3, dtype=torch.float64)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["4.weight"]
    assert result.unexpected_keys == ["extra.bias"]
    assert isinstance(result, nn.IncompatibleKeys)
    np.testing.assert_array_equal(model[0].weight.data, theirs[0].weight.detach().numpy())


def test_torch_reports_the_same_missing_and_unexpected_keys():
    """Oracle check of the key bookkeeping: torch, given the same dict, names the same keys."""
    state = {k: v.numpy() for k, v in _ck_mlp().state_dict().items()}
    del state["0.bias"]
    state["9.weight"] = np.zeros(1)
    ours = _ck_mlp().load_state_dict(state, strict=False)
    theirs = _torch_mlp().load_state_dict({k: torch.tensor(v) for k, v in state.items()}, strict=False)
    assert ours.missing_keys == theirs.missing_keys
    assert ours.unexpected_keys == theirs.unexpected_keys


@pytest.mark.parametrize("strict", [True, False])
def test_wrong_shape_is_refused_with_key_expected_and_got(strict):
    model = nn.Sequential(nn.Linear(100, 10))
    state = {"0.weight": np.zeros((100, 10), dtype=np.float32), "0.bias": np.zeros(10, dtype=np.float32)}
    with pytest.raises(RuntimeError, match=r"0\.weight: expected shape \(10, 100\), got \(100, 10\)") as info:
        model.load_state_dict(state, strict=strict)
    assert "transposed" in str(info.value)


def test_non_tensor_values_are_refused_with_their_type():
    model = nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match="bias: expected a coursekit Tensor, NumPy array or torch tensor, got str"):
        model.load_state_dict({"weight": np.zeros((1, 2)), "bias": "zero"})


def test_buffers_round_trip_with_torch_and_non_persistent_ones_stay_out():
    class WithStats(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.register_buffer("mean", ck.tensor(np.zeros(2, dtype=np.float32)))
            self.register_buffer("cache", ck.tensor(np.zeros(2, dtype=np.float32)), persistent=False)

    class TorchWithStats(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)
            self.register_buffer("mean", torch.arange(2.0))
            self.register_buffer("cache", torch.zeros(2), persistent=False)

    ours, theirs = WithStats(), TorchWithStats()
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["mean", "fc.weight", "fc.bias"]
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(ours.mean.data, [0.0, 1.0])


def test_weighted_loss_keeps_its_class_weights_in_the_state_dict_like_torch():
    ours = nn.CrossEntropyLoss(weight=np.array([1.0, 2.0]))
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == list(torch.nn.CrossEntropyLoss().state_dict()) == []
