"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    'module': [
        ('the memo of parameters already seen is made afresh in every recursive call, so a parameter tied between two sibling submodules is yielded twice (breaks: each parameter once, under its first name)', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params, mods = self.__dict__["_parameters"], self.__dict__["_modules"]
        if isinstance(value, Parameter):
            mods.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            mods[name] = value
        else:
            params.pop(name, None)
            mods.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _named_parameters(self, prefix, seen):
        for name, p in self._parameters.items():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m._named_parameters(prefix + name + ".", set())

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        if prefix and not prefix.endswith("."):
            prefix = prefix + "."
        yield from self._named_parameters(prefix, set())

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
        for m in self.modules():
            object.__setattr__(m, "training", mode)
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
        if prefix and not prefix.endswith("."):
            prefix = prefix + "."
        out = {}
        for name, p in self._parameters.items():
            out[prefix + name] = p.detach()
        for name, m in self._modules.items():
            out.update(m.state_dict(prefix + name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ('state_dict is built from named_parameters, which deduplicates, so a tied parameter appears only under its first name (breaks: every parameter under every name it is registered)', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params, mods = self.__dict__["_parameters"], self.__dict__["_modules"]
        if isinstance(value, Parameter):
            mods.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            mods[name] = value
        else:
            params.pop(name, None)
            mods.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _named_parameters(self, prefix, seen):
        for name, p in self._parameters.items():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m._named_parameters(prefix + name + ".", seen)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        if prefix and not prefix.endswith("."):
            prefix = prefix + "."
        yield from self._named_parameters(prefix, set())

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
        for m in self.modules():
            object.__setattr__(m, "training", mode)
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
        if prefix and not prefix.endswith("."):
            prefix = prefix + "."
        return {name: p.detach() for name, p in self.named_parameters(prefix)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    'layers': [
        ('forward uses torch.addmm(bias, x, weight.T), which only accepts 2-D x: a (B, T, in) batch raises (breaks: works for any leading dimensions)', '''class Linear(Module):
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
        return x.clamp(min=0)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self.children():
            x = m(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
'''),
        ("the bias is initialised with bound 1/sqrt(out_features), the bias's own length, instead of 1/sqrt(in_features) (breaks: both weight and bias start in U(-1/sqrt(in), 1/sqrt(in)))", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-1 / math.sqrt(out_features), 1 / math.sqrt(out_features)))
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
        for m in self.children():
            x = m(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
'''),
        ("ReLU clamps in place (x.clamp_(min=0)), so it overwrites the caller's tensor and fails on a leaf input that requires grad (breaks: forward returns max(x, 0), a new tensor)", '''class Linear(Module):
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
        return x.clamp_(min=0)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self.children():
            x = m(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]
'''),
    ],
    'parallel_block': [
        ('MyParallelBlock applies the ReLU to each branch before multiplying: where both branches are negative it gives 0 instead of their positive product (breaks: max((xW1+b1)*(xW2+b2), 0)); the torch version is right', '''class ParallelBlock(torch.nn.Module):
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

    def forward(self, x):
        return self.linear1(x).clamp(min=0) * self.linear2(x).clamp(min=0)
'''),
    ],
    'sgd': [
        ('the first momentum buffer is p.grad itself, not a clone: buffer and gradient alias, so a later in-place mul_/add_ rewrites the gradient and accumulated gradients leak into the buffer (breaks: b_1 = g_1 as a state of its own)', '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.buffers = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum != 0:
                if p not in self.buffers:
                    self.buffers[p] = g
                else:
                    self.buffers[p].mul_(self.momentum).add_(g)
                g = self.buffers[p]
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ('zero_grad zeroes the gradients in place instead of setting them to None, so a parameter left out of the next backward still has a (zero) grad and is not skipped: momentum keeps moving it (breaks: zero_grad sets .grad to None; parameters without gradient are skipped)', '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.buffers = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum != 0:
                if p not in self.buffers:
                    self.buffers[p] = g.clone()
                else:
                    self.buffers[p].mul_(self.momentum).add_(g)
                g = self.buffers[p]
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()
'''),
    ],
    'adam': [
        ('one step counter for the whole optimizer, advanced once per step(): a parameter skipped because its grad is None still advances its t, so its later bias correction is wrong (breaks: each parameter counts its own steps)', '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}
        self.t = 0

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        b1, b2 = self.betas
        self.t += 1
        t = self.t
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if p not in self.state:
                self.state[p] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s = self.state[p]
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
        ("uses the paper's 'efficient' form, step lr*sqrt(1-b2^t)/(1-b1^t) with denominator sqrt(v)+eps: eps is then not bias-corrected, so with a large eps the step differs (breaks: theta -= lr * m_hat / (sqrt(v_hat) + eps))", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if p not in self.state:
                self.state[p] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s = self.state[p]
            s["t"] += 1
            t = s["t"]
            s["m"].mul_(b1).add_(g, alpha=1 - b1)
            s["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
            step_size = self.lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            p.addcdiv_(s["m"], s["v"].sqrt().add_(self.eps), value=-step_size)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    'module': [
        ('keeps the registries through super().__setattr__/vars(self), and walks the tree iteratively with an explicit stack (named_modules-style prefixes) instead of recursive generators', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        super().__setattr__("_parameters", {})
        super().__setattr__("_modules", {})
        super().__setattr__("training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        own = vars(self)
        registries = {"param": own["_parameters"], "module": own["_modules"]}
        kind = "param" if isinstance(value, Parameter) else "module" if isinstance(value, Module) else None
        for key, registry in registries.items():
            if key != kind:
                registry.pop(name, None)
        if kind is None:
            super().__setattr__(name, value)
        else:
            own.pop(name, None)
            registries[kind][name] = value   # an existing key keeps its position in a dict

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        own = vars(self)
        for registry in (own.get("_parameters", {}), own.get("_modules", {})):
            if name in registry:
                return registry[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _walk(self, prefix=""):
        """(dotted prefix, module) pairs, pre-order, each path (a shared module under every path)."""
        stack = [(prefix, self)]
        while stack:
            path, module = stack.pop()
            yield path, module
            stack.extend(reversed([(f"{path}{name}.", child) for name, child in module._modules.items()]))

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        if prefix and not prefix.endswith("."):
            prefix += "."
        seen = set()
        for path, module in self._walk(prefix):
            for name, p in module._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield path + name, p

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        return iter(list(self._modules.values()))

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        for _, module in self._walk():
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
            for p in module._parameters.values():
                if p is not None:
                    p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        if prefix and not prefix.endswith("."):
            prefix += "."
        return {path + name: p.detach()
                for path, module in self._walk(prefix)
                for name, p in module._parameters.items() if p is not None}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    'sgd': [
        ('state in a dict filled lazily with torch.zeros_like (so b_1 = mu*0 + g_1 = g_1 exactly), updates inside an explicit `with torch.no_grad():` block on the parameter list', '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.param_list = [p for p in params]
        self.lr = lr
        self.momentum = momentum
        self.state = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        with torch.no_grad():
            for p in filter(lambda q: q.grad is not None, self.param_list):
                direction = p.grad
                if self.momentum:
                    buf = self.state.setdefault(p, torch.zeros_like(p))
                    buf.mul_(self.momentum).add_(p.grad)
                    direction = buf
                p.sub_(self.lr * direction)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.param_list:
            p.grad = None
'''),
    ],
    'adam': [
        ("torch's own arrangement of the same formula: moments updated with lerp_, denominator sqrt(v)/sqrt(1-b2^t) + eps and the first correction folded into the step size of addcdiv_", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.eps = lr, eps
        self.beta1, self.beta2 = betas
        self.steps, self.exp_avg, self.exp_avg_sq = {}, {}, {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            grad = p.grad
            if grad is None:
                continue
            if p not in self.steps:
                self.steps[p] = 0
                self.exp_avg[p] = torch.zeros_like(p, memory_format=torch.preserve_format)
                self.exp_avg_sq[p] = torch.zeros_like(p, memory_format=torch.preserve_format)
            self.steps[p] += 1
            t = self.steps[p]
            m, v = self.exp_avg[p], self.exp_avg_sq[p]
            m.lerp_(grad, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(grad, grad.conj(), value=1 - self.beta2)
            bias_correction1 = 1 - self.beta1 ** t
            bias_correction2 = 1 - self.beta2 ** t
            denom = (v.sqrt() / math.sqrt(bias_correction2)).add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / bias_correction1)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
