"""Checks for lab09_performance: reading a profile, a DataLoader without the stall, bf16
autocast error per op class, dynamic loss scaling by hand, activation bytes saved for backward,
segment checkpointing, and inference mode.

References: the reading rule the lab states (the ``aten::`` row of largest self time, the
``wait for batch`` region's share) on profiles with drawn times (see ``NOTE [profiles with
drawn times]``); ``torch.utils.data.DataLoader`` for the faster loader; ``torch.autocast``
itself for the bf16 report; ``torch.amp.GradScaler`` (on the CPU) for the loss scaler, step by
step on gradient sequences with planted overflows;
``torch.utils.checkpoint.checkpoint_sequential`` for the checkpointed forward; the counting
rule the lab states (distinct storages of saved tensors, the model's parameters left out) for
the saved bytes. Every number compared is a count or a value, never a time measured here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..program import Case, EarlierStepFailed, check, handed
from ..properties import edge, parameter, promise
from ..warm import torch_meta as warm_up  # noqa: F401 — its checks use the meta device

_ACTIVATIONS = ("ReLU", "Tanh", "Sigmoid", "GELU")
_DTYPES = ("float32", "float64", "bfloat16")

# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def _reference_saved_bytes():
    import torch

    def saved_activation_bytes(model, x):
        packed = []

        def pack(tensor):
            packed.append(tensor.untyped_storage())
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            out = model(x)
        parameters = [p.untyped_storage() for p in model.parameters()]
        distinct = []
        for storage in packed:
            if not any(storage is s for s in distinct + parameters):
                distinct.append(storage)
        del out
        return sum(s.nbytes() for s in distinct)

    return saved_activation_bytes


def _reference_checkpointed():
    from torch.utils.checkpoint import checkpoint_sequential

    def run_checkpointed(layers, x, segments):
        return checkpoint_sequential(list(layers), segments, x, use_reentrant=False)

    return run_checkpointed


def _reference_loss_scaler():
    import torch

    def LossScaler(init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                   growth_interval=2000):
        return torch.amp.GradScaler("cpu", init_scale=init_scale, growth_factor=growth_factor,
                                    backoff_factor=backoff_factor,
                                    growth_interval=growth_interval)

    return LossScaler


def _reference_bf16_report():
    import torch

    ops = {"matmul": lambda a, b, x: a @ b,
           "sum": lambda a, b, x: x.sum(dim=-1),
           "softmax": lambda a, b, x: torch.softmax(x, dim=-1)}

    def error(got, expected):
        return float((got.float() - expected).abs().max() / expected.abs().max())

    def bf16_report(a, b, x):
        report = {}
        for name, op in ops.items():
            expected = op(a, b, x)
            with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
                automatic = op(a, b, x)
            low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
            report[name] = {"autocast dtype": str(automatic.dtype),
                            "autocast error": error(automatic, expected),
                            "bf16 error": error(low, expected)}
        return report

    return bf16_report


def _reference_predict():
    import torch

    def predict(model, x, batch_size=256):
        was_training = model.training
        model.eval()
        try:
            with torch.inference_mode():
                return torch.cat([model(x[i:i + batch_size])
                                  for i in range(0, len(x), batch_size)])
        finally:
            model.train(was_training)

    return predict


# ---------------------------------------------------------------------------------------------
# models built from drawn specs (the same spec builds the same model on both sides)
# ---------------------------------------------------------------------------------------------


def _gated_class():
    import torch

    class Gated(torch.nn.Module):
        """A gated linear unit: one projection split in two halves, a * sigmoid(b)."""

        def __init__(self, d_in, hidden, d_out):
            super().__init__()
            self.project, self.out = torch.nn.Linear(d_in, 2 * hidden), torch.nn.Linear(hidden, d_out)

        def forward(self, x):
            a, b = self.project(x).chunk(2, dim=-1)
            return self.out(a * torch.sigmoid(b))

    return Gated


def _checkpointed_class():
    import torch
    from torch.utils.checkpoint import checkpoint

    class Checkpointed(torch.nn.Module):
        """A body run under checkpoint (only its input is kept), then a plain head."""

        def __init__(self, body, head):
            super().__init__()
            self.body, self.head = body, head

        def forward(self, x):
            return self.head(checkpoint(self.body, x, use_reentrant=False))

    return Checkpointed


def _mlp_layers(widths, activations):
    import torch

    layers = []
    for i, (d_in, d_out) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(d_in, d_out))
        if i < len(activations):
            layers.append(getattr(torch.nn, activations[i])())
    return layers


def _build(spec):
    """A model from a drawn spec: ("mlp", widths, activations), ("gated", d_in, hidden, d_out),
    ("checkpointed", widths, activations) (all but the last Linear under checkpoint) or
    ("batchnorm", widths, activations) (a BatchNorm1d after every Linear but the last)."""
    import torch

    kind = spec[0]
    if kind == "mlp":
        return torch.nn.Sequential(*_mlp_layers(spec[1], spec[2]))
    if kind == "batchnorm":   # Linear, BatchNorm1d, activation, ..., Linear
        layers = []
        for layer in _mlp_layers(spec[1], spec[2]):
            if not isinstance(layer, torch.nn.Linear):
                layers.append(torch.nn.BatchNorm1d(layers[-1].out_features))
            layers.append(layer)
        return torch.nn.Sequential(*layers)
    if kind == "gated":
        return _gated_class()(*spec[1:])
    layers = _mlp_layers(spec[1], spec[2])
    return _checkpointed_class()(torch.nn.Sequential(*layers[:-1]), layers[-1])


def _describe(spec, rows, dtype, device, grad) -> str:
    kind = spec[0]
    if kind == "gated":
        what = f"gated unit {spec[1]}->2x{spec[2]}->{spec[3]}"
    else:
        acts = "/".join(spec[2])
        what = (f"{'checkpointed ' if kind == 'checkpointed' else ''}MLP "
                f"{'-'.join(str(w) for w in spec[1])} ({acts})")
        if kind == "batchnorm":
            what += (" with BatchNorm1d in training mode (it saves its running statistics, "
                     "buffers, not parameters)")
    return (f"{what}, x of {rows} rows, {dtype} on {device}"
            + (", x.requires_grad" if grad else ""))


def _draw_mlp(rng, depth_low=1, depth_high=4):
    depth = int(rng.integers(depth_low, depth_high + 1))
    widths = [int(w) for w in rng.integers(2, 33, size=depth + 1)]
    activations = [str(a) for a in rng.choice(_ACTIVATIONS, size=depth - 1)] if depth > 1 else []
    return widths, activations


# ---------------------------------------------------------------------------------------------
# lab09.saved_bytes
# ---------------------------------------------------------------------------------------------


def _saved_bytes_case(impl, spec, rows, dtype, device, grad):
    import torch

    model = _build(spec).to(device=device, dtype=getattr(torch, dtype))
    x = torch.randn(rows, spec[1][0] if spec[0] != "gated" else spec[1], device=device,
                    dtype=getattr(torch, dtype), requires_grad=grad)
    return int(impl(model, x))


_SAVED_HINT = ("run model(x) inside torch.autograd.graph.saved_tensors_hooks(pack, unpack); in "
               "pack, keep t.untyped_storage(); count each storage once (compare with `is`: "
               "data_ptr() is 0 for every tensor on the meta device), leave out the storages of "
               "model.parameters(), and add up storage.nbytes() — a view keeps its whole "
               "storage alive")


@check("lab09.saved_bytes", reference=_reference_saved_bytes)
def saved_bytes_program(impl: Any, rng):
    """saved_activation_bytes: distinct storages saved for backward, parameters left out."""
    trials = []
    for device in ("cpu", "cpu", "meta"):
        trials.append((("mlp", *_draw_mlp(rng, 2, 4)), device))
    trials.append((("gated", int(rng.integers(2, 17)), int(rng.integers(2, 17)),
                    int(rng.integers(2, 17))), str(rng.choice(["cpu", "meta"]))))
    trials.append((("checkpointed", *_draw_mlp(rng, 3, 4)), str(rng.choice(["cpu", "meta"]))))
    # Planted in every seed: one Linear, where the only activation is the input itself.
    trials.append((("mlp", [int(rng.integers(2, 33)), int(rng.integers(2, 33))], []), "cpu"))
    # Planted: BatchNorm saves running_mean and running_var, buffers the rule counts.
    trials.append((("batchnorm", *_draw_mlp(rng, 2, 3)), "cpu"))
    for index, (spec, device) in enumerate(trials):
        # at least 2 rows for BatchNorm in training mode
        rows = int(rng.integers(1 if spec[0] != "batchnorm" else 2, 65))
        dtype = str(_DTYPES[index % 3]) if index < 3 else str(rng.choice(_DTYPES))
        grad = bool(index % 2)
        yield Case(_describe(spec, rows, dtype, device, grad),
                   lambda s=spec, r=rows, t=dtype, d=device, g=grad:
                   _saved_bytes_case(impl, s, r, t, d, g),
                   hint=_SAVED_HINT if spec[0] != "batchnorm" else
                   "leave out the storages of model.parameters() only: buffers such as "
                   "BatchNorm's running_mean and running_var are saved for backward too, and "
                   "the rule counts them")


# ---------------------------------------------------------------------------------------------
# lab09.checkpointed
# ---------------------------------------------------------------------------------------------


def _checkpointed_case(impl, widths, activations, values, rows, segments, device, grad,
                       seed=None):
    """The observations of one run; with ``seed``, torch's generator is seeded first (for
    Dropout) and the caller's state left alone."""
    import torch

    if seed is not None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return _checkpointed_case(impl, widths, activations, values, rows, segments,
                                      device, grad)

    layers = _mlp_layers(widths, activations)
    linears = [layer for layer in layers if isinstance(layer, torch.nn.Linear)]
    with torch.no_grad():
        for layer, (w, b) in zip(linears, values["params"]):
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
    for layer in layers:
        layer.to(device=device, dtype=torch.float64)
    calls = {"phase": "forward", "forward": [0] * len(layers), "backward": [0] * len(layers)}

    def counter(index):
        def hook(module, inputs, output):
            calls[calls["phase"]][index] += 1
        return hook

    for index, layer in enumerate(layers):
        layer.register_forward_hook(counter(index))
    x = torch.from_numpy(values["x"]).to(device).requires_grad_(grad)
    parameters = [p.untyped_storage() for layer in layers for p in layer.parameters()]
    packed = []

    def pack(tensor):
        packed.append(tensor.untyped_storage())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = impl(layers, x, segments)
    distinct = []
    for storage in packed:
        if not any(storage is s for s in distinct + parameters):
            distinct.append(storage)
    calls["phase"] = "backward"
    (out * torch.from_numpy(values["r"]).to(device)).sum().backward()
    observed = {"output": out.detach(),
                "bytes saved for backward": sum(s.nbytes() for s in distinct),
                "forward calls per layer, forward pass": calls["forward"],
                "forward calls per layer, during backward": calls["backward"],
                "weight gradients": [layer.weight.grad for layer in linears]}
    if grad:
        observed["x.grad"] = x.grad
    return observed


