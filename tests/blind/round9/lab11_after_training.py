"""Lab 11: answers written from the released notebook's text alone (blind corpus, round 9)."""

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
    w1_t = ck.tensor(w1, requires_grad=True)
    w2_t = ck.tensor(w2, requires_grad=True)
    loss = ((ck.relu(ck.tensor(x) @ w1_t) @ w2_t - ck.tensor(y)) ** 2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad


def torch_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as torch tensors, the gradients from backward()."""
    w1_t = torch.tensor(w1, requires_grad=True)
    w2_t = torch.tensor(w2, requires_grad=True)
    loss = ((torch.relu(torch.from_numpy(x) @ w1_t) @ w2_t - torch.from_numpy(y)) ** 2).sum()
    loss.backward()
    return loss, w1_t.grad, w2_t.grad

'''

_FRAMEWORKS_TAIL = '''

def jax_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as JAX arrays, from jax.grad or jax.value_and_grad."""
    def loss_fn(a, b):
        return jnp.sum((jax.nn.relu(x @ a) @ b - y) ** 2)

    loss, (g1, g2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2)
    return loss, g1, g2


TWO_LAYER = {"numpy": numpy_two_layer, "coursekit": coursekit_two_layer,
             "torch": torch_two_layer, "tensorflow": tensorflow_two_layer, "jax": jax_two_layer}


def two_layer(framework, x, y, w1, w2):
    "Dispatch to one framework's version (what the checks call)."
    return TWO_LAYER[framework](x, y, w1, w2)
'''

_TF_AS_NUMPY = '''def tensorflow_two_layer(x, y, w1, w2):
    """(loss, grad_w1, grad_w2) as TensorFlow tensors, from a GradientTape."""
    w1_v, w2_v = tf.Variable(w1), tf.Variable(w2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.nn.relu(tf.constant(x) @ w1_v) @ w2_v - y))
    grad_w1, grad_w2 = tape.gradient(loss, [w1_v, w2_v])
    return loss.numpy(), grad_w1.numpy(), grad_w2.numpy()     # plain arrays are easier to compare'''

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

_BN_EVAL = '''

def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.eval()
    return model
'''

