"""Checks for lab11_after_training: ensembles, a cyclic cosine schedule, an exponential moving
average of the weights, the pieces of fine-tuning (freezing, BatchNorm in eval mode, per-group
learning rates), and one two-layer network in four frameworks.

The references are PyTorch's own: softmax averaging with ``torch.no_grad``,
``torch.optim.lr_scheduler.CosineAnnealingWarmRestarts``, and
``torch.optim.swa_utils.AveragedModel`` with ``get_ema_multi_avg_fn`` and ``use_buffers=True``;
for the frameworks, torch autograd in float64, handed back in each framework's own array type.
Models are built inside the programs under ``torch.random.fork_rng`` with a seed drawn from
the program's generator, so the student's run and the reference's hold the same weights.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..program import Case, EarlierStepFailed, check
from ..properties import edge, promise
from ..properties import parameter as param  # lab11 names its loop variables parameter
from ..warm import torch_meta as warm_up  # noqa: F401 — its checks use the meta device


def _torch():
    import torch
    return torch


# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def _reference_ensemble():
    torch = _torch()

    def ensemble_predict(models, x):
        with torch.no_grad():
            probs = torch.stack([model.eval()(x).softmax(dim=1) for model in models]).mean(dim=0)
        return probs, probs.argmax(dim=1)

    return ensemble_predict


def _reference_cosine_restarts():
    torch = _torch()

    def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
        parameter = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([parameter], lr=base_lr)
        schedule = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
            optimizer, T_0=T_0, T_mult=T_mult, eta_min=eta_min)
        schedule.step(epoch)
        return optimizer.param_groups[0]["lr"]

    return cosine_restarts_lr


def _reference_ema():
    from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    def EMAModel(model, decay):   # stands in for the student's class
        return AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)

    return EMAModel


def _reference_freeze():
    def freeze_except(model, trainable):
        for name, parameter in model.named_parameters():
            inside = any(name.startswith(prefix + ".") for prefix in trainable)
            parameter.requires_grad_(inside)

    return freeze_except


def _reference_batchnorm_eval():
    from torch import nn

    def batchnorm_eval(model):
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.eval()
        return model

    return batchnorm_eval


def _reference_param_groups():
    def finetune_param_groups(model, head, lr, head_lr):
        body = [p for name, p in model.named_parameters()
                if p.requires_grad and not name.startswith(head + ".")]
        head_params = [p for p in model.get_submodule(head).parameters() if p.requires_grad]
        return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]

    return finetune_param_groups


# ---------------------------------------------------------------------------------------------
# helpers: models built from the program's draws
# ---------------------------------------------------------------------------------------------


def _seeded(seed: int, build):
    """``build()`` with torch's global generator seeded, leaving the caller's state alone."""
    torch = _torch()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def _state(module) -> dict:
    """Copies of a module's floating-point parameters and buffers, by name."""
    torch = _torch()
    return {name: value.detach().clone() for name, value in module.state_dict().items()
            if torch.is_floating_point(value)}


def _flags(model) -> dict:
    """``requires_grad`` of every parameter, by name."""
    return {name: bool(p.requires_grad) for name, p in model.named_parameters()}


def _modes(model) -> dict:
    """``training`` of every module, by name (the model itself as ``(model)``)."""
    return {name or "(model)": bool(m.training) for name, m in model.named_modules()}


# ---------------------------------------------------------------------------------------------
# lab11.ensemble
# ---------------------------------------------------------------------------------------------


def _classifier(kind: str, d: int, hidden: int, classes: int):
    from torch import nn

    middle = {"plain": [nn.ReLU()],
              "dropout": [nn.ReLU(), nn.Dropout(0.5)],
              "batchnorm": [nn.BatchNorm1d(hidden), nn.ReLU()]}[kind]
    return nn.Sequential(nn.Linear(d, hidden), *middle, nn.Linear(hidden, classes))


def _ensemble_observation(result) -> Any:
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return result  # compared as it is: the message names what came back instead
    probs, labels = result
    return {"probabilities": probs, "labels": labels,
            "probabilities.requires_grad": bool(probs.requires_grad)}


_ENSEMBLE_HINT = ("softmax each model's logits over the classes (dim=1), average those "
                  "probabilities over the models, then take the argmax; put every model in "
                  "eval mode and work under torch.no_grad()")