@check("lab09.checkpointed", reference=_reference_checkpointed,
       forbid=("torch.utils.checkpoint.checkpoint_sequential",))
def checkpointed_program(impl: Any, rng):
    """run_checkpointed: checkpoint_sequential's segments, recomputation and saved bytes."""
    trials = []
    for device in ("cpu", "cpu", "cpu", "meta"):
        depth = int(rng.integers(3, 6))
        widths = [int(w) for w in rng.integers(2, 17, size=depth + 1)]
        activations = [str(a) for a in rng.choice(_ACTIVATIONS, size=depth - 1)]
        n_layers = 2 * depth - 1
        trials.append((widths, activations, n_layers, device))
    # segments: 1 (nothing checkpointed), one that leaves a remainder, one per layer, any.
    choices = [1, None, "all", None]
    for trial, (widths, activations, n_layers, device) in enumerate(trials):
        segments = choices[trial]
        if segments is None:
            segments = int(rng.integers(2, n_layers))
            if trial == 1:  # a segment count that does not divide the layers
                segments = next((s for s in range(2, n_layers) if n_layers % s), 2)
        elif segments == "all":
            segments = n_layers
        rows = int(rng.integers(1, 9))
        values = {"params": [(rng.standard_normal((d_out, d_in)), rng.standard_normal(d_out))
                             for d_in, d_out in zip(widths[:-1], widths[1:])],
                  "x": rng.standard_normal((rows, widths[0])),
                  "r": rng.standard_normal((rows, widths[-1]))}
        grad = trial % 2 == 1
        planted = {0: " (nothing checkpointed)", 1: " (a remainder)",
                   2: " (one layer per segment)"}.get(trial, "")
        label = (f"{n_layers} layers ({'-'.join(str(w) for w in widths)}, "
                 f"{'/'.join(activations)}), segments={segments}{planted}, on {device}"
                 + (", x.requires_grad" if grad else ""))
        yield Case(label, lambda w=widths, a=activations, v=values, r=rows, s=segments,
                   d=device, g=grad: _checkpointed_case(impl, w, a, v, r, s, d, g),
                   hint="segments of len(layers) // segments layers; every segment but the "
                        "last runs under checkpoint(fn, x, use_reentrant=False) and hands its "
                        "output to the next; the last segment (the remainder included) runs "
                        "without checkpoint, since backward needs it at once",
                   rtol=1e-9, atol=1e-12)
    # Planted: Dropout in every checkpointed segment. Backward's recomputation must draw the
    # same masks as the forward did: checkpoint keeps the RNG state for it (its default).
    depth = int(rng.integers(3, 5))
    widths = [int(w) for w in rng.integers(6, 17, size=depth + 1)]
    activations = ["Dropout"] * (depth - 1)
    rows, segments, seed = int(rng.integers(4, 9)), 2, int(rng.integers(0, 2**31))
    values = {"params": [(rng.standard_normal((d_out, d_in)), rng.standard_normal(d_out))
                         for d_in, d_out in zip(widths[:-1], widths[1:])],
              "x": rng.standard_normal((rows, widths[0])),
              "r": rng.standard_normal((rows, widths[-1]))}
    yield Case(f"{2 * depth - 1} layers ({'-'.join(str(w) for w in widths)}, Dropout in "
               f"training mode between them), segments={segments}, on cpu, x.requires_grad: "
               f"backward recomputes the same dropout masks",
               lambda: _checkpointed_case(impl, widths, activations, values, rows, segments,
                                          "cpu", True, seed),
               hint="checkpoint(fn, x, use_reentrant=False) keeps the RNG state of the forward "
                    "(preserve_rng_state=True, its default), so backward's recomputation draws "
                    "the same dropout masks; preserve_rng_state=False draws new ones and the "
                    "gradients belong to another network",
               rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# lab09.loss_scaler
# ---------------------------------------------------------------------------------------------

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _plan(rng, growth_interval: int) -> list[str]:
    """Kinds of steps: 'ok' (finite gradients), 'inf', 'nan', 'big' (finite, but they overflow
    once multiplied by the scale) and 'clip' (unscale_, clip, then step). Every plan grows the
    scale, overflows in the middle of a run of good steps (the counter must start again),
    grows again, and ends with two growths in a row (the counter starts again after a growth
    too, not only after an overflow)."""
    overflow = [str(k) for k in rng.permutation(["inf", "nan", "big"])]
    plan = ["ok"] * growth_interval + [overflow[0]]
    plan += ["ok"] * (growth_interval - 1) + [overflow[1]]
    plan += ["clip"] + ["ok"] * growth_interval + [overflow[2], "ok"]
    plan += ["ok"] * (2 * growth_interval - 1)
    return plan


def _gradients(rng, shapes, kind: str, which: int | None = None) -> list[np.ndarray]:
    """Gradients of the given shapes; an inf, NaN or overflow planted in one of them (in the
    one at index ``which`` if given, else in one drawn)."""
    grads = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    if kind in ("inf", "nan", "big"):
        which = int(rng.integers(0, len(shapes))) if which is None else which
        flat = grads[which].reshape(-1)
        spot = int(rng.integers(0, flat.size))
        flat[spot] = {"inf": np.inf * float(rng.choice([-1.0, 1.0])), "nan": np.nan,
                      "big": _FLOAT32_MAX * float(rng.uniform(0.05, 0.5))}[kind]
    return grads


_STEP_WORDS = {"ok": "finite gradients", "inf": "an inf planted in one gradient",
               "nan": "a NaN planted in one gradient",
               "big": "a finite gradient that overflows once scaled",
               "clip": "unscale_(), clip_grad_norm_, then step()"}


@handed  # the check's program hands it to the student's code
class _PlainSGD:
    """What a loss scaler uses of an optimizer, ``param_groups`` and ``step()``, with the
    update of ``torch.optim.SGD`` without momentum (p -= lr * p.grad). Not torch.optim.SGD
    itself: building the first torch.optim optimizer in a process imports torch._dynamo (some
    800 modules: about 6 s, and 20 s under the grading monitor), which no scaler needs."""

    def __init__(self, params, lr):
        params = list(params)
        if params and isinstance(params[0], dict):   # parameter groups, each with its lr
            self.param_groups = [{"params": list(g["params"]), "lr": g.get("lr", lr)}
                                 for g in params]
        else:
            self.param_groups = [{"params": params, "lr": lr}]

    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def step(self):
        import torch

        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad, alpha=-group["lr"])


