"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 3)."""

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
    loss = (((x_t @ w1_t).relu() @ w2_t - y_t) ** 2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad


def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)
    w1_t = torch.tensor(w1, requires_grad=True)
    w2_t = torch.tensor(w2, requires_grad=True)
    loss = ((x_t @ w1_t).clamp(min=0) @ w2_t - y_t).pow(2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad
'''

_FRAMEWORKS_TAIL = '''

TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''

_JAX_RIGHT = '''

def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(a, b):
        return jnp.sum((jnp.maximum(x @ a, 0) @ b - y) ** 2)

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2)
    return loss, grad_w1, grad_w2
'''

WRONG = {
    "ensemble": [
        ("the sum of the probabilities starts as torch.zeros(shape) made on the CPU (and in float32): for x on another device the probabilities come back on the CPU (meta: silently a CPU tensor; a GPU: the in-place add fails)",
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        outputs = []
        for model in models:
            model.eval()
            outputs.append(torch.softmax(model(x), dim=1))
        total = torch.zeros(outputs[0].shape)
        for p in outputs:
            total += p
        probs = total / len(models)
    return probs, probs.argmax(dim=1)
'''),
        ("runs the models under torch.no_grad() but never calls eval(): models handed over in training mode keep Dropout on and BatchNorm on batch statistics",
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        probs = torch.stack([torch.softmax(model(x), dim=-1) for model in models]).mean(dim=0)
    labels = probs.argmax(dim=-1)
    return probs, labels
'''),
    ],
    "cosine_restarts": [
        ("walks the cycles with `while t > T_i` instead of `>=`: at the exact first epoch of a new cycle it stays in the old one and returns eta_min instead of base_lr",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t, T_i = float(epoch), T_0
    while t > T_i:                     # past the end of this cycle: go to the next one
        t -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * t / T_i))
'''),
        ("the cosine's amplitude is base_lr instead of (base_lr - eta_min): right with eta_min = 0, too high by eta_min (at the restart eta_min + base_lr) otherwise",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    if epoch < T_0:
        T_cur, T_i = epoch, T_0
    elif T_mult == 1:
        T_cur, T_i = epoch % T_0, T_0
    else:
        n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult))
        T_cur = epoch - T_0 * (T_mult ** n - 1) / (T_mult - 1)
        T_i = T_0 * T_mult ** n
    return eta_min + 0.5 * base_lr * (1 + math.cos(math.pi * T_cur / T_i))
'''),
    ],
    "ema": [
        ("the first update_parameters call already averages (with the copy made at construction) instead of copying the model: if the model trained before the first update, the average lags behind AveragedModel's",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)   # the average starts at the model itself
        self.decay = decay

    @torch.no_grad()
    def update_parameters(self, model):
        averaged = list(self.module.parameters()) + list(self.module.buffers())
        current = list(model.parameters()) + list(model.buffers())
        for avg, p in zip(averaged, current):
            if avg.is_floating_point():
                avg.lerp_(p, 1 - self.decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ("keeps the model itself as self.module (no deep copy): later training of the model changes the 'average', and each update averages the model with itself",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = model
        self.decay = decay
        self.n_updates = 0

    @torch.no_grad()
    def update_parameters(self, model):
        pairs = zip(list(self.module.parameters()) + list(self.module.buffers()),
                    list(model.parameters()) + list(model.buffers()))
        for avg, p in pairs:
            if self.n_updates == 0:
                avg.copy_(p)
            elif avg.is_floating_point():
                avg.mul_(self.decay).add_(p, alpha=1 - self.decay)
        self.n_updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("tests `name.startswith(module_name)` without the dot: 'fc_norm.weight' counts as inside 'fc', 'features.10.weight' as inside 'features.1'",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        p.requires_grad = any(name.startswith(module_name) for module_name in trainable)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval looks for nn.BatchNorm2d only: a BatchNorm1d (or 3d) stays in training mode",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        inside = any(name.startswith(module_name + ".") for module_name in trainable)
        p.requires_grad_(inside)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):    # the CNN's BatchNorm layers
            module.eval()
    return model
'''),
    ],
    "param_groups": [
        ("the body's group has no 'lr' of its own (it relies on the optimizer's default lr): the body moves by the optimizer's lr, not by `lr`",
         '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params, body_params = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if name.startswith(head + "."):
            head_params.append(p)
        else:
            body_params.append(p)
    # the body uses the optimizer's learning rate, the head its own
    return [{"params": body_params}, {"params": head_params, "lr": head_lr}]
'''),
    ],
    "frameworks": [
        ("the TensorFlow version takes tf.reduce_mean of the squared errors instead of their sum: its loss and gradients are divided by the number of entries",
         _FRAMEWORKS_HEAD + '''

def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    x_t, y_t = tf.constant(x), tf.constant(y)
    w1_v, w2_v = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.nn.relu(x_t @ w1_v) @ w2_v - y_t))
    grad_w1, grad_w2 = tape.gradient(loss, [w1_v, w2_v])
    return loss, grad_w1, grad_w2
''' + _JAX_RIGHT + _FRAMEWORKS_TAIL),
    ],
}

RIGHT = {
    "cosine_restarts": [
        ("walks the cycles in a loop (subtract T_i while t >= T_i, then T_i *= T_mult) instead of the closed form with a logarithm",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t_cur, t_i = float(epoch), T_0
    while t_cur >= t_i:                # a new cycle begins exactly when T_cur reaches T_i
        t_cur -= t_i
        t_i *= T_mult
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2
'''),
    ],
    "ema": [
        ("pairs the tensors through state_dict() (detached, same storage) and updates with lerp_ in place; a counter decides copy or average, integer buffers copied only at the first call",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.updates = 0

    def update_parameters(self, model):
        with torch.no_grad():
            mine, theirs = self.module.state_dict(), model.state_dict()
            for name, avg in mine.items():
                current = theirs[name].to(avg.device)
                if self.updates == 0:
                    avg.copy_(current)
                elif avg.is_floating_point():
                    avg.lerp_(current, 1.0 - self.decay)
        self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("freezes everything first, then walks model.named_modules() and unfreezes the parameters of every module whose name is in `trainable`; batchnorm_eval through model.apply",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for p in model.parameters():
        p.requires_grad_(False)
    wanted = set(trainable)
    for name, module in model.named_modules():
        if name in wanted:
            for p in module.parameters():
                p.requires_grad_(True)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    def to_eval(module):
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.train(False)

    model.apply(to_eval)
    return model
'''),
    ],
}