@check("lab11.ensemble", reference=_reference_ensemble)
def ensemble_program(impl: Any, rng):
    """ensemble_predict: averaged softmax probabilities and their argmax, models in eval mode."""
    torch = _torch()
    for kind in ("plain", "dropout", "batchnorm", "plain"):
        n_models, n = int(rng.integers(2, 6)), int(rng.integers(20, 60))
        d, hidden, classes = int(rng.integers(2, 8)), int(rng.integers(4, 12)), \
            int(rng.integers(3, 8))
        seed = int(rng.integers(0, 2**31))
        # Logits of a few units' size: the models disagree, so how they are combined matters.
        x = torch.from_numpy(3 * rng.standard_normal((n, d)).astype(np.float32))
        models = _seeded(seed, lambda: [_classifier(kind, d, hidden, classes)
                                        for _ in range(n_models)])
        where = {"plain": "", "dropout": ", with Dropout, left in training mode",
                 "batchnorm": ", with BatchNorm1d, left in training mode"}[kind]
        yield Case(f"{n_models} models, {classes} classes, {n} inputs{where}",
                   lambda models=models, x=x: _ensemble_observation(impl(models, x)),
                   hint=_ENSEMBLE_HINT + ("" if kind == "plain" else
                                          "; Dropout and BatchNorm behave differently in "
                                          "training mode: call model.eval()"),
                   rtol=1e-5, atol=1e-6)
    n_models, n, classes = int(rng.integers(2, 5)), int(rng.integers(3, 9)), \
        int(rng.integers(3, 7))
    seed = int(rng.integers(0, 2**31))
    models = _seeded(seed, lambda: [_classifier("plain", 4, 6, classes).to("meta")
                                    for _ in range(n_models)])
    x = torch.empty(n, 4, device="meta")
    yield Case(f"{n_models} models and inputs on the meta device",
               lambda: _ensemble_observation(impl(models, x)),
               hint="keep everything on x's device: build the average from the models' outputs "
                    "(torch.stack(...).mean(dim=0)), never from a tensor made on the CPU")


# ---------------------------------------------------------------------------------------------
# lab11.cosine_restarts
# ---------------------------------------------------------------------------------------------


def _schedule_epochs(rng, T_0: int, T_mult: int):
    """Every whole epoch over about three cycles, and fractions of epochs in between."""
    span = T_0 * (1 + T_mult + T_mult**2) + int(rng.integers(0, 3))
    steps_per_epoch = int(rng.integers(3, 6))
    whole = [float(e) for e in range(span + 1)]
    fractional = [e + k / steps_per_epoch for e in range(span) for k in range(1, steps_per_epoch)]
    return sorted(whole + fractional[:: int(rng.integers(1, 3))])


@check("lab11.cosine_restarts", reference=_reference_cosine_restarts,
       forbid=("torch.optim.lr_scheduler",))