def _scaler_steps(impl, config, params0, plan, grads, lr, max_norm, label, groups=1):
    """Cases: construction, then two per training step, sharing the scaler and parameters:
    what the step did to the gradients and parameters, and the scale update() left. With
    ``groups`` > 1 the optimizer holds the parameters in that many groups, the k-th at
    learning rate lr * (k + 1)."""
    import torch

    state: dict = {}

    def build():
        state["scaler"] = impl(**config)
        state["params"] = [torch.tensor(p, requires_grad=True) for p in params0]
        split = np.array_split(np.arange(len(params0)), groups)
        state["optimizer"] = _PlainSGD(
            [{"params": [state["params"][i] for i in part], "lr": lr * (k + 1)}
             for k, part in enumerate(split)], lr=lr)
        return float(state["scaler"].get_scale())

    shown = ", ".join(f"{k}={v:g}" for k, v in config.items())
    built = f"{label}: LossScaler({shown}).get_scale()"
    yield Case(built, build,
               hint="get_scale() returns the current scale as a Python float", weight=0.5)
    did, scale = built, built
    for step, (kind, g) in enumerate(zip(plan, grads)):
        def run(kind=kind, g=g, step=step):
            if "scaler" not in state:
                raise EarlierStepFailed("skipped because an earlier step failed: building the "
                                        "LossScaler")
            state.pop("scale after", None)
            state.pop("held", None)
            scaler, params, optimizer = state["scaler"], state["params"], state["optimizer"]
            optimizer.zero_grad()
            loss = sum((p * torch.from_numpy(gi)).sum() for p, gi in zip(params, g))
            scaled = scaler.scale(loss)
            observed = {"scale(loss)": float(scaled.detach())}
            scaled.backward()
            if kind == "clip":
                held = [p.grad for p in params]   # as a hook or a gradient bucket holds them
                scaler.unscale_(optimizer)
                observed["gradients after unscale_()"] = [p.grad.clone() for p in params]
                state["held"] = (step, [g.clone() for g in held])
                torch.nn.utils.clip_grad_norm_(params, max_norm)
            scaler.step(optimizer)
            if kind in ("ok", "clip"):
                observed["gradients after step()"] = [p.grad.clone() for p in params]
            scaler.update()
            observed["parameters after step()"] = [p.detach().clone() for p in params]
            state["scale after"] = (step, float(scaler.get_scale()))
            return observed

        def scale_after(step=step):
            if state.get("scale after", (None,))[0] != step:
                raise EarlierStepFailed("skipped because this step failed (see the case above)")
            return state["scale after"][1]

        def held_after(step=step):
            if state.get("held", (None,))[0] != step:
                raise EarlierStepFailed("skipped because this step failed (see the case above)")
            return state["held"][1]

        # Each step starts from the scale, the count and the parameters the steps before it
        # left: after the first wrong one, the later ones differ whatever they do. The scale
        # depends on the scale and count before it only; the step's effect on the parameters
        # also on the parameters before it.
        here = f"{label}: step {step}, {_STEP_WORDS[kind]}"
        yield Case(f"{here}: scale(loss), gradients and parameters", run,
                   hint=_SCALER_HINTS[kind][0], rtol=1e-6, atol=1e-9, follows=(did, scale))
        did = f"{here}: scale(loss), gradients and parameters"
        if kind == "clip":
            yield Case(f"{here}: the .grad tensors taken before unscale_(), after it", held_after,
                       hint="unscale_ divides each gradient in place (p.grad.div_(scale)): "
                            "p.grad = p.grad / scale puts a new tensor in .grad, and whoever "
                            "holds the old one (a hook, a gradient bucket) still sees it scaled",
                       rtol=1e-6, atol=1e-9, weight=0.5, follows=(did, scale))
        yield Case(f"{here}: get_scale() after update()", scale_after,
                   hint=_SCALER_HINTS[kind][1], rtol=1e-6, atol=1e-9, weight=0.5,
                   follows=(scale,))
        scale = f"{here}: get_scale() after update()"


_SKIP = ("any inf or NaN among the unscaled gradients: skip optimizer.step() (the parameters "
         "stay as they are)")
_SCALER_HINTS = {   # (what the step did, the scale after update())
    "ok": ("finite gradients: scale(loss) multiplies by the current scale; unscale the "
           "gradients in place (p.grad / scale), then call optimizer.step()",
           "count the good step, and after growth_interval good steps in a row (a skipped "
           "step sets the count back to 0) multiply the scale by growth_factor and start "
           "counting again"),
    "inf": (_SKIP, "after a step with an inf or NaN gradient: multiply the scale by "
                   "backoff_factor, and set the count of good steps back to 0"),
    "nan": (_SKIP, "NaN is not finite either, but torch.isinf misses it: test with "
                   "torch.isfinite; then back off and set the count of good steps back to 0"),
    "big": ("look for inf/NaN in the gradients *after* backward of the scaled loss (and after "
            "unscaling them): here a finite gradient times the scale overflows; skip the step",
            "an overflow found after backward counts as one: back off, reset the count"),
    "clip": ("unscale_(optimizer) divides the gradients once and remembers it: step() must not "
             "divide them again in the same iteration; update() forgets it for the next one",
             "a step after unscale_() is a good step like any other: count it"),
}


@check("lab09.loss_scaler", reference=_reference_loss_scaler,
       forbid=("torch.amp", "torch.cuda.amp", "torch.cpu.amp",
               "torch._amp_foreach_non_finite_check_and_unscale_", "torch._amp_update_scale_"))