WRONG = {
    'ensemble': [
        ('Runs the models under torch.no_grad() but never puts them in eval mode, so a model handed over in training mode predicts with Dropout on and BatchNorm on batch statistics (and updates its running statistics).', '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    with torch.no_grad():                       # prediction: no graph
        probs = torch.stack([torch.softmax(m(x), dim=1) for m in models]).mean(dim=0)
    return probs, probs.argmax(dim=1)
'''),
        ('Accumulates the probabilities in torch.zeros made without a device, i.e. on the CPU: right on the CPU, but for x on another device (meta, a GPU) the result lands on the CPU instead of x\'s device.', '''def ensemble_predict(models, x):
    """Average the models' softmax probabilities; return (probs, labels)."""
    for m in models:
        m.eval()
    with torch.no_grad():
        outputs = [m(x) for m in models]
        probs = torch.zeros(outputs[0].shape)
        for out in outputs:
            probs += torch.softmax(out, dim=1)
        probs /= len(models)
    return probs, probs.argmax(dim=1)
'''),
    ],
    'cosine_restarts': [
        ('Starts a new cycle only once T_cur exceeds T_i (a strict >), so at the whole epoch where a cycle ends it returns eta_min instead of restarting at base_lr.', '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, epoch
    while T_cur > T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i))
'''),
        ('Forgets to subtract eta_min from the amplitude (eta_min + base_lr * (1 + cos) / 2): the same with the default eta_min = 0, but with an eta_min the top of each cycle is base_lr + eta_min, not base_lr.', '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, epoch
    while T_cur >= T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + 0.5 * base_lr * (1 + math.cos(math.pi * T_cur / T_i))
'''),
    ],
    'ema': [
        ('Averages from the first update on instead of copying the model at the first call, so when the model has trained between construction and the first update the average still remembers the construction-time weights.', _EMA_INIT + '''
    @torch.no_grad()
    def update_parameters(self, model):
        mine = list(self.module.parameters()) + list(self.module.buffers())
        theirs = list(model.parameters()) + list(model.buffers())
        for avg, p in zip(mine, theirs):
            if avg.is_floating_point():
                avg.lerp_(p, 1 - self.decay)
        self.n_averaged += 1
''' + _EMA_FORWARD),
        ('Averages the parameters but copies the buffers (BatchNorm\'s running mean and variance) from the model at every update, as AveragedModel does without use_buffers; the text asks for the buffers to be averaged too.', _EMA_INIT + '''
    @torch.no_grad()
    def update_parameters(self, model):
        for avg, p in zip(self.module.parameters(), model.parameters()):
            if self.n_averaged == 0:
                avg.copy_(p)
            else:
                avg.mul_(self.decay).add_(p, alpha=1 - self.decay)
        for avg, b in zip(self.module.buffers(), model.buffers()):
            avg.copy_(b)                        # statistics follow the current weights
        self.n_averaged += 1
''' + _EMA_FORWARD),
    ],
    'freeze': [
        ('Only freezes the parameters outside the trainable modules and never sets requires_grad=True inside them, so a parameter inside a trainable module that was frozen beforehand stays frozen.', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        if not any(name.startswith(module + ".") for module in trainable):
            p.requires_grad = False
''' + _BN_EVAL),
        ('Puts only nn.BatchNorm1d and nn.BatchNorm2d in eval mode, so BatchNorm3d and SyncBatchNorm layers stay in training mode, though the text asks for every BatchNorm class (all derive from _BatchNorm).', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for name, p in model.named_parameters():
        p.requires_grad_(any(name.startswith(module + ".") for module in trainable))


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    for module in model.modules():
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
            module.eval()
    return model
'''),
    ],
    'param_groups': [
        ('Leaves frozen parameters out of the body group but not out of the head group, so a frozen head parameter still lands in the optimizer (at head_lr).', '''def finetune_param_groups(model, head, lr, head_lr):
    """Parameter groups: the head's trainable parameters at head_lr, the others at lr."""
    head_params = list(model.get_submodule(head).parameters())
    head_ids = {id(p) for p in head_params}
    body = [p for p in model.parameters() if id(p) not in head_ids and p.requires_grad]
    return [{"params": body, "lr": lr}, {"params": head_params, "lr": head_lr}]
'''),
    ],
    'frameworks': [
        ('The TensorFlow version converts its loss and gradients to NumPy with .numpy() before returning: the values are right, but they are no longer TensorFlow tensors, as the text asks (no conversion back to NumPy).', _FRAMEWORKS_HEAD + _TF_AS_NUMPY + _FRAMEWORKS_TAIL),
    ],
}

RIGHT = {
    'cosine_restarts': [
        ('Walks the cycles in a loop (subtract T_i while T_cur >= T_i, then T_i *= T_mult) instead of the closed form with a logarithm.', '''def cosine_restarts_lr(epoch, base_lr, T_0, T_mult=1, eta_min=0.0):
    """Learning rate at (fractional) `epoch` of the SGDR schedule."""
    T_i, T_cur = T_0, float(epoch)
    while T_cur >= T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2
'''),
    ],
    'freeze': [
        ('Freezes everything first, then unfreezes the parameters of each named submodule through model.get_submodule(name).parameters(); BatchNorm modules found with train(False).', '''def freeze_except(model, trainable):
    """requires_grad=True inside the named submodules, False everywhere else."""
    for p in model.parameters():
        p.requires_grad_(False)
    for name in trainable:
        for p in model.get_submodule(name).parameters():
            p.requires_grad_(True)


def batchnorm_eval(model):
    """Every BatchNorm module in eval mode, the rest unchanged; returns the model."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.train(False)
    return model
'''),
    ],
    'ema': [
        ('Walks state_dict() pairs, skipping integer buffers, and uses mul_/add_ with alpha instead of lerp_; the first update is told apart by a boolean flag.', '''class EMAModel(nn.Module):
    """An exponential moving average of a model's parameters and floating-point buffers."""

    def __init__(self, model, decay):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.decay = decay
        self._started = False

    def update_parameters(self, model):
        source = model.state_dict()
        with torch.no_grad():
            for name, avg in self.module.state_dict().items():
                if not avg.is_floating_point():
                    continue
                if self._started:
                    avg.mul_(self.decay).add_(source[name], alpha=1 - self.decay)
                else:
                    avg.copy_(source[name])
        self._started = True

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
'''),
    ],
}