def cosine_restarts_program(impl: Any, rng):
    """cosine_restarts_lr: the SGDR schedule, against CosineAnnealingWarmRestarts."""
    hint = ("lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, where T_i is "
            "the length of the current cycle (T_0, then T_0*T_mult, T_0*T_mult**2, ...) and T_cur "
            "the (possibly fractional) epochs since it began; a new cycle begins exactly when "
            "T_cur reaches T_i")
    configs = [(int(rng.integers(2, 8)), 1), (int(rng.integers(1, 6)), 2),
               (int(rng.integers(1, 4)), 3), (int(rng.integers(2, 6)), 2)]
    for T_0, T_mult in configs:
        base_lr = float(rng.uniform(0.01, 1.0))
        eta_min = float(rng.choice([0.0, float(rng.uniform(0.0, 0.5)) * base_lr]))
        epochs = _schedule_epochs(rng, T_0, T_mult)
        yield Case(f"T_0={T_0}, T_mult={T_mult}, base_lr={base_lr:.4g}, eta_min={eta_min:.4g}, "
                   f"epochs 0 to {epochs[-1]:g} (whole and fractional)",
                   lambda T_0=T_0, T_mult=T_mult, b=base_lr, m=eta_min, es=epochs:
                   np.array([float(impl(e, b, T_0, T_mult, m)) for e in es]),
                   hint=hint, rtol=1e-9, atol=1e-12)
    T_0 = int(rng.integers(2, 6))
    base_lr = float(rng.uniform(0.01, 1.0))
    epochs = _schedule_epochs(rng, T_0, 1)
    yield Case(f"defaults (T_mult=1, eta_min=0): T_0={T_0}, base_lr={base_lr:.4g}",
               lambda: np.array([float(impl(e, base_lr, T_0)) for e in epochs]),
               hint="keep the defaults of the signature: T_mult=1, eta_min=0.0",
               rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# lab11.ema
# ---------------------------------------------------------------------------------------------


def _ema_net(d: int, hidden: int, out: int, dtype, device: str):
    from torch import nn

    return nn.Sequential(nn.Linear(d, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                         nn.Linear(hidden, out)).to(dtype=dtype, device=device)


def _training_step(model, noise: list, x) -> None:
    """What an optimizer step and a forward pass do to a model: parameters move, and
    BatchNorm's running statistics follow the batch."""
    torch = _torch()
    with torch.no_grad():
        for parameter, delta in zip(model.parameters(), noise):
            parameter.add_(torch.as_tensor(delta, dtype=parameter.dtype).to(parameter.device))
        model.train()
        model(x)


def _ema_module(box: dict):
    if "ema" not in box:
        raise EarlierStepFailed("skipped: building the EMA model failed (see the case above)")
    return box["ema"].module


def _ema_update(box: dict, model) -> dict:
    _ema_module(box)
    box["ema"].update_parameters(model)
    return _state(box["ema"].module)


def _shares_no_tensor(box: dict, model) -> bool:
    """Whether the average keeps tensors of its own: none of its parameters and buffers is
    one of the model's, or a view of the same memory."""
    module = _ema_module(box)
    theirs = list(model.parameters()) + list(model.buffers())
    mine = list(module.parameters()) + list(module.buffers())
    if module is model or {id(t) for t in mine} & {id(t) for t in theirs}:
        return False
    if any(t.is_meta for t in theirs):
        return True   # meta tensors hold no memory to share
    memory = {t.untyped_storage().data_ptr() for t in theirs}
    return not any(t.untyped_storage().data_ptr() in memory for t in mine)


def _unchanged_by(box: dict, model, noise, x) -> bool:
    """Train the model on without an update; whether the average stayed as it was."""
    torch = _torch()
    module = _ema_module(box)
    before = _state(module)
    _training_step(model, noise, x)
    after = _state(box["ema"].module)
    if any(t.is_meta for t in before.values()):
        return _shares_no_tensor(box, model)
    return before.keys() == after.keys() and all(torch.equal(before[k], after[k])
                                                 for k in before)


def _ema_output(box: dict, x):
    torch = _torch()
    module = _ema_module(box)
    module.eval()
    with torch.no_grad():
        return module(x)


_EMA_HINTS = {
    "build": "right after EMAModel(model, decay), self.module holds the model's parameters and "
             "buffers",
    "own": "EMAModel(model, decay) keeps its own deep copy of the model in self.module "
           "(copy.deepcopy(model)): later changes to the model must not reach it",
    "first": "the first update_parameters(model) copies the model's parameters and buffers "
             "into the average, as AveragedModel does; only later updates average",
    "update": "every later update: avg = decay * avg + (1 - decay) * current, for every "
              "floating-point parameter AND buffer (BatchNorm's running_mean and running_var)",
    "output": "the averaged model is self.module; in eval mode BatchNorm uses the averaged "
              "running statistics",
}


@check("lab11.ema", reference=_reference_ema, forbid=("torch.optim.swa_utils",))
def ema_program(impl: Any, rng):
    """EMAModel: Polyak/EMA averaging of parameters and buffers, against AveragedModel."""
    torch = _torch()
    for trial, (dtype, device) in enumerate(((torch.float32, "cpu"), (torch.float64, "cpu"),
                                             (torch.float32, "cpu"), (torch.float32, "meta"))):
        d, hidden, out = int(rng.integers(2, 6)), int(rng.integers(3, 8)), int(rng.integers(1, 4))
        decay = float(np.round(rng.uniform(0.6, 0.95), 3))
        steps, batch = int(rng.integers(3, 6)), int(rng.integers(4, 9))
        seed = int(rng.integers(0, 2**31))
        model = _seeded(seed, lambda: _ema_net(d, hidden, out, dtype, device))
        shapes = [tuple(p.shape) for p in model.parameters()]
        where = (f"trial {trial + 1} ({str(dtype).replace('torch.', '')} on {device}, "
                 f"decay={decay})")
        box: dict = {}

        def build(model=model, decay=decay, box=box):
            box.pop("ema", None)
            box["ema"] = impl(model, decay)
            return _state(box["ema"].module)

        built = f"{where}: the averaged copy right after EMAModel(model, decay)"
        yield Case(built, build, hint=_EMA_HINTS["build"])
        # Properties that hold whatever the arithmetic: each names its own mistake.
        own = f"{where}: the average shares no parameter or buffer with the model"
        yield Case(own, lambda box=box, model=model: _shares_no_tensor(box, model),
                   hint=_EMA_HINTS["own"])
        previous = built
        for step in range(1, steps + 1):
            noise = [0.1 * rng.standard_normal(shape) for shape in shapes]
            x = torch.from_numpy(rng.standard_normal((batch, d))).to(dtype=dtype, device=device)
            _training_step(model, noise, x)  # the model trains on; the average follows it
            here = f"{where}: parameters and buffers after update_parameters #{step}"
            # Each update starts from the average the ones before left.
            yield Case(here, lambda box=box, model=model: _ema_update(box, model),
                       hint=_EMA_HINTS["first" if step == 1 else "update"],
                       rtol=1e-5, atol=1e-6, follows=(previous, own))
            previous = here
        noise = [rng.standard_normal(shape) for shape in shapes]
        x = torch.from_numpy(rng.standard_normal((batch, d))).to(dtype=dtype, device=device)
        yield Case(f"{where}: training the model on without an update leaves the average as "
                   f"it was", lambda box=box, model=model, n=noise, x=x:
                   _unchanged_by(box, model, n, x), hint=_EMA_HINTS["own"])
        yield Case(f"{where}: output of the averaged model in eval mode",
                   lambda box=box, x=x: _ema_output(box, x), hint=_EMA_HINTS["output"],
                   rtol=1e-5, atol=1e-6, follows=(previous, own))


# ---------------------------------------------------------------------------------------------
# fine-tuning models: named like torchvision's and timm's
# ---------------------------------------------------------------------------------------------


def _backbone(rng, n_features: int, head: str, sibling: str):
    """A model whose children are ``stem`` (conv + BatchNorm2d), ``features`` (a Sequential of
    ``n_features`` small layers, some BatchNorm1d or nested), ``sibling`` and ``head``.

    Returns a zero-argument builder (draws happen here, in the program body)."""
    kinds = [str(k) for k in rng.choice(["linear", "bn", "block", "dropout"], size=n_features)]
    kinds[1] = "block"  # planted: a nested Sequential with a BatchNorm1d inside

    def build():
        from torch import nn

        layers = {"linear": lambda: nn.Linear(3, 3), "bn": lambda: nn.BatchNorm1d(3),
                  "block": lambda: nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.ReLU()),
                  "dropout": lambda: nn.Dropout(0.1)}
        model = nn.Module()
        model.stem = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU())
        model.features = nn.Sequential(*[layers[k]() for k in kinds])
        model.add_module(sibling, nn.LayerNorm(3) if sibling.endswith("norm") else nn.Linear(3, 3))
        model.add_module(head, nn.Linear(3, 2))
        return model

    return build