def loss_scaler_program(impl: Any, rng):
    """LossScaler: scale, find inf/NaN, skip, back off and grow, as torch.amp.GradScaler."""
    settings = [
        {"init_scale": 2.0 ** int(rng.integers(8, 17)), "growth_factor": 2.0,
         "backoff_factor": 0.5, "growth_interval": int(rng.integers(2, 4))},
        # backoff_factor is not 1 / growth_factor here: undoing a growth is not backing off
        {"init_scale": 2.0 ** int(rng.integers(8, 17)), "growth_factor": 4.0,
         "backoff_factor": float(rng.choice([0.5, 0.125])),
         "growth_interval": int(rng.integers(1, 3))},
    ]
    for trial, config in enumerate(settings):
        shapes = [tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 3))))
                  for _ in range(int(rng.integers(2, 4)))]
        params0 = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        plan = _plan(rng, config["growth_interval"])
        grads = [_gradients(rng, shapes, kind) for kind in plan]
        lr, max_norm = float(rng.uniform(0.01, 0.1)), float(rng.uniform(0.1, 1.0))
        yield from _scaler_steps(impl, config, params0, plan, grads, lr, max_norm,
                                 f"trial {trial}")
    # Planted: an optimizer with two parameter groups; the inf sits in the second one.
    config = {"init_scale": 2.0 ** int(rng.integers(8, 17)), "growth_factor": 2.0,
              "backoff_factor": 0.5, "growth_interval": 2}
    shapes = [tuple(int(s) for s in rng.integers(1, 5, size=2)) for _ in range(3)]
    params0 = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    plan = ["ok", "inf", "ok", "clip", "ok"]
    grads = [_gradients(rng, shapes, kind, which=len(shapes) - 1) for kind in plan]
    yield from _scaler_steps(impl, config, params0, plan, grads, float(rng.uniform(0.01, 0.1)),
                             float(rng.uniform(0.1, 1.0)), "two parameter groups", groups=2)
    # The defaults, called: 2**16, x2, x0.5, every 2000 steps (no growth within a few steps).
    shapes = [(int(rng.integers(1, 5)),)]
    params0 = [rng.standard_normal(shapes[0]).astype(np.float32)]
    plan = ["ok", "inf", "ok"]
    grads = [_gradients(rng, shapes, kind) for kind in plan]
    yield from _scaler_steps(impl, {}, params0, plan, grads, 0.05, 1.0, "defaults")
    # The default growth: growth_factor=2.0 after growth_interval=2000 good steps, which the
    # few steps above never reach (it draws nothing: the cases above keep their inputs).
    yield Case(f"defaults: get_scale() after {_DEFAULT_INTERVAL - 1} and after "
               f"{_DEFAULT_INTERVAL} good steps in a row",
               lambda: _default_growth(impl), weight=0.5,
               names=(f"after {_DEFAULT_INTERVAL - 1}", f"after {_DEFAULT_INTERVAL}"),
               hint="the defaults are torch.amp.GradScaler's: growth_factor=2.0 and "
                    "growth_interval=2000, so the scale doubles on the 2000th good step in a "
                    "row, not before")


_DEFAULT_INTERVAL = 2000   # torch.amp.GradScaler's growth_interval


def _default_growth(impl) -> tuple[float, float]:
    """The scale of a ``LossScaler()`` after 1999 and after 2000 good steps in a row."""
    import torch

    scaler = impl()
    weight = torch.zeros(1, requires_grad=True)
    optimizer = _PlainSGD([weight], lr=0.0)   # lr 0: only the scale moves
    one = torch.ones(1)
    scales = []
    for step in range(1, _DEFAULT_INTERVAL + 1):
        # what backward of scale(weight.sum()) leaves in weight.grad, without 2000 backward
        # passes (3 s here)
        weight.grad = scaler.scale(one).detach().clone()
        scaler.step(optimizer)
        scaler.update()
        if step >= _DEFAULT_INTERVAL - 1:
            scales.append(float(scaler.get_scale()))
    return tuple(scales)


# ---------------------------------------------------------------------------------------------
# lab09.bf16_report
# ---------------------------------------------------------------------------------------------


def _bf16_case(impl, a, b, x):
    import torch

    report = impl(torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(x))
    # Only a real dict is copied: dict() of any other object with __getitem__ iterates it as a
    # sequence, forever if __getitem__ never raises IndexError (an object equal to everything).
    rows = {name: report[name] for name in ("matmul", "sum", "softmax")}
    return {name: dict(row) if isinstance(row, dict) else row for name, row in rows.items()}


@check("lab09.bf16_report", reference=_reference_bf16_report)
def bf16_report_program(impl: Any, rng):
    """bf16_report: output dtype under autocast and the error of each op class against fp32."""
    for trial in range(3):
        m, k, n = (int(v) for v in rng.integers(8, 129, size=3))
        rows, cols = int(rng.integers(2, 17)), int(rng.integers(64, 1025))
        scale = float(10 ** rng.uniform(-1, 2))    # errors are relative: a scale changes none
        a = (rng.standard_normal((m, k)) * scale).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        x = (rng.standard_normal((rows, cols)) * rng.uniform(2, 8) + rng.uniform(0, 4) * scale
             ).astype(np.float32)
        yield Case(f"trial {trial}: a ({m}, {k}) x{scale:.3g}, b ({k}, {n}), x ({rows}, {cols})",
                   lambda a=a, b=b, x=x: _bf16_case(impl, a, b, x),
                   hint="per op: the float32 result without autocast is the reference; run the "
                        "op once inside torch.autocast(device_type=a.device.type, "
                        "dtype=torch.bfloat16) on the float32 inputs, once on inputs cast with "
                        ".bfloat16() outside autocast; error = max|got.float() - ref| / max|ref|; "
                        "'autocast dtype' is str(result.dtype)",
                   rtol=0.1, atol=1e-6)
        if trial == 0:
            yield Case("the errors are Python floats", lambda a=a, b=b, x=x: _error_kinds(
                           impl, a, b, x),
                       hint="return each error as a Python float (float(...) or .item()), not "
                            "a 0-d tensor")
            yield Case("an op autocast keeps in float32: its autocast error is exactly 0",
                       lambda a=a, b=b, x=x: _float32_errors(impl, a, b, x),
                       hint="the reference is the op's float32 result without autocast: an op "
                            "autocast runs in float32 computes that same result, so its "
                            "'autocast error' is 0.0 exactly (a float64 reference makes it "
                            "a rounding error instead)",
                       rtol=0.0, atol=0.0)


def _float32_errors(impl, a, b, x):
    """The autocast error of each op the report says autocast ran in float32 (on the CPU, the
    sum and the softmax): the same float32 computation as the reference, so exactly 0."""
    rows = _bf16_case(impl, a, b, x)
    return {name: row.get("autocast error") for name, row in rows.items()
            if isinstance(row, dict) and row.get("autocast dtype") == "torch.float32"}


def _error_kinds(impl, a, b, x):
    """The kind of each error the report holds: 'float' for a Python float."""
    rows = _bf16_case(impl, a, b, x)
    return {name: {key: "float" if isinstance(row.get(key), float) else type(row.get(key)).__name__
                   for key in ("autocast error", "bf16 error")} if isinstance(row, dict) else row
            for name, row in rows.items()}


# ---------------------------------------------------------------------------------------------
# lab09.predict
# ---------------------------------------------------------------------------------------------


def _predict_model(values, device):
    import torch

    d_in, hidden, d_out = values["w1"].shape[1], values["w1"].shape[0], values["w2"].shape[0]
    model = torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.BatchNorm1d(hidden),
                                torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                torch.nn.Linear(hidden, d_out))
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(values["w1"]))
        model[0].bias.zero_()
        model[1].running_mean.copy_(torch.from_numpy(values["mean"]))
        model[1].running_var.copy_(torch.from_numpy(values["var"]))
        model[4].weight.copy_(torch.from_numpy(values["w2"]))
        model[4].bias.zero_()
    return model.to(device)


def _predict_case(impl, values, rows, batch_size, training, device, default):
    import torch

    model = _predict_model(values, device)
    model.train(training)
    calls = []
    model.register_forward_hook(lambda module, inputs, output: calls.append(len(inputs[0])))
    x = torch.from_numpy(values["x"][:rows]).to(device)
    packed = []

    def pack(tensor):
        packed.append(1)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = impl(model, x) if default else impl(model, x, batch_size=batch_size)
    return {"output": out,
            "output.is_inference()": bool(out.is_inference()),
            "output.requires_grad": bool(out.requires_grad),
            "rows per model call": calls,
            "tensors saved for backward": len(packed),
            "model.training afterwards": bool(model.training)}


