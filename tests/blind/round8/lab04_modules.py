"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'module': [
        ('__getattr__ reads self._parameters/self._modules through normal lookup, so on an instance whose registries are not set yet (copy.deepcopy/pickle probing __setstate__ before __init__ ran) it recurses forever instead of raising AttributeError as promised', '''class Module:
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
        if name in self._parameters:
            return self._parameters[name]
        if name in self._modules:
            return self._modules[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def named_parameters(self, prefix="", _seen=None):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".", seen)

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
        for m in self._modules.values():
            yield from m.modules()

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        self.training = mode
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        out = {}
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p.detach()
        for name, m in self._modules.items():
            out.update(m.state_dict(prefix + name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ("state_dict stores the Parameter itself instead of p.detach(): values and names are right, but the 'detached tensor' promise breaks (entries require grad and are the live Parameters)", '''class Module:
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

    def named_parameters(self, prefix="", _seen=None):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".", seen)

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
        for m in self._modules.values():
            yield from m.modules()

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        self.training = mode
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        out = {}
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p
        for name, m in self._modules.items():
            out.update(m.state_dict(prefix + name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ('__setattr__ files a Parameter/Module in the registry but does not remove an existing plain attribute of the same name, so after `self.x = 1; self.x = Parameter(...)` attribute access still returns the stale plain value (normal lookup wins over __getattr__)', '''class Module:
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
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
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

    def named_parameters(self, prefix="", _seen=None):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".", seen)

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
        for m in self._modules.values():
            yield from m.modules()

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        self.training = mode
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        out = {}
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p.detach()
        for name, m in self._modules.items():
            out.update(m.state_dict(prefix + name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    'layers': [
        ("Sequential.__getitem__ looks children up by str(index), so seq[-1] (and slices) raise KeyError although 'seq[i] works' as for torch's Sequential", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
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
        return torch.relu(x)


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
        return self._modules[str(index)]
'''),
        ("Linear.forward uses torch.addmm(bias, x, weight.T), which only accepts 2-D x: a (B, T, in) sequence batch raises, breaking 'for any leading dimensions'", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        if self.bias is not None:
            return torch.addmm(self.bias, x, self.weight.T)
        return x @ self.weight.T


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.relu(x)


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
'''),
        ("ReLU uses the lecture's x.clamp(min=0): same values, but at exactly x == 0 its input gradient is 1, where torch.nn.ReLU (the stated reference for input gradients) gives 0", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
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
'''),
    ],
    'parallel_block': [
        ("max(., 0) written as torch.maximum(prod, zeros_like(prod)): equal values, but where the product is exactly 0 the gradient is split 0.5/0.5 between the tied arguments instead of the ReLU's 0", '''class ParallelBlock(torch.nn.Module):
    """Two linear branches multiplied elementwise, then a ReLU (torch.nn version)."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = torch.nn.Linear(D_in, D_out)
        self.linear2 = torch.nn.Linear(D_in, D_out)

    def forward(self, x):
        prod = self.linear1(x) * self.linear2(x)
        return torch.maximum(prod, torch.zeros_like(prod))


class MyParallelBlock(Module):
    """The same block on your own Module and Linear."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = Linear(D_in, D_out)
        self.linear2 = Linear(D_in, D_out)

    def forward(self, x):
        prod = self.linear1(x) * self.linear2(x)
        return torch.maximum(prod, torch.zeros_like(prod))
'''),
    ],
    'sgd': [
        ("folds the learning rate into the momentum buffer (b = mu*b + lr*g; p -= b): identical trajectories while lr is constant, but the buffer is not torch's b_t = mu*b_{t-1} + g_t and any change of sgd.lr mid-training (a schedule) gives a different update", '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
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
                    self.buffers[i] = self.lr * g
                else:
                    self.buffers[i].mul_(self.momentum).add_(g, alpha=self.lr)
                p.sub_(self.buffers[i])
            else:
                p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ('treats an all-zero gradient like a missing one (skips when not p.grad.any()): only .grad None should be skipped; with momentum a zero gradient must still move the parameter by mu*b and decay the buffer', '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.buffers = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None or not p.grad.any():
                continue
            g = p.grad
            if self.momentum != 0:
                if self.buffers[i] is None:
                    self.buffers[i] = g.clone()
                else:
                    self.buffers[i].mul_(self.momentum).add_(g)
                g = self.buffers[i]
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    'adam': [
        ('one step counter for the whole optimizer (self.t += 1 per step()) instead of one per parameter: a parameter skipped because its .grad is None still advances t, so its later bias correction is wrong', '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = [None] * len(self.params)
        self.t = 0

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        b1, b2 = self.betas
        self.t += 1
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.state[i] is None:
                self.state[i] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s = self.state[i]
            g = p.grad
            t = self.t
            s["m"].mul_(b1).add_(g, alpha=1 - b1)
            s["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = s["m"] / (1 - b1 ** t)
            v_hat = s["v"] / (1 - b2 ** t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    'module': [
        ('keeps the registries through self.__dict__ only, walks the tree with explicit stacks/memo instead of recursion, and builds state_dict from one pre-order walk of (prefix, module) pairs', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        self.__dict__.update(_parameters={}, _modules={}, training=True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        registries = {"_parameters": self.__dict__["_parameters"], "_modules": self.__dict__["_modules"]}
        if isinstance(value, Parameter):
            target = "_parameters"
        elif isinstance(value, Module):
            target = "_modules"
        else:
            target = None
        for key, registry in registries.items():
            if key != target and name in registry:
                del registry[name]
        if target is None:
            self.__dict__[name] = value
        else:
            self.__dict__.pop(name, None)
            registries[target][name] = value   # an existing key keeps its place

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        for key in ("_parameters", "_modules"):
            registry = self.__dict__.get(key, {})
            if name in registry:
                return registry[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _walk(self, prefix=""):
        """(prefix, module) pairs, pre-order, depth first."""
        stack = [(prefix, self)]
        while stack:
            pre, mod = stack.pop()
            yield pre, mod
            children = list(mod.__dict__["_modules"].items())
            for name, child in reversed(children):
                stack.append((pre + name + ".", child))

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for pre, mod in self._walk(prefix):
            for name, p in mod.__dict__["_parameters"].items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield pre + name, p

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        for child in self.__dict__["_modules"].values():
            yield child

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        for _, mod in self._walk():
            yield mod

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        for mod in self.modules():
            mod.training = mode
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        return {pre + name: p.detach()
                for pre, mod in self._walk(prefix)
                for name, p in mod.__dict__["_parameters"].items() if p is not None}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    'sgd': [
        ('state in a dict keyed by the Parameter (tensors hash by identity), buffer created eagerly with torch.zeros_like so that b_1 = 0*mu + g_1, update written as p -= lr*b with torch.add', '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = [p for p in params]
        self.lr = lr
        self.momentum = momentum
        self.state = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            if p.grad is None:
                continue
            direction = p.grad
            if self.momentum:
                if p not in self.state:
                    self.state[p] = torch.zeros_like(p)
                buf = self.state[p]
                buf.copy_(torch.add(p.grad, buf, alpha=self.momentum))
                direction = buf
            p.sub_(self.lr * direction)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    'adam': [
        ("torch.optim.Adam's own arithmetic: bias corrections folded into step size lr/(1-b1^t) and denominator sqrt(v)/sqrt(1-b2^t) + eps, applied with addcdiv_; state created lazily per parameter", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.state = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            if p.grad is None:
                continue
            state = self.state.setdefault(p, {"step": 0, "exp_avg": torch.zeros_like(p),
                                              "exp_avg_sq": torch.zeros_like(p)})
            state["step"] += 1
            t = state["step"]
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(p.grad, 1 - self.beta1)
            exp_avg_sq.mul_(self.beta2).add_(p.grad * p.grad, alpha=1 - self.beta2)
            bias_correction1 = 1 - self.beta1 ** t
            bias_correction2 = 1 - self.beta2 ** t
            denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(self.eps)
            p.addcdiv_(exp_avg, denom, value=-self.lr / bias_correction1)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
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
    ('layers', 0): (
        "not a mistake the text defines: it asks that seq[i] works, and names no negative "
        "index"
    ),
    ('layers', 2): (
        'not a mistake the text defines: at exactly 0 any value in [0, 1] is a '
        "subgradient of max(x, 0), and clamp(min=0) is the lecture's own idiom (as in "
        'round 2)'
    ),
    ('parallel_block', 0): (
        'not a mistake the text defines: at an exact tie any split is a subgradient of '
        'max(., 0), as for the ReLU (round 2)'
    ),
}
