"""Realistic wrong answers for lab04_modules; each must lose points (see solutions/README.md).

Each mutant is the solution with one realistic mistake: ``_mutate`` applies the edits to a literal
copy of the solution cell and fails loudly if an edit no longer applies.
"""


def _mutate(source, *edits):
    for old, new in edits:
        if old not in source:
            raise ValueError(f"mutant edit does not apply: {old!r}")
        source = source.replace(old, new, 1)
    return source

_MODULE = '''class Module:
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
            self._parameters[name] = value  # an existing key keeps its place in a dict
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
        for registry in ("_parameters", "_modules"):
            if registry in registries and name in registries[registry]:
                return registries[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def named_parameters(self, prefix=""):
        """Yield (dotted name, parameter): own parameters first, then each child's; each parameter once."""
        seen = set()

        def walk(module, module_prefix):
            for name, p in module._parameters.items():
                if id(p) not in seen:  # identity: a tied parameter is listed once
                    seen.add(id(p))
                    yield module_prefix + name, p
            for name, child in module._modules.items():
                yield from walk(child, module_prefix + name + ".")

        yield from walk(self, prefix)

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
        for module in self.modules():
            object.__setattr__(module, "training", mode)
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
        state = {}
        for name, p in self._parameters.items():
            state[prefix + name] = p.detach()
        for name, child in self._modules.items():
            state.update(child.state_dict(prefix + name + "."))
        return state

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")'''

_LAYERS = '''class Linear(Module):
    """y = x @ weight.T + bias, with torch's layout (out_features, in_features) and initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)

        def uniform(*shape):
            return Parameter((torch.rand(*shape, device=device, dtype=dtype) * 2 - 1) * bound)

        self.weight = uniform(out_features, in_features)
        if bias:
            self.bias = uniform(out_features)
        else:
            self.bias = None

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias


class ReLU(Module):
    """max(x, 0) elementwise."""

    def forward(self, x):
        return x.clamp(min=0)


class Sequential(Module):
    """Children named "0", "1", ...; forward applies them in order."""

    def __init__(self, *modules):
        super().__init__()
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self.children())[index]
        ### END SOLUTION'''

_PARALLEL_BLOCK = '''class ParallelBlock(torch.nn.Module):
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
        return (self.linear1(x) * self.linear2(x)).clamp(min=0)
        ### END SOLUTION'''

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
        ### END SOLUTION'''

_ADAM = '''class Adam:
    """Adam with bias correction, step for step as in PyTorch (no weight decay, no amsgrad)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.eps = lr, eps
        self.beta1, self.beta2 = betas
        self.state = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        """Update every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.state[i] is None:
                self.state[i] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s, g = self.state[i], p.grad
            s["t"] += 1
            s["m"].mul_(self.beta1).add_((1 - self.beta1) * g)
            s["v"].mul_(self.beta2).add_((1 - self.beta2) * g * g)
            m_hat = s["m"] / (1 - self.beta1 ** s["t"])
            v_hat = s["v"] / (1 - self.beta2 ** s["t"])
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for p in self.params:
            p.grad = None
        ### END SOLUTION'''


