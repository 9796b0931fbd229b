"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "ensemble": [
        ("Puts the models in eval mode with m.training = False, which flips only the top module's flag: the Dropout and BatchNorm submodules stay in training mode, so predictions are still stochastic / use batch statistics.",
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():
        probs = []
        for model in models:
            model.training = False          # eval mode
            probs.append(torch.softmax(model(x), dim=-1))
        probs = torch.stack(probs).mean(dim=0)
    return probs, probs.argmax(dim=-1)
'''),
        ('Averages log-probabilities (log_softmax, "numerically safer") and exponentiates: that is the geometric mean, whose rows do not sum to one and whose argmax can differ, not the mean of the softmax probabilities.',
         '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    for model in models:
        model.eval()
    with torch.no_grad():
        log_probs = torch.stack([torch.log_softmax(model(x), dim=-1) for model in models])
        probs = log_probs.mean(dim=0).exp()
    return probs, probs.argmax(dim=-1)
'''),
    ],
    "cosine_restarts": [
        ('Finds the cycle with while t_cur > t_i (strict), so at an epoch exactly on a cycle boundary it stays at the end of the old cycle (eta_min) instead of restarting at base_lr, against "a new cycle begins exactly when T_cur reaches T_i".',
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t_cur, t_i = float(epoch), T_0
    while t_cur > t_i:
        t_cur -= t_i
        t_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * t_cur / t_i))
'''),
        ('Puts eta_min in the wrong place: eta_min + base_lr * (1 + cos) / 2 uses base_lr as the amplitude instead of base_lr - eta_min, so the top of every cycle is base_lr + eta_min; right only when eta_min = 0.',
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    if T_mult == 1:
        t_cur, t_i = epoch % T_0, T_0
    else:
        n = int(math.log(epoch / T_0 * (T_mult - 1) + 1, T_mult))
        t_cur = epoch - T_0 * (T_mult ** n - 1) / (T_mult - 1)
        t_i = T_0 * T_mult ** n
    return eta_min + base_lr * (1 + math.cos(math.pi * t_cur / t_i)) / 2
'''),
    ],
    "ema": [
        ('Swaps the lerp weight: avg.lerp_(p, decay) gives (1 - d) * avg + d * p, so with d = 0.99 the "average" follows the model almost exactly instead of moving 1 % of the way.',
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
                continue
            if self.updates == 0:
                avg.copy_(p)
            else:
                avg.lerp_(p, self.decay)
        self.updates += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
        ('Treats the construction-time deep copy as the first average, so the first update_parameters already mixes: d * (weights at construction) + (1 - d) * p, instead of copying the model as the text says the first call does.',
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay

    def update_parameters(self, model):
        with torch.no_grad():
            pairs = zip(list(self.module.parameters()) + list(self.module.buffers()),
                        list(model.parameters()) + list(model.buffers()))
            for avg, p in pairs:
                if avg.is_floating_point():
                    avg.mul_(self.decay).add_(p, alpha=1 - self.decay)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ('Decides membership by the first component of the parameter name (name.split(\'.\')[0] in trainable): right for "fc" and "block2", but a nested name such as "features.1" never matches, so those parameters are frozen.',
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        p.requires_grad = name.split(".")[0] in trainable


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''),
        ('batchnorm_eval calls model.train() first "to start from a known state": BatchNorm ends in eval mode, but every other module that was in eval mode (e.g. a frozen Dropout) is switched to training, against "leaves every other module\'s mode as it is".',
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    prefixes = tuple(name + "." for name in trainable)
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(prefixes))


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    model.train()
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.train(False)
    return model
'''),
    ],
    "param_groups": [
        ('Filters frozen parameters out of the body group only and takes the head\'s parameters unfiltered ("the head is always trained"): a frozen parameter inside the head lands in the optimizer and moves at head_lr.',
         '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params = list(model.get_submodule(head).parameters())
    in_head = {id(p) for p in head_params}
    body = [p for p in model.parameters() if p.requires_grad and id(p) not in in_head]
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]
'''),
    ],
    "frameworks": [
        ('The TensorFlow version makes the weights tf.constant and never calls tape.watch: a GradientTape only records trainable variables, so tape.gradient returns (None, None) while the loss is right.',
         '''import os

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
    loss = (torch.relu(x @ w1) @ w2 - y).pow(2).sum()
    loss.backward()
    return loss, w1.grad, w2.grad


def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    x, y = tf.constant(x), tf.constant(y)
    w1, w2 = tf.constant(w1), tf.constant(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.nn.relu(x @ w1) @ w2 - y))
    grad_w1, grad_w2 = tape.gradient(loss, [w1, w2])
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
    "cosine_restarts": [
        ('Walks the cycles with a while loop (subtract T_i, multiply by T_mult while T_cur >= T_i) instead of the closed-form log formula.',
         '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    t_cur, t_i = float(epoch), T_0
    while t_cur >= t_i:          # a new cycle starts exactly when T_cur reaches T_i
        t_cur -= t_i
        t_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1.0 + math.cos(math.pi * t_cur / t_i))
'''),
    ],
    "ema": [
        ("Walks self.module.state_dict() (whose tensors share storage with the parameters and buffers) by name against the model's, with mul_/add_ in place under torch.no_grad, instead of zipping parameters() and buffers().",
         '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.first = True

    def update_parameters(self, model):
        current = model.state_dict()
        with torch.no_grad():
            for name, avg in self.module.state_dict().items():
                if not avg.is_floating_point():
                    continue
                if self.first:
                    avg.copy_(current[name])
                else:
                    avg.mul_(self.decay).add_(current[name], alpha=1 - self.decay)
        self.first = False

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
    "freeze": [
        ('Freezes everything with model.requires_grad_(False), then unfreezes each named submodule through get_submodule(name).requires_grad_(True); BatchNorm via model.apply instead of a loop.',
         '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    model.requires_grad_(False)
    for name in trainable:
        model.get_submodule(name).requires_grad_(True)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    def to_eval(module):
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()

    model.apply(to_eval)
    return model
'''),
    ],
}
