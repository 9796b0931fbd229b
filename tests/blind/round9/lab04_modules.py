"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'module': [
        ('__setattr__ first removes the name from every registry and then re-inserts it, so re-assigning a parameter moves it to the end of named_parameters() and state_dict(), breaking "re-assigning a name keeps its position".', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        # forget whatever the name held before, then file the new value
        for registry in (self.__dict__, self._parameters, self._modules):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        registries = self.__dict__
        for key in ("_parameters", "_modules"):
            if key in registries and name in registries[key]:
                return registries[key][name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def named_parameters(self, prefix="", _seen=None):
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if p not in seen:
                seen.add(p)
                yield prefix + name, p
        for name, child in self._modules.items():
            yield from child.named_parameters(prefix + name + ".", seen)

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        yield from self._modules.values()

    def modules(self):
        yield self
        for child in self._modules.values():
            yield from child.modules()

    def train(self, mode=True):
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
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
        ('state_dict() stores the Parameter objects themselves instead of p.detach(), so its values still require grad and share the autograd history, breaking "a dict from dotted name to p.detach()".', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            params.pop(name, None)
            modules[name] = value
        else:
            if params is not None:
                params.pop(name, None)
                modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(name)

    def named_parameters(self, prefix="", _seen=None):
        seen = set() if _seen is None else _seen
        for name, p in self._parameters.items():
            if p not in seen:
                seen.add(p)
                yield prefix + name, p
        for name, child in self._modules.items():
            yield from child.named_parameters(prefix + name + ".", seen)

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        yield from self._modules.values()

    def modules(self):
        yield self
        for child in self._modules.values():
            yield from child.modules()

    def train(self, mode=True):
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        out = {}
        for name, p in self._parameters.items():
            out[prefix + name] = p
        for name, child in self._modules.items():
            out.update(child.state_dict(prefix + name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ('named_parameters() removes duplicates only among a module\'s own parameters, so a parameter tied across two children (Pair\'s first.scale and second.scale) is listed twice, breaking "each parameter once, under its first name".', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            params.pop(name, None)
            modules[name] = value
        else:
            if params is not None:
                params.pop(name, None)
                modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(name)

    def named_parameters(self, prefix=""):
        seen = set()
        for name, p in self._parameters.items():
            if p not in seen:
                seen.add(p)
                yield prefix + name, p
        for name, child in self._modules.items():
            yield from child.named_parameters(prefix + name + ".")

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        yield from self._modules.values()

    def modules(self):
        yield self
        for child in self._modules.values():
            yield from child.modules()

    def train(self, mode=True):
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
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
        ('Linear.forward uses x.mm(weight.t()), which only accepts 2-D input, so a sequence batch (B, T, in) raises, breaking "x @ weight.T + bias for any leading dimensions".', '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
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
        ('The bias is created with the device but without the dtype argument, so Linear(..., dtype=torch.float64) gets a float64 weight and a float32 bias (the output still comes out float64), breaking "created with the given device and dtype".', '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device).uniform_(-bound, bound))
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
        ('MyParallelBlock creates linear2 before linear1, so its parameters come out as linear2.weight, linear2.bias, linear1.weight, ... (and its state_dict in that order), breaking "register linear1 then linear2".', '''class ParallelBlock(torch.nn.Module):
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
        self.linear2 = Linear(D_in, D_out)
        self.linear1 = Linear(D_in, D_out)

    def forward(self, x):
        return (self.linear1(x) * self.linear2(x)).clamp(min=0)
'''),
    ],
    'sgd': [
        ('The momentum buffers are made with torch.zeros(p.shape, dtype=p.dtype), which keeps the dtype but puts them on the CPU whatever the parameter\'s device, breaking "create state with torch.zeros_like(p): it then has p\'s dtype and device".', '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [torch.zeros(p.shape, dtype=p.dtype) for p in self.params]
        self.started = [False] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            d = p.grad
            if self.momentum != 0:
                buf = self.buffers[i]
                if not self.started[i]:
                    buf.copy_(d)
                    self.started[i] = True
                else:
                    buf.mul_(self.momentum).add_(d)
                d = buf
            p.sub_(self.lr * d)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ('A parameter whose .grad is None keeps coasting on its decayed momentum buffer (b = mu * b, p -= lr * b) instead of being skipped, breaking "parameters whose .grad is None are skipped".', '''class SGD:
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
            buf = self.buffers[i]
            if p.grad is None:
                # no new gradient: the velocity carries the parameter on
                if buf is not None:
                    buf.mul_(self.momentum)
                    p.sub_(self.lr * buf)
                continue
            d = p.grad
            if self.momentum != 0:
                if buf is None:
                    buf = self.buffers[i] = d.clone()
                else:
                    buf.mul_(self.momentum).add_(d)
                d = buf
            p.sub_(self.lr * d)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    'adam': [
        ('One step counter t is shared by all parameters and advanced once per step(), so a parameter skipped for lack of a gradient still advances its bias correction, breaking "each parameter counts its own steps".', '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        self.t += 1
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad
            m.mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            m_hat = m / (1 - self.beta1 ** self.t)
            v_hat = v / (1 - self.beta2 ** self.t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ('The update uses the Adam paper\'s "efficient" form lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps), which adds eps to the uncorrected sqrt(v) and so differs from the text\'s m_hat / (sqrt(v_hat) + eps) whenever eps is not negligible.', '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.state = [dict(t=0, m=torch.zeros_like(p), v=torch.zeros_like(p)) for p in self.params]

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad
            s["t"] += 1
            t = s["t"]
            s["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            s["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            step_size = self.lr * math.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
            p.sub_(step_size * s["m"] / (s["v"].sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    'module': [
        ('Keeps the registries as OrderedDicts, walks the tree with an explicit stack for modules(), and builds named_parameters from a list of (prefix, module) pairs with an id-based "seen" set instead of recursive generators.', '''from collections import OrderedDict


class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        self.__dict__["_parameters"] = OrderedDict()
        self.__dict__["_modules"] = OrderedDict()
        self.__dict__["training"] = True

    def __setattr__(self, name, value):
        state = self.__dict__
        if isinstance(value, (Parameter, Module)):
            target = "_parameters" if isinstance(value, Parameter) else "_modules"
            other = "_modules" if target == "_parameters" else "_parameters"
            state.pop(name, None)
            state[other].pop(name, None)
            state[target][name] = value          # an existing key keeps its position
        else:
            if "_parameters" in state:
                state["_parameters"].pop(name, None)
                state["_modules"].pop(name, None)
            state[name] = value

    def __getattr__(self, name):
        state = self.__dict__
        for registry in ("_parameters", "_modules"):
            if registry in state and name in state[registry]:
                return state[registry][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _named_modules(self, prefix=""):
        # pre-order, depth first, children in assignment order
        out, stack = [], [(prefix, self)]
        while stack:
            path, module = stack.pop()
            out.append((path, module))
            stack.extend(reversed([(path + name + ".", child) for name, child in module._modules.items()]))
        return out

    def named_parameters(self, prefix=""):
        seen = set()
        for path, module in self._named_modules(prefix):
            for name, p in module._parameters.items():
                if id(p) in seen:
                    continue
                seen.add(id(p))
                yield path + name, p

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        return iter(list(self._modules.values()))

    def modules(self):
        return iter([module for _, module in self._named_modules()])

    def train(self, mode=True):
        for module in self.modules():
            module.__dict__["training"] = mode
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        for module in self.modules():
            for p in module._parameters.values():
                p.grad = None

    def state_dict(self, prefix=""):
        return {path + name: p.detach()
                for path, module in self._named_modules(prefix)
                for name, p in module._parameters.items()}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    'layers': [
        ('Draws the initial values as bound * (2 * rand - 1) instead of uniform_, computes with torch.matmul against weight.mT, uses torch.relu, and indexes Sequential through its registry by position.', '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        factory = dict(device=device, dtype=dtype)
        self.weight = Parameter(bound * (2 * torch.rand(out_features, in_features, **factory) - 1))
        self.bias = Parameter(bound * (2 * torch.rand(out_features, **factory) - 1)) if bias else None

    def forward(self, x):
        y = torch.matmul(x, self.weight.mT)
        return y if self.bias is None else y + self.bias


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.relu(x)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, module in enumerate(modules):
            self.__setattr__(str(i), module)

    def forward(self, x):
        for i in range(len(self)):
            x = self[i](x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        keys = list(self._modules)
        return self._modules[keys[index]]
'''),
    ],
    'adam': [
        ('Creates the moments lazily on the first gradient, updates them with lerp_ and addcmul_, and applies the bias correction as torch does (step size lr / (1 - beta1^t), denominator sqrt(v) / sqrt(1 - beta2^t) + eps), which is the same formula rearranged.', '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = [p for p in params]
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}

    def step(self):
        """Update every parameter that has a gradient."""
        beta1, beta2 = self.betas
        with torch.no_grad():
            for i, p in enumerate(self.params):
                if p.grad is None:
                    continue
                if i not in self.state:
                    self.state[i] = {"step": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
                s = self.state[i]
                s["step"] += 1
                s["m"].lerp_(p.grad, 1 - beta1)
                s["v"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                correction1 = 1 - beta1 ** s["step"]
                correction2 = 1 - beta2 ** s["step"]
                denom = (s["v"].sqrt() / math.sqrt(correction2)).add_(self.eps)
                p.addcdiv_(s["m"], denom, value=-self.lr / correction1)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
