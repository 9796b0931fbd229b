"""Module machinery: registration, traversal order, modes, gradients (oracle: the same model in torch)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit import nn


def _build(lib):
    """The same architecture in either library: nesting, a buffer, a ModuleList, a parameter."""

    class Block(lib.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.Parameter(lib_tensor(lib, np.ones(3)))
            self.inner = lib.Sequential(lib.Linear(3, 3), lib.Tanh())
            self.register_buffer("count", lib_tensor(lib, np.zeros(1)))

        def forward(self, x):
            return self.inner(x) * self.scale

    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.Linear(4, 3)
            self.act = lib.ReLU()
            self.blocks = lib.ModuleList([Block(), Block()])
            self.register_buffer("steps", lib_tensor(lib, np.zeros(2)))
            self.register_buffer("scratch", lib_tensor(lib, np.zeros(2)), persistent=False)
            self.head = lib.Linear(3, 2, bias=False)

        def forward(self, x):
            x = self.act(self.fc1(x))
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    return Net()


def lib_tensor(lib, array):
    array = np.asarray(array, dtype=np.float32)
    return torch.tensor(array) if lib is torch.nn else ck.tensor(array)


@pytest.fixture
def twins():
    return _build(nn), _build(torch.nn)


def test_named_parameters_names_and_order_match_torch(twins):
    ours, theirs = twins
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]


def test_named_modules_children_and_buffers_match_torch(twins):
    ours, theirs = twins
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [type(m).__name__ for m in ours.modules()] == [type(m).__name__ for m in theirs.modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert len(list(ours.children())) == len(list(theirs.children()))


def test_non_recursive_parameters_are_only_the_modules_own(twins):
    ours, theirs = twins
    block_ours, block_theirs = ours.blocks[0], theirs.blocks[0]
    assert [n for n, _ in block_ours.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in block_ours.named_parameters(recurse=False)] == [
        n for n, _ in block_theirs.named_parameters(recurse=False)
    ]


def test_state_dict_keys_match_torch_including_buffers(twins):
    ours, theirs = twins
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "scratch" not in ours.state_dict()  # non-persistent buffer


def test_repr_matches_torch(twins):
    ours, theirs = twins
    assert repr(ours) == repr(theirs)
    assert repr(nn.ReLU(inplace=True)) == repr(torch.nn.ReLU(inplace=True))
    assert repr(nn.Softmax(dim=1)) == repr(torch.nn.Softmax(dim=1))


def test_shared_parameter_is_listed_once_under_its_first_name():
    ours = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
    ours[1].weight = ours[0].weight
    theirs[1].weight = theirs[0].weight
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())  # state_dict keeps both names


def test_shared_submodule_is_visited_once():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in model.named_modules()] == ["", "0", "1"]
    assert len(list(model.parameters())) == 2


def test_reassigning_a_parameter_keeps_its_position():
    layer = nn.Linear(2, 3)
    layer.weight = nn.Parameter(np.zeros((3, 2), dtype=np.float32))
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]


def test_train_and_eval_propagate_to_every_descendant(twins):
    ours, _ = twins
    assert all(m.training for m in ours.modules())
    assert ours.eval() is ours
    assert not any(m.training for m in ours.modules())
    ours.blocks.train()
    assert ours.blocks[1].inner[0].training and not ours.fc1.training
    ours.train()
    assert all(m.training for m in ours.modules())
    with pytest.raises(ValueError, match="boolean"):
        ours.train("no")


def _backward_once(model):
    x = ck.tensor(np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32))
    model(x).sum().backward()


def test_zero_grad_sets_every_gradient_to_none_by_default(twins):
    ours, _ = twins
    _backward_once(ours)
    assert all(p.grad is not None for p in ours.parameters())
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())


def test_zero_grad_without_set_to_none_fills_zeros(twins):
    ours, _ = twins
    _backward_once(ours)
    ours.zero_grad(set_to_none=False)
    for p in ours.parameters():
        assert p.grad is not None and not p.grad.data.any()


def test_gradients_accumulate_until_zero_grad(twins):
    ours, _ = twins
    _backward_once(ours)
    first = ours.fc1.weight.grad.data.copy()
    _backward_once(ours)
    np.testing.assert_allclose(ours.fc1.weight.grad.data, 2 * first, rtol=1e-6)


def test_requires_grad_false_freezes_every_parameter(twins):
    ours, _ = twins
    assert ours.fc1.requires_grad_(False) is ours.fc1
    _backward_once(ours)
    assert ours.fc1.weight.grad is None and ours.head.weight.grad is not None


def test_unknown_attribute_raises_attribute_error_with_a_suggestion():
    layer = nn.Linear(3, 2)
    with pytest.raises(AttributeError, match=r"'Linear' object has no attribute 'wieght'. Did you mean 'weight'\?"):
        layer.wieght
    with pytest.raises(AttributeError, match=r"parameters \['weight', 'bias'\]"):
        layer.missing
    assert not hasattr(layer, "missing")
    assert getattr(layer, "missing", None) is None


def test_assigning_a_layer_before_super_init_is_refused():
    class Forgetful(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call"):
        Forgetful()


def test_a_module_whose_init_skipped_super_says_so_on_attribute_access():
    class Forgetful(nn.Module):
        def __init__(self):
            pass

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        list(Forgetful().parameters())


def test_assigning_a_plain_tensor_over_a_parameter_is_refused():
    layer = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="parameter 'weight'.*Parameter or None"):
        layer.weight = ck.tensor(np.zeros((2, 3), dtype=np.float32))
    layer.bias = None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]


def test_a_plain_tensor_attribute_is_not_a_parameter_and_a_python_list_hides_layers():
    """Known misconceptions: only Parameter and Module (and ModuleList) assignments register."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = ck.tensor(np.ones(2))
            self.layers = [nn.Linear(2, 2)]  # invisible to parameters()
            self.registered = nn.ModuleList([nn.Linear(2, 2)])

    assert [n for n, _ in Net().named_parameters()] == ["registered.0.weight", "registered.0.bias"]


