"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "ensemble": [
        ("models put in eval mode but run without torch.no_grad(): the averaged probabilities carry a graph (requires_grad=True), which prediction must not build", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    per_model = []
    for model in models:
        model.eval()
        per_model.append(torch.softmax(model(x), dim=1))
    probs = torch.stack(per_model).mean(dim=0)
    labels = probs.argmax(dim=1)
    return probs, labels
'''),
        ("the running sum starts as torch.zeros(shape) made on the CPU and each output is moved onto it, so for x on another device the probabilities leave x's device (on meta the copy fails)", '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        outputs = []
        for model in models:
            model.eval()
            outputs.append(torch.softmax(model(x), dim=-1))
        probs = torch.zeros(outputs[0].shape, dtype=outputs[0].dtype)
        for p in outputs:
            probs = probs + p.to(probs.device)
        probs = probs / len(models)
    return probs, probs.argmax(dim=-1)
'''),
    ],
    "cosine_restarts": [
        ("cycle index taken as epoch // T_0 for every T_mult, so with T_mult > 1 the cycle lengths and the restart epochs are wrong (correct only for T_mult = 1)", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    cycle = int(epoch // T_0)
    T_i = T_0 * T_mult ** cycle
    T_cur = epoch - cycle * T_0
    T_cur = T_cur % T_i
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i))
'''),
        ("eta_min added on top of the full cosine amplitude (eta_min + base_lr/2 (1 + cos)) instead of scaling (base_lr - eta_min): the top of each cycle is base_lr + eta_min", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, epoch
    while T_cur >= T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * base_lr * (1 + math.cos(math.pi * T_cur / T_i))
'''),
    ],
    "ema": [
        ("the first update_parameters call already averages (decay * copy-at-construction + (1 - decay) * model) instead of copying the model", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    def update_parameters(self, model):
        with torch.no_grad():
            averaged = list(self.module.parameters()) + list(self.module.buffers())
            current = list(model.parameters()) + list(model.buffers())
            for avg, p in zip(averaged, current):
                if avg.is_floating_point():
                    avg.mul_(self.decay).add_(p, alpha=1 - self.decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ("only the parameters are averaged; BatchNorm's running mean and variance (buffers) stay as they were at construction", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.n_averaged = 0

    def update_parameters(self, model):
        with torch.no_grad():
            for avg, p in zip(self.module.parameters(), model.parameters()):
                if self.n_averaged == 0:
                    avg.copy_(p)
                else:
                    avg.lerp_(p, 1 - self.decay)
        self.n_averaged += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("freeze_except only switches off the parameters outside the trainable modules and never switches on those inside: a parameter frozen beforehand inside a trainable module stays frozen", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, parameter in model.named_parameters():
        if not name.startswith(prefixes):
            parameter.requires_grad = False


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval only looks for nn.BatchNorm2d, so BatchNorm1d (and 3d) layers stay in training mode", '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, parameter in model.named_parameters():
        inside = any(name.startswith(module_name + ".") for module_name in trainable)
        parameter.requires_grad_(inside)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()
    return model
'''),
    ],
    "param_groups": [
        ("the body group has no 'lr' key (it relies on the optimizer's default), so the body trains at whatever lr the optimizer was built with instead of `lr`", '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params, body_params = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if name.startswith(head + "."):
            head_params.append(parameter)
        else:
            body_params.append(parameter)
    return [{"params": body_params}, {"params": head_params, "lr": head_lr}]
'''),
    ],
    "frameworks": [
        ("the PyTorch version uses F.mse_loss, a MEAN over the elements, instead of the sum of squares: its loss and gradients are divided by the number of outputs", '''import os

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
    diff = (x_t @ w1_t).relu() @ w2_t - y_t
    loss = (diff * diff).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad


def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)
    w1_t = torch.tensor(w1, requires_grad=True)
    w2_t = torch.tensor(w2, requires_grad=True)
    y_pred = torch.relu(x_t @ w1_t) @ w2_t
    loss = torch.nn.functional.mse_loss(y_pred, y_t)
    loss.backward()
    return loss, w1_t.grad, w2_t.grad


def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    x_t, y_t = tf.constant(x), tf.constant(y)
    w1_v, w2_v = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(tf.nn.relu(tf.matmul(x_t, w1_v)), w2_v)
        loss = tf.reduce_sum(tf.square(y_pred - y_t))
    grad_w1, grad_w2 = tape.gradient(loss, [w1_v, w2_v])
    return loss, grad_w1, grad_w2


def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(w1, w2):
        y_pred = jax.nn.relu(x @ w1) @ w2
        return jnp.sum((y_pred - y) ** 2)

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
    "cosine_restarts": [
        ("walks the cycles with a while loop (subtract T_i, multiply it by T_mult) instead of the closed-form logarithm, one branch for every T_mult", '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    cycle_length = T_0
    into_cycle = float(epoch)
    while into_cycle >= cycle_length:
        into_cycle -= cycle_length
        cycle_length *= T_mult
    progress = into_cycle / cycle_length
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * progress)) / 2
'''),
    ],
    "ema": [
        ("matches parameters and buffers by name through dicts, a Python flag for the first call, lerp_ for the average, non-float buffers skipped", '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = float(decay)
        self._has_copy = False

    @torch.no_grad()
    def update_parameters(self, model):
        mine = dict(self.module.named_parameters())
        mine.update(dict(self.module.named_buffers()))
        theirs = dict(model.named_parameters())
        theirs.update(dict(model.named_buffers()))
        for name, average in mine.items():
            current = theirs[name].detach()
            if not average.is_floating_point():
                continue
            if self._has_copy:
                average.lerp_(current.to(average.device, average.dtype), 1.0 - self.decay)
            else:
                average.copy_(current)
        self._has_copy = True

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "param_groups": [
        ("collects the head through model.get_submodule(head) and an id() set, then one pass over model.parameters() in model order", '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    in_head = {id(p) for p in model.get_submodule(head).parameters()}
    body = [p for p in model.parameters() if p.requires_grad and id(p) not in in_head]
    top = [p for p in model.parameters() if p.requires_grad and id(p) in in_head]
    groups = []
    if body:
        groups.append({"params": body, "lr": lr})
    if top:
        groups.append({"params": top, "lr": head_lr})
    return groups
'''),
    ],
}