def _predict_raising(impl, values, batch_size):
    """The model's mode after a call whose second forward pass raises (the error is planted)."""
    import torch

    model = _predict_model(values, "cpu")
    model.train(True)
    calls = []

    def fail_second(module, inputs, output):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("a forward pass failed (planted by the check)")

    model.register_forward_hook(fail_second)
    x = torch.from_numpy(values["x"][:3 * batch_size])
    try:
        impl(model, x, batch_size=batch_size)
    except RuntimeError as error:  # NotImplementedError is one too: only the planted is expected
        if calls != [1, 1] or "planted by the check" not in str(error):
            raise
    return bool(model.training)


_PREDICT_HINTS = {
    "output": "model.eval() (dropout off, BatchNorm on its running statistics), then the forward "
              "passes of x[i:i + batch_size], in order, joined with torch.cat",
    "output.is_inference()": "the output must be an inference tensor: run the forward passes "
                             "AND the torch.cat inside `with torch.inference_mode():`. Outside "
                             "inference mode an op on inference tensors gives an ordinary "
                             "tensor (a torch.cat after the with block does), and so does "
                             "torch.no_grad()",
    "rows per model call": "one model call per batch of batch_size rows, in order, the last "
                           "one partial (x[i:i + batch_size] for i in range(0, len(x), "
                           "batch_size)); keep the default batch_size=256",
    "autograd": "record nothing for backward: under torch.inference_mode() no tensor is saved "
                "and the output does not require grad",
    "model.training afterwards": "afterwards put the model back in the mode it was in "
                                 "(was_training = model.training; ...; model.train(was_training)), "
                                 "in a finally block",
    "raised": "put the model back in its mode in a finally block: here the second forward pass "
              "raised, and the model stayed in eval mode",
}


def _predict_property(boxes: list, key: str) -> list:
    """One property of every trial's result, in trial order."""
    for box in boxes:
        if "observed" not in box:
            raise EarlierStepFailed("skipped: a call to predict failed (see the cases above)")
    if key == "autograd":
        return [{"output.requires_grad": box["observed"]["output.requires_grad"],
                 "tensors saved for backward": box["observed"]["tensors saved for backward"]}
                for box in boxes]
    return [box["observed"][key] for box in boxes]


@check("lab09.predict", reference=_reference_predict)
def predict_program(impl: Any, rng):
    """predict: eval mode, inference_mode, batches in order, the model's mode restored."""
    d_in, hidden, d_out = (int(v) for v in rng.integers(2, 9, size=3))
    values = {"w1": rng.standard_normal((hidden, d_in)).astype(np.float32),
              "w2": rng.standard_normal((d_out, hidden)).astype(np.float32),
              "mean": rng.standard_normal(hidden).astype(np.float32),
              "var": rng.uniform(0.5, 2.0, size=hidden).astype(np.float32),
              "x": rng.standard_normal((300, d_in)).astype(np.float32)}
    batch_size = int(rng.integers(3, 9))
    trials = [  # rows, batch_size, training, device, default batch size
        (int(rng.integers(2, 6)) * batch_size + int(rng.integers(1, batch_size)), batch_size,
         True, "cpu", False),
        (int(rng.integers(2, 6)) * batch_size, batch_size, False, "cpu", False),
        (int(rng.integers(1, batch_size)), batch_size, True, "cpu", False),
        (300, 256, True, "cpu", True),
        (int(rng.integers(10, 40)), batch_size, True, "meta", False),
    ]
    # Each property is its own case, weighted as the others: right values built outside
    # inference mode lose that property's share, not the whole check.
    boxes: list[dict] = []
    for rows, size, training, device, default in trials:
        fewer = " (less than one batch)" if rows < size else ""
        label = (f"{rows} rows{fewer}, "
                 + ("default batch_size" if default else f"batch_size={size}")
                 + f", model in {'train' if training else 'eval'} mode, on {device}: the output")
        box: dict = {}
        boxes.append(box)

        def call(r=rows, s=size, t=training, d=device, f=default, box=box):
            box.pop("observed", None)
            box["observed"] = _predict_case(impl, values, r, s, t, d, f)
            return box["observed"]["output"]

        yield Case(label, call, hint=_PREDICT_HINTS["output"], rtol=1e-5, atol=1e-6)
    for key, what in (("output.is_inference()", "the output is an inference tensor"),
                      ("rows per model call", "the rows of each model call"),
                      ("autograd", "nothing recorded for backward"),
                      ("model.training afterwards", "the model's mode is restored")):
        yield Case(f"{what}, in each of the {len(trials)} calls above",
                   lambda key=key: _predict_property(boxes, key),
                   hint=_PREDICT_HINTS[key])
    yield Case(f"a forward pass raises (the second of 3, batch_size={batch_size}, model in "
               "train mode): the model's mode afterwards",
               lambda: _predict_raising(impl, values, batch_size), hint=_PREDICT_HINTS["raised"],
               names=("model.training afterwards",))


# ---------------------------------------------------------------------------------------------
# lab09.read_profile
# ---------------------------------------------------------------------------------------------

# NOTE [profiles with drawn times]
# Two recordings of the same loop never agree on a time, and the student's kernel and the
# grader record apart: a real profile cannot be graded against a reference. So the check builds
# the profile a recorded training loop leaves behind — torch's own `FunctionEvent`s in torch's
# own `EventList`, so `key_averages()` and `events()` behave as after `torch.profiler.profile`
# — with the rows and nesting of the lab's loop (`wait for batch` around the DataLoader and
# the copies, `train step` around forward, backward and the optimizer) and times the check
# draws. Each trial plants the costliest operator and the stall so that one usual mistake gets
# another answer: a single-process loader whose DataLoader row outweighs every operator and
# whose costliest operator sits inside `aten::linear` (sorting by CPU total, or not keeping to
# `aten::` rows); a loop with workers whose costliest operator is many calls of `aten::mm`,
# each shorter than one `aten::addmm` (the longest single event is not the costliest row);
# and a GPU loop whose costliest operator is the copy to the device, inside `wait for batch`.