def test_register_buffer_and_add_module_validate_names_and_types():
    m = nn.Module()
    with pytest.raises(KeyError, match=r'contain "\."'):
        m.register_buffer("a.b", ck.tensor(np.zeros(1)))
    with pytest.raises(TypeError, match="buffer 'b'"):
        m.register_buffer("b", np.zeros(1))
    with pytest.raises(TypeError, match="not a Module subclass"):
        m.add_module("child", 3)
    with pytest.raises(TypeError, match="parameter 'p'"):
        m.register_parameter("p", ck.tensor(np.zeros(1)))
    m.add_module("0", nn.ReLU())
    assert [n for n, _ in m.named_children()] == ["0"]
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("train", None)


def test_delattr_removes_a_registered_name():
    layer = nn.Linear(3, 2)
    del layer.bias
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    with pytest.raises(AttributeError):
        layer.bias


def test_assigning_a_module_over_a_plain_attribute_registers_it():
    m = nn.Module()
    m.thing = 3
    m.thing = nn.ReLU()
    assert "thing" not in m.__dict__ and [n for n, _ in m.named_children()] == ["thing"]


def test_apply_visits_children_before_their_parent(twins):
    ours, _ = twins
    seen = []
    assert ours.apply(lambda m: seen.append(type(m).__name__)) is ours
    assert seen[-1] == "Net" and seen[0] == "Linear"
    assert seen.index("Block") > seen.index("Tanh")


def test_apply_can_initialise_every_linear_layer(twins):
    ours, _ = twins

    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.5)

    ours.apply(init_weights)
    assert all((m.weight.data == 0.5).all() for m in ours.modules() if isinstance(m, nn.Linear))


def test_call_runs_forward_and_a_missing_forward_is_reported():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward"'):
        nn.Module()(ck.tensor(np.zeros(1)))


def test_get_submodule_follows_dotted_paths(twins):
    ours, _ = twins
    assert ours.get_submodule("blocks.1.inner.0") is ours.blocks[1].inner[0]
    with pytest.raises(AttributeError, match="no submodule 'nope'"):
        ours.get_submodule("blocks.nope")


def test_double_converts_parameters_and_buffers_in_place(twins):
    ours, _ = twins
    weight = ours.fc1.weight
    assert ours.double() is ours
    assert ours.fc1.weight is weight
    assert all(p.dtype == np.float64 for p in ours.parameters())
    assert all(b.dtype == np.float64 for b in ours.buffers())
    ours.float()
    assert all(p.dtype == np.float32 for p in ours.parameters())
    with pytest.raises(TypeError, match="floating point"):
        ours.to(np.int64)


def test_parameter_defaults_to_requiring_grad_and_shares_the_tensors_data():
    t = ck.tensor(np.arange(3.0))
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, ck.Tensor)
    assert p.data is t.data
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")


def _assert_same_state_not_same_objects(clone, original):
    assert list(clone.state_dict()) == list(original.state_dict())
    for (name, a), b in zip(clone.state_dict().items(), original.state_dict().values()):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)
        assert a.data is not b.data
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in clone.parameters())


def test_module_survives_deepcopy(twins):
    ours, _ = twins
    _assert_same_state_not_same_objects(copy.deepcopy(ours), ours)


def test_module_survives_pickle():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model.register_buffer("seen", ck.tensor(np.arange(3.0)))
    _assert_same_state_not_same_objects(pickle.loads(pickle.dumps(model)), model)
