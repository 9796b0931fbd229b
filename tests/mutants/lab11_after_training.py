"""Realistic wrong answers for lab11_after_training: each must lose points in its checks cell;
and right answers written differently, which must keep full marks."""

_ENSEMBLE = '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
{body}
'''

_COSINE = '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
{body}
'''

_EMA_INIT = '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.n_averaged = 0
'''

_EMA_FORWARD = '''
    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''

_FREEZE = '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(name.startswith(prefixes))
'''

_BATCHNORM_EVAL = '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''

_GROUPS = '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
{body}
'''

MUTANTS = {
    "ensemble": [
        ("averages the logits, then takes one softmax", _ENSEMBLE.format(body='''\
        logits = torch.stack([model.eval()(x) for model in models]).mean(dim=0)
        probs = logits.softmax(dim=1)
    return probs, probs.argmax(dim=1)''')),
        ("labels by majority vote of the members", _ENSEMBLE.format(body='''\
        each = torch.stack([model.eval()(x).softmax(dim=1) for model in models])
        probs = each.mean(dim=0)
        votes = each.argmax(dim=2).mode(dim=0).values
    return probs, votes''')),
        ("forgets model.eval(): Dropout and BatchNorm stay in training mode",
         _ENSEMBLE.format(body='''\
        probs = torch.stack([model(x).softmax(dim=1) for model in models]).mean(dim=0)
    return probs, probs.argmax(dim=1)''')),
        ("no torch.no_grad(): the probabilities carry a graph", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    probs = torch.stack([model.eval()(x).softmax(dim=1) for model in models]).mean(dim=0)
    return probs, probs.argmax(dim=1)
'''),
        ("softmax over the batch (dim=0) instead of the classes", _ENSEMBLE.format(body='''\
        probs = torch.stack([model.eval()(x).softmax(dim=0) for model in models]).mean(dim=0)
    return probs, probs.argmax(dim=1)''')),
        ("accumulates into torch.zeros made on the CPU", _ENSEMBLE.format(body='''\
        total = None
        for model in models:
            p = model.eval()(x).softmax(dim=1)
            total = torch.zeros(p.shape) if total is None else total
            total = total + p
        probs = total / len(models)
    return probs, probs.argmax(dim=1)''')),
    ],
    "cosine_restarts": [
        ("delegates to CosineAnnealingWarmRestarts (forbidden)", _COSINE.format(body='''\
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=base_lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0, T_mult, eta_min)
    schedule.step(epoch)
    return optimizer.param_groups[0]["lr"]''')),
        ("ignores T_mult: every cycle lasts T_0 epochs", _COSINE.format(body='''\
    T_cur = epoch % T_0
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_0)) / 2''')),
        ("forgets eta_min", _COSINE.format(body='''\
    T_i, start = T_0, 0
    while epoch >= start + T_i:
        start += T_i
        T_i *= T_mult
    return base_lr * (1 + math.cos(math.pi * (epoch - start) / T_i)) / 2''')),
        ("restarts one step late (> instead of >=): eta_min at the first epoch of a cycle",
         _COSINE.format(body='''\
    T_i, start = T_0, 0
    while epoch > start + T_i:
        start += T_i
        T_i *= T_mult
    T_cur = epoch - start
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2''')),
        ("rounds the epoch down: constant within an epoch", _COSINE.format(body='''\
    T_i, start = T_0, 0
    epoch = int(epoch)
    while epoch >= start + T_i:
        start += T_i
        T_i *= T_mult
    T_cur = epoch - start
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2''')),
        ("cycle i lasts T_0 * T_mult**(i+1): the first cycle is already stretched",
         _COSINE.format(body='''\
    T_i, start = T_0 * T_mult, 0
    while epoch >= start + T_i:
        start += T_i
        T_i *= T_mult
    T_cur = epoch - start
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2''')),
        ("half a cosine per cycle without the 1 + ...: goes negative", _COSINE.format(body='''\
    T_i, start = T_0, 0
    while epoch >= start + T_i:
        start += T_i
        T_i *= T_mult
    T_cur = epoch - start
    return eta_min + (base_lr - eta_min) * math.cos(math.pi * T_cur / T_i)''')),
    ],
    "ema": [
        ("delegates to AveragedModel (forbidden)", '''from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


def EMAModel(model, decay):
    return AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)
