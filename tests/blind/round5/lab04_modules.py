"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 5)."""

_MODULE = '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params = self.__dict__["_parameters"]
        modules = self.__dict__["_modules"]
        if isinstance(value, Parameter):
            modules.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            modules[name] = value
        else:
            params.pop(name, None)
            modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        stack = [(prefix, self)]
        while stack:
            pre, mod = stack.pop()
            for name, p in mod._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield pre + name, p
            # push children reversed so the first child is walked first (pre-order)
            stack.extend((pre + name + ".", child) for name, child in reversed(list(mod._modules.items())))

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        yield from self._modules.values()

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        yield self
        for child in self._modules.values():
            yield from child.modules()

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        self.training = mode
        for child in self._modules.values():
            child.train(mode)
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for m in self.modules():
            for p in m._parameters.values():
                p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        out = {}
        for name, p in self._parameters.items():
            out[prefix + name] = p.detach()
        for name, child in self._modules.items():
            out.update(child.state_dict(prefix + name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''


def _sub(src, old, new):
    assert src.count(old) == 1, old
    return src.replace(old, new)


_LAYERS = '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        return y


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return x.clamp(min=0)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
'''

_SGD = '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum != 0:
                if self.buffers[i] is None:
                    self.buffers[i] = g.clone()
                else:
                    self.buffers[i].mul_(self.momentum).add_(g)
                g = self.buffers[i]
            p.sub_(self.lr * g)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''

_ADAM = '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.state = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.state[i] is None:
                self.state[i] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s = self.state[i]
            g = p.grad
            s["t"] += 1
            t = s["t"]
            s["m"].mul_(self.beta1).add_((1 - self.beta1) * g)
            s["v"].mul_(self.beta2).add_((1 - self.beta2) * g * g)
            m_hat = s["m"] / (1 - self.beta1 ** t)
            v_hat = s["v"] / (1 - self.beta2 ** t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''

WRONG = {
    "module": [
        ("re-assigning an already registered parameter pops it first and re-inserts it: the re-assigned name moves to the end of the order instead of keeping its position",
         _sub(_MODULE, '''            self.__dict__.pop(name, None)
            params[name] = value''', '''            self.__dict__.pop(name, None)
            params.pop(name, None)          # drop the old entry, then register afresh
            params[name] = value''')),
        ("state_dict is built from named_parameters(), which lists a tied parameter once: the second name of a tied parameter is missing from the state_dict",
         _sub(_MODULE, '''        out = {}
        for name, p in self._parameters.items():
            out[prefix + name] = p.detach()
        for name, child in self._modules.items():
            out.update(child.state_dict(prefix + name + "."))
        return out''', '''        return {prefix + name: p.detach() for name, p in self.named_parameters()}''')),
        ("train(mode) recurses with child.train() without passing mode: eval() sets training=False on the root only, every descendant stays in training mode",
         _sub(_MODULE, '''            child.train(mode)''', '''            child.train()''')),
    ],
    "layers": [
        ("Linear passes dtype to the weight but builds the bias with torch's default dtype: a dtype=float64 layer has a float32 bias (one constructor parameter ignored for one tensor)",
         _sub(_LAYERS, '''torch.empty(out_features, device=device, dtype=dtype)''', '''torch.empty(out_features, device=device)''')),
        ("initialisation bound 1/sqrt(out_features) instead of 1/sqrt(in_features): right only when in_features == out_features",
         _sub(_LAYERS, '''bound = 1.0 / math.sqrt(in_features)''', '''bound = 1.0 / math.sqrt(out_features)''')),
        ("bias=False registers a zero bias Parameter (so forward needs no branch) instead of setting self.bias = None: an extra parameter named 'bias' appears",
         _sub(_LAYERS, '''        else:
            self.bias = None''', '''        else:
            self.bias = Parameter(torch.zeros(out_features, device=device, dtype=dtype))''')),
    ],
    "parallel_block": [
        ("applies the ReLU to each branch before the product, max(a,0)*max(b,0): wrong (0 instead of a*b > 0) where both branches are negative",
         '''class ParallelBlock(torch.nn.Module):
    """Two linear branches multiplied elementwise, then a ReLU (torch.nn version)."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = torch.nn.Linear(D_in, D_out)
        self.linear2 = torch.nn.Linear(D_in, D_out)

    def forward(self, x):
        return self.linear1(x).clamp(min=0) * self.linear2(x).clamp(min=0)


class MyParallelBlock(Module):
    """The same block on your own Module and Linear."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = Linear(D_in, D_out)
        self.linear2 = Linear(D_in, D_out)

    def forward(self, x):
        return self.linear1(x).clamp(min=0) * self.linear2(x).clamp(min=0)
'''),
    ],
    "sgd": [
        ("a parameter whose .grad is None is not skipped when momentum is on: a zero gradient is used and the old buffer still moves the parameter",
         _sub(_SGD, '''            if p.grad is None:
                continue
            g = p.grad''', '''            if p.grad is None and self.momentum == 0:
                continue
            g = p.grad if p.grad is not None else torch.zeros_like(p)''')),
    ],
    "adam": [
        ("one step counter for the whole optimizer instead of one per parameter: a parameter skipped in some step gets the wrong bias correction afterwards",
         _sub(_sub(_ADAM, '''        for i, p in enumerate(self.params):
            if p.grad is None:''', '''        self.t = getattr(self, "t", 0) + 1
        for i, p in enumerate(self.params):
            if p.grad is None:'''), '''            s["t"] += 1
            t = s["t"]''', '''            t = self.t''')),
        ("default eps=1e-6 in the signature (the Keras-like value) instead of 1e-8: wrong only when eps is left at its default",
         _sub(_ADAM, "eps=1e-8):", "eps=1e-6):")),
    ],
}

RIGHT = {
    "module": [
        ("registries as plain dicts; named_parameters walks the tree with an explicit stack (children pushed reversed) and one id()-based seen set instead of recursive generators",
         _MODULE),
    ],
    "sgd": [
        ("momentum buffer created as zeros_like and always updated b = mu*b + g (equal to g at the first step), update with p.add_(b, alpha=-lr)",
         '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.state = {}

    def step(self):
        """Update every parameter that has a gradient."""
        with torch.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                if self.momentum:
                    buf = self.state.get(id(p))
                    if buf is None:
                        buf = torch.zeros_like(p)
                        self.state[id(p)] = buf
                    buf.mul_(self.momentum).add_(p.grad)
                    p.add_(buf, alpha=-self.lr)
                else:
                    p.add_(p.grad, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ("torch's own arrangement: lerp_/addcmul_ for the moments and step size lr/bc1 with denominator sqrt(v)/sqrt(bc2) + eps (the same formula rearranged)",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.steps = [0 for _ in self.params]
        self.m = [None for _ in self.params]
        self.v = [None for _ in self.params]

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        b1, b2 = self.betas
        for k, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if self.m[k] is None:
                self.m[k] = torch.zeros_like(p)
                self.v[k] = torch.zeros_like(p)
            self.steps[k] += 1
            t = self.steps[k]
            self.m[k].lerp_(g, 1 - b1)
            self.v[k].mul_(b2).addcmul_(g, g, value=1 - b2)
            bc1 = 1 - b1 ** t
            bc2 = 1 - b2 ** t
            denom = (self.v[k].sqrt() / math.sqrt(bc2)).add_(self.eps)
            p.addcdiv_(self.m[k], denom, value=-self.lr / bc1)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
