"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 8)."""

_FRAMEWORKS = '''import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")    # TensorFlow reads these when imported:
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")   # no INFO lines, the same numbers each run
import jax
import jax.numpy as jnp
import tensorflow as tf

import coursekit as ck


def numpy_two_layer(x, y, w1, w2):
    "Given (lab 01): the forward pass, then every gradient by hand."
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = np.square(y_pred - y).sum()
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_w1 = x.T @ ((grad_y_pred @ w2.T) * (h > 0))
    return loss, grad_w1, grad_w2


def coursekit_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as coursekit tensors, the gradients from backward()."""
    x_t, y_t = ck.tensor(x), ck.tensor(y)
    w1_t = ck.tensor(w1, requires_grad=True)
    w2_t = ck.tensor(w2, requires_grad=True)
    loss = ((x_t @ w1_t).relu() @ w2_t - y_t).pow(2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad


TORCH_FN


def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    w1_v, w2_v = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.nn.relu(tf.constant(x) @ w1_v) @ w2_v - tf.constant(y)))
    grad_w1, grad_w2 = tape.gradient(loss, [w1_v, w2_v])
    return loss, grad_w1, grad_w2


JAX_FN


TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''

_TORCH_OK = '''def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)
    w1_t = torch.tensor(w1, requires_grad=True)
    w2_t = torch.tensor(w2, requires_grad=True)
    loss = ((x_t @ w1_t).relu() @ w2_t - y_t).pow(2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad'''

_JAX_OK = '''def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(w1, w2):
        return jnp.sum((jax.nn.relu(x @ w1) @ w2 - y) ** 2)

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(jnp.asarray(w1), jnp.asarray(w2))
    return loss, grad_w1, grad_w2'''


def _frameworks(torch_fn=_TORCH_OK, jax_fn=_JAX_OK):
    return _FRAMEWORKS.replace("TORCH_FN", torch_fn).replace("JAX_FN", jax_fn)


WRONG = {
    "ensemble": [
        ('Runs the members under torch.inference_mode() instead of the torch.no_grad() the text asks for: same numbers, but the returned probs and labels are inference tensors that can never enter a graph later (e.g. a distillation loss on them)', '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    for model in models:
        model.eval()
    with torch.inference_mode():
        probs = torch.stack([torch.softmax(model(x), dim=-1) for model in models]).mean(dim=0)
        labels = probs.argmax(dim=-1)
    return probs, labels
'''),
        ('Accumulates the probabilities into torch.zeros(len(x), classes) made without device=: on any device but the CPU (meta in the checks, a GPU) the sum mixes devices, breaking "keep everything on x\'s device"', '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    total = None
    with torch.no_grad():
        for model in models:
            model.eval()
            p = torch.softmax(model(x), dim=1)
            if total is None:
                total = torch.zeros(p.shape[0], p.shape[1], dtype=p.dtype)
            total = total + p
    probs = total / len(models)
    return probs, probs.argmax(dim=1)
'''),
    ],
    "cosine_restarts": [
        ('Walks the cycles with `while t > T_i` instead of `>=`: at an epoch exactly on a cycle boundary it returns eta_min (the end of the old cycle) where the text says the new cycle begins and the rate is back at base_lr', '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t, T_i = float(epoch), T_0
    while t > T_i:
        t -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * t / T_i))
'''),
    ],
    "ema": [
        ('The first update_parameters call already averages (decay * copy + (1 - decay) * model) instead of copying the model: if the model trained between construction and the first update, the average keeps part of the initial weights', '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    @torch.no_grad()
    def update_parameters(self, model):
        mine = list(self.module.parameters()) + list(self.module.buffers())
        theirs = list(model.parameters()) + list(model.buffers())
        for avg, current in zip(mine, theirs):
            if avg.is_floating_point():
                avg.mul_(self.decay).add_(current, alpha=1 - self.decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ('batchnorm_eval recognises BatchNorm by class name (type(m).__name__.startswith("BatchNorm")) instead of isinstance(m, _BatchNorm): SyncBatchNorm and LazyBatchNorm*d, which derive from _BatchNorm, stay in training mode', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, param in model.named_parameters():
        param.requires_grad = any(name.startswith(prefix + ".") for prefix in trainable)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if type(module).__name__.startswith("BatchNorm"):
            module.eval()
    return model
'''),
        ('freeze_except matches a trainable name anywhere in the path ("." + t + "." in "." + name): "fc" also unfreezes a nested "head.fc.weight", and "features.1" also "block.features.1.weight", though those are not inside the submodule named "fc" / "features.1"', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, param in model.named_parameters():
        dotted = "." + name
        param.requires_grad_(any("." + t + "." in dotted for t in trainable))


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ('freeze_except only switches requires_grad off outside the trainable modules and never back on inside them: a parameter of a trainable module that was frozen before stays frozen', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, param in model.named_parameters():
        if not any(name.startswith(t + ".") for t in trainable):
            param.requires_grad = False


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
    ],
    "param_groups": [
        ('Puts the frozen parameters in a third group with lr=0.0 ("ready for unfreezing later") instead of leaving them out: they do not move in plain SGD, but the text forbids any requires_grad=False parameter in the groups (with weight decay they would move)', '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params, body_params, frozen = [], [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            frozen.append(param)
        elif name.startswith(head + "."):
            head_params.append(param)
        else:
            body_params.append(param)
    groups = [{"params": body_params, "lr": lr}, {"params": head_params, "lr": head_lr}]
    if frozen:
        groups.append({"params": frozen, "lr": 0.0})
    return groups
'''),
    ],
    "frameworks": [
        ('JAX\'s ReLU written as jnp.maximum(h, 0.0): JAX splits the gradient of maximum at a tie, so where h == 0 exactly (a zero column of w1, a dead unit) grad_w1 gets half the gradient that torch, NumPy (h > 0) and jax.nn.relu give', _frameworks(jax_fn='''def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(w1, w2):
        return jnp.sum(jnp.square(jnp.maximum(x @ w1, 0.0) @ w2 - y))

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2)
    return loss, grad_w1, grad_w2''')),
        ('The PyTorch version takes its gradients from torch.autograd.grad instead of backward(), which the exercise and its docstring ask for ("the gradients from backward()"); the weights\' .grad stays empty', _frameworks(torch_fn='''def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    w1_t = torch.tensor(w1, requires_grad=True)
    w2_t = torch.tensor(w2, requires_grad=True)
    loss = (torch.relu(torch.tensor(x) @ w1_t) @ w2_t - torch.tensor(y)).square().sum()
    grad_w1, grad_w2 = torch.autograd.grad(loss, [w1_t, w2_t])
    return loss, grad_w1, grad_w2''')),
    ],
}

RIGHT = {
    "ema": [
        ('Walks state_dict() tensors (which share storage with the module) by name, copies with load_state_dict on the first call and uses lerp_ afterwards, skipping non-float entries', '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.updates = 0

    def update_parameters(self, model):
        with torch.no_grad():
            if self.updates == 0:
                self.module.load_state_dict(model.state_dict())
            else:
                current = model.state_dict()
                for name, avg in self.module.state_dict().items():
                    if avg.is_floating_point():
                        avg.lerp_(current[name], 1 - self.decay)
        self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ('Freezes everything, then unfreezes model.get_submodule(name).parameters() for each trainable name; BatchNorm switched by model.apply with isinstance on _BatchNorm', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    model.requires_grad_(False)
    for name in trainable:
        model.get_submodule(name).requires_grad_(True)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    def to_eval(module):
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.train(False)

    model.apply(to_eval)
    return model
'''),
    ],
    "param_groups": [
        ('Takes the head\'s parameters from model.get_submodule(head) and separates the body by id(); only trainable parameters, each group with its own "lr"', '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params = [p for p in model.get_submodule(head).parameters() if p.requires_grad]
    head_ids = {id(p) for p in model.get_submodule(head).parameters()}
    body_params = [p for p in model.parameters() if p.requires_grad and id(p) not in head_ids]
    return [{"params": head_params, "lr": head_lr}, {"params": body_params, "lr": lr}]
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('ensemble', 0): (
        "not a mistake: inference_mode is the lecture's own idiom around a forward, and "
        'honest answers using it keep full marks'
    ),
    ('frameworks', 0): (
        'not a mistake the text defines: at h == 0 exactly any split is a subgradient of '
        'the ReLU (round 2)'
    ),
    ('frameworks', 1): _METHOD,
}
