"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "module": [
        ('__getattr__ returns self._parameters.get(name, self._modules.get(name)): an unknown name gives None instead of raising AttributeError (hasattr is always True, getattr defaults never apply)', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        if isinstance(value, Parameter):
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._parameters.pop(name, None)
            self.__dict__.pop(name, None)
            self._modules[name] = value
        else:
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = self.__dict__
        return registries.get("_parameters", {}).get(name, registries.get("_modules", {}).get(name))

    def _all_named_parameters(self, prefix):
        for name, p in self._parameters.items():
            yield prefix + name, p
        for name, child in self._modules.items():
            yield from child._all_named_parameters(prefix + name + ".")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._all_named_parameters(prefix + "." if prefix else ""):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

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
        for child in self.children():
            yield from child.modules()

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
        return {name: p.detach() for name, p in self._all_named_parameters(prefix)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ('state_dict is built from named_parameters(), which lists a tied parameter once: its second name (e.g. second.scale) is missing from the state_dict', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        if isinstance(value, Parameter):
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._parameters.pop(name, None)
            self.__dict__.pop(name, None)
            self._modules[name] = value
        else:
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        registries = self.__dict__
        if name in registries.get("_parameters", {}):
            return registries["_parameters"][name]
        if name in registries.get("_modules", {}):
            return registries["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _all_named_parameters(self, prefix):
        for name, p in self._parameters.items():
            yield prefix + name, p
        for name, child in self._modules.items():
            yield from child._all_named_parameters(prefix + name + ".")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._all_named_parameters(prefix + "." if prefix else ""):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

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
        for child in self.children():
            yield from child.modules()

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
        return {name: p.detach() for name, p in self.named_parameters(prefix)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ('__setattr__ first pops the name from every registry and then inserts it again: re-assigning a parameter or submodule moves it to the end instead of keeping its position', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        # forget whatever was stored under this name before, then store the new value
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self.__dict__.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
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

    def _all_named_parameters(self, prefix):
        for name, p in self._parameters.items():
            yield prefix + name, p
        for name, child in self._modules.items():
            yield from child._all_named_parameters(prefix + name + ".")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._all_named_parameters(prefix + "." if prefix else ""):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

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
        for child in self.children():
            yield from child.modules()

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
        return {name: p.detach() for name, p in self._all_named_parameters(prefix)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    "layers": [
        ("bias initialised to zeros (the other frameworks' habit) instead of U(-1/sqrt(in), 1/sqrt(in)) like the weight", '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.zeros(out_features, device=device, dtype=dtype))
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
        for i in range(len(self)):
            x = self[i](x)
        return x

    def __len__(self):
        return sum(1 for _ in self.children())

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        return getattr(self, str(index))
'''),
        ('forward uses torch.addmm(bias, x, weight.t()) / x.mm(...), which only accepts 2-D input: a (B, T, in) batch raises instead of working over any leading dimensions', '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype).uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        if self.bias is not None:
            return torch.addmm(self.bias, x, self.weight.t())  # one fused kernel
        return x.mm(self.weight.t())


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
        for i in range(len(self)):
            x = self[i](x)
        return x

    def __len__(self):
        return sum(1 for _ in self.children())

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        return getattr(self, str(index))
'''),
    ],
    "parallel_block": [
        ('applies the ReLU to each branch before multiplying, relu(a) * relu(b) instead of relu(a * b): where both branches are negative the output is 0 instead of a * b > 0', '''class ParallelBlock(torch.nn.Module):
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
        self.relu = ReLU()

    def forward(self, x):
        return self.relu(self.linear1(x)) * self.relu(self.linear2(x))
'''),
    ],
    "sgd": [
        ("first momentum buffer is p.grad itself (no clone): the next mul_/add_ on the buffer overwrite that gradient tensor, so with gradients accumulated in place (no zero_grad) the trajectory leaves torch's", '''class SGD:
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
            d_p = p.grad
            if self.momentum != 0:
                if self.buffers[i] is None:
                    self.buffers[i] = d_p
                else:
                    self.buffers[i].mul_(self.momentum).add_(d_p)
                d_p = self.buffers[i]
            p.add_(d_p, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ('a parameter whose .grad is None is treated as having gradient 0 (zeros_like) instead of being skipped: with momentum it keeps moving along its old buffer', '''class SGD:
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
            d_p = p.grad if p.grad is not None else torch.zeros_like(p)
            if self.momentum != 0:
                if self.buffers[i] is None:
                    self.buffers[i] = torch.clone(d_p).detach()
                else:
                    self.buffers[i].mul_(self.momentum).add_(d_p)
                d_p = self.buffers[i]
            p.add_(d_p, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ('one step counter for the whole optimizer (self.t += 1 per step()), not one per parameter: a parameter skipped for lack of a gradient still advances its bias-correction count', '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.state = [{"m": torch.zeros_like(p), "v": torch.zeros_like(p)} for p in self.params]

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        self.t += 1
        t = self.t
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad
            s["m"] = self.beta1 * s["m"] + (1 - self.beta1) * g
            s["v"] = self.beta2 * s["v"] + (1 - self.beta2) * g * g
            m_hat = s["m"] / (1 - self.beta1 ** t)
            v_hat = s["v"] / (1 - self.beta2 ** t)
            p -= self.lr * m_hat / (v_hat.sqrt() + self.eps)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("the Adam paper's 'efficient' form, step size lr * sqrt(1 - beta2^t) / (1 - beta1^t) applied to m / (sqrt(v) + eps): eps is added to the uncorrected sqrt(v), so the update differs from sqrt(v_hat) + eps (clearly for large eps)", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.state = [{"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)} for p in self.params]

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad
            s["t"] += 1
            t = s["t"]
            s["m"] = self.beta1 * s["m"] + (1 - self.beta1) * g
            s["v"] = self.beta2 * s["v"] + (1 - self.beta2) * g * g
            # Kingma & Ba, end of Section 2: fold both corrections into the step size
            step_size = self.lr * math.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
            p -= step_size * s["m"] / (s["v"].sqrt() + self.eps)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    "module": [
        ('registries kept with vars(self).update, one recursive walker with an optional memo for named_parameters/state_dict/zero_grad, modules() with an explicit stack, train() recursing through children', '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        vars(self).update(_params={}, _children={}, training=True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params, children = vars(self)["_params"], vars(self)["_children"]
        for registry, kind in ((params, Parameter), (children, Module)):
            if isinstance(value, kind):
                for other in (params, children, vars(self)):
                    if other is not registry:
                        other.pop(name, None)
                registry[name] = value  # an existing key keeps its place in the dict
                return
        params.pop(name, None)
        children.pop(name, None)
        vars(self)[name] = value

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        for registry in ("_params", "_children"):
            found = vars(self).get(registry, {})
            if name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _walk(self, prefix, memo):
        # (name, parameter) for every registration; memo is None to keep duplicates.
        for name, p in vars(self)["_params"].items():
            if memo is None or id(p) not in memo:
                if memo is not None:
                    memo.add(id(p))
                yield prefix + name, p
        for name, child in vars(self)["_children"].items():
            yield from child._walk(prefix + name + ".", memo)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        return self._walk(prefix + "." if prefix else "", set())

    def parameters(self):
        """Yield the parameters, in the order of named_parameters."""
        for _, p in self.named_parameters():
            yield p

    def children(self):
        """Yield the direct submodules, in assignment order."""
        return iter(list(vars(self)["_children"].values()))

    def modules(self):
        """Yield this module, then every descendant, depth first (pre-order)."""
        stack, seen = [self], set()
        while stack:
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield module
            stack.extend(reversed(list(module.children())))

    def train(self, mode=True):
        """Set .training = mode on this module and every descendant; return self."""
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        """Evaluation mode: train(False)."""
        return self.train(False)

    def zero_grad(self):
        """Set .grad to None for every parameter of the tree."""
        for _, p in self._walk("", None):
            p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        return {name: p.detach() for name, p in self._walk(prefix, None)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    "layers": [
        ('Linear draws bound * (2 * torch.rand(...) - 1) with a factory dict, matmul with transpose(0, 1); ReLU via torch.where; Sequential indexes list(self.children())', '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = in_features ** -0.5
        factory = dict(device=device, dtype=dtype)
        # U(-bound, bound) as bound * (2 * U(0, 1) - 1), created where and as asked
        self.weight = Parameter(bound * (2 * torch.rand(out_features, in_features, **factory) - 1))
        self.bias = Parameter(bound * (2 * torch.rand(out_features, **factory) - 1)) if bias else None

    def forward(self, x):
        out = torch.matmul(x, self.weight.transpose(0, 1))
        return out if self.bias is None else out + self.bias


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return torch.where(x > 0, x, torch.zeros_like(x))


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
    "adam": [
        ("torch's in-place formulation: m.lerp_, v.mul_().addcmul_, denominator sqrt(v)/sqrt(1-beta2^t) + eps, p.addcdiv_ with step lr/(1-beta1^t); state created lazily per parameter", '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}  # id(p) -> (step count, m, v), created on the parameter's first step

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        beta1, beta2 = self.betas
        for p in self.params:
            g = p.grad
            if g is None:
                continue
            t, m, v = self.state.get(id(p), (0, None, None))
            if m is None:
                m, v = torch.zeros_like(p), torch.zeros_like(p)
            t += 1
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            self.state[id(p)] = (t, m, v)
            denom = (v.sqrt() / math.sqrt(1 - beta2 ** t)).add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / (1 - beta1 ** t))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