MUTANTS = {
    "module": [
        ("named_parameters lists a tied parameter under every name", _mutate(_MODULE, (
            "                if id(p) not in seen:  # identity: a tied parameter is listed once\n"
            "                    seen.add(id(p))\n"
            "                    yield module_prefix + name, p\n",
            "                yield module_prefix + name, p\n"))),
        ("children's parameters without the child's name as prefix", _mutate(_MODULE, (
            'yield from walk(child, module_prefix + name + ".")', "yield from walk(child, module_prefix)"))),
        ("children's parameters before the module's own", _mutate(_MODULE, (
            "            for name, p in module._parameters.items():\n"
            "                if id(p) not in seen:  # identity: a tied parameter is listed once\n"
            "                    seen.add(id(p))\n"
            "                    yield module_prefix + name, p\n"
            "            for name, child in module._modules.items():\n"
            '                yield from walk(child, module_prefix + name + ".")\n',
            "            for name, child in module._modules.items():\n"
            '                yield from walk(child, module_prefix + name + ".")\n'
            "            for name, p in module._parameters.items():\n"
            "                if id(p) not in seen:\n"
            "                    seen.add(id(p))\n"
            "                    yield module_prefix + name, p\n"))),
        ("train() sets the flag on the module only, not its children", _mutate(_MODULE, (
            "        for module in self.modules():\n            object.__setattr__(module, \"training\", mode)\n",
            "        object.__setattr__(self, \"training\", mode)\n"))),
        ("zero_grad() clears only the module's own parameters", _mutate(_MODULE, (
            "        for p in self.parameters():\n            p.grad = None\n",
            "        for p in self._parameters.values():\n            p.grad = None\n"))),
        ("state_dict() returns the parameters themselves, not detached tensors", _mutate(_MODULE, (
            "state[prefix + name] = p.detach()", "state[prefix + name] = p"))),
        ("__getattr__ returns None for unknown names", _mutate(_MODULE, (
            "        raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")\n",
            "        return None\n"))),
        ("re-assigning a parameter moves it to the end of the order", _mutate(_MODULE, (
            "            self._parameters[name] = value  # an existing key keeps its place in a dict\n",
            "            self._parameters.pop(name, None)\n            self._parameters[name] = value\n"))),
        ("state_dict() built from named_parameters, so a tied parameter appears once", _mutate(_MODULE, (
            "        state = {}\n        for name, p in self._parameters.items():\n"
            "            state[prefix + name] = p.detach()\n        for name, child in self._modules.items():\n"
            "            state.update(child.state_dict(prefix + name + \".\"))\n        return state\n",
            "        return {name: p.detach() for name, p in self.named_parameters(prefix)}\n"))),
        ("__getattr__ reads self._parameters by normal lookup: recurses forever before __init__ "
         "(copy.deepcopy)", _mutate(_MODULE, (
            "        registries = self.__dict__\n"
            "        for registry in (\"_parameters\", \"_modules\"):\n"
            "            if registry in registries and name in registries[registry]:\n"
            "                return registries[registry][name]\n",
            "        if name in self._parameters:\n            return self._parameters[name]\n"
            "        if name in self._modules:\n            return self._modules[name]\n"))),
        ("a Parameter or Module assigned over a plain attribute leaves the plain value in __dict__",
         _mutate(_MODULE, (
            "            self._modules.pop(name, None)\n            self.__dict__.pop(name, None)\n",
            "            self._modules.pop(name, None)\n"), (
            "            self._parameters.pop(name, None)\n            self.__dict__.pop(name, None)\n",
            "            self._parameters.pop(name, None)\n"))),
        ("modules() lists only the descendants, not the module itself", _mutate(_MODULE, (
            "        yield self\n        for child in self._modules.values():\n            yield from child.modules()\n",
            "        for child in self._modules.values():\n            yield child\n            yield from child.modules()\n"))),
    ],
    "layers": [
        ("a float32 bias in a float64 layer, behind a Parameter subclass whose dtype property "
         "says float64 (forging the dtype the check reads)", '''class _Says64(Parameter):
    @property
    def dtype(self):
        return torch.float64


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter((torch.rand(out_features, in_features, device=device,
                                            dtype=dtype) * 2 - 1) * bound)
        if bias:
            self.bias = _Says64((torch.rand(out_features, device=device) * 2 - 1) * bound)
        else:
            self.bias = None

    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias


class ReLU(Module):
    def forward(self, x):
        return x.clamp(min=0)


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self.children())[index]
'''),
        ("weight stored as (in_features, out_features) and applied as x @ W", _mutate(_LAYERS,
            ("self.weight = uniform(out_features, in_features)", "self.weight = uniform(in_features, out_features)"),
            ("out = x @ self.weight.T", "out = x @ self.weight"))),
        ("weights drawn from a standard normal", _mutate(_LAYERS, (
            "Parameter((torch.rand(*shape, device=device, dtype=dtype) * 2 - 1) * bound)",
            "Parameter(torch.randn(*shape, device=device, dtype=dtype))"))),
        ("bias initialised to zeros instead of U(-1/sqrt(in), 1/sqrt(in))", _mutate(_LAYERS, (
            "            self.bias = uniform(out_features)\n",
            "            self.bias = Parameter(torch.zeros(out_features, device=device, dtype=dtype))\n"))),
        ("parameters created without the device argument (always on the CPU)", _mutate(_LAYERS, (
            "torch.rand(*shape, device=device, dtype=dtype)", "torch.rand(*shape, dtype=dtype)"))),
        ("ReLU clamps in place: the caller's tensor is changed", _mutate(_LAYERS, (
            "        return x.clamp(min=0)", "        return x.clamp_(min=0)"))),
        ("forward with torch.mm: only 2-D inputs work", _mutate(_LAYERS, (
            "out = x @ self.weight.T", "out = torch.mm(x, self.weight.t())"))),
        ("bias registered before weight", _mutate(_LAYERS, (
            "        self.weight = uniform(out_features, in_features)\n        if bias:\n            self.bias = uniform(out_features)\n        else:\n            self.bias = None\n",
            "        if bias:\n            self.bias = uniform(out_features)\n        else:\n            self.bias = None\n        self.weight = uniform(out_features, in_features)\n"))),
        ("Sequential keeps its modules in a plain list: nothing registered", _mutate(_LAYERS,
            ("        for index, module in enumerate(modules):\n            setattr(self, str(index), module)\n",
             "        self.layers = list(modules)\n"),
            ("        for module in self.children():\n            x = module(x)\n",
             "        for module in self.layers:\n            x = module(x)\n"),
            ("        return len(self._modules)\n", "        return len(self.layers)\n"),
            ("        return list(self.children())[index]\n", "        return self.layers[index]\n"))),
        ("Sequential names its children layer0, layer1, ...", _mutate(_LAYERS, (
            "setattr(self, str(index), module)", "setattr(self, f\"layer{index}\", module)"))),
    ],
    "parallel_block": [
        ("branches added instead of multiplied", _mutate(_PARALLEL_BLOCK,
            ("        return (self.linear1(x) * self.linear2(x)).clamp(min=0)\n",
             "        return (self.linear1(x) + self.linear2(x)).clamp(min=0)\n"))),
        ("ReLU on each branch before the product (torch version)", _mutate(_PARALLEL_BLOCK,
            ("        return (self.linear1(x) * self.linear2(x)).clamp(min=0)\n",
             "        return self.linear1(x).clamp(min=0) * self.linear2(x).clamp(min=0)\n"))),
        ("one Linear shared by both branches (own-Module version)", _mutate(_PARALLEL_BLOCK,
            ("        self.linear1 = Linear(D_in, D_out)\n        self.linear2 = Linear(D_in, D_out)\n",
             "        self.linear1 = Linear(D_in, D_out)\n        self.linear2 = self.linear1\n"))),
        ("no ReLU at the end", _mutate(_PARALLEL_BLOCK,
            ("        return (self.linear1(x) * self.linear2(x)).clamp(min=0)\n",
             "        return self.linear1(x) * self.linear2(x)\n"))),
    ],
    "sgd": [
        ("the momentum buffer is p.grad itself (no clone): the next backward overwrites it", _mutate(_SGD, (
            "self.buffers[i] = g.clone()", "self.buffers[i] = g"))),
        ("scales p.grad in place by lr, then subtracts it", _mutate(_SGD, (
            "            p.sub_(self.lr * g)", "            p.sub_(g.mul_(self.lr))"))),
        ("ignores momentum", _mutate(_SGD, (
            "            if self.momentum != 0:\n", "            if False:\n"))),
        ("momentum as an average: buf = mu * buf + (1 - mu) * grad, starting from zero", _mutate(_SGD, (
            "                if self.buffers[i] is None:\n                    self.buffers[i] = g.clone()\n"
            "                else:\n                    self.buffers[i].mul_(self.momentum).add_(g)\n",
            "                if self.buffers[i] is None:\n                    self.buffers[i] = torch.zeros_like(p)\n"
            "                self.buffers[i].mul_(self.momentum).add_((1 - self.momentum) * g)\n"))),
        ("keeps the params generator: only the first step() sees the parameters", _mutate(_SGD,
            ("        self.params = list(params)\n        self.lr = lr\n        self.momentum = momentum\n"
             "        self.buffers = [None] * len(self.params)\n",
             "        self.params = params\n        self.lr = lr\n        self.momentum = momentum\n"
             "        self.buffers = {}\n"),
            ("                if self.buffers[i] is None:\n", "                if i not in self.buffers:\n"))),
        ("a parameter without .grad still moves with its momentum", _mutate(_SGD, (
            "            if p.grad is None:\n                continue\n            g = p.grad\n",
            "            g = torch.zeros_like(p) if p.grad is None else p.grad\n"))),
        ("momentum buffer made with torch.zeros(p.shape): CPU and float32", _mutate(_SGD, (
            "                    self.buffers[i] = g.clone()\n",
            "                    self.buffers[i] = torch.zeros(p.shape)\n                    self.buffers[i] += g.cpu()\n"))),
        ("momentum buffer torch.zeros(p.shape, dtype=p.dtype) on the CPU: in-place updates hide it on meta",
         _mutate(_SGD, (
            "                    self.buffers[i] = g.clone()\n",
            "                    self.buffers[i] = torch.zeros(p.shape, dtype=p.dtype)\n"
            "                    self.buffers[i].add_(g)\n"))),
        ("lr folded into the momentum buffer: b = mu * b + lr * g, p -= b", _mutate(_SGD, (
            "                    self.buffers[i] = g.clone()\n"
            "                else:\n                    self.buffers[i].mul_(self.momentum).add_(g)\n"
            "                g = self.buffers[i]\n            p.sub_(self.lr * g)\n",
            "                    self.buffers[i] = self.lr * g\n"
            "                else:\n"
            "                    self.buffers[i].mul_(self.momentum).add_(g, alpha=self.lr)\n"
            "                p.sub_(self.buffers[i])\n"
            "            else:\n                p.sub_(self.lr * g)\n"))),
        ("zero_grad() fills gradients with zeros instead of None", _mutate(_SGD, (
            "        for p in self.params:\n            p.grad = None\n",
            "        for p in self.params:\n            if p.grad is not None:\n                p.grad.zero_()\n"))),
    ],
    "adam": [
        ("no bias correction", _mutate(_ADAM,
            ('            m_hat = s["m"] / (1 - self.beta1 ** s["t"])\n', '            m_hat = s["m"]\n'),
            ('            v_hat = s["v"] / (1 - self.beta2 ** s["t"])\n', '            v_hat = s["v"]\n'))),
        ("eps inside the square root", _mutate(_ADAM, (
            "p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))", "p.sub_(self.lr * m_hat / (v_hat + self.eps).sqrt())"))),
        ("one step counter for the optimizer, advanced once per parameter", _mutate(_ADAM,
            ("        self.state = [None] * len(self.params)\n", "        self.state = [None] * len(self.params)\n        self.t = 0\n"),
            ('            s["t"] += 1\n', '            self.t += 1\n            s["t"] = self.t\n'))),
        ("forgets to square the gradient in v", _mutate(_ADAM, (
            '(1 - self.beta2) * g * g', '(1 - self.beta2) * g.abs()'))),
        ("betas swapped", _mutate(_ADAM,
            ('s["m"].mul_(self.beta1).add_((1 - self.beta1) * g)', 's["m"].mul_(self.beta2).add_((1 - self.beta2) * g)'),
            ('s["v"].mul_(self.beta2).add_((1 - self.beta2) * g * g)', 's["v"].mul_(self.beta1).add_((1 - self.beta1) * g * g)'))),
        ("moments made with torch.zeros(p.shape): float32 state for a float64 parameter", _mutate(_ADAM, (
            '{"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}',
            '{"t": 0, "m": torch.zeros(p.shape).to(p.device), "v": torch.zeros(p.shape).to(p.device)}'))),
        ("moments torch.zeros(p.shape, dtype=p.dtype) on the CPU: in-place updates hide it on meta", _mutate(_ADAM, (
            '{"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}',
            '{"t": 0, "m": torch.zeros(p.shape, dtype=p.dtype), "v": torch.zeros(p.shape, dtype=p.dtype)}'))),
        ("one step count per optimizer step, also for skipped parameters", _mutate(_ADAM,
            ("        self.state = [None] * len(self.params)\n", "        self.state = [None] * len(self.params)\n        self.t = 0\n"),
            ("        for i, p in enumerate(self.params):\n            if p.grad is None:\n",
             "        self.t += 1\n        for i, p in enumerate(self.params):\n            if p.grad is None:\n"),
            ('            s["t"] += 1\n', '            s["t"] = self.t\n'))),
    ],
}