'''),
        ("no deep copy: the average is the trained model itself", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = model
        self.decay = decay
        self.n_averaged = 0

    def update_parameters(self, model):
        with torch.no_grad():
            for avg, new in zip(self.module.parameters(), model.parameters()):
                avg.mul_(self.decay).add_(new, alpha=1 - self.decay)
        self.n_averaged += 1
''' + _EMA_FORWARD),
        ("averages the parameters only, not BatchNorm's running statistics", _EMA_INIT + '''
    def update_parameters(self, model):
        with torch.no_grad():
            for avg, new in zip(self.module.parameters(), model.parameters()):
                if self.n_averaged == 0:
                    avg.copy_(new)
                else:
                    avg.mul_(self.decay).add_(new, alpha=1 - self.decay)
        self.n_averaged += 1
''' + _EMA_FORWARD),
        ("decay on the wrong side: avg = (1 - d) * avg + d * new", _EMA_INIT + '''
    def update_parameters(self, model):
        averaged = list(self.module.parameters()) + list(self.module.buffers())
        current = list(model.parameters()) + list(model.buffers())
        with torch.no_grad():
            for avg, new in zip(averaged, current):
                if not torch.is_floating_point(avg) or self.n_averaged == 0:
                    avg.copy_(new)
                else:
                    avg.mul_(1 - self.decay).add_(new, alpha=self.decay)
        self.n_averaged += 1
''' + _EMA_FORWARD),
        ("the first update averages with the initial copy instead of copying", _EMA_INIT + '''
    def update_parameters(self, model):
        averaged = list(self.module.parameters()) + list(self.module.buffers())
        current = list(model.parameters()) + list(model.buffers())
        with torch.no_grad():
            for avg, new in zip(averaged, current):
                if not torch.is_floating_point(avg):
                    avg.copy_(new)
                else:
                    avg.mul_(self.decay).add_(new, alpha=1 - self.decay)
        self.n_averaged += 1
''' + _EMA_FORWARD),
        ("copies the buffers from the model instead of averaging them", _EMA_INIT + '''
    def update_parameters(self, model):
        with torch.no_grad():
            for avg, new in zip(self.module.parameters(), model.parameters()):
                if self.n_averaged == 0:
                    avg.copy_(new)
                else:
                    avg.mul_(self.decay).add_(new, alpha=1 - self.decay)
            for avg, new in zip(self.module.buffers(), model.buffers()):
                avg.copy_(new)
        self.n_averaged += 1
''' + _EMA_FORWARD),
    ],
    "freeze": [
        ("matches names without the dot: fc_norm counts as fc, features.10 as features.1",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(any(name.startswith(t) for t in trainable))
''' + _BATCHNORM_EVAL),
        ("only freezes: a parameter frozen before stays frozen", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, parameter in model.named_parameters():
        if not name.startswith(prefixes):
            parameter.requires_grad_(False)
''' + _BATCHNORM_EVAL),
        ("compares only the first part of the name: 'features.1' never matches",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(name.split(".")[0] in trainable)
''' + _BATCHNORM_EVAL),
        ("batchnorm_eval puts the whole model in eval mode (Dropout too)", _FREEZE + '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    return model.eval()
'''),
        ("batchnorm_eval knows only BatchNorm2d", _FREEZE + '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()
    return model
'''),
        ("batchnorm_eval looks at the direct children only", _FREEZE + '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.children():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval recognises BatchNorm by its class name: SyncBatchNorm stays in training",
         _FREEZE + '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if type(module).__name__.startswith("BatchNorm"):
            module.eval()
    return model
'''),
        ("matches a trainable name anywhere in the path: 'fc' unfreezes encoder.fc too", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(any(("." + t + ".") in ("." + name) for t in trainable))
''' + _BATCHNORM_EVAL),
        ("batchnorm_eval freezes BatchNorm's parameters instead of its statistics", _FREEZE + '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.requires_grad_(False)
    return model
'''),
    ],
    "param_groups": [
        ("puts the frozen parameters in a third group at lr 0", _GROUPS.format(body='''\
    body, head_params, frozen = [], [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            frozen.append(parameter)
        elif name.startswith(head + "."):
            head_params.append(parameter)
        else:
            body.append(parameter)
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr},
            {"params": frozen, "lr": 0.0}]''')),
        ("keeps the frozen parameters in the optimizer", _GROUPS.format(body='''\
    body, head_params = [], []
    for name, parameter in model.named_parameters():
        (head_params if name.startswith(head + ".") else body).append(parameter)
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]''')),
        ("leaves the frozen parameters out of the body only: the head's stay in",
         _GROUPS.format(body='''\
    body, head_params = [], []
    for name, parameter in model.named_parameters():
        if name.startswith(head + "."):
            head_params.append(parameter)
        elif parameter.requires_grad:
            body.append(parameter)
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]''')),
        ("finds the head by substring: fc_norm and pre_classifier join it",
         _GROUPS.format(body='''\
    body, head_params = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (head_params if head in name else body).append(parameter)
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]''')),
        ("the body group has no 'lr': it takes the optimizer's default", _GROUPS.format(body='''\
    body, head_params = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (head_params if name.startswith(head + ".") else body).append(parameter)
    return [{"params": body}, {"params": head_params, "lr": head_lr}]''')),
        ("the head's parameters also in the body group", _GROUPS.format(body='''\
    body = [p for p in model.parameters() if p.requires_grad]
    head_params = [p for p in model.get_submodule(head).parameters() if p.requires_grad]
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]''')),
        ("learning rates swapped", _GROUPS.format(body='''\
    body, head_params = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (head_params if name.startswith(head + ".") else body).append(parameter)
    return [{"params": body, "lr": head_lr}, {"params": head_params, "lr": lr}]''')),
    ],
}

