"""Activations, functional and containers, against torch where it defines the behaviour."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit import nn
from coursekit.nn import functional as F


def _grad_check_against_torch(ours_fn, theirs_fn, x, tol=1e-12):
    a, b = ck.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours_fn(a), theirs_fn(b)
    np.testing.assert_allclose(ya.data, yb.detach().numpy(), rtol=tol, atol=tol)
    upstream = np.random.default_rng(1).normal(size=ya.shape)
    ya.backward(ck.tensor(upstream))
    yb.backward(torch.tensor(upstream))
    np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "ours,theirs",
    [
        (nn.ReLU(), torch.nn.ReLU()),
        (nn.Sigmoid(), torch.nn.Sigmoid()),
        (nn.Tanh(), torch.nn.Tanh()),
        (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
        (nn.Softmax(dim=0), torch.nn.Softmax(dim=0)),
        (nn.LogSoftmax(dim=1), torch.nn.LogSoftmax(dim=1)),
        (nn.LogSoftmax(dim=-1), torch.nn.LogSoftmax(dim=-1)),
    ],
    ids=lambda m: repr(m),
)
def test_activation_modules_match_torch_values_and_gradients(ours, theirs):
    x = np.random.default_rng(0).normal(scale=3.0, size=(4, 5))
    _grad_check_against_torch(ours, theirs, x)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(
    "ours,theirs",
    [
        (F.relu, torch.relu),
        (F.sigmoid, torch.sigmoid),
        (F.tanh, torch.tanh),
        (lambda x: F.softmax(x, 1), lambda x: torch.softmax(x, 1)),
        (lambda x: F.log_softmax(x, 0), lambda x: torch.log_softmax(x, 0)),
    ],
    ids=["relu", "sigmoid", "tanh", "softmax", "log_softmax"],
)
def test_functional_activations_match_torch(ours, theirs):
    _grad_check_against_torch(ours, theirs, np.random.default_rng(2).normal(size=(3, 4)))


def test_softmax_without_dim_is_refused_with_a_hint():
    with pytest.raises(TypeError, match=r"Softmax needs dim.*Softmax\(dim=1\)"):
        nn.Softmax()


# ---------------------------------------------------------------- Sequential
def _three():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_sequential_indexing_length_and_iteration():
    model = _three()
    assert len(model) == 3
    assert isinstance(model[0], nn.Linear) and model[-1] is model[2]
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
    with pytest.raises(IndexError, match="index 3 is out of range for Sequential of length 3"):
        model[3]


def test_sequential_slice_is_a_sequential_that_keeps_names_like_torch():
    model = _three()
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    head = model[1:]
    assert isinstance(head, nn.Sequential) and head[1] is model[2]
    assert list(head.state_dict()) == list(theirs[1:].state_dict()) == ["2.weight", "2.bias"]


def test_sequential_forward_chains_the_modules():
    model = _three().double()
    x = ck.tensor(np.random.default_rng(0).normal(size=(5, 3)))
    expected = model[2](model[1](model[0](x)))
    np.testing.assert_array_equal(model(x).data, expected.data)


def test_sequential_from_ordered_dict_uses_its_names():
    model = nn.Sequential(OrderedDict([("hidden", nn.Linear(2, 3)), ("act", nn.Tanh())]))
    theirs = torch.nn.Sequential(OrderedDict([("hidden", torch.nn.Linear(2, 3)), ("act", torch.nn.Tanh())]))
    assert list(model.state_dict()) == list(theirs.state_dict())
    assert repr(model) == repr(theirs)


def test_sequential_append_insert_and_delete_keep_torchs_numbering():
    model = _three()
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model.append(nn.Sigmoid())
    theirs.append(torch.nn.Sigmoid())
    del model[1]
    del theirs[1]
    assert [n for n, _ in model.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(model.state_dict()) == list(theirs.state_dict())
    model.insert(1, nn.ReLU())
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear", "Sigmoid"]


def test_sequential_refuses_a_layer_class_instead_of_an_instance():
    with pytest.raises(TypeError, match=r"got the class ReLU, not a module; write ReLU\(...\)"):
        nn.Sequential(nn.Linear(2, 2), nn.ReLU)
    with pytest.raises(TypeError, match="expected a Module, got function"):
        nn.Sequential(F.relu)


# ---------------------------------------------------------------- ModuleList
def test_module_list_registers_its_entries_as_children():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    assert [n for n, _ in layers.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(layers) == 3 and isinstance(layers[1:], nn.ModuleList) and len(layers[1:]) == 2
    layers += [nn.ReLU()]
    layers.append(nn.Tanh())
    assert [type(m).__name__ for m in layers][-2:] == ["ReLU", "Tanh"]
    layers[0] = nn.Sigmoid()
    assert isinstance(layers[0], nn.Sigmoid)
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == repr(
        torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.ReLU(), torch.nn.Tanh()])
    )


def test_module_list_has_no_forward():
    with pytest.raises(NotImplementedError, match="ModuleList"):
        nn.ModuleList([nn.ReLU()])(ck.tensor(np.zeros(1)))


def test_a_model_built_from_a_module_list_matches_torch_forward():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4, dtype=np.float64) for _ in range(3)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).tanh()
            return x

    theirs = torch.nn.ModuleList([torch.nn.Linear(4, 4, dtype=torch.float64) for _ in range(3)])
    ours = Stack()
    ours.layers.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).normal(size=(2, 4))
    expected = torch.tensor(x)
    for layer in theirs:
        expected = torch.tanh(layer(expected))
    np.testing.assert_allclose(ours(ck.tensor(x)).data, expected.detach().numpy(), rtol=1e-12, atol=1e-14)
