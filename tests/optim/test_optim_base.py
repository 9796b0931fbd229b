"""Optimizer machinery: param groups, zero_grad, validation, state_dict (oracle: torch where it has one)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit import nn, optim

SHAPES = [(3, 4), (4,), (2, 2)]


def _params(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [nn.Parameter(rng.normal(size=s)) for s in SHAPES]


def _set_grads(params, rng):
    for p in params:
        p.grad = ck.tensor(rng.normal(size=p.shape) + 0.3 * p.data)


def _train(opt, params, steps, rng):
    for _ in range(steps):
        _set_grads(params, rng)
        opt.step()


OPTIMIZERS = [
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (optim.AdamW, dict(lr=0.01, betas=(0.8, 0.99))),
]
OPT_IDS = ["sgd", "adam", "adamw"]


# --------------------------------------------------------------- state_dict
@pytest.mark.parametrize("cls,options", OPTIMIZERS, ids=OPT_IDS)
def test_state_dict_round_trip_resumes_identically(cls, options):
    """Checkpoint after 10 steps, restore into a fresh optimizer: the next 10 steps are bit-identical."""
    params = _params()
    opt = cls(params, **options)
    _train(opt, params, 10, np.random.default_rng(1))
    checkpoint = pickle.loads(pickle.dumps(opt.state_dict()))
    saved_values = [p.data.copy() for p in params]

    _train(opt, params, 10, np.random.default_rng(2))
    expected = [p.data.copy() for p in params]

    resumed_params = [nn.Parameter(v) for v in saved_values]
    resumed = cls(resumed_params, lr=123.0)  # the checkpoint's options must win
    resumed.load_state_dict(checkpoint)
    _train(resumed, resumed_params, 10, np.random.default_rng(2))
    for got, want in zip(resumed_params, expected):
        np.testing.assert_array_equal(got.data, want)


@pytest.mark.parametrize("cls,options", OPTIMIZERS, ids=OPT_IDS)
def test_state_dict_is_a_snapshot_not_a_live_view(cls, options):
    params = _params()
    opt = cls(params, **options)
    _train(opt, params, 3, np.random.default_rng(1))
    checkpoint = opt.state_dict()
    before = copy.deepcopy({i: {k: np.array(getattr(v, "data", v)) for k, v in s.items()}
                            for i, s in checkpoint["state"].items()})
    _train(opt, params, 3, np.random.default_rng(2))
    for i, s in checkpoint["state"].items():
        for k, v in s.items():
            np.testing.assert_array_equal(np.array(getattr(v, "data", v)), before[i][k])


@pytest.mark.parametrize(
    "ours_cls,theirs_cls,options",
    [
        (optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.2)),
        (optim.Adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True)),
        (optim.AdamW, torch.optim.AdamW, dict(lr=0.01)),
    ],
    ids=OPT_IDS,
)
def test_state_dict_layout_matches_torch(ours_cls, theirs_cls, options):
    """Same indices, same per-parameter state names, same group options (torch has a few extra flags)."""
    ours = _params()
    theirs = [torch.nn.Parameter(torch.tensor(p.data.copy())) for p in ours]
    groups_ours = [{"params": ours[:1], "lr": 0.5}, {"params": ours[1:]}]
    groups_theirs = [{"params": theirs[:1], "lr": 0.5}, {"params": theirs[1:]}]
    o, t = ours_cls(groups_ours, **options), theirs_cls(groups_theirs, **options)
    for p, q in zip(ours, theirs):
        p.grad = ck.tensor(np.ones(p.shape))
        q.grad = torch.ones(q.shape, dtype=torch.float64)
    o.step()
    t.step()
    sd_o, sd_t = o.state_dict(), t.state_dict()
    assert [g["params"] for g in sd_o["param_groups"]] == [g["params"] for g in sd_t["param_groups"]]
    for g_o, g_t in zip(sd_o["param_groups"], sd_t["param_groups"]):
        assert set(g_o) <= set(g_t)
        for key in g_o:
            assert g_o[key] == g_t[key], key
    assert sorted(sd_o["state"]) == sorted(sd_t["state"])
    for i in sd_o["state"]:
        assert sorted(sd_o["state"][i]) == sorted(sd_t["state"][i])
        for key, value in sd_o["state"][i].items():
            np.testing.assert_allclose(np.asarray(getattr(value, "data", value), dtype=float),
                                       np.asarray(sd_t["state"][i][key], dtype=float), rtol=1e-12)


@pytest.mark.parametrize(
    "ours_cls,theirs_cls,options",
    [
        (optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
        (optim.Adam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    ],
    ids=["sgd", "adam"],
)
def test_torch_optimizer_checkpoint_resumes_in_coursekit(ours_cls, theirs_cls, options):
    """Train 5 steps in torch, load its state into coursekit, continue both: same trajectory."""
    rng = np.random.default_rng(0)
    theirs = [torch.nn.Parameter(torch.tensor(rng.normal(size=s))) for s in SHAPES]
    t = theirs_cls(theirs, **options)
    grad_rng = np.random.default_rng(1)
    for _ in range(5):
        for q in theirs:
            q.grad = torch.tensor(grad_rng.normal(size=q.shape))
        t.step()
    ours = [nn.Parameter(q.detach().numpy().copy()) for q in theirs]
    o = ours_cls(ours, **options)
    o.load_state_dict(t.state_dict())
    for _ in range(10):
        grads = [grad_rng.normal(size=s) for s in SHAPES]
        for p, q, g in zip(ours, theirs, grads):
            p.grad, q.grad = ck.tensor(g), torch.tensor(g)
        o.step()
        t.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=0, atol=1e-12)


def test_load_state_dict_refuses_a_different_group_layout():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    other = optim.SGD([{"params": params[:1]}, {"params": params[1:]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(other.state_dict())
    short = optim.SGD(params[:2], lr=0.1)
    with pytest.raises(ValueError, match="expected 3 params, got 2"):
        opt.load_state_dict(short.state_dict())


# -------------------------------------------------------------- zero_grad
def test_zero_grad_sets_gradients_to_none_by_default():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    _set_grads(params, np.random.default_rng(0))
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_zero_grad_without_set_to_none_zeroes_the_same_gradient_tensor():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    _set_grads(params, np.random.default_rng(0))
    grads = [p.grad for p in params]
    opt.zero_grad(set_to_none=False)
    for p, g in zip(params, grads):
        assert p.grad is g
        assert not p.grad.data.any()


def test_forgetting_zero_grad_accumulates_gradients_across_backwards():
    """The classic bug: two backward passes without zero_grad double the step."""
    w = nn.Parameter(np.array([1.0]))
    opt = optim.SGD([w], lr=0.1)
    (w * 3.0).sum().backward()
    (w * 3.0).sum().backward()
    np.testing.assert_allclose(w.grad.data, [6.0])
    opt.step()
    np.testing.assert_allclose(w.data, [1.0 - 0.6])


def test_param_with_zero_grad_still_moves_under_momentum_but_none_grad_does_not():
    """Why set_to_none matters: a zero gradient is still a step under momentum, a None gradient is none."""
    a, b = nn.Parameter(np.array([1.0])), nn.Parameter(np.array([1.0]))
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad, b.grad = ck.tensor(np.array([1.0])), ck.tensor(np.array([1.0]))
    opt.step()
    opt.zero_grad(set_to_none=False)
    before = a.data.copy()
    a.grad.data[...] = 0.0  # a gets an explicit zero gradient ...
    b.grad = None  # ... b gets none
    b_before = b.data.copy()
    opt.step()
    assert a.data[0] < before[0]  # momentum keeps moving it
    np.testing.assert_array_equal(b.data, b_before)


# ------------------------------------------------------------ param groups
def test_groups_fill_missing_options_from_defaults():
    params = _params()
    opt = optim.SGD([{"params": params[:1], "lr": 0.5}, {"params": params[1:]}], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[1]["lr"] == 0.1
    assert all(g["momentum"] == 0.9 for g in opt.param_groups)


def test_changing_a_group_lr_changes_the_next_step():
    w = nn.Parameter(np.array([1.0]))
    opt = optim.SGD([w], lr=0.1)
    w.grad = ck.tensor(np.array([1.0]))
    opt.step()
    opt.param_groups[0]["lr"] = 0.01
    opt.step()
    np.testing.assert_allclose(w.data, [1.0 - 0.1 - 0.01])


def test_add_param_group_trains_the_new_parameters_with_their_own_lr():
    params = _params()
    opt = optim.SGD(params[:2], lr=0.1)
    opt.add_param_group({"params": params[2], "lr": 0.0})
    frozen = params[2].data.copy()
    _set_grads(params, np.random.default_rng(0))
    opt.step()
    np.testing.assert_array_equal(params[2].data, frozen)
    assert len(opt.param_groups) == 2


def test_a_parameter_may_not_be_in_two_groups():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [params[0]]})


def test_named_parameters_are_accepted_and_names_kept():
    model = nn.Linear(3, 2)
    opt = optim.Adam(model.named_parameters())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"][0] is model.weight


@pytest.mark.parametrize(
    "bad,error,message",
    [
        ([], ValueError, "empty parameter list"),
        ({nn.Parameter(np.zeros(2))}, TypeError, "ordered collections"),
        ([np.zeros(2)], TypeError, "can only optimize Tensors"),
    ],
    ids=["empty", "set", "numpy"],
)
def test_bad_params_argument_is_refused(bad, error, message):
    with pytest.raises(error, match=message):
        optim.SGD(bad if not isinstance(bad, set) else [{"params": bad}], lr=0.1)


def test_a_non_leaf_tensor_is_refused():
    w = nn.Parameter(np.ones(2))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2.0], lr=0.1)


def test_a_single_tensor_instead_of_an_iterable_is_refused():
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(nn.Parameter(np.zeros(2)), lr=0.1)


# ------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("SGD", dict(lr=-0.1)),
        ("SGD", dict(lr=0.1, momentum=-0.5)),
        ("SGD", dict(lr=0.1, weight_decay=-1.0)),
        ("SGD", dict(lr=0.1, nesterov=True)),
        ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
        ("Adam", dict(lr=-1.0)),
        ("Adam", dict(eps=-1e-8)),
        ("Adam", dict(betas=(1.0, 0.999))),
        ("Adam", dict(betas=(0.9, -0.1))),
        ("Adam", dict(weight_decay=-0.1)),
        ("AdamW", dict(betas=(0.9, 1.5))),
    ],
)
def test_invalid_hyper_parameters_raise_torchs_value_error(name, kwargs):
    """Same exception type, and our message starts with torch's."""
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([nn.Parameter(np.zeros(2))], **kwargs)
    assert str(ours.value).startswith(str(theirs.value))