# Right answers written differently from the solution: each must keep full marks, so the
# checks do not reward one way of writing the answer (used by tests/labs/test_lab03_functions_lab04_modules.py).
_MODULE_DICT_SCAN = '''from collections import OrderedDict


class Module:
    def __init__(self):
        self.__dict__["_params"] = OrderedDict()
        self.__dict__["_children"] = OrderedDict()
        self.__dict__["training"] = True

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._params[name] = value
        elif isinstance(value, Module):
            self._children[name] = value
        self.__dict__[name] = value  # kept in both places: plain lookup finds it

    def __getattr__(self, name):
        raise AttributeError(name)

    def named_parameters(self, prefix=""):
        seen = []
        for name, p in self._all(prefix):
            if not any(p is q for q in seen):
                seen.append(p)
                yield name, p

    def _all(self, prefix):
        for name, p in self._params.items():
            yield prefix + name, p
        for name, child in self._children.items():
            yield from child._all(prefix + name + ".")

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def children(self):
        return iter(list(self._children.values()))

    def modules(self):
        found = [self]
        for child in self._children.values():
            found.extend(child.modules())
        return found

    def train(self, mode=True):
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def state_dict(self, prefix=""):
        return {name: p.detach() for name, p in self._all(prefix)}

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError
'''

