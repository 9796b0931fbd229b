"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 4)."""

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

_FW_TAIL = '''

def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    x_j, y_j = jnp.asarray(x), jnp.asarray(y)

    def loss_fn(w1, w2):
        return jnp.sum((jnp.maximum(x_j @ w1, 0) @ w2 - y_j) ** 2)

    loss, (grad_w1, grad_w2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(
        jnp.asarray(w1), jnp.asarray(w2))
    return loss, grad_w1, grad_w2


TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''

WRONG = {
    "ensemble": [
        ("eval mode and no_grad right, but the running sum of probabilities starts as "
         "torch.zeros(N, classes) with no device: on CPU fine, on any other device (meta, a "
         "GPU) adding the models' outputs fails",
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    total = None
    with torch.no_grad():
        for model in models:
            model.eval()
            p = torch.softmax(model(x), dim=1)
            if total is None:
                total = torch.zeros(p.shape[0], p.shape[1])
            total = total + p
    probs = total / len(models)
    return probs, probs.argmax(dim=1)
'''),
    ],
    "cosine_restarts": [
        ("walks the cycles with `while t > T_i` (strict): a whole epoch that ends a cycle "
         "(epoch == T_0, T_0 + T_0*T_mult, ...) stays in the old cycle and gets eta_min instead "
         "of the restart's base_lr; right everywhere else",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t, T_i = epoch, T_0
    while t > T_i:
        t -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * t / T_i))
'''),
        ("cycles right, but the cosine is base_lr * (1 + cos) / 2: eta_min is ignored, right "
         "only at its default 0",
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, start = T_0, 0.0
    while epoch >= start + T_i:
        start += T_i
        T_i *= T_mult
    T_cur = epoch - start
    return base_lr * (1 + math.cos(math.pi * T_cur / T_i)) / 2
'''),
    ],
    "ema": [
        ("lerp_ weight swapped: avg.lerp_(p, decay) keeps (1 - decay) of the average and takes "
         "decay of the model; right only for decay = 0.5",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.updates = 0

    @torch.no_grad()
    def update_parameters(self, model):
        averaged = list(self.module.parameters()) + list(self.module.buffers())
        current = list(model.parameters()) + list(model.buffers())
        for avg, p in zip(averaged, current):
            if not avg.is_floating_point():
                avg.copy_(p)
            elif self.updates == 0:
                avg.copy_(p)
            else:
                avg.lerp_(p, self.decay)
        self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ("averages every entry of the state_dict, integer buffers included: the first update "
         "(a copy) works, the second raises on BatchNorm's int64 num_batches_tracked "
         "(mul_ by a float); right for models without integer buffers",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.first = True

    def update_parameters(self, model):
        d = self.decay
        with torch.no_grad():
            mine, theirs = self.module.state_dict(), model.state_dict()
            for name, avg in mine.items():
                if self.first:
                    avg.copy_(theirs[name])
                else:
                    avg.mul_(d).add_(theirs[name], alpha=1 - d)
        self.first = False

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ("the update counter is a tensor class attribute (like AveragedModel's n_averaged) "
         "incremented with +=, in place: every EMAModel shares it, so a second EMAModel "
         "averages on its first update instead of copying (state leaked between instances)",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    n_averaged = torch.tensor(0)

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    def update_parameters(self, model):
        with torch.no_grad():
            pairs = zip(list(self.module.parameters()) + list(self.module.buffers()),
                        list(model.parameters()) + list(model.buffers()))
            for avg, p in pairs:
                if self.n_averaged == 0 or not avg.is_floating_point():
                    avg.copy_(p)
                else:
                    avg.mul_(self.decay).add_(p, alpha=1 - self.decay)
        self.n_averaged += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("name.startswith(module_name) without the dot: 'fc' also unfreezes 'fc_norm.*' and "
         "'features.1' also 'features.10.*', ...; right when no name is a prefix of another",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        p.requires_grad = any(name.startswith(t) for t in trainable)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ("batchnorm_eval sets every module's mode in one line, m.train(not is_batchnorm): "
         "BatchNorm goes to eval, but every other module is put in training mode, even one "
         "that was in eval mode",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(t + "." for t in trainable)
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(prefixes))


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        module.train(not isinstance(module, nn.modules.batchnorm._BatchNorm))
    return model
'''),
    ],
    "param_groups": [
        ("the body group carries no 'lr' (the student expects the optimizer's lr to be `lr`): "
         "those parameters move by the optimizer's default, not by `lr`",
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
    return [{"params": body_params}, {"params": head_params, "lr": head_lr}]
'''),
    ],
    "frameworks": [
        ("TensorFlow version holds the weights as tf.constant and never calls tape.watch: the "
         "tape records nothing for them and both gradients come back None (the other "
         "frameworks right)",
         _FW_HEAD + '''

def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    w1_t, w2_t = tf.constant(w1), tf.constant(w2)
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(tf.nn.relu(tf.matmul(x, w1_t)), w2_t)
        loss = tf.reduce_sum(tf.square(y_pred - y))
    grad_w1, grad_w2 = tape.gradient(loss, [w1_t, w2_t])
    return loss, grad_w1, grad_w2
''' + _FW_TAIL),
    ],
}

RIGHT = {
    "cosine_restarts": [
        ("closed form, as the scheduler computes it: the cycle index from a logarithm for "
         "T_mult > 1, epoch % T_0 for T_mult = 1",
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
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2
'''),
    ],
    "ema": [
        ("pairs matched by name through named_parameters / named_buffers, first call detected "
         "by a bool, the update written as mul_ then add_; integer buffers copied",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self._seen_one = False

    def _tensors(self, model):
        return {**dict(model.named_parameters()), **dict(model.named_buffers())}

    def update_parameters(self, model):
        current = self._tensors(model)
        with torch.no_grad():
            for name, avg in self._tensors(self.module).items():
                new = current[name].detach()
                if not self._seen_one or not avg.is_floating_point():
                    avg.copy_(new)
                else:
                    avg.mul_(self.decay).add_(new, alpha=1.0 - self.decay)
        self._seen_one = True

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ("parameters of the named submodules collected by identity with get_submodule; "
         "BatchNorm found by walking named_modules",
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    keep = set()
    for name in trainable:
        keep.update(id(p) for p in model.get_submodule(name).parameters())
    for p in model.parameters():
        p.requires_grad_(id(p) in keep)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    norms = [m for _, m in model.named_modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.train(False)
    return model
'''),
    ],
}
