"""coursekit.optim follows torch.optim step for step (oracle: torch, float64).

Each test builds the same parameters in both libraries, feeds both the same gradients
for 25 steps and compares every parameter after every step to 1e-10. The gradients
depend on the current parameters (noise + 0.3 θ), so a wrong update also changes the
gradients that follow and the trajectories drift apart quickly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit import nn, optim

STEPS = 25
TOL = 1e-10
SHAPES = [(3, 4), (4,), (2, 3, 2), ()]  # matrix, vector, 3-d, scalar


def _twin_params(seed: int = 0):
    rng = np.random.default_rng(seed)
    init = [rng.normal(size=s) for s in SHAPES]
    ours = [nn.Parameter(a.copy()) for a in init]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    return ours, theirs


def _groups(params, grouped: bool):
    """Either a flat list, or two groups where the first overrides lr."""
    if not grouped:
        return params
    return [{"params": params[:2], "lr": 0.05}, {"params": params[2:]}]


def _run_twins(ours_cls, theirs_cls, options: dict, grouped: bool = False, skip=(5, 1)):
    """Step both optimizers side by side; return the worst difference seen over all steps."""
    ours, theirs = _twin_params()
    opt_ours = ours_cls(_groups(ours, grouped), **options)
    opt_theirs = theirs_cls(_groups(theirs, grouped), **options)
    rng = np.random.default_rng(1)
    worst = 0.0
    for t in range(STEPS):
        noise = [rng.normal(size=s) for s in SHAPES]
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if (t, i) == skip:
                # No gradient this step: both libraries must leave the parameter alone.
                a.grad, b.grad = None, None
                continue
            a.grad = ck.tensor(noise[i] + 0.3 * a.data)
            b.grad = torch.tensor(noise[i]) + 0.3 * b.detach()
        opt_ours.step()
        opt_theirs.step()
        for i, (a, b) in enumerate(zip(ours, theirs)):
            diff = float(np.max(np.abs(a.data - b.detach().numpy()), initial=0.0))
            assert diff <= TOL, f"step {t + 1}, param {i} {SHAPES[i]}: differs from torch by {diff:.3e}"
            worst = max(worst, diff)
    return worst


SGD_CASES = [
    dict(lr=0.1, momentum=m, dampening=d, nesterov=n, weight_decay=wd, maximize=mx)
    for m, d, n, wd, mx in itertools.product([0.0, 0.9], [0.0, 0.5], [False, True], [0.0, 0.01], [False, True])
    if not (n and (m == 0 or d != 0))
]


@pytest.mark.parametrize("grouped", [False, True], ids=["one_group", "two_groups_different_lr"])
@pytest.mark.parametrize("options", SGD_CASES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_sgd_trajectory_matches_torch_for_every_option_combination(options, grouped):
    _run_twins(optim.SGD, torch.optim.SGD, options, grouped)


ADAM_CASES = [
    dict(lr=0.01, betas=b, eps=eps, weight_decay=wd, amsgrad=ams, maximize=mx)
    for b, eps, wd, ams, mx in itertools.product(
        [(0.9, 0.999), (0.3, 0.8)], [1e-8], [0.0, 0.1], [False, True], [False, True]
    )
]


@pytest.mark.parametrize("grouped", [False, True], ids=["one_group", "two_groups_different_lr"])
@pytest.mark.parametrize("options", ADAM_CASES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_adam_trajectory_matches_torch(options, grouped):
    _run_twins(optim.Adam, torch.optim.Adam, options, grouped)


@pytest.mark.parametrize("grouped", [False, True], ids=["one_group", "two_groups_different_lr"])
@pytest.mark.parametrize("options", ADAM_CASES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_adamw_trajectory_matches_torch(options, grouped):
    _run_twins(optim.AdamW, torch.optim.AdamW, options, grouped)


def test_adam_with_large_eps_still_matches_torch():
    # eps comparable to sqrt(v) makes the denominator's rounding order visible.
    _run_twins(optim.Adam, torch.optim.Adam, dict(lr=0.1, eps=0.5))


def test_adamw_default_weight_decay_is_torchs():
    _run_twins(optim.AdamW, torch.optim.AdamW, dict(lr=0.05))
    assert optim.AdamW([nn.Parameter(np.zeros(1))]).defaults["weight_decay"] == 1e-2


def test_adam_and_adamw_differ_when_weight_decay_is_on():
    """Same options, L2-in-the-gradient vs decoupled decay: the rules really are different."""
    ours_a, _ = _twin_params()
    ours_w, _ = _twin_params()
    a, w = optim.Adam(ours_a, lr=0.1, weight_decay=0.5), optim.AdamW(ours_w, lr=0.1, weight_decay=0.5)
    for pa, pw in zip(ours_a, ours_w):
        pa.grad = ck.tensor(np.ones(pa.shape))
        pw.grad = ck.tensor(np.ones(pw.shape))
    a.step()
    w.step()
    assert not np.allclose(ours_a[0].data, ours_w[0].data)


# ---------------------------------------------------------------- end to end
def _twin_mlps(seed: int = 0):
    """The same 3-layer MLP in both libraries, float64, with torch's initial weights."""
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3)
    ).double()
    ours = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 6), nn.Tanh(), nn.Linear(6, 3)).double()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


@pytest.mark.parametrize(
    "make",
    [
        lambda ps, lib: lib.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
        lambda ps, lib: lib.SGD(ps, lr=0.05, momentum=0.8, dampening=0.1),
        lambda ps, lib: lib.Adam(ps, lr=0.01, amsgrad=True, weight_decay=1e-2),
        lambda ps, lib: lib.AdamW(ps, lr=0.01),
    ],
    ids=["sgd_nesterov", "sgd_dampening", "adam_amsgrad", "adamw"],
)
def test_training_an_mlp_matches_torch_with_real_backward(make):
    """The whole loop (forward, loss, backward, step, zero_grad) agrees with torch for 20 steps."""
    ours, theirs = _twin_mlps()
    opt_ours, opt_theirs = make(ours.parameters(), optim), make(theirs.parameters(), torch.optim)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(16, 5))
    y = rng.integers(0, 3, size=16)
    loss_ours, loss_theirs = nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    for step in range(20):
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        loss_ours(ours(ck.tensor(x)), y).backward()
        loss_theirs(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        opt_ours.step()
        opt_theirs.step()
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(
                p.data, q.detach().numpy(), rtol=0, atol=TOL, err_msg=f"{name} after step {step + 1}"
            )