ALTERNATIVES = {
    "ensemble": [
        ("a loop with F.softmax(dim=-1), a running sum, inference_mode", '''import torch.nn.functional as F


def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    for model in models:
        model.train(False)
    with torch.inference_mode():
        total = 0
        for model in models:
            total = total + F.softmax(model(x), dim=-1)
        probs = total / len(models)
        labels = torch.argmax(probs, dim=-1)
    return probs, labels
'''),
    ],
    "cosine_restarts": [
        ("the cycle found in closed form, as torch does it", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    if T_mult == 1:
        T_cur, T_i = epoch % T_0, T_0
    elif epoch < T_0:
        T_cur, T_i = epoch, T_0
    else:
        n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult))
        T_cur = epoch - T_0 * (T_mult ** n - 1) / (T_mult - 1)
        T_i = T_0 * T_mult ** n
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i))
'''),
    ],
    "ema": [
        ("a plain class over state_dict() with lerp_, n_averaged as a flag", '''class EMAModel:
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.started = False

    @torch.no_grad()
    def update_parameters(self, model):
        mine, theirs = self.module.state_dict(), model.state_dict()
        for key, value in mine.items():
            if not self.started or not value.is_floating_point():
                value.copy_(theirs[key])
            else:
                value.lerp_(theirs[key], 1.0 - self.decay)
        self.started = True

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("freeze all, then unfreeze each named submodule; train(False) on BatchNorm",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    model.requires_grad_(False)
    for name in trainable:
        model.get_submodule(name).requires_grad_(True)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)):
            module.train(False)
    return model
'''),
    ],
    "param_groups": [
        ("the head's parameters by identity, filter(), the body by exclusion", '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_ids = {id(p) for p in model.get_submodule(head).parameters()}
    trainable = list(filter(lambda p: p.requires_grad, model.parameters()))
    return [
        dict(params=[p for p in trainable if id(p) not in head_ids], lr=lr),
        dict(params=[p for p in trainable if id(p) in head_ids], lr=head_lr),
    ]
'''),
    ],
}

_FRAMEWORKS_HEAD = '''import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import jax
import jax.numpy as jnp
import tensorflow as tf

import coursekit as ck

'''

_COURSEKIT = '''
def coursekit_two_layer(x, y, w1, w2):
    x, y = ck.tensor(x), ck.tensor(y)
    w1, w2 = ck.tensor(w1, requires_grad=True), ck.tensor(w2, requires_grad=True)
    loss = ((x @ w1).relu() @ w2 - y).pow(2).sum()
    loss.backward()
    return loss, w1.grad, w2.grad
'''

_TORCH = '''
def torch_two_layer(x, y, w1, w2):
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    w1, w2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    loss.backward()
    return loss.detach(), w1.grad, w2.grad
'''

_TENSORFLOW = '''
def tensorflow_two_layer(x, y, w1, w2):
    x, y = tf.constant(x), tf.constant(y)
    w1, w2 = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((tf.nn.relu(x @ w1) @ w2 - y) ** 2)
    grad_w1, grad_w2 = tape.gradient(loss, [w1, w2])
    return loss, grad_w1, grad_w2
'''

_JAX = '''
def jax_two_layer(x, y, w1, w2):
    def loss_of(w1, w2):
        return jnp.sum((jnp.maximum(x @ w1, 0) @ w2 - y) ** 2)

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_of, argnums=(0, 1))(
        jnp.asarray(w1), jnp.asarray(w2))
    return loss, grad_w1, grad_w2
'''

_DISPATCH = '''

def two_layer(framework, x, y, w1, w2):
    return {"coursekit": coursekit_two_layer, "torch": torch_two_layer,
            "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}[framework](x, y, w1, w2)
'''


def _frameworks(coursekit=_COURSEKIT, torch_=_TORCH, tensorflow=_TENSORFLOW, jax=_JAX):
    return _FRAMEWORKS_HEAD + coursekit + torch_ + tensorflow + jax + _DISPATCH


