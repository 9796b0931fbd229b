"""Checks for lab01_graphs: manual gradients in NumPy and torch, a training loop, devices.

Every reference computes its gradients with torch autograd in float64, so a student's
hand-derived backward is compared with an independent oracle, never with stored numbers.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..capabilities import AUTODIFF
from ..program import Case, EarlierStepFailed, check
from ..properties import edge, parameter, promise
from ..warm import torch_meta as warm_up  # noqa: F401 — its checks use the meta device



def _learning_rate(n: int, d_in: int) -> float:
    """A step size that keeps the random problems below stable (curvature grows with N + D_in)."""
    return 0.05 / (n + d_in)


# ---------------------------------------------------------------- references (torch autograd)

def _torch():
    import torch
    return torch


def _reference_numpy_graph_grads() -> Callable:
    def numpy_graph_grads(x, y, z):
        torch = _torch()
        tx, ty, tz = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y, z))
        c = (tx * ty + tz).sum()
        c.backward()
        return tx.grad.numpy(), ty.grad.numpy(), tz.grad.numpy()
    return numpy_graph_grads


def _autograd_two_layer(x, y, w1, w2):
    """Loss and gradients of the two-layer ReLU net, by torch autograd (torch tensors in)."""
    torch = _torch()
    w1 = w1.detach().clone().requires_grad_(True)
    w2 = w2.detach().clone().requires_grad_(True)
    # relu, not clamp(min=0): the same values, and at exactly 0 the gradient is 0, as the
    # exercise text says (clamp's backward lets it through there).
    loss = (x.mm(w1).relu().mm(w2) - y).pow(2).sum()
    grad_w1, grad_w2 = torch.autograd.grad(loss, (w1, w2))
    return loss.detach(), grad_w1, grad_w2


def _reference_two_layer_grads() -> Callable:
    def two_layer_grads(x, y, w1, w2):
        torch = _torch()
        loss, g1, g2 = _autograd_two_layer(*(torch.tensor(v, dtype=torch.float64)
                                             for v in (x, y, w1, w2)))
        return float(loss), g1.numpy(), g2.numpy()
    return two_layer_grads


def _reference_train_two_layer() -> Callable:
    def train_two_layer(x, y, w1, w2, lr, steps):
        torch = _torch()
        x, y, w1, w2 = (torch.tensor(v, dtype=torch.float64) for v in (x, y, w1, w2))
        losses = []
        for _ in range(steps):
            loss, g1, g2 = _autograd_two_layer(x, y, w1, w2)
            losses.append(float(loss))
            w1, w2 = w1 - lr * g1, w2 - lr * g2
        return w1.numpy(), w2.numpy(), losses
    return train_two_layer


def _reference_train_two_layer_torch() -> Callable:
    def train_two_layer_torch(x, y, w1, w2, lr, steps):
        torch = _torch()
        losses = torch.empty(steps, dtype=x.dtype, device=x.device)
        for t in range(steps):
            loss, g1, g2 = _autograd_two_layer(x, y, w1, w2)
            losses[t] = loss
            w1, w2 = w1 - lr * g1, w2 - lr * g2
        return w1, w2, losses
    return train_two_layer_torch


# ---------------------------------------------------------------- helpers for the programs

def _two_layer_problem(rng: np.random.Generator, n: int, d_in: int, h: int, d_out: int):
    """Random data and weights scaled so that a few steps of gradient descent are stable."""
    x = rng.standard_normal((n, d_in))
    y = rng.standard_normal((n, d_out))
    w2 = rng.standard_normal((h, d_out)) / np.sqrt(h)
    # Redraw w1 until the ReLU is neither all on nor all off: a dead layer has no gradient,
    # and a layer with no zeros would not tell a missing mask from a right one.
    while True:
        w1 = rng.standard_normal((d_in, h)) / np.sqrt(d_in)
        active = (x @ w1 > 0).mean()
        if 0.2 <= active <= 0.8:
            return x, y, w1, w2


def _shape(rng: np.random.Generator) -> tuple[int, int, int, int]:
    return (int(rng.integers(3, 10)), int(rng.integers(2, 12)),
            int(rng.integers(2, 10)), int(rng.integers(1, 6)))


def _part(box: dict, index: int, to_array: bool = False) -> Any:
    """Item ``index`` of the result the first case of a trial stored in ``box``."""
    if "result" not in box:
        raise EarlierStepFailed("skipped: the call to your function failed (see the case above)")
    result = box["result"]
    try:
        item = result[index]
    except Exception as error:  # a wrong return type is the student's outcome
        raise TypeError(f"expected your function to return a tuple (w1, w2, losses), "
                        f"got {type(result).__name__}") from error
    return np.asarray(item, dtype=np.float64) if to_array else item


def _after_call(box: dict, value: Any) -> Any:
    """``value``, provided the call stored in ``box`` returned (else the case fails)."""
    _part(box, 0)
    return value


def _call_into(box: dict, impl: Callable, *args: Any) -> Callable[[], Any]:
    def thunk():
        box.pop("result", None)
        box["result"] = impl(*args)
        losses = box["result"][2]
        if _is_torch_tensor(losses):
            return losses
        return np.asarray(losses, dtype=np.float64)
    return thunk


def _is_torch_tensor(value: Any) -> bool:
    import sys
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _tensors_only(result: Any) -> tuple:
    """The items of ``result``, each a torch tensor or a string naming what it was instead."""
    return tuple(item if _is_torch_tensor(item) else f"a {type(item).__name__}, not a tensor"
                 for item in result)


def _decreased(box: dict) -> Callable[[], bool]:
    def thunk():
        losses = _part(box, 2)
        return bool(float(losses[-1]) < float(losses[0]))
    return thunk


# ---------------------------------------------------------------- the checks

GRAD_HINTS = {
    "grad_x": "a = x * y: the local gradient of a product with respect to x is the other "
              "factor, y (times the upstream gradient)",
    "grad_y": "a = x * y: the local gradient with respect to y is x (times the upstream gradient)",
    "grad_z": "b = a + z passes its gradient through unchanged; where z was broadcast over the "
              "rows, sum the gradient back over that axis so it has z's shape",
}


@check("lab01.numpy_graph_grads", reference=_reference_numpy_graph_grads, forbid=AUTODIFF)
def numpy_graph_grads_program(impl, rng):
    """Gradients of c = sum(x * y + z) with respect to x, y and z, against torch autograd."""
    for trial in range(1, 5):
        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 7))
        if trial == 3:
            n = 1   # one row: z of shape (D,) has as many elements as x, and a shape of its own
        if trial == 4:
            # as many rows as columns: z's first dimension alone cannot tell (D,) from (N, D)
            n = d = int(rng.integers(2, 6))
        x, y = rng.standard_normal((n, d)), rng.standard_normal((n, d))
        broadcast = trial >= 3
        z = rng.standard_normal((d,) if broadcast else (n, d))
        shapes = f"x, y {(n, d)}, z {z.shape}"
        for index, name in enumerate(("grad_x", "grad_y", "grad_z")):
            yield Case(f"trial {trial} ({shapes}): {name}",
                       lambda i=index, a=(x, y, z): impl(*a)[i], hint=GRAD_HINTS[name])


@check("lab01.two_layer_grads", reference=_reference_two_layer_grads, forbid=AUTODIFF)
def two_layer_grads_program(impl, rng):
    """Loss and manual gradients of the two-layer ReLU net, against torch autograd."""
    hints = {
        0: "loss is the sum (not the mean) of (y_pred - y)**2 over all elements, "
           "with y_pred = relu(x @ w1) @ w2",
        1: "grad_w1 = x.T @ grad_h, where grad_h is grad_h_relu with zeros wherever h <= 0 "
           "(at exactly 0 too): check the ReLU mask, and that it is taken from h before the "
           "ReLU",
        2: "grad_w2 = h_relu.T @ grad_y_pred with grad_y_pred = 2 * (y_pred - y)",
    }
    for trial in range(1, 4):
        n, d_in, h, d_out = _shape(rng)
        x, y, w1, w2 = _two_layer_problem(rng, n, d_in, h, d_out)
        dims = f"N={n}, D_in={d_in}, H={h}, D_out={d_out}"
        if trial == 3:
            # a unit whose h is exactly 0 in every row: the text fixes its gradient at 0
            w1[:, int(rng.integers(h))] = 0.0
            dims += ", one unit with h exactly 0"
        for index, name in enumerate(("loss", "grad_w1", "grad_w2")):
            # float64 in, float64 precision out: float32 arithmetic is off by about 1e-7
            yield Case(f"trial {trial} ({dims}): {name}",
                       lambda i=index, a=(x, y, w1, w2): impl(*a)[i], hint=hints[index],
                       rtol=1e-10, atol=1e-12)
        if trial == 1:
            # The text asks for a Python float (NumPy's float64 is one): not a 0-d array.
            yield Case(f"trial {trial} ({dims}): the loss is a Python float",
                       lambda a=(x, y, w1, w2): isinstance(impl(*a)[0], float),
                       hint="return the loss as a Python float, e.g. float(np.sum(...)) or "
                            "(...).sum().item(), not a 0-d NumPy array")


TRAIN_HINTS = {
    "losses": "record the loss of each step before updating the weights; one value per step",
    "w1": "each step: w1 = w1 - lr * grad_w1, with the gradients of the current weights",
    "w2": "each step: w2 = w2 - lr * grad_w2, with the gradients of the current weights",
    "decreased": "with a small learning rate the last loss must be below the first",
    "unchanged": "build new arrays (w1 = w1 - lr * g) instead of updating the caller's "
                 "arrays in place (w1 -= lr * g)",
}


def _train_trial(impl, label: str, x, y, w1, w2, lr: float, steps: int, rtol: float,
                 atol: float):
    """Cases for one training run: trajectory, final weights, progress, inputs untouched."""
    box: dict = {}
    w1_given, w2_given = w1, w2
    yield Case(f"{label}: losses", _call_into(box, impl, x, y, w1, w2, lr, steps),
               hint=TRAIN_HINTS["losses"], rtol=rtol, atol=atol)
    yield Case(f"{label}: final w1", lambda: _part(box, 0), hint=TRAIN_HINTS["w1"],
               rtol=rtol, atol=atol)
    yield Case(f"{label}: final w2", lambda: _part(box, 1), hint=TRAIN_HINTS["w2"],
               rtol=rtol, atol=atol)
    yield Case(f"{label}: loss decreased", _decreased(box), hint=TRAIN_HINTS["decreased"])
    # Only meaningful once the call has returned (a stub leaves its inputs alone too).
    yield Case(f"{label}: the w1 and w2 passed in are unchanged",
               lambda: _after_call(box, (w1_given, w2_given)),
               hint=TRAIN_HINTS["unchanged"], names=("w1", "w2"))


@check("lab01.train_two_layer", reference=_reference_train_two_layer,
       after=("lab01.two_layer_grads",), forbid=AUTODIFF)
def train_two_layer_program(impl, rng):
    """Gradient descent on the two-layer net: the loss trajectory and final weights."""
    for trial in range(1, 3):
        n, d_in, h, d_out = _shape(rng)
        x, y, w1, w2 = _two_layer_problem(rng, n, d_in, h, d_out)
        steps = int(rng.integers(4, 13))
        lr = _learning_rate(n, d_in)
        label = f"trial {trial} (N={n}, D_in={d_in}, H={h}, D_out={d_out}, {steps} steps)"
        yield from _train_trial(impl, label, x, y, w1, w2, lr, steps, rtol=1e-6, atol=1e-9)
    # A run that diverges (the loss overflows to inf, then nan) still takes every step.
    n, d_in, h, d_out = _shape(rng)
    x, y, w1, w2 = _two_layer_problem(rng, n, d_in, h, d_out)
    steps = int(rng.integers(6, 13))

    def diverging():
        with np.errstate(all="ignore"):
            return len(impl(x, y, w1, w2, 1e3, steps)[2])

    yield Case(f"a diverging run (lr=1000, {steps} steps): len(losses) == steps", diverging,
               hint="run all `steps` steps and record every loss, even when it is inf or nan: "
                    "len(losses) == steps")


@check("lab01.train_two_layer_torch", reference=_reference_train_two_layer_torch,
       forbid=AUTODIFF)
def train_two_layer_torch_program(impl, rng):
    """The training loop in torch on any device: CPU trajectories, then the meta device."""
    import torch
    for trial, dtype in ((1, torch.float64), (2, torch.float32)):
        n, d_in, h, d_out = _shape(rng)
        x, y, w1, w2 = (torch.tensor(v, dtype=dtype) for v in
                        _two_layer_problem(rng, n, d_in, h, d_out))
        steps = int(rng.integers(4, 13))
        lr = _learning_rate(n, d_in)
        tol = (1e-6, 1e-9) if dtype == torch.float64 else (2e-4, 1e-5)
        label = (f"trial {trial}, {str(dtype).replace('torch.', '')} on cpu "
                 f"(N={n}, D_in={d_in}, H={h}, D_out={d_out}, {steps} steps)")
        yield from _train_trial(impl, label, x, y, w1, w2, lr, steps, *tol)
    # The meta device has shapes and dtypes but no data: code that pins a tensor to the CPU
    # (device="cpu", .cpu(), .item(), torch.zeros(n) without device=) fails or returns a
    # tensor on the wrong device here, without needing a GPU.
    for trial, dtype in ((3, torch.float32), (4, torch.float64)):
        n, d_in, h, d_out = _shape(rng)
        steps = int(rng.integers(2, 6))
        x, y, w1, w2 = (torch.empty(shape, dtype=dtype, device="meta") for shape in
                        ((n, d_in), (n, d_out), (d_in, h), (h, d_out)))
        yield Case(f"trial {trial}, {str(dtype).replace('torch.', '')} on the meta device "
                   f"({steps} steps): device, dtype and shape of (w1, w2, losses)",
                   lambda a=(x, y, w1, w2, _learning_rate(n, d_in), steps): _tensors_only(impl(*a)),
                   names=("w1", "w2", "losses"),
                   hint="every tensor must stay on x.device with x.dtype: create new tensors "
                        "with device=x.device, and avoid .cpu(), .item(), float() and "
                        "device=\"cpu\" inside the loop")
    # steps=0: nothing to update, and losses is empty (torch.stack of no losses raises).
    n, d_in, h, d_out = _shape(rng)
    x, y, w1, w2 = (torch.tensor(v, dtype=torch.float64) for v in
                    _two_layer_problem(rng, n, d_in, h, d_out))
    yield Case(f"trial 5, float64 on cpu (N={n}, D_in={d_in}, H={h}, D_out={d_out}, 0 steps): "
               f"w1 and w2 as given, losses an empty tensor",
               lambda a=(x, y, w1, w2, _learning_rate(n, d_in), 0): _no_steps(impl(*a)),
               names=("w1", "w2", "losses: shape, dtype and device"),
               hint="with steps=0 nothing is updated and losses has shape (0,), on x.device "
                    "with x.dtype: make it with torch.empty(steps, ...) before the loop rather "
                    "than stacking the losses after it (torch.stack of an empty list raises)")
    # Inputs on the CPU, the default device set to meta: a tensor made without device=x.device
    # (torch.zeros(n), torch.tensor(lr), even when moved with .to(x.device) afterwards) is made
    # on meta, which shows it was not made on the inputs' device.
    n, d_in, h, d_out = _shape(rng)
    steps = int(rng.integers(2, 6))
    x, y, w1, w2 = (torch.tensor(v, dtype=torch.float64) for v in
                    _two_layer_problem(rng, n, d_in, h, d_out))
    yield Case(f"trial 6, float64 on cpu with the default device set to meta "
               f"(N={n}, D_in={d_in}, H={h}, D_out={d_out}, {steps} steps): "
               f"(w1, w2, losses) made on x.device",
               lambda a=(x, y, w1, w2, _learning_rate(n, d_in), steps): _under_default_meta(impl, a),
               names=("w1", "w2", "losses"),
               hint="create every tensor on the inputs' device (device=x.device, x.new_empty, "
                    "torch.zeros_like), not on the default device and moved afterwards: "
                    "torch.zeros(n).to(x.device) or torch.tensor(lr) is made on the default "
                    "device; keep lr a Python number")


def _under_default_meta(impl, args: tuple) -> tuple:
    """``(w1, w2, losses)`` described as "<dtype> tensor on <device>", the run made under
    ``with torch.device("meta"):`` while its inputs are on the CPU."""
    import torch
    with torch.device("meta"):
        result = impl(*args)
    return tuple(f"{str(item.dtype).replace('torch.', '')} tensor on {item.device.type}"
                 if _is_torch_tensor(item) else f"a {type(item).__name__}, not a tensor"
                 for item in result)


def _no_steps(result: Any) -> tuple:
    """``(w1, w2, (shape, dtype, device) of losses)`` of a run of no steps."""
    w1, w2, losses = result
    return w1, w2, (tuple(losses.shape), str(losses.dtype), losses.device.type)


# ---------------------------------------------------------------- property tables (issue 27)
# Each promise, parameter and edge of the exercises' texts, and the case that tests it (see
# coursekit.grading.properties).

_NO_AUTODIFF = (promise("gradients derived by hand: no .backward()", forbidden=".backward"),
                promise("no torch.autograd", forbidden="torch.autograd.grad"))

PROPERTIES = {
    "lab01.numpy_graph_grads": (
        parameter("x", ": grad_x"),
        parameter("y", ": grad_y"),
        parameter("z", ": grad_z"),
        promise("grad_x of sum(x * y + z) is y", ": grad_x"),
        promise("grad_y is x", ": grad_y"),
        promise("grad_z is ones, in z's shape", ": grad_z"),
        *_NO_AUTODIFF,
        edge("z of shape (D,) added to every row: its gradient summed over the rows",
             "trial 3 ("),
        edge("z of shape (D,) with N == D: the shape alone of z's first axis does not tell",
             "trial 4 ("),
        edge("z of shape (D,) with N == 1: as many elements as x, another shape",
             "trial 3 (x, y (1,"),
    ),
    "lab01.two_layer_grads": (
        parameter("x", ": loss"),
        parameter("y", ": loss"),
        parameter("w1", ": grad_w1"),
        parameter("w2", ": grad_w2"),
        promise("loss is the sum (not the mean) of the squared errors of relu(x @ w1) @ w2",
                ": loss"),
        promise("the loss is a Python float", "the loss is a Python float"),
        promise("grad_w1 through the ReLU mask of h, in w1's shape", ": grad_w1"),
        promise("grad_w2 = h_relu.T @ 2 * (y_pred - y), in w2's shape", ": grad_w2"),
        edge("at h exactly 0 the ReLU's gradient is 0, as torch.relu's",
             "one unit with h exactly 0): grad_w1"),
        promise("float64 inputs: float64 precision (rtol 1e-10), not float32 arithmetic",
                ": grad_w1"),
        *_NO_AUTODIFF,
    ),
    "lab01.train_two_layer": (
        parameter("x", ": losses"),
        parameter("y", ": losses"),
        parameter("w1", ": final w1"),
        parameter("w2", ": final w2"),
        parameter("lr", ": final w1"),
        parameter("steps", ": losses"),
        promise("losses[t] is the loss before step t, one per step", ": losses"),
        edge("len(losses) == steps even when the run diverges", "a diverging run"),
        promise("each step w = w - lr * grad, with the current weights' gradients",
                ": final w1"),
        promise("returns the final w2 too", ": final w2"),
        promise("the loss goes down", ": loss decreased"),
        promise("the caller's w1 and w2 are left unchanged",
                "the w1 and w2 passed in are unchanged"),
        *_NO_AUTODIFF,
    ),
    "lab01.train_two_layer_torch": (
        parameter("x", ": losses"),
        parameter("y", ": losses"),
        parameter("w1", ": final w1"),
        parameter("w2", ": final w2"),
        parameter("lr", ": final w1"),
        parameter("steps", ": losses"),
        promise("the same loop as exercise 3, in tensor operations", "on cpu (N="),
        promise("losses is a tensor of shape (steps,) on x.device with x.dtype",
                "device, dtype and shape of (w1, w2, losses): losses"),
        promise("every tensor made on the inputs' device", "on the meta device"),
        promise("tensors created on the inputs' device, never on the default device and moved",
                "with the default device set to meta"),
        promise("lr stays a number: no tensor made of it off the inputs' device",
                "with the default device set to meta"),
        promise("the tensors passed in are left unchanged",
                "the w1 and w2 passed in are unchanged"),
        *_NO_AUTODIFF,
        edge("float32 inputs", "float32 on cpu"),
        edge("float64 inputs", "float64 on cpu"),
        edge("the meta device: shapes and dtypes, no data", "float64 on the meta device"),
        edge("steps=0: no update, losses of shape (0,)", "0 steps): w1 and w2 as given"),
    ),
}
