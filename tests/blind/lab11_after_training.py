"""Lab 11: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "ensemble": [
        ("sum of probabilities accumulated in a torch.zeros made on the CPU (default device and dtype)", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        outputs = []
        for model in models:
            model.eval()
            outputs.append(torch.softmax(model(x), dim=1))
        probs = torch.zeros(outputs[0].shape)
        for p in outputs:
            probs += p
        probs /= len(models)
    return probs, probs.argmax(dim=1)
'''),
        ("softmax taken over the batch axis (dim=0) instead of the classes", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        stacked = []
        for model in models:
            model.eval()
            stacked.append(torch.softmax(model(x), dim=0))
        probs = torch.stack(stacked).mean(dim=0)
    return probs, probs.argmax(dim=1)
'''),
    ],
    "cosine_restarts": [
        ("restart only once T_cur exceeds T_i: at each cycle boundary the rate is eta_min, not base_lr", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, epoch
    while T_cur > T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i))
'''),
        ("T_cur taken as epoch modulo the current cycle length instead of subtracting the earlier cycles", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    if T_mult == 1:
        T_i = T_0
    else:
        n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult))
        T_i = T_0 * T_mult ** n
    T_cur = epoch % T_i
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i))
'''),
    ],
    "ema": [
        ("buffers copied from the model at every update instead of averaged (use_buffers=False behaviour)", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.updates = 0

    @torch.no_grad()
    def update_parameters(self, model):
        for avg, p in zip(self.module.parameters(), model.parameters()):
            if self.updates == 0:
                avg.copy_(p)
            else:
                avg.lerp_(p, 1 - self.decay)
        for avg, b in zip(self.module.buffers(), model.buffers()):
            avg.copy_(b)
        self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ("first update averages with the construction-time copy instead of copying the model", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    @torch.no_grad()
    def update_parameters(self, model):
        mine = list(self.module.parameters()) + list(self.module.buffers())
        theirs = list(model.parameters()) + list(model.buffers())
        for avg, p in zip(mine, theirs):
            if avg.is_floating_point():
                avg.mul_(self.decay).add_(p, alpha=1 - self.decay)
            else:
                avg.copy_(p)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("freeze_except only freezes: a trainable parameter frozen beforehand stays frozen", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, p in model.named_parameters():
        if not name.startswith(prefixes):
            p.requires_grad = False


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval freezes BatchNorm's parameters instead of eval(): its running statistics still move", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, p in model.named_parameters():
        p.requires_grad = name.startswith(prefixes)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.requires_grad_(False)
    return model
'''),
    ],
    "param_groups": [
        ("frozen parameters filtered out of the body only: the head's frozen parameters stay in", '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params = list(model.get_submodule(head).parameters())
    head_ids = {id(p) for p in head_params}
    body = [p for p in model.parameters() if p.requires_grad and id(p) not in head_ids]
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]
'''),
    ],
    "frameworks": [
        ("TensorFlow forward pass computed before the GradientTape opens: the tape sees no weights", '''import os

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
    xt, yt = ck.tensor(x), ck.tensor(y)
    w1t, w2t = ck.tensor(w1, requires_grad=True), ck.tensor(w2, requires_grad=True)
    loss = ((xt @ w1t).relu() @ w2t - yt).pow(2).sum()
    loss.backward()
    return loss, w1t.grad, w2t.grad


def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    w1t = torch.tensor(w1, requires_grad=True)
    w2t = torch.tensor(w2, requires_grad=True)
    loss = ((xt @ w1t).clamp(min=0) @ w2t - yt).pow(2).sum()
    loss.backward()
    return loss, w1t.grad, w2t.grad


def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    w1v, w2v = tf.Variable(w1), tf.Variable(w2)
    y_pred = tf.nn.relu(tf.constant(x) @ w1v) @ w2v
    squared = tf.square(y_pred - tf.constant(y))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(squared)
    grad_w1, grad_w2 = tape.gradient(loss, [w1v, w2v])
    return loss, grad_w1, grad_w2


def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(w1, w2):
        return jnp.sum((jnp.maximum(x @ w1, 0) @ w2 - y) ** 2)

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2)
    return loss, grad_w1, grad_w2


TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''),
    ],
}

RIGHT = {
    "ensemble": [
        ("one stacked expression: m.eval()(x).softmax(-1) for every model under torch.no_grad()", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        probs = torch.stack([m.eval()(x).softmax(dim=-1) for m in models]).mean(dim=0)
    return probs, probs.argmax(dim=-1)
'''),
    ],
    "ema": [
        ("name-keyed dicts of parameters and buffers, mul_().add_() under a torch.no_grad() block", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self._copied = False

    @staticmethod
    def _tensors(module):
        found = dict(module.named_parameters())
        found.update(module.named_buffers())
        return found

    def update_parameters(self, model):
        source = self._tensors(model)
        with torch.no_grad():
            for name, avg in self._tensors(self.module).items():
                current = source[name].detach()
                if not self._copied or not avg.is_floating_point():
                    avg.copy_(current)
                else:
                    avg.mul_(self.decay).add_(current, alpha=1.0 - self.decay)
        self._copied = True

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "param_groups": [
        ("one pass over named_parameters with a 'head.' prefix test, empty groups left out", '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    prefix = head + "."
    head_params, body_params = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (head_params if name.startswith(prefix) else body_params).append(p)
    groups = [{"params": body_params, "lr": lr}, {"params": head_params, "lr": head_lr}]
    return [group for group in groups if group["params"]] or groups
'''),
    ],
}
