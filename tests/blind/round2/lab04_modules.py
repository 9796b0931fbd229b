"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "module": [
        ("__setattr__ first clears the name from both registries and the instance dict, then "
         "files it again: a re-assigned parameter moves to the end of the order",
         '''class Module:
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
        # forget whatever the name meant before, then file it where it belongs
        params.pop(name, None)
        modules.pop(name, None)
        self.__dict__.pop(name, None)
        if isinstance(value, Parameter):
            params[name] = value
        elif isinstance(value, Module):
            modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        d = self.__dict__
        if name in d.get("_parameters", {}):
            return d["_parameters"][name]
        if name in d.get("_modules", {}):
            return d["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()

        def walk(module, pre):
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (pre + "." + name if pre else name), p
            for child_name, child in module._modules.items():
                yield from walk(child, pre + "." + child_name if pre else child_name)

        yield from walk(self, prefix)

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        seen = set()
        for m in self._modules.values():
            if id(m) not in seen:
                seen.add(id(m))
                yield m

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        seen = set()

        def walk(m):
            if id(m) in seen:
                return
            seen.add(id(m))
            yield m
            for child in m._modules.values():
                yield from walk(child)

        yield from walk(self)

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        for m in self.modules():
            m.training = mode
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
        result = {}
        for name, p in self._parameters.items():
            if p is not None:
                result[prefix + name] = p.detach()
        for child_name, child in self._modules.items():
            result.update(child.state_dict(prefix + child_name + "."))
        return result

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ("state_dict is built from named_parameters, so a tied parameter appears under its "
         "first name only",
         '''class Module:
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
        if name in d.get("_parameters", {}):
            return d["_parameters"][name]
        if name in d.get("_modules", {}):
            return d["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()

        def walk(module, pre):
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (pre + "." + name if pre else name), p
            for child_name, child in module._modules.items():
                yield from walk(child, pre + "." + child_name if pre else child_name)

        yield from walk(self, prefix)

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        seen = set()
        for m in self._modules.values():
            if id(m) not in seen:
                seen.add(id(m))
                yield m

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        seen = set()

        def walk(m):
            if id(m) in seen:
                return
            seen.add(id(m))
            yield m
            for child in m._modules.values():
                yield from walk(child)

        yield from walk(self)

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        for m in self.modules():
            m.training = mode
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
        ("__getattr__ looks the name up in the parameter dict, else indexes the module dict: an "
         "unknown name raises KeyError, not AttributeError (hasattr breaks)",
         '''class Module:
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
        params = self.__dict__["_parameters"]
        if name in params:
            return params[name]
        return self.__dict__["_modules"][name]

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()

        def walk(module, pre):
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (pre + "." + name if pre else name), p
            for child_name, child in module._modules.items():
                yield from walk(child, pre + "." + child_name if pre else child_name)

        yield from walk(self, prefix)

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        seen = set()
        for m in self._modules.values():
            if id(m) not in seen:
                seen.add(id(m))
                yield m

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        seen = set()

        def walk(m):
            if id(m) in seen:
                return
            seen.add(id(m))
            yield m
            for child in m._modules.values():
                yield from walk(child)

        yield from walk(self)

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        for m in self.modules():
            m.training = mode
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
        result = {}
        for name, p in self._parameters.items():
            if p is not None:
                result[prefix + name] = p.detach()
        for child_name, child in self._modules.items():
            result.update(child.state_dict(prefix + child_name + "."))
        return result

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    "layers": [
        ("forward uses the lecture's x.mm(weight.t()): only 2-D inputs work, a (B, T, in) "
         "sequence batch fails",
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features)
        factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(torch.empty(out_features, in_features, **factory).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, **factory).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        out = x.mm(self.weight.t())
        if self.bias is not None:
            out = out + self.bias
        return out


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.relu(x)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        self._layers = list(modules)
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def forward(self, x):
        for module in self._layers:
            x = module(x)
        return x

    def __len__(self):
        return len(self._layers)

    def __getitem__(self, index):
        return self._layers[index]
'''),
        ("ReLU written as torch.maximum(x, zeros): same values, but at inputs that are exactly 0 "
         "the gradient is split 0.5/0.5 instead of torch's 0",
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features)
        factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(torch.empty(out_features, in_features, **factory).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, **factory).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        out = x @ self.weight.T
        if self.bias is not None:
            out = out + self.bias
        return out


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.maximum(x, torch.zeros_like(x))


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        self._layers = list(modules)
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def forward(self, x):
        for module in self._layers:
            x = module(x)
        return x

    def __len__(self):
        return len(self._layers)

    def __getitem__(self, index):
        return self._layers[index]
'''),
    ],
    "parallel_block": [
        ("the torch.nn version builds its branches with `Linear` -- the notebook's own class, "
         "which torch.nn.Module does not register: it has no parameters",
         '''class ParallelBlock(torch.nn.Module):
    """Two linear branches multiplied elementwise, then a ReLU (torch.nn version)."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = Linear(D_in, D_out)
        self.linear2 = Linear(D_in, D_out)

    def forward(self, x):
        return torch.relu(self.linear1(x) * self.linear2(x))


class MyParallelBlock(Module):
    """The same block on your own Module and Linear."""

    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = Linear(D_in, D_out)
        self.linear2 = Linear(D_in, D_out)

    def forward(self, x):
        return torch.relu(self.linear1(x) * self.linear2(x))
'''),
    ],
    "sgd": [
        ("keeps `params` as given: a generator from model.parameters() is used up by the first "
         "step, later steps and zero_grad do nothing",
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
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum != 0:
                buf = self.buffers.get(id(p))
                if buf is None:
                    buf = g.clone()
                    self.buffers[id(p)] = buf
                else:
                    buf.mul_(self.momentum).add_(g)
                g = buf
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("the first momentum buffer is p.grad itself, not a copy: later in-place updates of the "
         "buffer write into that gradient tensor",
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
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum != 0:
                if self.buffers[i] is None:
                    self.buffers[i] = g          # b_1 = g_1
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
    "adam": [
        ("one step counter for the whole optimizer, advanced at every step(): a parameter that "
         "skipped a step gets the wrong bias correction afterwards",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.m = [None] * len(self.params)
        self.v = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        self.t += 1
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.m[i] is None:
                self.m[i] = torch.zeros_like(p)
                self.v[i] = torch.zeros_like(p)
            g = p.grad
            self.m[i].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            self.v[i].mul_(self.beta2).add_(g * g, alpha=1 - self.beta2)
            m_hat = self.m[i] / (1 - self.beta1 ** self.t)
            v_hat = self.v[i] / (1 - self.beta2 ** self.t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("moments created with torch.zeros(p.shape, device=p.device): on the right device but in "
         "the default float32, so a float64 run drifts from torch's",
         '''class Adam:
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
                self.state[i] = {"t": 0,
                                 "m": torch.zeros(p.shape, device=p.device),
                                 "v": torch.zeros(p.shape, device=p.device)}
            s = self.state[i]
            g = p.grad
            s["t"] += 1
            t = s["t"]
            s["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            s["v"].mul_(self.beta2).add_(g * g, alpha=1 - self.beta2)
            m_hat = s["m"] / (1 - self.beta1 ** t)
            v_hat = s["v"] / (1 - self.beta2 ** t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    "module": [
        ("tree walks written iteratively with an explicit stack (no recursion, no generators "
         "inside generators); registries read through vars(); identity checks with `is`",
         '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        registries = vars(self)
        if isinstance(value, Parameter):
            target, others = registries["_parameters"], [registries["_modules"], registries]
        elif isinstance(value, Module):
            target, others = registries["_modules"], [registries["_parameters"], registries]
        else:
            target, others = registries, [registries["_parameters"], registries["_modules"]]
        for other in others:
            if name in other:
                del other[name]
        if target is registries:
            object.__setattr__(self, name, value)
        else:
            target[name] = value   # an existing key keeps its place in a dict

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = vars(self)
        for key in ("_parameters", "_modules"):
            registry = registries.get(key)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        done = []
        stack = [(prefix, self)]
        while stack:
            pre, module = stack.pop()
            for name, p in vars(module)["_parameters"].items():
                if p is None or any(p is q for q in done):
                    continue
                done.append(p)
                yield (f"{pre}.{name}" if pre else name), p
            kids = list(vars(module)["_modules"].items())
            for child_name, child in reversed(kids):
                stack.append((f"{pre}.{child_name}" if pre else child_name, child))

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        done = []
        for child in vars(self)["_modules"].values():
            if not any(child is c for c in done):
                done.append(child)
                yield child

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        done = []
        stack = [self]
        while stack:
            module = stack.pop()
            if any(module is m for m in done):
                continue
            done.append(module)
            yield module
            stack.extend(reversed(list(vars(module)["_modules"].values())))

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        for module in list(self.modules()):
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for p in list(self.parameters()):
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        out = {}
        stack = [(prefix, self)]
        while stack:
            pre, module = stack.pop()
            for name, p in vars(module)["_parameters"].items():
                if p is not None:
                    out[pre + name] = p.detach()
            kids = list(vars(module)["_modules"].items())
            for child_name, child in reversed(kids):
                stack.append((pre + child_name + ".", child))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    "sgd": [
        ("momentum buffers created up front with zeros_like (mu * 0 + g_1 = g_1 exactly), update "
         "inside an explicit `with torch.no_grad():` block, p.sub_(lr * b)",
         '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = [p for p in params]
        self.lr = lr
        self.momentum = momentum
        with torch.no_grad():
            self.buffers = [torch.zeros_like(p) for p in self.params] if momentum else None

    def step(self):
        """Update every parameter that has a gradient."""
        with torch.no_grad():
            for k in range(len(self.params)):
                p = self.params[k]
                if p.grad is None:
                    continue
                if self.buffers is None:
                    p.sub_(self.lr * p.grad)
                else:
                    b = self.buffers[k]
                    b.mul_(self.momentum)
                    b.add_(p.grad)
                    p.sub_(self.lr * b)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ("torch's own arrangement: step size lr / (1 - beta1^t), denominator sqrt(v) / "
         "sqrt(1 - beta2^t) + eps, addcdiv_; state in a dict keyed by the parameter, made lazily",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.betas = tuple(betas)
        self.eps = eps
        self.state = {}

    def step(self):
        """Update every parameter that has a gradient."""
        beta1, beta2 = self.betas
        with torch.no_grad():
            for p in self.params:
                grad = p.grad
                if grad is None:
                    continue
                if p not in self.state:
                    self.state[p] = {"step": 0,
                                     "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                                     "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}
                st = self.state[p]
                st["step"] += 1
                exp_avg, exp_avg_sq = st["exp_avg"], st["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** st["step"]
                bias_correction2 = 1 - beta2 ** st["step"]
                step_size = self.lr / bias_correction1
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(self.eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

# Wrong answers the checks do not catch, each with the reason (strict expected failures).
SURVIVORS = {
    ("layers", 1): "not a mistake the text defines: at exactly 0 any value in [0, 1] is a "
                   "subgradient of max(x, 0). The text asks for max(x, 0) and leaves the gradient "
                   "at 0 open; torch.nn.ReLU gives 0, the lecture's clamp(min=0) gives 1 and "
                   "torch.maximum(x, 0) gives 0.5, and planting zeros would take points from the "
                   "lecture's own idiom",
}