ALTERNATIVES = {
    "module": [("registries plus the instance dict, OrderedDicts, lists instead of generators", _MODULE_DICT_SCAN)],
    "layers": [
        ("Linear initialised with torch.nn.init.uniform_ on torch.empty", '''class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        k = 1.0 / in_features ** 0.5
        self.weight = Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype))
        torch.nn.init.uniform_(self.weight, -k, k)
        self.has_bias = bias
        if bias:
            self.bias = Parameter(torch.empty(out_features, device=device, dtype=dtype).uniform_(-k, k))

    def forward(self, x):
        y = torch.matmul(x, self.weight.t())
        return y + self.bias if self.has_bias else y


class ReLU(Module):
    def forward(self, x):
        return torch.relu(x)


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)
        self.count = len(modules)

    def forward(self, x):
        for i in range(self.count):
            x = getattr(self, str(i))(x)
        return x

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        return getattr(self, str(i % self.count))
'''),
    ],
    "parallel_block": [
        ("intermediate names as in the lecture, relu instead of clamp", '''class ParallelBlock(torch.nn.Module):
    def __init__(self, D_in, D_out):
        super(ParallelBlock, self).__init__()
        self.linear1 = torch.nn.Linear(D_in, D_out)
        self.linear2 = torch.nn.Linear(D_in, D_out)

    def forward(self, x):
        h1 = self.linear1(x)
        h2 = self.linear2(x)
        return torch.relu(h1 * h2)


class MyParallelBlock(Module):
    def __init__(self, D_in, D_out):
        super().__init__()
        self.linear1 = Linear(D_in, D_out)
        self.linear2 = Linear(D_in, D_out)

    def forward(self, x):
        h1 = self.linear1(x)
        h2 = self.linear2(x)
        return torch.relu(h1 * h2)
'''),
    ],
    "sgd": [
        ("buffer from zeros (b1 = g all the same), updates through p.data", '''class SGD:
    def __init__(self, params, lr, momentum=0.0):
        self.params = [p for p in params]
        self.lr = lr
        self.momentum = momentum
        self.velocity = {}

    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            d = p.grad
            if self.momentum:
                v = self.velocity.setdefault(id(p), torch.zeros_like(p.data))
                v.mul_(self.momentum).add_(d)
                d = v
            p.data.add_(d, alpha=-self.lr)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
'''),
    ],
    "adam": [
        ("torch's arrangement: step size lr / bc1, denominator sqrt(v) / sqrt(bc2) + eps", '''class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {}

    @torch.no_grad()
    def step(self):
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            st = self.state.setdefault(p, {"step": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)})
            st["step"] += 1
            st["m"].lerp_(p.grad, 1 - b1)
            st["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            bc1 = 1 - b1 ** st["step"]
            bc2 = 1 - b2 ** st["step"]
            denom = st["v"].sqrt() / math.sqrt(bc2) + self.eps
            p.addcdiv_(st["m"], denom, value=-self.lr / bc1)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
'''),
    ],
}