MUTANTS["frameworks"] = [
    ("coursekit: forgets the ReLU", _frameworks(coursekit='''
def coursekit_two_layer(x, y, w1, w2):
    x, y = ck.tensor(x), ck.tensor(y)
    w1, w2 = ck.tensor(w1, requires_grad=True), ck.tensor(w2, requires_grad=True)
    loss = ((x @ w1) @ w2 - y).pow(2).sum()
    loss.backward()
    return loss, w1.grad, w2.grad
''')),
    ("torch: the mean of the squares instead of their sum", _frameworks(torch_='''
def torch_two_layer(x, y, w1, w2):
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    w1, w2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
    loss = torch.nn.functional.mse_loss(x.mm(w1).clamp(min=0).mm(w2), y)
    loss.backward()
    return loss.detach(), w1.grad, w2.grad
''')),
    ("tensorflow: the weights as tf.constant, never watched: no gradients", _frameworks(
        tensorflow='''
def tensorflow_two_layer(x, y, w1, w2):
    x, y, w1, w2 = (tf.constant(v) for v in (x, y, w1, w2))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((tf.nn.relu(x @ w1) @ w2 - y) ** 2)
    grad_w1, grad_w2 = tape.gradient(loss, [w1, w2])
    return loss, grad_w1, grad_w2
''')),
    ("jax: differentiates only the first argument (argnums left at 0)", _frameworks(jax='''
def jax_two_layer(x, y, w1, w2):
    def loss_of(w1, w2):
        return jnp.sum((jnp.maximum(x @ w1, 0) @ w2 - y) ** 2)

    loss, grad_w1 = jax.value_and_grad(loss_of)(jnp.asarray(w1), jnp.asarray(w2))
    grad_w2 = jax.grad(lambda w2: loss_of(w1, w2))(w1)
    return loss, grad_w1, grad_w2
''')),
    ("torch: hands back NumPy arrays", _frameworks(torch_='''
def torch_two_layer(x, y, w1, w2):
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    w1, w2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    loss.backward()
    return loss.item(), w1.grad.numpy(), w2.grad.numpy()
''')),
]

ALTERNATIVES["frameworks"] = [
    ("nn.functional.relu, tf.Variable(trainable) with tape.watch on constants, jax.grad twice",
     _frameworks(torch_='''
def torch_two_layer(x, y, w1, w2):
    w1 = torch.from_numpy(w1.copy()).requires_grad_()
    w2 = torch.from_numpy(w2.copy()).requires_grad_()
    y_pred = torch.nn.functional.relu(torch.from_numpy(x) @ w1) @ w2
    loss = ((y_pred - torch.from_numpy(y)) ** 2).sum()
    grad_w1, grad_w2 = torch.autograd.grad(loss, [w1, w2])
    return loss.detach(), grad_w1, grad_w2
''', tensorflow='''
def tensorflow_two_layer(x, y, w1, w2):
    w1, w2 = tf.constant(w1), tf.constant(w2)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([w1, w2])
        diff = tf.matmul(tf.maximum(tf.matmul(x, w1), 0.0), w2) - y
        loss = tf.reduce_sum(tf.square(diff))
    return loss, tape.gradient(loss, w1), tape.gradient(loss, w2)
''', jax='''
def jax_two_layer(x, y, w1, w2):
    loss_of = lambda a, b: ((jax.nn.relu(jnp.dot(x, a)) @ b - y) ** 2).sum()  # noqa: E731
    return loss_of(w1, w2), jax.grad(loss_of, 0)(w1, w2), jax.grad(loss_of, 1)(w1, w2)
''')),
]

ALTERNATIVES["frameworks"].append(
    ("torch: the loss handed back still attached to its graph (never detached); tf.Variable,"
     " jax.value_and_grad over a tuple",
     _frameworks(torch_='''
def torch_two_layer(x, y, w1, w2):
    inputs, targets = torch.as_tensor(x), torch.as_tensor(y)
    first = torch.nn.Parameter(torch.as_tensor(w1).clone())
    second = torch.nn.Parameter(torch.as_tensor(w2).clone())
    error = torch.relu(inputs @ first) @ second - targets
    total = torch.sum(error * error)
    total.backward()
    return total, first.grad, second.grad
''', tensorflow='''
def tensorflow_two_layer(x, y, w1, w2):
    first, second = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        hidden = tf.nn.relu(x @ first)
        total = tf.reduce_sum((hidden @ second - y) ** 2)
    grad_first, grad_second = tape.gradient(total, [first, second])
    return total, grad_first, grad_second
''', jax='''
def jax_two_layer(x, y, w1, w2):
    def total(params):
        first, second = params
        error = jnp.maximum(x @ first, 0) @ second - y
        return jnp.sum(error * error)
    value, (grad_first, grad_second) = jax.value_and_grad(total)((w1, w2))
    return value, grad_first, grad_second
''')))
