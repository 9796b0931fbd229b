"""Lab 04: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "module": [
        ("__setattr__ first pops the name from every registry, so re-assigning a parameter moves it to the end", '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params = self.__dict__["_parameters"]
        children = self.__dict__["_modules"]
        # forget whatever was stored under this name before, then file the new value
        params.pop(name, None)
        children.pop(name, None)
        self.__dict__.pop(name, None)
        if isinstance(value, Parameter):
            params[name] = value
        elif isinstance(value, Module):
            children[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = self.__dict__
        if name in registries.get("_parameters", {}):
            return registries["_parameters"][name]
        if name in registries.get("_modules", {}):
            return registries["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _every_named_parameter(self, prefix):
        for name, p in self._parameters.items():
            yield (f"{prefix}.{name}" if prefix else name), p
        for name, child in self._modules.items():
            yield from child._every_named_parameter(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._every_named_parameter(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        seen = set()
        for child in self._modules.values():
            if id(child) not in seen:
                seen.add(id(child))
                yield child

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        seen = set()

        def walk(module):
            if id(module) in seen:
                return
            seen.add(id(module))
            yield module
            for child in module._modules.values():
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
        if prefix and not prefix.endswith("."):
            prefix += "."
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
        ("state_dict built from named_parameters(), so a tied parameter appears under its first name only", '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params = self.__dict__["_parameters"]
        children = self.__dict__["_modules"]
        if isinstance(value, Parameter):
            children.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            children[name] = value
        else:
            params.pop(name, None)
            children.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = self.__dict__
        if name in registries.get("_parameters", {}):
            return registries["_parameters"][name]
        if name in registries.get("_modules", {}):
            return registries["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _every_named_parameter(self, prefix):
        for name, p in self._parameters.items():
            yield (f"{prefix}.{name}" if prefix else name), p
        for name, child in self._modules.items():
            yield from child._every_named_parameter(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._every_named_parameter(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        seen = set()
        for child in self._modules.values():
            if id(child) not in seen:
                seen.add(id(child))
                yield child

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        seen = set()

        def walk(module):
            if id(module) in seen:
                return
            seen.add(id(module))
            yield module
            for child in module._modules.values():
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
        """dict: dotted name -> detached tensor."""
        return {name: p.detach() for name, p in self.named_parameters(prefix)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ("__setattr__ tests isinstance(value, torch.Tensor): plain tensors (buffers, constants) get registered as parameters", '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register tensors and Modules under `name`; store anything else as a plain attribute."""
        params = self.__dict__["_parameters"]
        children = self.__dict__["_modules"]
        if isinstance(value, torch.Tensor):        # Parameter is a Tensor subclass
            children.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            children[name] = value
        else:
            params.pop(name, None)
            children.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = self.__dict__
        if name in registries.get("_parameters", {}):
            return registries["_parameters"][name]
        if name in registries.get("_modules", {}):
            return registries["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _every_named_parameter(self, prefix):
        for name, p in self._parameters.items():
            yield (f"{prefix}.{name}" if prefix else name), p
        for name, child in self._modules.items():
            yield from child._every_named_parameter(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._every_named_parameter(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        seen = set()
        for child in self._modules.values():
            if id(child) not in seen:
                seen.add(id(child))
                yield child

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        seen = set()

        def walk(module):
            if id(module) in seen:
                return
            seen.add(id(module))
            yield module
            for child in module._modules.values():
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
        if prefix and not prefix.endswith("."):
            prefix += "."
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
    "layers": [
        ("bias created with torch.empty(out_features): device and dtype passed to the weight only", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features).uniform_(-bound, bound))
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
        return len(list(self.children()))

    def __getitem__(self, index):
        return list(self.children())[index]
'''),
        ("forward with torch.addmm(bias, x, weight.T): only works for 2-D input, not (B, T, in)", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(
                torch.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        if self.bias is None:
            return torch.mm(x, self.weight.T)
        return torch.addmm(self.bias, x, self.weight.T)   # one fused kernel


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
        return len(list(self.children()))

    def __getitem__(self, index):
        return list(self.children())[index]
'''),
    ],
    "parallel_block": [
        ("applies the ReLU to each branch before the product instead of once after it (both classes)", '''class ParallelBlock(torch.nn.Module):
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
        ("a missing .grad is treated as a zero gradient: the momentum buffer decays and keeps moving the parameter", '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.buffers = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter; no gradient counts as a zero gradient."""
        for i, p in enumerate(self.params):
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            if self.momentum != 0:
                buf = self.buffers[i]
                if buf is None:
                    buf = self.buffers[i] = g.clone()
                else:
                    buf.mul_(self.momentum).add_(g)
                g = buf
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("first momentum buffer is p.grad itself (b_1 = g_1 without a copy): later steps update that gradient tensor in place", '''class SGD:
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
                buf = self.buffers[i]
                if buf is None:
                    buf = self.buffers[i] = g          # b_1 = g_1
                else:
                    buf.mul_(self.momentum).add_(g)    # b_t = mu * b_(t-1) + g_t
                g = buf
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ("one step counter for the whole optimizer: a parameter skipped for lack of a gradient still advances t", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.m = {}
        self.v = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        self.t += 1
        b1, b2, t = self.beta1, self.beta2, self.t
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if i not in self.m:
                self.m[i] = torch.zeros_like(p)
                self.v[i] = torch.zeros_like(p)
            self.m[i].mul_(b1).add_(g, alpha=1 - b1)
            self.v[i].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = self.m[i] / (1 - b1 ** t)
            v_hat = self.v[i] / (1 - b2 ** t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("step count starts at 1 and is incremented before use: the first step's bias correction uses t = 2", '''class Adam:
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
        b1, b2 = self.beta1, self.beta2
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if i not in self.state:
                self.state[i] = {"t": 1, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s = self.state[i]
            s["t"] += 1
            t = s["t"]
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
    "layers": [
        ("(rand * 2 - 1) * bound init, matmul with transpose(0, 1), where-based ReLU, Sequential via functools.reduce and range indexing", '''import functools


class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features)
        factory = {"device": device, "dtype": dtype}
        # rand is U[0, 1); 2 * rand - 1 is U[-1, 1); scaled: U[-bound, bound)
        self.weight = Parameter((torch.rand(out_features, in_features, **factory) * 2 - 1) * bound)
        if bias:
            self.bias = Parameter((torch.rand(out_features, **factory) * 2 - 1) * bound)
        else:
            self.bias = None

    def forward(self, x):
        out = torch.matmul(x, self.weight.transpose(0, 1))
        if self.bias is not None:
            out = out + self.bias
        return out


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.where(x > 0, x, torch.zeros_like(x))


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        self.size = len(modules)
        for position, module in enumerate(modules):
            setattr(self, str(position), module)

    def forward(self, x):
        return functools.reduce(lambda h, k: getattr(self, str(k))(h), range(self.size), x)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(*[self[k] for k in range(self.size)[index]])
        return getattr(self, str(range(self.size)[index]))   # negative indices, IndexError
'''),
    ],
    "sgd": [
        ("explicit `with torch.no_grad():` block, state dict keyed by position, first buffer g.detach().clone(), p -= lr * b", '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = [p for p in params]       # a generator can be walked only once
        self.lr = lr
        self.momentum = momentum
        self.state = {}                          # position -> momentum buffer

    def step(self):
        """Update every parameter that has a gradient."""
        with torch.no_grad():
            for k, p in enumerate(self.params):
                grad = p.grad
                if grad is None:
                    continue
                direction = grad
                if self.momentum:
                    if k in self.state:
                        self.state[k].mul_(self.momentum).add_(grad)
                    else:
                        self.state[k] = grad.detach().clone()   # b_1 = g_1, on grad's device
                    direction = self.state[k]
                p -= self.lr * direction

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ("torch's folded form: m via lerp_, denom = sqrt(v) / sqrt(1 - b2^t) + eps, step lr / (1 - b1^t) with addcdiv_", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.state = [None] * len(self.params)

    def step(self):
        """Update every parameter that has a gradient."""
        with torch.no_grad():
            for k, p in enumerate(self.params):
                if p.grad is None:
                    continue                      # no gradient: no update, no step counted
                g = p.grad.detach()
                st = self.state[k]
                if st is None:
                    st = self.state[k] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
                st["t"] += 1
                t = st["t"]
                st["m"].lerp_(g, 1 - self.beta1)                            # m + (1 - b1)(g - m)
                st["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
                correction1 = 1 - self.beta1 ** t
                correction2 = 1 - self.beta2 ** t
                denom = (st["v"].sqrt() / math.sqrt(correction2)).add_(self.eps)   # sqrt(v_hat) + eps
                p.addcdiv_(st["m"], denom, value=-self.lr / correction1)           # lr * m_hat / denom

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