_WAIT, _STEP = "wait for batch", "train step"
_ITERATORS = {"single": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
              "workers": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"}


def _reference_read_profile():
    def read_profile(prof):
        from torch.autograd import DeviceType

        # On a GPU each record_function region also has a row for the GPU, under the same key,
        # whose CPU times are 0: the waiting share is read from the CPU's rows.
        rows = {row.key: row for row in prof.key_averages() if row.device_type == DeviceType.CPU}
        ops = [row for row in rows.values() if row.key.startswith("aten::")]
        costliest = max(ops, key=lambda row: row.self_cpu_time_total)
        wait = rows["wait for batch"].cpu_time_total
        train = rows["train step"].cpu_time_total
        return {"costliest op": costliest.key,
                "self CPU ms": costliest.self_cpu_time_total / 1e3,
                "waiting share": wait / (wait + train)}

    return read_profile


@handed  # the check's program hands it to the student's code
class _RecordedProfile:
    """A finished ``torch.profiler.profile`` as code reads it: ``events()``, the
    ``FunctionEvent`` of every call, and ``key_averages()``, one row per name."""

    def __init__(self, events):
        self._events = events

    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events.key_averages(group_by_input_shape, group_by_stack_n,
                                         group_by_overload_name)


def _op(name: str, self_us: int, *children, kind: str = "op") -> tuple:
    """A row of the tree: kind is "op", "user" (record_function) or "backward" (a grad_fn)."""
    return (name, int(self_us), list(children), kind)


# What a GPU adds to a recording (tests/labs/data/lab09_profile_h100.json, the lab's loop on an
# H100): a second row for each record_function region, the GPU's, under the same key and after
# the CPU's row, and the device's own rows (copies, kernels). Their CPU times are 0, so a reading
# that keeps one row per key keeps the GPU's and finds the loop took no time.
_GPU_COPY, _GPU_MEMSET = "Memcpy HtoD (Pinned -> Device)", "Memset (Device)"


def _profile(tree: list[tuple], on_gpu: bool = False) -> _RecordedProfile:
    """Lay the tree out in time on one thread, each row's own time before its children's, and
    build torch's events from it; ``on_gpu`` adds the GPU's rows of each step after them."""
    from torch.autograd import DeviceType
    from torch.autograd.profiler_util import EventList, FunctionEvent

    events: list = []

    def on_device(name, start, end, annotation):
        events.append(FunctionEvent(len(events), name, thread=0, start_us=start, end_us=end,
                                    stack=[], device_type=DeviceType.CUDA,
                                    is_user_annotation=annotation))

    def lay_out(rows, start):
        now = start
        for name, self_us, children, kind in rows:
            index = len(events)
            events.append(None)
            end = lay_out(children, now + self_us)
            events[index] = FunctionEvent(
                index, name, thread=1, start_us=now, end_us=end, stack=[],
                scope={"op": 0, "backward": 1, "user": 7}[kind],
                fwd_thread=1 if kind == "backward" else None,
                is_user_annotation=kind == "user")
            now = end
        return now

    lay_out(tree, 0)
    if on_gpu:
        # Each step's region on the GPU starts when the CPU launches its work; the device's rows
        # inside it are the two copies of the batch and the gradients' memset.
        for cpu in [e for e in events if e.name in (_WAIT, _STEP)]:
            start, end = cpu.time_range.start, cpu.time_range.end
            on_device(cpu.name, start + 5, end + 5, annotation=True)
            kernels = [_GPU_COPY, _GPU_COPY] if cpu.name == _WAIT else [_GPU_MEMSET]
            for k, name in enumerate(kernels):
                on_device(name, start + 6 + 2 * k, start + 7 + 2 * k, annotation=False)
    recorded = EventList(events)
    recorded._build_tree()  # as the profiler does once its block ends
    return _RecordedProfile(recorded)


def _draw_loop(rng, steps: int, layers: int, loader: str, device: str) -> dict:
    """Every call's time, drawn: the cheap ones in microseconds, the costly ones (the
    DataLoader's own time, the matrix products, the copies) as shapes the trial scales."""
    addmm = rng.uniform(100, 300, size=(steps, layers))
    wide = int(rng.integers(0, layers))     # the widest layer: its product is the longest call
    addmm[:, wide] = rng.uniform(1000, 2000) * rng.uniform(0.9, 1.0, size=steps)
    return {"steps": steps, "layers": layers, "loader": loader, "device": device,
            "prep": rng.uniform(0.8, 1.2, size=steps),
            "addmm": addmm,
            "mm": rng.uniform(0.8, 1.2, size=(steps, 2 * layers - 1)),  # layer 1: x needs no grad
            "copy": rng.uniform(0.8, 1.2, size=(steps, 2)),
            "small": rng.integers(2, 30, size=(steps, 200))}


def _step_tree(loop: dict, step: int, prep_us: int, addmm_us, mm_us, copy_us) -> list[tuple]:
    """One iteration of the lab's loop, `wait for batch` then `train step`, as profiler rows."""
    small = iter(int(v) for v in loop["small"][step])
    cheap = lambda: next(small)   # one drawn time per cheap call, in order
    layers = loop["layers"]
    if loop["device"] == "cuda":
        copies = [_op("aten::to", cheap(), _op("aten::_to_copy", cheap(),
                                                _op("aten::empty_strided", cheap()),
                                                _op("aten::copy_", int(us))))
                  for us in copy_us]
    else:
        copies = [_op("aten::to", cheap()) for _ in range(2)]
    # Workers collate in their own processes: only a single-process loader stacks here.
    collate = ([_op("aten::stack", cheap(), _op("aten::cat", cheap())) for _ in range(2)]
               if loop["loader"] == "single" else [])
    wait = _op(_WAIT, cheap(), _op(_ITERATORS[loop["loader"]], prep_us, *collate, kind="user"),
               *copies, kind="user")
    forward = []
    for layer in range(layers):
        forward.append(_op("aten::linear", cheap(),
                           _op("aten::t", cheap(), _op("aten::transpose", cheap())),
                           _op("aten::addmm", int(addmm_us[layer]), _op("aten::expand", cheap()),
                               _op("aten::copy_", cheap()))))
        if layer < layers - 1:
            forward.append(_op("aten::relu", cheap(), _op("aten::clamp_min", cheap())))
    loss = _op("aten::cross_entropy_loss", cheap(),
               _op("aten::log_softmax", cheap(), _op("aten::_log_softmax", cheap())),
               _op("aten::nll_loss_nd", cheap(),
                   _op("aten::nll_loss", cheap(), _op("aten::nll_loss_forward", cheap()))))

    def node(name, *children):
        return _op(f"autograd::engine::evaluate_function: {name}", cheap(),
                   _op(name, cheap(), *children, kind="backward"))

    backward = [node("NllLossBackward0", _op("aten::nll_loss_backward", cheap())),
                node("LogSoftmaxBackward0", _op("aten::_log_softmax_backward_data", cheap()))]
    mm = iter(int(v) for v in mm_us)
    for layer in reversed(range(layers)):
        products = [_op("aten::t", cheap(), _op("aten::transpose", cheap()))]
        if layer > 0:
            products += [_op("aten::mm", next(mm)),
                         _op("aten::t", cheap(), _op("aten::transpose", cheap()))]
        products += [_op("aten::mm", next(mm))]
        backward.append(node("AddmmBackward0", *products))
        for _ in range(2):  # the weight's and the bias's gradient
            backward.append(node("torch::autograd::AccumulateGrad",
                                 _op("aten::detach", cheap(), _op("detach", cheap()))))
        if layer > 0:
            backward.append(node("ReluBackward0", _op("aten::threshold_backward", cheap())))
    train = _op(_STEP, cheap(), *forward, loss,
                _op("Optimizer.zero_grad#SGD.zero_grad", cheap(), kind="user"),
                _op("aten::ones_like", cheap(), _op("aten::empty_like", cheap()),
                    _op("aten::fill_", cheap())),
                *backward,
                _op("Optimizer.step#SGD.step", cheap(),
                    *[_op("aten::add_", cheap()) for _ in range(2 * layers)], kind="user"),
                kind="user")
    return [wait, train]


def _self_totals(tree: list[tuple], totals: dict | None = None) -> dict:
    """Self time per row name, summed over the tree."""
    totals = {} if totals is None else totals
    for name, self_us, children, _ in tree:
        totals[name] = totals.get(name, 0) + self_us
        _self_totals(children, totals)
    return totals


def _total(row: tuple) -> int:
    """A row's CPU total: its own time and its children's."""
    return row[1] + sum(_total(child) for child in row[2])


def _planted_loop(loop: dict, costliest: str, share: float) -> list[tuple]:
    """The loop's rows, with `costliest` the `aten::` row of largest self time and about
    `share` of the loop in `wait for batch`.

    Every other row is drawn first; then the calls of the planted operator are scaled so that
    its row is 1.5 times the largest other operator row; then the DataLoader's own time is set
    so that the stall takes its share. With workers, the planted `aten::mm` is 5 or 7 calls a
    step sharing 1.5 times the `aten::addmm` row, most of which is one wide layer's call: each
    `aten::mm` call stays shorter than that one."""
    steps = loop["steps"]
    addmm = np.rint(loop["addmm"]).astype(int)
    mm = loop["mm"] * addmm.max() * 0.6           # backward products, next to the forward ones
    copy = loop["copy"] * 200.0

    def build(prep, addmm, mm, copy):
        return [row for step in range(steps)
                for row in _step_tree(loop, step, int(prep[step]), addmm[step],
                                      np.rint(mm[step]).astype(int),
                                      np.rint(copy[step]).astype(int))]

    ones = np.ones(steps)
    totals = _self_totals(build(ones, addmm, mm, copy))
    others = max(v for k, v in totals.items() if k.startswith("aten::") and k != costliest)
    planted = {"aten::addmm": addmm, "aten::mm": mm, "aten::copy_": copy}[costliest]
    fixed = totals[costliest] - int(np.rint(planted).sum())  # the cheap calls of that name
    scaled = planted * ((1.5 * others - fixed) / planted.sum())
    if costliest == "aten::addmm":
        addmm = np.rint(scaled).astype(int)
    elif costliest == "aten::mm":
        mm = scaled
    else:
        copy = scaled
    tree = build(ones, addmm, mm, copy)
    wait = sum(_total(row) for row in tree if row[0] == _WAIT)
    train = sum(_total(row) for row in tree if row[0] == _STEP)
    stall = share / (1 - share) * train - wait  # the DataLoader's own time still to add
    prep = 1 + np.maximum(0.0, stall) * loop["prep"] / loop["prep"].sum()
    return build(np.rint(prep), addmm, mm, copy)


def _read(impl, tree, on_gpu=False):
    got = impl(_profile(tree, on_gpu))
    # Only a real dict is taken apart; anything else travels as it is and equals nothing.
    if not isinstance(got, dict):
        return got
    return {key: got[key] for key in ("costliest op", "self CPU ms", "waiting share")
            if key in got}


_READ_HINT = ("rows = prof.key_averages(), one per name with all its calls, times in "
              "microseconds; the costliest operator is the `aten::` row of largest "
              "self_cpu_time_total; the waiting share is the cpu_time_total of `wait for batch` "
              "over that of `wait for batch` plus `train step`")
_TRIAL_HINTS = {
    "stall": "the DataLoader row has the largest self time, but it is not an operator: keep to "
             "`aten::` rows; and aten::linear's CPU total includes the aten::addmm it calls",
    "workers": "one row per operator, all its calls together: many short calls can outweigh "
               "a few long ones (prof.events() lists single calls)",
    "gpu": "on a GPU each region has two rows of its key, the CPU's and the GPU's, whose "
           "cpu_time_total is 0: read the rows whose device_type is DeviceType.CPU; the copy to "
           "the device (aten::copy_ under aten::to) runs inside `wait for batch`: it is an "
           "operator and part of the wait",
}


@check("lab09.read_profile", reference=_reference_read_profile)
def read_profile_program(impl: Any, rng):
    """read_profile: the costliest operator by self time, and the share of the loop waiting."""
    trials = [("stall", "single", "cpu", "aten::addmm", float(rng.uniform(0.6, 0.9))),
              ("workers", "workers", "cpu", "aten::mm", float(rng.uniform(0.02, 0.1))),
              ("gpu", "workers", "cuda", "aten::copy_", float(rng.uniform(0.3, 0.6)))]
    words = {"stall": "a single-process loader", "workers": "a loader with workers",
             "gpu": "a loader with workers, on a GPU"}
    for trial, loader, device, costliest, share in trials:
        steps, layers = int(rng.integers(3, 7)), int(rng.integers(3, 5))
        loop = _draw_loop(rng, steps, layers, loader, device)
        yield Case(f"{words[trial]}: {steps} steps of a {layers}-layer MLP",
                   lambda loop=loop, c=costliest, s=share: _read(impl, _planted_loop(loop, c, s),
                                                                 on_gpu=loop["device"] == "cuda"),
                   hint=_TRIAL_HINTS[trial] + "; " + _READ_HINT, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# lab09.faster_loader
# ---------------------------------------------------------------------------------------------


def _reference_faster_loader():
    from torch.utils.data import DataLoader

    def faster_loader(loader, device, num_workers=2):
        return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                          drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                          num_workers=num_workers, persistent_workers=True,
                          pin_memory=device.type == "cuda")

    return faster_loader


@handed  # inside the loader the check's program hands to the student's code
class _Samples:
    """A map-style dataset of (features, label) pairs from drawn arrays. A plain class at module
    level: workers started by spawn or forkserver import it by name."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index: int):
        import torch

        return torch.from_numpy(self.x[index]), int(self.y[index])


@handed  # inside the loader the check's program hands to the student's code
def _collate_as_dict(samples):
    """A collate_fn of the dataset's own: a dict of stacked features and labels."""
    import torch

    return {"x": torch.stack([x for x, _ in samples]), "y": torch.tensor([y for _, y in samples])}


def _slow_loader(values, batch_size, shuffle, drop_last, custom, generator=None):
    from torch.utils.data import DataLoader

    return DataLoader(_Samples(values["x"], values["y"]), batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, generator=generator,
                      **({"collate_fn": _collate_as_dict} if custom else {}))


def _configuration(impl, values, setting, device, workers):
    import torch

    slow = _slow_loader(values, *setting)
    fast = (impl(slow, torch.device(device)) if workers is None
            else impl(slow, torch.device(device), num_workers=workers))
    batches = getattr(fast, "batch_sampler", None)

    def same(mine, theirs):
        return "the given loader's" if mine is theirs else "another"

    return {"num_workers": fast.num_workers, "pin_memory": bool(fast.pin_memory),
            "persistent_workers": bool(fast.persistent_workers),
            "dataset": same(fast.dataset, slow.dataset),
            "batch size": getattr(batches, "batch_size", None),
            "drop_last": getattr(batches, "drop_last", None),
            "order": type(getattr(batches, "sampler", None)).__name__,
            "collate_fn": same(fast.collate_fn, slow.collate_fn)}


def _batches(impl, values, setting, workers, seed):
    import torch

    slow = _slow_loader(values, *setting)
    fast = impl(slow, torch.device("cpu"), num_workers=workers)
    torch.manual_seed(seed)  # the order of a shuffled loader comes from torch's generator
    return [batch if isinstance(batch, dict) else list(batch) for batch in fast]


def _order_from_generator(impl, values, setting, workers, seeds):
    """The order of the new loader's batches (indices, from its batch sampler: no worker
    starts) for a shuffled loader made with a generator of its own, seeded like the given
    loader's, while torch's global generator holds another seed."""
    import torch

    own, other = seeds
    generator = torch.Generator()
    slow = _slow_loader(values, *setting, generator=generator)
    fast = impl(slow, torch.device("cpu"), num_workers=workers)
    generator.manual_seed(own)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(other)
        return [list(indices) for indices in fast.batch_sampler]


_LOADER_HINT = ("keep the loader's dataset, batch_size, sampler (its order), drop_last and "
                "collate_fn; add num_workers=num_workers and persistent_workers=True (the "
                "workers live on from one epoch to the next)")
_PIN_HINTS = {
    "cpu": "on the CPU there is no copy to a GPU to speed up: pin_memory=False",
    "cuda": "pin_memory=True for a CUDA device, whatever its index: test device.type == 'cuda' "
            "(torch.device('cuda:1') != torch.device('cuda')), not whether this machine has a GPU",
    "meta": "pin memory only where the device is CUDA (device.type == 'cuda'): any other device "
            "gets pin_memory=False",
}


@check("lab09.faster_loader", reference=_reference_faster_loader)
def faster_loader_program(impl: Any, rng):
    """faster_loader: the same batches, from workers, with pinned memory only for CUDA."""
    rows, features = int(rng.integers(20, 50)), int(rng.integers(2, 6))
    values = {"x": rng.standard_normal((rows, features)).astype(np.float32),
              "y": rng.integers(0, 10, size=rows)}
    # (batch_size, shuffle, drop_last, a collate_fn of its own)
    shuffled = (int(rng.integers(3, 9)), True, False, False)
    in_order = (int(rng.integers(3, 9)), False, True, True)

    def words(setting):
        size, shuffle, drop_last, custom = setting
        return (f"batch_size={size}, {'shuffled' if shuffle else 'in order'}"
                + (", drop_last" if drop_last else "") + (", own collate_fn" if custom else ""))

    devices = [("cpu", shuffled), ("cuda", in_order),
               (f"cuda:{int(rng.integers(1, 4))}", shuffled), ("meta", in_order)]
    for device, setting in devices:
        # The meta device's case keeps the default, num_workers=2.
        workers = None if device == "meta" else int(rng.integers(1, 3))
        shown = "the default num_workers" if workers is None else f"num_workers={workers}"
        yield Case(f"configuration for device {device!r}, {shown}, from a loader with "
                   f"{words(setting)}",
                   lambda s=setting, d=device, w=workers: _configuration(impl, values, s, d, w),
                   hint=_LOADER_HINT + "; " + _PIN_HINTS[device.split(":")[0]])
    for setting in (shuffled, in_order):
        workers, seed = int(rng.integers(1, 3)), int(rng.integers(0, 2**31))
        yield Case(f"batches on the CPU with num_workers={workers} equal the single-process "
                   f"loader's ({words(setting)})",
                   lambda s=setting, w=workers, k=seed: _batches(impl, values, s, w, k),
                   hint="the workers must not change a batch: " + _LOADER_HINT)
    # Planted: a shuffled loader with a generator of its own (DataLoader(..., generator=g)):
    # its sampler draws the order from g, not from torch's global generator.
    workers, seeds = int(rng.integers(1, 3)), tuple(int(k) for k in rng.integers(0, 2**31, 2))
    yield Case(f"the order of a shuffled loader with a generator of its own (batch_size="
               f"{shuffled[0]}), num_workers={workers}: still drawn from that generator",
               lambda: _order_from_generator(impl, values, shuffled, workers, seeds),
               hint="the order lives in the loader's sampler, which may draw from a generator "
                    "of its own (DataLoader(..., generator=g)): hand over sampler=loader.sampler "
                    "(or keep generator=loader.generator); a new shuffle=True draws from "
                    "torch's global generator instead")


PROPERTIES = {
    "lab09.read_profile": (
        parameter("prof", "a single-process loader: "),
        promise("'costliest op': the aten:: row of largest self CPU time",
                "a single-process loader: "),
        promise("a row adds up all calls of its name (key_averages, not events)",
                "a loader with workers: "),
        promise("'self CPU ms': that row's self time in milliseconds", "a loader with workers: "),
        promise("'waiting share': wait / (wait + train), from the rows' CPU totals",
                "a single-process loader: "),
        edge("the DataLoader row outweighs every operator but is none",
             "a single-process loader: "),
        edge("on a GPU: two rows per region, keep the CPU's", "a loader with workers, on a GPU"),
    ),
    "lab09.faster_loader": (
        parameter("loader", "from a loader with batch_size="),
        parameter("device", "configuration for device 'cuda"),
        parameter("num_workers", "configuration for device 'cpu', num_workers="),
        promise("the loader's dataset, batch_size, sampler, drop_last and collate_fn",
                "in order, drop_last, own collate_fn"),
        promise("num_workers workers, persistent_workers=True", "configuration for device 'cpu'"),
        promise("pin_memory only for a CUDA device", "configuration for device 'cuda'"),
        promise("pin_memory=False on every other device", "configuration for device 'meta'"),
        promise("the same batches as the single-process loader",
                "equal the single-process loader's"),
        edge("a CUDA device with an index", "configuration for device 'cuda:"),
        edge("the default num_workers=2", "the default num_workers"),
        edge("a shuffled loader with a generator of its own keeps drawing from it",
             "a shuffled loader with a generator of its own"),
    ),
    "lab09.bf16_report": (
        parameter("a", "trial 0: a ("),
        parameter("b", "trial 0: a ("),
        parameter("x", "trial 0: a ("),
        promise("matmul, sum and softmax, each against float32 without autocast", "trial 0:"),
        promise("'autocast dtype': str(dtype) of the op under bf16 autocast", "trial 1:"),
        promise("'autocast error' and 'bf16 error': max|got - ref| / max|ref|", "trial 2:"),
        promise("each error a Python float", "the errors are Python floats"),
        promise("the reference is float32: an op autocast keeps in float32 has error 0",
                "an op autocast keeps in float32"),
    ),
    "lab09.loss_scaler": (
        promise("the given init_scale, growth_factor, backoff_factor and growth_interval",
                "trial 1: LossScaler(init_scale="),
        edge("backoff_factor other than 1 / growth_factor: backing off is not undoing a growth",
             "trial 1: LossScaler(init_scale="),
        promise("the defaults 2**16, 2, 0.5, 2000", "defaults: LossScaler().get_scale()"),
        promise("by default the scale doubles on the 2000th good step in a row, not before",
                "defaults: get_scale() after 1999 and after 2000 good steps in a row"),
        promise("scale(loss): the loss times the scale",
                "step 0, finite gradients: scale(loss)"),
        promise("unscale_ divides every .grad in place, step() then calls optimizer.step()",
                "finite gradients: scale(loss), gradients and parameters"),
        promise("any inf among the gradients: the step is skipped",
                "an inf planted in one gradient: scale(loss)"),
        promise("a NaN too (torch.isfinite)", "a NaN planted in one gradient: scale(loss)"),
        promise("after inf/NaN: back off, the good-step count set to 0",
                "an inf planted in one gradient: get_scale() after update()"),
        promise("grow after growth_interval good steps in a row",
                "finite gradients: get_scale() after update()"),
        promise("unscale_ before step(): no second division in that iteration",
                "unscale_(), clip_grad_norm_, then step()"),
        promise("get_scale(): the scale as a Python float", ".get_scale()"),
        promise("torch.amp is not used", forbidden="torch.amp"),
        promise("torch.cuda.amp is not used", forbidden="torch.cuda.amp"),
        edge("a finite gradient that overflows once scaled",
             "a finite gradient that overflows once scaled"),
        promise("every parameter group: unscaled and searched for inf/NaN",
                "two parameter groups: step 1, an inf planted in one gradient"),
        edge("an optimizer with several parameter groups", "two parameter groups: step 0"),
        promise("in place: a .grad tensor taken before unscale_() is unscaled too",
                "the .grad tensors taken before unscale_(), after it"),
    ),
    "lab09.saved_bytes": (
        parameter("model", "MLP "),
        parameter("x", "x of "),
        promise("the distinct storages saved for backward, counted once", "float32 on cpu"),
        promise("the parameters' storages left out", "MLP "),
        promise("a view counts its whole storage", "gated unit"),
        edge("the meta device (data_ptr() is 0 there)", "on meta"),
        edge("float64 inputs", "float64 on cpu"),
        edge("bfloat16 inputs", "bfloat16 on meta"),
        edge("a checkpointed body", "checkpointed MLP"),
        edge("a single linear layer", " (), x of"),
        promise("buffers (BatchNorm's running statistics) count: only parameters are left out",
                "with BatchNorm1d in training mode"),
    ),
    "lab09.checkpointed": (
        parameter("layers", "layers ("),
        parameter("x", "on cpu, x.requires_grad"),
        parameter("segments", "segments="),
        promise("pieces of len(layers) // segments layers, all but the last under checkpoint",
                "(a remainder)"),
        promise("the output, gradients, saved bytes and forward calls as checkpoint_sequential",
                "segments="),
        promise("checkpoint_sequential is not used",
                forbidden="torch.utils.checkpoint.checkpoint_sequential"),
        edge("segments=1: nothing checkpointed", "(nothing checkpointed)"),
        edge("a number of segments that leaves a remainder", "(a remainder)"),
        edge("one layer per segment", "(one layer per segment)"),
        edge("the meta device", "on meta"),
        edge("Dropout in a checkpointed segment: the recomputation draws the same masks",
             "backward recomputes the same dropout masks"),
    ),
    "lab09.predict": (
        parameter("model", "model in train mode, on cpu: the output"),
        parameter("x", "rows, batch_size="),
        parameter("batch_size", ", batch_size="),
        promise("eval mode: dropout off, batch norm on its running statistics",
                "model in train mode, on cpu: the output"),
        promise("batches x[i:i + batch_size] in order, joined with torch.cat",
                "the rows of each model call"),
        promise("inside inference_mode: an inference tensor", "the output is an inference tensor"),
        promise("nothing recorded for backward", "nothing recorded for backward"),
        promise("the model's mode restored", "the model's mode is restored"),
        promise("batch_size=256 by default", "default batch_size"),
        edge("a forward pass that raises: the mode still restored",
             "a forward pass raises (the second of 3"),
        edge("fewer rows than one batch", "(less than one batch)"),
        edge("a model already in eval mode", "model in eval mode"),
        edge("the meta device", "on meta: the output"),
    ),
}