def _nested_names(rng, n_features: int, head: str, sibling: str):
    """A backbone (see ``_backbone``) with one more child, ``encoder``, that holds modules
    named like the top-level ones: ``encoder.features.1`` and ``encoder.<head>``."""
    build_backbone = _backbone(rng, n_features, head, sibling)
    inner = int(rng.integers(2, 4))

    def build():
        from torch import nn

        model = build_backbone()
        model.encoder = nn.Module()
        model.encoder.features = nn.Sequential(*[nn.Linear(3, 3) for _ in range(inner)])
        model.encoder.add_module(head, nn.Linear(3, 3))
        return model

    return build


# (head, a sibling whose name starts with or contains the head's): fc_norm is timm's, and
# pre_classifier Hugging Face's DistilBERT's
_HEADS = (("fc", "fc_norm"), ("classifier", "pre_classifier"), ("head", "head_norm"))


# ---------------------------------------------------------------------------------------------
# lab11.freeze
# ---------------------------------------------------------------------------------------------


def _freeze_observation(impl, model, trainable):
    impl(model, list(trainable))
    return _flags(model)


@check("lab11.freeze", reference=_reference_freeze)
def freeze_program(impl: Any, rng):
    """freeze_except: requires_grad True exactly inside the named submodules."""
    hint = ("a parameter is trainable when its name starts with one of the module names plus "
            "a dot ('features.1.' is inside 'features.1', 'features.10.' and 'fc_norm.' are "
            "not); set requires_grad_(True) on those and requires_grad_(False) on all others, "
            "including parameters frozen before")
    for trial in range(4):
        head, sibling = _HEADS[int(rng.integers(0, len(_HEADS)))]
        n_features = int(rng.integers(11, 14))  # features.1 and features.10 both exist
        build = _backbone(rng, n_features, head, sibling)
        if trial == 0:    # linear probe
            trainable = [head]
        elif trial == 1:  # fine-tune the top: a cut in features, the sibling and the head
            cut = int(rng.integers(n_features - 4, n_features - 1))
            trainable = [f"features.{i}" for i in range(cut, n_features)] + [sibling, head]
        elif trial == 2:  # planted: features.1 trainable, features.10.. not
            trainable = ["features.1", head]
        else:             # everything frozen
            trainable = []
        seed = int(rng.integers(0, 2**31))
        model = _seeded(seed, build)
        names = [name for name, _ in model.named_parameters()]
        frozen_before = [str(n) for n in rng.choice(names, size=len(names) // 2, replace=False)]
        for name, parameter in model.named_parameters():
            parameter.requires_grad_(name not in frozen_before)
        probe = " (a linear probe: the head only)" if trial == 0 else ""
        yield Case(f"trainable={trainable}{probe} ({len(names)} parameters, half of them frozen "
                   f"before the call)",
                   lambda model=model, trainable=trainable:
                   _freeze_observation(impl, model, trainable), hint=hint)
    from coursekit.models import DigitsCNN

    digits = _seeded(int(rng.integers(0, 2**31)), lambda: DigitsCNN(num_classes=5))
    yield Case("DigitsCNN, trainable=['block2', 'fc']",
               lambda: _freeze_observation(impl, digits, ["block2", "fc"]), hint=hint)
    meta = _seeded(int(rng.integers(0, 2**31)), lambda: DigitsCNN(num_classes=5)).to("meta")
    yield Case("DigitsCNN on the meta device, trainable=['fc']",
               lambda: _freeze_observation(impl, meta, ["fc"]), hint=hint)
    # Planted: modules deeper down named like the trainable ones (timm's head.fc, an encoder
    # with features of its own) are not inside them: only a name's start counts.
    head, sibling = _HEADS[int(rng.integers(0, len(_HEADS)))]
    nested = _seeded(int(rng.integers(0, 2**31)),
                     _nested_names(rng, int(rng.integers(3, 6)), head, sibling))
    yield Case(f"trainable=['features.1', {head!r}] with encoder.features.1 and "
               f"encoder.{head} deeper down (not inside them)",
               lambda: _freeze_observation(impl, nested, ["features.1", head]),
               hint="a parameter is inside 'fc' when its name STARTS with 'fc.': "
                    "'encoder.fc.weight' is inside 'encoder.fc', not inside 'fc'; match the "
                    "start of the name, not a part anywhere in it")


# ---------------------------------------------------------------------------------------------
# lab11.batchnorm_eval
# ---------------------------------------------------------------------------------------------


def _batchnorm_eval_observation(impl, model):
    returned = impl(model)
    return {"training flag of every module": _modes(model),
            "returns the model": returned is model}


@check("lab11.batchnorm_eval", reference=_reference_batchnorm_eval)
def batchnorm_eval_program(impl: Any, rng):
    """batchnorm_eval: every BatchNorm (1d, 2d, nested) in eval mode, nothing else changed."""
    hint = ("visit every module (model.modules() walks nested ones too); call .eval() on each "
            "BatchNorm of any dimension (they all derive from "
            "torch.nn.modules.batchnorm._BatchNorm) and leave every other module's mode as it "
            "was (Dropout must keep dropping); return the model")
    for trial in range(3):
        head, sibling = _HEADS[int(rng.integers(0, len(_HEADS)))]
        build = _backbone(rng, int(rng.integers(3, 7)), head, sibling)
        model = _seeded(int(rng.integers(0, 2**31)), build)
        # Planted in the last trial: some modules already in eval mode must stay so.
        already = [str(n) for n, _ in model.named_modules()][1:]
        already = [str(n) for n in rng.choice(already, size=2, replace=False)]
        model.train()
        if trial == 2:
            for name in already:
                model.get_submodule(name).eval()
        yield Case(f"trial {trial + 1}: {sum(1 for _ in model.modules())} modules"
                   + (f", {already} already in eval mode" if trial == 2 else ", all training"),
                   lambda model=model: _batchnorm_eval_observation(impl, model), hint=hint)
    from coursekit.models import DigitsCNN

    digits = _seeded(int(rng.integers(0, 2**31)), lambda: DigitsCNN(num_classes=5)).train()
    yield Case("DigitsCNN in training mode",
               lambda: _batchnorm_eval_observation(impl, digits), hint=hint)
    # Planted: a BatchNorm class not named BatchNorm*, a subclass of _BatchNorm.
    head, sibling = _HEADS[int(rng.integers(0, len(_HEADS)))]
    build = _backbone(rng, int(rng.integers(3, 6)), head, sibling)

    def with_other_norms(build=build):
        from torch import nn

        model = build()
        model.features.append(nn.Sequential(nn.Linear(3, 3), nn.SyncBatchNorm(3)))
        model.add_module("neck", nn.Sequential(nn.SyncBatchNorm(3), nn.Dropout(0.1)))
        return model

    other = _seeded(int(rng.integers(0, 2**31)), with_other_norms).train()
    yield Case("SyncBatchNorm layers in training mode (SyncBatchNorm derives from _BatchNorm)",
               lambda: _batchnorm_eval_observation(impl, other),
               hint="SyncBatchNorm is a BatchNorm too, though its class name does not start "
                    "with 'BatchNorm': test isinstance(module, _BatchNorm), not the class name")


# ---------------------------------------------------------------------------------------------
# lab11.param_groups
# ---------------------------------------------------------------------------------------------


_DEFAULT_LR = 9.0  # the optimizer's own lr: a group without "lr" would use it


def _learning_rates(impl, model, head, lr, head_lr) -> dict:
    """The step each parameter takes when every gradient is 1: its learning rate (0 when the
    optimizer does not hold it). The models are float64, so the step is the rate itself."""
    torch = _torch()
    groups = impl(model, head, lr, head_lr)
    optimizer = torch.optim.SGD(groups, lr=_DEFAULT_LR)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    for parameter in model.parameters():
        parameter.grad = torch.ones_like(parameter)
    optimizer.step()
    steps = {name: float((before[name] - p.detach()).mean()) for name, p in
             model.named_parameters()}
    # A frozen parameter in a group (even at lr 0) is one the text leaves out: weight decay or
    # momentum would still move it.
    steps["frozen parameters the groups hold"] = sum(
        1 for group in optimizer.param_groups for p in group["params"] if not p.requires_grad)
    return steps


@check("lab11.param_groups", reference=_reference_param_groups)
def param_groups_program(impl: Any, rng):
    """finetune_param_groups: head at head_lr, other trainable parameters at lr, frozen ones out."""
    hint = ("return [{'params': [...], 'lr': lr}, {'params': [...], 'lr': head_lr}]: the head's "
            "parameters are those whose name starts with head + '.' (fc_norm is not fc); leave "
            "out every parameter with requires_grad False; no parameter in two groups")
    for trial in range(5):
        head, sibling = _HEADS[int(rng.integers(0, len(_HEADS)))]
        n_features = int(rng.integers(3, 7))
        build = _backbone(rng, n_features, head, sibling)
        model = _seeded(int(rng.integers(0, 2**31)), build).double()
        lr = float(np.round(rng.uniform(1e-4, 1e-2), 6))
        head_lr = float(np.round(lr * rng.uniform(5, 20), 6))
        if trial == 0:    # linear probe: only the head trains
            frozen = lambda name, head=head: not name.startswith(head + ".")
        elif trial == 3:  # everything trains
            frozen = lambda name: False
        elif trial == 4:  # the stem and the head's bias frozen: the head has a frozen parameter
            frozen = lambda name, head=head: name.startswith("stem.") or name == f"{head}.bias"
        else:             # the stem and the first feature layers frozen
            cut = int(rng.integers(1, n_features))
            frozen = lambda name, cut=cut: name.startswith("stem.") or (
                name.startswith("features.") and int(name.split(".")[1]) < cut)
        for name, parameter in model.named_parameters():
            parameter.requires_grad_(not frozen(name))
        n_frozen = sum(1 for name, _ in model.named_parameters() if frozen(name))
        planted = {0: " (a linear probe)", 3: " (nothing frozen)",
                   4: " (the head's bias frozen)"}.get(trial, "")
        yield Case(f"head={head!r} (next to {sibling!r}), lr={lr:g}, head_lr={head_lr:g}, "
                   f"{n_frozen} frozen parameters{planted}: the step each parameter takes for a "
                   f"gradient of ones",
                   lambda model=model, head=head, lr=lr, head_lr=head_lr:
                   _learning_rates(impl, model, head, lr, head_lr),
                   hint=hint, rtol=1e-6, atol=1e-9)
    from coursekit.models import DigitsCNN

    digits = _seeded(int(rng.integers(0, 2**31)), lambda: DigitsCNN(num_classes=5)).double()
    for name, parameter in digits.named_parameters():
        parameter.requires_grad_(not name.startswith("block1."))
    yield Case("DigitsCNN with block1 frozen, head='fc', lr=0.001, head_lr=0.01",
               lambda: _learning_rates(impl, digits, "fc", 0.001, 0.01), hint=hint,
               rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# lab11.frameworks
# ---------------------------------------------------------------------------------------------

FRAMEWORKS = ("coursekit", "torch", "tensorflow", "jax")


def _array_kind(value) -> str:
    """The framework a returned array belongs to, by the module that defines its type."""
    root = type(value).__module__.split(".")[0]
    return {"jaxlib": "jax"}.get(root, root)


def _to_framework(framework: str, value):
    """A float64 NumPy array as the framework's own array (JAX: float32, its default)."""
    if framework == "coursekit":
        import coursekit
        return coursekit.tensor(value)
    if framework == "torch":
        return _torch().from_numpy(value)
    if framework == "tensorflow":
        import os
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # as lab07: the same numbers each run
        import tensorflow as tf
        return tf.constant(value)
    import jax.numpy as jnp
    return jnp.asarray(value)


def _reference_frameworks():
    from .lab01 import _reference_two_layer_grads

    two_layer_grads = _reference_two_layer_grads()

    def two_layer(framework, x, y, w1, w2):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        return tuple(_to_framework(framework, np.asarray(v, dtype=np.float64))
                     for v in (loss, grad_w1, grad_w2))

    return two_layer


def _framework_observation(result) -> dict:
    loss, grad_w1, grad_w2 = result
    return {"loss": loss, "grad_w1": grad_w1, "grad_w2": grad_w2,
            "the gradients' type comes from": _array_kind(grad_w1)}


_FRAMEWORK_HINTS = {
    "coursekit": "coursekit mirrors torch: ck.tensor(w, requires_grad=True), build the loss with "
                 "@, .relu(), .pow(2).sum(), call loss.backward() and return w1.grad, w2.grad",
    "torch": "torch.tensor(w1, requires_grad=True) (float64 from NumPy), the loss as a sum of "
             "squares, loss.backward(), then w1.grad and w2.grad",
    "tensorflow": "make w1, w2 tf.Variable (a tf.constant is not watched unless you call "
                  "tape.watch), compute the loss inside `with tf.GradientTape() as tape:`, then "
                  "tape.gradient(loss, [w1, w2])",
    "jax": "write loss(w1, w2) as a pure function of the weights with jnp operations, then "
           "jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)",
}


@check("lab11.frameworks", reference=_reference_frameworks)
def frameworks_program(impl: Any, rng):
    """two_layer: the same loss and gradients in coursekit, torch, TensorFlow and JAX."""
    from .lab01 import _shape, _two_layer_problem

    for trial in range(1, 3):
        n, d_in, h, d_out = _shape(rng)
        x, y, w1, w2 = _two_layer_problem(rng, n, d_in, h, d_out)
        for framework in FRAMEWORKS:
            # JAX computes in float32 unless told otherwise: tolerances fit float32 for all.
            yield Case(f"{framework}, trial {trial} (N={n}, D_in={d_in}, H={h}, D_out={d_out})",
                       lambda f=framework, a=(x, y, w1, w2): _framework_observation(impl(f, *a)),
                       hint=_FRAMEWORK_HINTS[framework] + "; return the framework's own arrays "
                            "(no conversion to NumPy)", rtol=1e-4, atol=1e-6)


PROPERTIES = {
    "lab11.ensemble": (
        param("models", "models, "),
        param("x", "inputs"),
        promise("probs: the mean over the models of softmax(model(x)), (N, classes)",
                "classes, "),
        promise("labels: the argmax of probs per input", "classes, "),
        promise("every model in eval mode", "with Dropout, left in training mode"),
        promise("under torch.no_grad(): probs require no grad", "classes, "),
        promise("everything on x's device", "inputs on the meta device"),
        edge("BatchNorm handed over in training mode", "with BatchNorm1d, left in training mode"),
    ),
    "lab11.cosine_restarts": (
        param("epoch", "(whole and fractional)"),
        param("base_lr", "base_lr="),
        param("T_0", "T_0="),
        param("T_mult", "T_mult=2"),
        param("eta_min", ", eta_min="),
        promise("the SGDR learning rate, as CosineAnnealingWarmRestarts", "T_mult=1, base_lr="),
        promise("cycles T_0, T_0*T_mult, T_0*T_mult**2, ...", "T_mult=3"),
        promise("T_mult=1 and eta_min=0 by default", "defaults (T_mult=1, eta_min=0)"),
        promise("torch.optim.lr_scheduler is not used", forbidden="torch.optim.lr_scheduler"),
        edge("fractional epochs", "(whole and fractional)"),
        edge("an epoch exactly where a cycle ends", "epochs 0 to"),
    ),
    "lab11.ema": (
        promise("self.module holds the model right after EMAModel(model, decay)",
                "the averaged copy right after EMAModel(model, decay)"),
        promise("a deep copy: no tensor shared with the model",
                "the average shares no parameter or buffer"),
        promise("later training of the model does not change the average",
                "training the model on without an update leaves the average"),
        promise("the first update copies the parameters and buffers",
                "after update_parameters #1"),
        promise("later updates: avg = decay * avg + (1 - decay) * current, buffers too",
                "after update_parameters #2"),
        promise("the averaged model runs with the averaged running statistics",
                "output of the averaged model in eval mode"),
        promise("torch.optim.swa_utils is not used", forbidden="torch.optim.swa_utils"),
        edge("float64", "float64 on cpu"),
        edge("the meta device: the copy keeps the model's device and dtype", "on meta"),
    ),
    "lab11.freeze": (
        param("model", "parameters, half of them frozen before the call"),
        param("trainable", "trainable=["),
        promise("requires_grad=True inside the named submodules", "trainable=['block2', 'fc']"),
        promise("False everywhere else, also for parameters frozen before",
                "half of them frozen before the call"),
        edge("'features.10' is not inside 'features.1'", "trainable=['features.1', "),
        edge("a sibling named like the head (fc_norm is not inside fc)", "(a linear probe: the head only)"),
        edge("an empty list freezes everything", "trainable=[] ("),
        edge("the meta device", "DigitsCNN on the meta device"),
        edge("a module deeper down named like a trainable one is not inside it",
             "deeper down (not inside them)"),
    ),
    "lab11.batchnorm_eval": (
        param("model", "modules, all training"),
        promise("every BatchNorm, of any dimension and depth, in eval mode",
                "DigitsCNN in training mode"),
        promise("every other module's mode left as it is", "modules, all training"),
        promise("returns the model", "trial 1: "),
        edge("modules already in eval mode stay so", "already in eval mode"),
        edge("every class derived from _BatchNorm, also SyncBatchNorm",
             "SyncBatchNorm layers in training mode"),
    ),
    "lab11.param_groups": (
        param("model", "frozen parameters: the step each parameter takes"),
        param("head", "head="),
        param("lr", ", lr="),
        param("head_lr", "head_lr="),
        promise("the head's parameters at head_lr, the others at lr",
                "the step each parameter takes for a gradient of ones"),
        promise("no frozen parameter in any group", "frozen parameters (a linear probe)"),
        promise("not even in a group of its own at lr 0", "the head's bias frozen)"),
        promise("every group names its lr", "DigitsCNN with block1 frozen"),
        promise("no parameter in two groups", "head="),
        edge("a sibling whose name starts with the head's", "(next to '"),
        edge("a frozen parameter inside the head", "(the head's bias frozen)"),
        edge("nothing frozen", "(nothing frozen)"),
    ),
    "lab11.frameworks": (
        param("framework", "coursekit, trial 1"),
        param("x", "trial 1 (N="),
        param("y", "trial 1 (N="),
        param("w1", "D_in="),
        param("w2", "D_out="),
        promise("coursekit's backward gives the loss and gradients", "coursekit, trial"),
        promise("PyTorch's backward", "torch, trial"),
        promise("TensorFlow's GradientTape", "tensorflow, trial"),
        promise("jax.grad or jax.value_and_grad", "jax, trial"),
        promise("the framework's own arrays, not NumPy", "jax, trial 2"),
    ),
}