def test_step_returns_the_closure_loss():
    w = nn.Parameter(np.array([2.0]))
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 4.0
    np.testing.assert_allclose(w.data, [2.0 - 0.25 * 4.0])


def test_optimizer_updates_parameters_in_place_so_the_model_sees_them():
    model = nn.Linear(3, 2)
    weight_array = model.weight.data
    opt = optim.SGD(model.parameters(), lr=0.1)
    model.weight.grad = ck.tensor(np.ones((2, 3), dtype=np.float32))
    opt.step()
    assert model.weight.data is weight_array


def test_float32_parameters_stay_float32():
    w = nn.Parameter(np.ones(3, dtype=np.float32))
    for opt in (optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.1), optim.Adam([w]), optim.AdamW([w])):
        w.grad = ck.tensor(np.ones(3, dtype=np.float32))
        opt.step()
        opt.step()
        assert w.dtype == np.float32


def test_state_is_indexed_by_parameter_and_holds_tensors():
    params = _params()
    opt = optim.Adam(params)
    _set_grads(params, np.random.default_rng(0))
    opt.step()
    state = opt.state[params[0]]
    assert state["step"] == 1
    assert isinstance(state["exp_avg"], ck.Tensor) and state["exp_avg"].shape == params[0].shape
    assert len(opt.state) == 3 and params[1] in opt.state
