"""Lab 04: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "module": [
        ("__setattr__ pops the name from both registries before filing it (so a name can switch kind): a re-assigned parameter moves to the end of the order instead of keeping its position",
         '''class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        if isinstance(value, (Parameter, Module)):
            # forget any older entry of that name first, whatever its kind
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)
            if isinstance(value, Parameter):
                self._parameters[name] = value
            else:
                self._modules[name] = value
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
        for name, p in self._named_all(prefix):
            if id(p) in seen:
                continue
            seen.add(id(p))
            yield name, p

    def _named_all(self, prefix):
        for name, p in self._parameters.items():
            yield (prefix + "." + name if prefix else name), p
        for name, child in self._modules.items():
            yield from child._named_all(prefix + "." + name if prefix else name)

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
        return {prefix + name: p.detach() for name, p in self._named_all("")}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ("named_parameters removes duplicates with a `seen` set local to each call, then yields each child's named_parameters as they come: a parameter tied between two sibling modules is listed twice",
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
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
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
        for name, p in self._parameters.items():
            if id(p) not in seen:
                seen.add(id(p))
                yield (prefix + "." + name if prefix else name), p
        for cname, child in self._modules.items():
            yield from child.named_parameters(prefix + "." + cname if prefix else cname)

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
        out = {}
        for name, p in self._parameters.items():
            out[prefix + name] = p.detach()
        for cname, child in self._modules.items():
            out.update(child.state_dict(prefix + cname + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
        ("train(mode) sets self.training = mode but recurses with child.train() without passing mode: eval() switches only the root, every descendant stays in training mode",
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
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
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

    def _all_named(self, prefix):
        for name, p in self._parameters.items():
            yield (prefix + "." + name if prefix else name), p
        for cname, child in self._modules.items():
            yield from child._all_named(prefix + "." + cname if prefix else cname)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()
        for name, p in self._all_named(prefix):
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
        self.training = mode
        for child in self.children():
            child.train()
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
        return {prefix + name: p.detach() for name, p in self._all_named("")}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    "layers": [
        ("Linear tests `if bias is not None:` to decide on the bias: Linear(..., bias=False) still creates and adds a bias parameter",
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype)
                                .uniform_(-bound, bound))
        if bias is not None:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype)
                                  .uniform_(-bound, bound))
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
        return len(list(self.children()))

    def __getitem__(self, index):
        return list(self.children())[index]
'''),
        ("Linear's initialisation bound is 1/sqrt(out_features) (fan-out) instead of 1/sqrt(in_features): right only when the two sizes are equal",
         '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(out_features)
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype)
                                .uniform_(-bound, bound))
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype)
                                  .uniform_(-bound, bound))
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
        return len(list(self.children()))

    def __getitem__(self, index):
        return list(self.children())[index]
'''),
    ],
    "parallel_block": [
        ("applies the ReLU to each branch before multiplying, relu(a) * relu(b), instead of relu(a * b): zero where the formula gives a positive product of two negative branches (both classes)",
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
        ("a parameter whose .grad is None is treated as having a zero gradient: with momentum its buffer keeps decaying and still moves the parameter (torch skips it)",
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
        ("momentum buffer created with torch.zeros(p.shape, dtype=p.dtype): right dtype, but always on the CPU (a meta parameter gets a CPU buffer)",
         '''class SGD:
    """Stochastic gradient descent with momentum, step for step as in PyTorch (no dampening, no Nesterov)."""

    def __init__(self, params, lr, momentum=0.0):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.state = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            if p.grad is None:
                continue
            d_p = p.grad
            if self.momentum != 0:
                if p not in self.state:
                    buf = torch.zeros(p.shape, dtype=p.dtype)
                    buf.add_(d_p)               # b_1 = g_1
                    self.state[p] = buf
                else:
                    buf = self.state[p]
                    buf.mul_(self.momentum).add_(d_p)
                d_p = buf
            p.add_(d_p, alpha=-self.lr)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ("one step counter for the whole optimizer, incremented once per step(): a parameter that was skipped (grad None) still has its count advanced, so its bias correction is off",
         '''class Adam:
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
        b1, b2, t = self.beta1, self.beta2, self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = m / (1 - b1 ** t)
            v_hat = v / (1 - b2 ** t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
        ("the paper's 'efficient' form: step size lr*sqrt(1-b2^t)/(1-b1^t) applied to m/(sqrt(v)+eps), so eps is not divided by sqrt(1-b2^t) (differs from sqrt(v_hat)+eps, clearly for large eps)",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.state = [dict(step=0, m=torch.zeros_like(p), v=torch.zeros_like(p)) for p in self.params]

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        b1, b2 = self.betas
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            s["step"] += 1
            t = s["step"]
            g = p.grad
            s["m"].mul_(b1).add_(g, alpha=1 - b1)
            s["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
            # Kingma & Ba, end of section 2: fold both corrections into the step size
            alpha_t = self.lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            p.addcdiv_(s["m"], s["v"].sqrt().add_(self.eps), value=-alpha_t)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}

RIGHT = {
    "module": [
        ("registries are collections.OrderedDict; the walks pass one shared memo set down the recursion (named_parameters) and build state_dict by recursion with a dotted prefix",
         '''from collections import OrderedDict


class Module:
    """Base class of your layers: keeps parameters and submodules in order, as PyTorch's Module does."""

    def __init__(self):
        """Create the two registries and set training = True."""
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        """Register Parameters and Modules under `name`; store anything else as a plain attribute."""
        params = self.__dict__["_parameters"]
        mods = self.__dict__["_modules"]
        if isinstance(value, Parameter):
            mods.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value            # an existing key keeps its place in an OrderedDict
        elif isinstance(value, Module):
            params.pop(name, None)
            self.__dict__.pop(name, None)
            mods[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called when normal lookup fails: return a registered parameter or module, else raise AttributeError."""
        for registry in ("_parameters", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _walk_parameters(self, prefix, memo):
        for name, p in self._parameters.items():
            if id(p) in memo:
                continue
            memo.add(id(p))
            yield (f"{prefix}.{name}" if prefix else name), p
        for child_name, child in self._modules.items():
            yield from child._walk_parameters(f"{prefix}.{child_name}" if prefix else child_name, memo)

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        yield from self._walk_parameters(prefix, set())

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
        stack = [self]
        while stack:
            m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield m
            stack.extend(reversed(list(m._modules.values())))

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
        for m in self.modules():
            for p in m._parameters.values():
                p.grad = None

    def state_dict(self, prefix=""):
        """dict: dotted name -> detached tensor, for every parameter under every name it is registered."""
        out = OrderedDict()
        for name, p in self._parameters.items():
            out[prefix + name] = p.detach()
        for child_name, child in self._modules.items():
            out.update(child.state_dict(prefix + child_name + "."))
        return out

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")
'''),
    ],
    "layers": [
        ("Linear initialised as (torch.rand(...) * 2 - 1) * bound inside torch.no_grad(); Sequential keeps no list, reads its children back by name and folds them with functools.reduce; negative indices handled by hand",
         '''import functools


class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / in_features ** 0.5
        factory = {"device": device, "dtype": dtype}
        with torch.no_grad():
            w = (torch.rand(out_features, in_features, **factory) * 2 - 1) * bound
            self.weight = Parameter(w)
            if bias:
                self.bias = Parameter((torch.rand(out_features, **factory) * 2 - 1) * bound)
        if not bias:
            self.bias = None

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
        for i, m in enumerate(modules):
            setattr(self, str(i), m)
        self.count = len(modules)

    def forward(self, x):
        return functools.reduce(lambda h, i: getattr(self, str(i))(h), range(self.count), x)

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        if index < 0:
            index += self.count
        if not 0 <= index < self.count:
            raise IndexError(f"index {index} is out of range")
        return getattr(self, str(index))
'''),
    ],
    "adam": [
        ("torch's own arrangement of the arithmetic: step size lr / (1 - b1^t) and denominator sqrt(v) / sqrt(1 - b2^t) + eps (the same update as sqrt(v_hat) + eps); state in a dict keyed by the parameter, created lazily with zeros_like",
         '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = [p for p in params]
        self.lr, self.eps = lr, eps
        self.beta1, self.beta2 = betas
        self.state = {}

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for p in self.params:
            if p.grad is None:
                continue
            if p not in self.state:
                self.state[p] = {"t": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
            st = self.state[p]
            st["t"] += 1
            g = p.grad
            st["exp_avg"].lerp_(g, 1 - self.beta1)
            st["exp_avg_sq"].mul_(self.beta2).addcmul_(g, g.conj(), value=1 - self.beta2)
            bias_correction1 = 1 - self.beta1 ** st["t"]
            bias_correction2 = 1 - self.beta2 ** st["t"]
            step_size = self.lr / bias_correction1
            denom = (st["exp_avg_sq"].sqrt() / math.sqrt(bias_correction2)).add_(self.eps)
            p.addcdiv_(st["exp_avg"], denom, value=-step_size)

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
'''),
    ],
}
