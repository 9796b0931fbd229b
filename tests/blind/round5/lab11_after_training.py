"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 5)."""

_FW_HEAD = '''import os

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
    x, y = ck.Tensor(x), ck.Tensor(y)
    w1, w2 = ck.Tensor(w1, requires_grad=True), ck.Tensor(w2, requires_grad=True)
    loss = (((x @ w1).relu() @ w2 - y) ** 2).sum()
    loss.backward()
    return loss, w1.grad, w2.grad


def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    w1 = torch.tensor(w1, requires_grad=True)
    w2 = torch.tensor(w2, requires_grad=True)
    loss = ((torch.relu(x @ w1) @ w2 - y) ** 2).sum()
    loss.backward()
    return loss, w1.grad, w2.grad

'''

_FW_TAIL = '''

def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(w1, w2):
        return jnp.sum((jax.nn.relu(x @ w1) @ w2 - y) ** 2)

    loss, (g1, g2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(jnp.asarray(w1), jnp.asarray(w2))
    return loss, g1, g2


TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''

_TF_NUMPY = '''def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    w1, w2 = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.nn.relu(x @ w1) @ w2 - y))
    grad_w1, grad_w2 = tape.gradient(loss, [w1, w2])
    return loss.numpy(), grad_w1.numpy(), grad_w2.numpy()    # plain arrays, easier to compare'''

_TF_RIGHT = '''def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    x, y = tf.constant(x), tf.constant(y)
    w1, w2 = tf.constant(w1), tf.constant(w2)
    with tf.GradientTape() as tape:
        tape.watch([w1, w2])                   # constants are not watched by default
        h = tf.maximum(tf.matmul(x, w1), 0.0)
        loss = tf.reduce_sum((tf.matmul(h, w2) - y) ** 2)
    grad_w1, grad_w2 = tape.gradient(loss, [w1, w2])
    return loss, grad_w1, grad_w2'''


WRONG = {
    "ensemble": [
        ("never puts the models in eval mode (only torch.no_grad()): Dropout and BatchNorm handed over in training mode stay in training mode",
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        probs = torch.stack([torch.softmax(m(x), dim=1) for m in models]).mean(dim=0)
    return probs, probs.argmax(dim=1)
'''),
        ("accumulates into torch.zeros(N, classes) made without a device: on a non-CPU device (meta) the sum mixes devices",
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    total = None
    with torch.no_grad():
        for model in models:
            model.eval()
            p = torch.softmax(model(x), dim=-1)
            if total is None:
                total = torch.zeros(p.shape[0], p.shape[1], dtype=p.dtype)
            total = total + p
    probs = total / len(models)
    return probs, probs.argmax(dim=-1)
'''),
    ],
    "cosine_restarts": [
        ("cycle boundary tested with '>' instead of '>=': at an epoch where a cycle ends exactly (T_cur == T_i) it returns eta_min instead of restarting at base_lr",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t_cur, t_i = float(epoch), T_0
    while t_cur > t_i:
        t_cur -= t_i
        t_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * t_cur / t_i))
'''),
        ("eta_min ignored: the cosine runs from base_lr down to 0 whatever eta_min is",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    if T_mult == 1:
        t_cur, t_i = epoch % T_0, T_0
    else:
        n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult))
        t_cur = epoch - T_0 * (T_mult ** n - 1) / (T_mult - 1)
        t_i = T_0 * T_mult ** n
    return 0.5 * base_lr * (1 + math.cos(math.pi * t_cur / t_i))
'''),
    ],
    "ema": [
        ("the first update_parameters call already averages (with the copy made at construction) instead of copying the model: wrong when the model trained between construction and the first update",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    def update_parameters(self, model):
        with torch.no_grad():
            ours = list(self.module.parameters()) + list(self.module.buffers())
            theirs = list(model.parameters()) + list(model.buffers())
            for avg, p in zip(ours, theirs):
                if avg.is_floating_point():
                    avg.mul_(self.decay).add_(p, alpha=1 - self.decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("tests name.startswith(module_name) without the dot: 'fc_norm.weight' counts as inside 'fc' and 'features.10.weight' as inside 'features.1'",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, param in model.named_parameters():
        param.requires_grad = any(name.startswith(prefix) for prefix in trainable)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval calls model.eval() and then puts every non-BatchNorm module back in train mode: a module that was in eval mode before comes back in train mode",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, param in model.named_parameters():
        param.requires_grad_(name.startswith(prefixes))


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    model.eval()
    for module in model.modules():
        if not isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.training = True
    return model
'''),
    ],
    "param_groups": [
        ("frozen parameters are not filtered out: requires_grad=False parameters end up in the groups",
         '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params, body_params = [], []
    for name, p in model.named_parameters():
        (head_params if name.startswith(head + ".") else body_params).append(p)
    return [{"params": body_params, "lr": lr}, {"params": head_params, "lr": head_lr}]
'''),
        ("the body group carries no 'lr' key: it relies on the optimizer's default instead of the lr argument",
         '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_ids = {id(p) for p in model.get_submodule(head).parameters()}
    body = [p for p in model.parameters() if p.requires_grad and id(p) not in head_ids]
    top = [p for p in model.parameters() if p.requires_grad and id(p) in head_ids]
    return [{"params": body}, {"params": top, "lr": head_lr}]
'''),
    ],
    "frameworks": [
        ("the TensorFlow version converts its results to NumPy with .numpy(): not TensorFlow tensors",
         _FW_HEAD + _TF_NUMPY + _FW_TAIL),
    ],
}

RIGHT = {
    "cosine_restarts": [
        ("walks the cycles in a loop (subtract T_i while T_cur >= T_i, T_i *= T_mult) instead of the closed-form logarithm",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t_cur, t_i = float(epoch), T_0
    while t_cur >= t_i:
        t_cur -= t_i
        t_i *= T_mult
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2
'''),
    ],
    "ema": [
        ("lerp_ over named parameters and buffers matched by name, a counter for the first call",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.updates = 0

    @torch.no_grad()
    def update_parameters(self, model):
        source = dict(model.named_parameters())
        source.update(dict(model.named_buffers()))
        mine = dict(self.module.named_parameters())
        mine.update(dict(self.module.named_buffers()))
        for name, avg in mine.items():
            if not avg.is_floating_point():
                continue
            current = source[name].detach()
            if self.updates == 0:
                avg.copy_(current)
            else:
                avg.lerp_(current, 1.0 - self.decay)
        self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "frameworks": [
        ("TensorFlow on constants with tape.watch and tf.maximum for the ReLU (rest as usual)",
         _FW_HEAD + _TF_RIGHT + _FW_TAIL),
    ],
}
