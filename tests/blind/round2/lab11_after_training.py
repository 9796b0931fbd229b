"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 2)."""

_FRAMEWORKS_HEAD = '''import os

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
    loss = ((ck.relu(x_t @ w1_t) @ w2_t - y_t) ** 2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad


def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)
    w1_t = torch.tensor(w1, requires_grad=True)
    w2_t = torch.tensor(w2, requires_grad=True)
    loss = (torch.relu(x_t @ w1_t) @ w2_t - y_t).pow(2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad

'''

_FRAMEWORKS_TAIL = '''

def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_of(w1, w2):
        return jnp.sum((jax.nn.relu(jnp.asarray(x) @ w1) @ w2 - jnp.asarray(y)) ** 2)

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_of, argnums=(0, 1))(jnp.asarray(w1),
                                                                          jnp.asarray(w2))
    return loss, grad_w1, grad_w2


TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''

WRONG = {
    "ensemble": [
        ("softmax over dim=0 (across the inputs) instead of over the classes", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        all_probs = []
        for model in models:
            model.eval()
            all_probs.append(torch.softmax(model(x), dim=0))
        probs = torch.stack(all_probs).mean(dim=0)
    return probs, probs.argmax(dim=1)
'''),
        ("accumulates into torch.zeros(shape), a fresh CPU float32 tensor, instead of zeros_like", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    total = None
    with torch.no_grad():
        for model in models:
            model.eval()
            p = torch.softmax(model(x), dim=1)
            if total is None:
                total = torch.zeros(p.shape)
            total += p
    probs = total / len(models)
    return probs, probs.argmax(dim=1)
'''),
    ],
    "cosine_restarts": [
        ("forgets to subtract eta_min from base_lr in the amplitude", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, epoch
    while T_cur >= T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * base_lr * (1 + math.cos(math.pi * T_cur / T_i))
'''),
        ("restarts only once T_cur passes T_i (>), so exactly at a cycle boundary it returns eta_min", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, epoch
    while T_cur > T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i))
'''),
    ],
    "ema": [
        ("no special first update: the first call already averages with the construction-time copy", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    def update_parameters(self, model):
        with torch.no_grad():
            averaged = list(self.module.parameters()) + list(self.module.buffers())
            current = list(model.parameters()) + list(model.buffers())
            for avg, new in zip(averaged, current):
                if avg.is_floating_point():
                    avg.mul_(self.decay).add_(new, alpha=1 - self.decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ("warms the decay up as timm/TF do, min(decay, (1 + n) / (10 + n)), instead of the fixed decay", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.updates = 0

    def update_parameters(self, model):
        with torch.no_grad():
            averaged = list(self.module.parameters()) + list(self.module.buffers())
            current = list(model.parameters()) + list(model.buffers())
            if self.updates == 0:
                for avg, new in zip(averaged, current):
                    avg.copy_(new)
            else:
                d = min(self.decay, (1 + self.updates) / (10 + self.updates))
                for avg, new in zip(averaged, current):
                    if avg.is_floating_point():
                        avg.lerp_(new, 1 - d)
            self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("only switches off what is outside the trainable modules; a trainable parameter frozen before stays frozen", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, p in model.named_parameters():
        if not name.startswith(prefixes):
            p.requires_grad = False


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval tests isinstance(m, nn.BatchNorm2d) only (the CNN's kind), missing BatchNorm1d/3d", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        p.requires_grad = any(name.startswith(module + ".") for module in trainable)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()
    return model
'''),
    ],
    "param_groups": [
        ("puts a parameter in the head group when its name starts with head, no dot (fc_norm joins fc)", '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params, other_params = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if name.startswith(head):
            head_params.append(p)
        else:
            other_params.append(p)
    groups = []
    if other_params:
        groups.append({"params": other_params, "lr": lr})
    if head_params:
        groups.append({"params": head_params, "lr": head_lr})
    return groups
'''),
    ],
    "frameworks": [
        ("the TensorFlow version takes tf.reduce_mean of the squares instead of the sum", _FRAMEWORKS_HEAD + '''
def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    w1_v, w2_v = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.nn.relu(tf.constant(x) @ w1_v) @ w2_v - tf.constant(y)))
    grad_w1, grad_w2 = tape.gradient(loss, [w1_v, w2_v])
    return loss, grad_w1, grad_w2
''' + _FRAMEWORKS_TAIL),
    ],
}

RIGHT = {
    "cosine_restarts": [
        ("closed form: the cycle index from a logarithm, corrected by integer checks at the boundaries", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    if T_mult == 1:
        T_i, T_cur = T_0, math.fmod(epoch, T_0)
    else:
        # cycle n starts at T_0 (T_mult**n - 1) / (T_mult - 1)
        def start(n):
            return T_0 * (T_mult ** n - 1) // (T_mult - 1)

        n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult))
        while start(n + 1) <= epoch:
            n += 1
        while n > 0 and start(n) > epoch:
            n -= 1
        T_i, T_cur = T_0 * T_mult ** n, epoch - start(n)
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2
'''),
    ],
    "ema": [
        ("walks the state_dicts (floating entries only), copy_ on the first call, torch.lerp_ after", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long))

    @torch.no_grad()
    def update_parameters(self, model):
        mine, theirs = self.module.state_dict(), model.state_dict()
        first = int(self.n_averaged) == 0
        for name, average in mine.items():
            if not average.is_floating_point():
                continue
            if first:
                average.copy_(theirs[name])
            else:
                average.lerp_(theirs[name], 1.0 - self.decay)
        self.n_averaged += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("model.requires_grad_(False) then get_submodule(name).requires_grad_(True); train(False) for _BatchNorm", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    model.requires_grad_(False)
    for name in trainable:
        model.get_submodule(name).requires_grad_(True)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    from torch.nn.modules.batchnorm import _BatchNorm

    for _, module in model.named_modules():
        if isinstance(module, _BatchNorm):
            module.train(False)
    return model
'''),
    ],
}
