"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    'module': [
        ('__setattr__ first pops the name from every registry and then re-inserts it: re-assigning a registered parameter (or module) moves it to the end of the order instead of keeping its position',
         '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        # forget any earlier binding of this name first, so one name lives in one place only
        self.__dict__.pop(name, None)
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def named_parameters(self, prefix="", _seen=None):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, child in self._modules.items():
            yield from child.named_parameters(prefix + name + ".", seen)

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
        for p in self.parameters():
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
'''),
        ('state_dict is built from named_parameters(), which lists a tied parameter only once: the second name of a tied parameter is missing from the state_dict',
         '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._modules[name] = value
        else:
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def named_parameters(self, prefix="", _seen=None):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, child in self._modules.items():
            yield from child.named_parameters(prefix + name + ".", seen)

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
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        return {prefix + name: p.detach() for name, p in self.named_parameters()}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ('__getattr__ looks the name up in a merged dict and lets the KeyError escape: an unknown attribute raises KeyError, not AttributeError (hasattr/getattr with a default break)',
         '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._modules[name] = value
        else:
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = {**self.__dict__["_parameters"], **self.__dict__["_modules"]}
        return registries[name]  # unknown name: the dict lookup fails

    def named_parameters(self, prefix="", _seen=None):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, child in self._modules.items():
            yield from child.named_parameters(prefix + name + ".", seen)

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
        for p in self.parameters():
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
'''),
    ],
    'layers': [
        ('Linear.forward uses torch.addmm / torch.mm, which accept 2-D inputs only: a sequence batch (B, T, in_features) raises instead of working over the leading dimensions',
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        if self.bias is not None:
            return torch.addmm(self.bias, x, self.weight.T)  # fused multiply-add
        return torch.mm(x, self.weight.T)


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return x.clamp(min=0)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, module in enumerate(modules):
            setattr(self, str(i), module)

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
'''),
        ("the bias is created with dtype=dtype but without device=device (the weight has both): Linear(..., device='meta') gets a CPU bias",
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, dtype=dtype).uniform_(-bound, bound))
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
        for i, module in enumerate(modules):
            setattr(self, str(i), module)

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
'''),
    ],
    'parallel_block': [
        ('MyParallelBlock (only the own-framework class) applies the ReLU to each branch before multiplying: max(a,0)*max(b,0) differs from max(a*b,0) where both branches are negative',
         '''class ParallelBlock(torch.nn.Module):
    """Two linear branches multiplied elementwise, then a ReLU (torch.nn version)."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = torch.nn.Linear(D_in, D_out)
        self.linear2 = torch.nn.Linear(D_in, D_out)

    def forward(self, x):
        return (self.linear1(x) * self.linear2(x)).clamp(min=0)


class MyParallelBlock(Module):
    """The same block on your own Module and Linear."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = Linear(D_in, D_out)
        self.linear2 = Linear(D_in, D_out)
        self.relu = ReLU()

    def forward(self, x):
        # each branch through the ReLU, then the elementwise product
        return self.relu(self.linear1(x)) * self.relu(self.linear2(x))
'''),
    ],
    'sgd': [
        ('keeps `params` as given instead of list(params): built from model.parameters() (a generator) the first step() exhausts it and every later step, and zero_grad, does nothing',
         '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = params
        self.lr = lr
        self.momentum = momentum
        self.buffers = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum != 0:
                if i not in self.buffers:
                    self.buffers[i] = g.clone()
                else:
                    self.buffers[i].mul_(self.momentum).add_(g)
                g = self.buffers[i]
            p.sub_(self.lr * g)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ('a parameter whose .grad is None is treated as having a zero gradient instead of being skipped: with momentum the buffer decays and the parameter keeps moving on that step',
         '''class SGD:
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
            # no gradient this step: it counts as a zero gradient
            g = p.grad if p.grad is not None else torch.zeros_like(p)
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
'''),
    ],
    'adam': [
        ('one step counter for the whole optimizer (t += 1 per step() call): a parameter skipped for lack of a gradient still advances its bias-correction count',
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        self.t += 1
        t = self.t
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            self.m[i].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            self.v[i].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            m_hat = self.m[i] / (1 - self.beta1 ** t)
            v_hat = self.v[i] / (1 - self.beta2 ** t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("the Adam paper's 'efficient' form lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps): eps is added to the uncorrected sqrt(v), so the steps differ from torch's sqrt(v_hat)+eps (clearly for large eps)",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = [0] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            self.t[i] += 1
            t = self.t[i]
            self.m[i].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            self.v[i].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            # the paper's cheaper form: fold both corrections into the step size
            step_size = self.lr * math.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
            p.sub_(step_size * self.m[i] / (self.v[i].sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    'module': [
        ('registries read through self.__dict__ everywhere; modules() with an explicit stack, named_parameters and state_dict through one private walk over (prefix, module) pairs with a shared seen-set; train() via modules()',
         '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", dict())
        object.__setattr__(self, "_modules", dict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params = self.__dict__["_parameters"]
        mods = self.__dict__["_modules"]
        if isinstance(value, Parameter):
            if name in mods:
                del mods[name]
            if name in self.__dict__:
                del self.__dict__[name]
            params[name] = value          # an existing key keeps its place in the dict
        elif isinstance(value, Module):
            if name in params:
                del params[name]
            if name in self.__dict__:
                del self.__dict__[name]
            mods[name] = value
        else:
            if name in params:
                del params[name]
            if name in mods:
                del mods[name]
            self.__dict__[name] = value

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        for registry in ("_parameters", "_modules"):
            table = self.__dict__.get(registry, {})
            if name in table:
                return table[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _named_modules(self, prefix=""):
        # pre-order walk: (dotted prefix, module)
        stack = [(prefix, self)]
        while stack:
            pre, module = stack.pop()
            yield pre, module
            kids = list(module.__dict__["_modules"].items())
            for child_name, child in reversed(kids):
                stack.append((pre + child_name + ".", child))

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for pre, module in self._named_modules(prefix):
            for name, p in module.__dict__["_parameters"].items():
                if id(p) not in seen:
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
        for _, module in self._named_modules():
            yield module

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        for module in list(self.modules()):
            module.training = mode
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for module in self.modules():
            for p in module.__dict__["_parameters"].values():
                p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        result = {}
        for pre, module in self._named_modules(prefix):
            for name, p in module.__dict__["_parameters"].items():
                result[pre + name] = p.detach()
        return result

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    'layers': [
        ('Linear draws torch.rand(...) * 2b - b with device/dtype passed through and computes with torch.matmul on the transposed weight via .mT; ReLU with torch.where; Sequential keeps a helper list of names and indexes through it (negative indices via the list)',
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        k = 1.0 / math.sqrt(in_features)

        def uniform(*shape):
            return torch.rand(*shape, device=device, dtype=dtype) * (2 * k) - k

        self.weight = Parameter(uniform(out_features, in_features))
        self.bias = Parameter(uniform(out_features)) if bias else None

    def forward(self, x):
        out = torch.matmul(x, self.weight.mT)
        return out if self.bias is None else out + self.bias


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.where(x > 0, x, torch.zeros_like(x))


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        self._names = []
        for module in modules:
            name = str(len(self._names))
            setattr(self, name, module)
            self._names.append(name)

    def forward(self, x):
        for name in self._names:
            x = getattr(self, name)(x)
        return x

    def __len__(self):
        return len(self._names)

    def __getitem__(self, index):
        return getattr(self, self._names[index])
'''),
    ],
    'adam': [
        ("torch's own arrangement: state dict keyed by the parameter, created lazily with zeros_like on the first gradient, step_size = lr / bc1 and denom = sqrt(v)/sqrt(bc2) + eps, applied with addcdiv_ inside an explicit `with torch.no_grad():`",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = [p for p in params]
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}

    def step(self):
        """Update every parameter that has a gradient."""
        beta1, beta2 = self.betas
        with torch.no_grad():
            for p in self.params:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state.get(p)
                if state is None:
                    state = {"step": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
                    self.state[p] = state
                state["step"] += 1
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** state["step"]
                bias_correction2 = 1 - beta2 ** state["step"]
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(self.eps)
                p.addcdiv_(exp_avg, denom, value=-self.lr / bias_correction1)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
