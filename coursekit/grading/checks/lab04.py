"""Checks for lab04_modules: a Module base class, layers on top of it, ParallelBlock, SGD and Adam.

References: ``coursekit.nn.Module`` for the bookkeeping of random module trees (the same
program runs on torch Parameters for the student and on coursekit Parameters for the
reference; only names, shapes, values and flags are compared), ``torch.nn`` for the layers
and the seed's ParallelBlock, and ``torch.optim`` for optimizer trajectories in float64.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..program import Case, EarlierStepFailed, check
from ..properties import edge, promise
from ..warm import torch_meta as warm_up  # noqa: F401 — its checks use the meta device


def _torch():
    import torch
    return torch


def _is_coursekit(value: Any) -> bool:
    return type(value).__module__.startswith("coursekit")


# ---------------------------------------------------------------- lab04.module

def _reference_module():
    from coursekit.nn import Module
    return Module


_NAMES = ("w", "b", "weight", "bias", "scale", "gain", "alpha", "theta", "u", "v")
_CHILD_NAMES = ("fc", "enc", "dec", "head", "block", "proj", "gate", "inner", "left", "right")
_PLAIN_NAMES = ("size", "name", "cache", "stats", "note")


def _draw_spec(rng: np.random.Generator, depth: int, min_params: int = 1) -> list[tuple]:
    """A random node: parameters, children, plain values and non-parameter tensors, interleaved."""
    entries: list[tuple] = []
    n_params = int(rng.integers(min_params, 4))
    n_children = int(rng.integers(1, 3)) if depth > 0 else 0
    n_plain = int(rng.integers(1, 3))  # planted in every seed: a plain value is stored as is
    params = list(rng.choice(_NAMES, size=n_params, replace=False))
    children = list(rng.choice(_CHILD_NAMES, size=n_children, replace=False))
    plains = list(rng.choice(_PLAIN_NAMES, size=n_plain, replace=False))
    for name in params:
        shape = tuple(int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 3))))
        entries.append(("param", str(name), rng.standard_normal(shape)))
    for name in children:
        entries.append(("child", str(name), _draw_spec(rng, depth - 1)))
    for i, name in enumerate(plains):
        if i % 2:
            entries.append(("tensor", str(name), rng.standard_normal(2)))
        else:
            entries.append(("plain", str(name), int(rng.integers(0, 100))))
    order = rng.permutation(len(entries))
    return [entries[i] for i in order]


def _factories(module_cls) -> tuple[Callable, Callable, Callable]:
    """(make a Parameter, make a plain tensor, make a gradient) for torch or coursekit modules."""
    try:
        from coursekit.nn import Module as CkModule
        coursekit_module = isinstance(module_cls, type) and issubclass(module_cls, CkModule)
    except ImportError:  # pragma: no cover — coursekit.nn is part of this package
        coursekit_module = False
    if coursekit_module:
        from coursekit.autograd import Tensor
        from coursekit.nn import Parameter
        return (lambda a: Parameter(np.array(a)), lambda a: Tensor(np.array(a)),
                lambda p: Tensor(np.ones_like(p.data)))
    torch = _torch()
    return (lambda a: torch.nn.Parameter(torch.tensor(a)), lambda a: torch.tensor(a),
            lambda p: torch.ones_like(p))


def _node_class(module_cls):
    make_param, make_tensor, _ = _factories(module_cls)

    class Node(module_cls):
        def __init__(self, spec):
            super().__init__()
            for kind, name, payload in spec:
                if kind == "param":
                    setattr(self, name, make_param(payload))
                elif kind == "child":
                    setattr(self, name, Node(payload))
                elif kind == "tensor":
                    setattr(self, name, make_tensor(payload))
                else:
                    setattr(self, name, payload)

        def forward(self, x, scale=1.0):
            return x * scale + 1.0

    return Node


def _tree(box: dict):
    if "tree" not in box:
        raise EarlierStepFailed("skipped: building the module tree failed (see the first case)")
    return box["tree"]


def _build(box: dict, module_cls, spec) -> Callable[[], Any]:
    def thunk():
        box.pop("tree", None)
        box["tree"] = _node_class(module_cls)(spec)
        return [name for name, _ in box["tree"].named_parameters()]
    return thunk


def _param_paths(spec, prefix: str = "") -> list[tuple[str, np.ndarray]]:
    """Every (dotted path, values) of the spec's parameters, in the spec's own order."""
    out = []
    for kind, name, payload in spec:
        if kind == "param":
            out.append((prefix + name, payload))
        elif kind == "child":
            out.extend(_param_paths(payload, prefix + name + "."))
    return out


def _child_paths(spec, prefix: str = "") -> list[str]:
    out = []
    for kind, name, payload in spec:
        if kind == "child":
            out.append(prefix + name)
            out.extend(_child_paths(payload, prefix + name + "."))
    return out


def _resolve(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _detached(p):
    return p.detach() if hasattr(p, "detach") else p


MODULE_HINTS = {
    "names": "named_parameters yields the module's own parameters first, in assignment order, then "
             "each child's (in the order the children were assigned) with the child's name and a dot "
             "as prefix; a parameter reached twice is yielded once, under the first name",
    "values": "parameters() yields the very Parameter objects that were assigned, in the same order "
              "as named_parameters",
    "attribute": "__setattr__ may keep Parameters and Modules in registries, but module.name must "
                 "still return them: look them up in __getattr__",
    "missing": "__getattr__ must raise AttributeError for a name that is nowhere (Python relies on it: "
               "hasattr, copy, pickle)",
    "plain": "values that are neither Parameters nor Modules (ints, plain tensors) are ordinary "
             "attributes: stored, returned, never listed as parameters",
    "reassign": "assigning a new Parameter to an existing name replaces it in place: same position "
                "in the order, new value",
    "children": "children() yields the direct submodules in assignment order; modules() yields "
                "the module itself and then every descendant, depth first (pre-order)",
    "training": "train(mode) sets .training on the module and every descendant and returns the "
                "module; eval() is train(False)",
    "zero_grad": "zero_grad() sets .grad to None for every parameter of the whole tree",
    "state_dict": "state_dict() maps every dotted name to a detached tensor: all parameters, "
                  "children's too, a tied parameter under each of its names, plain attributes never",
    "call": "calling the module, module(*args, **kwargs), returns self.forward(*args, **kwargs)",
    "uninitialised": "copy.deepcopy makes the instance without __init__ and asks it for "
                     "__setstate__: __getattr__ must raise AttributeError when the registries "
                     "are not there yet; read them with self.__dict__, not self._parameters "
                     "(which calls __getattr__ again, forever)",
    "replaced": "a Parameter or Module assigned to a name that was a plain attribute replaces it: "
                "__setattr__ must remove the old plain value from the instance dictionary "
                "(normal lookup finds it before __getattr__ is ever asked)",
}


@check("lab04.module", reference=_reference_module,
       forbid=("torch.nn.Module", "torch.nn.modules", "coursekit.nn", "torch.nn.ModuleDict",
               "torch.nn.ParameterDict"))
def module_program(impl, rng):
    """A Module base class: registration, order, traversal, modes, zero_grad, state_dict."""
    for trial in range(1, 4):
        # The root has two parameters or more, planted in every seed: re-assigning its first
        # one must keep its place ahead of the others.
        spec = _draw_spec(rng, depth=2 if trial > 1 else 1, min_params=2)
        params = _param_paths(spec)
        children = _child_paths(spec)
        where = f"tree {trial} ({len(params)} parameters, {len(children)} submodules)"
        box: dict = {}
        yield Case(f"{where}: names from named_parameters()", _build(box, impl, spec),
                   hint=MODULE_HINTS["names"])
        yield Case(f"{where}: values from parameters()",
                   lambda b=box: [_detached(p) for p in _tree(b).parameters()], hint=MODULE_HINTS["values"])
        path, _ = params[int(rng.integers(len(params)))]
        yield Case(f"{where}: attribute access tree.{path}",
                   lambda b=box, p=path: _detached(_resolve(_tree(b), p)), hint=MODULE_HINTS["attribute"])
        yield Case(f"{where}: a missing attribute raises AttributeError",
                   lambda b=box: getattr(_tree(b), "no_such_attribute"), hint=MODULE_HINTS["missing"])
        plain = [(n, v) for kind, n, v in spec if kind in ("plain", "tensor")]
        if plain:
            name, _ = plain[0]
            yield Case(f"{where}: plain attribute tree.{name} is stored as is",
                       lambda b=box, n=name: _detached(getattr(_tree(b), n)), hint=MODULE_HINTS["plain"])
        yield Case(f"{where}: children() and modules()",
                   lambda b=box: (len(list(_tree(b).children())), len(list(_tree(b).modules())),
                                  list(_tree(b).modules())[0] is _tree(b)),
                   names=("number of children", "number of modules", "modules() starts with the module itself"),
                   hint=MODULE_HINTS["children"])
        yield Case(f"{where}: calling the module runs forward", lambda b=box: _tree(b)(2.0, scale=3.0),
                   hint=MODULE_HINTS["call"])

        # Training flags: eval the whole tree, then train one subtree again.
        child = children[int(rng.integers(len(children)))] if children else None

        def flags(b=box, child=child):
            tree = _tree(b)
            new = [m.training for m in tree.modules()]
            returned = tree.eval() is tree
            after_eval = [m.training for m in tree.modules()]
            sub = _resolve(tree, child) if child else tree
            returned = returned and sub.train() is sub
            after_train = [m.training for m in tree.modules()]
            return returned, new, after_eval, after_train
        yield Case(f"{where}: eval() then {child or 'tree'}.train()", flags,
                   names=("train()/eval() return the module", ".training of a new tree",
                          ".training after eval()",
                          f".training after {child or 'tree'}.train()"),
                   hint=MODULE_HINTS["training"])

        def zero_grad(b=box):
            tree = _tree(b)
            _, _, make_grad = _factories(impl)
            for p in tree.parameters():
                p.grad = make_grad(p)
            tree.zero_grad()
            return [p.grad is None for p in tree.parameters()]
        yield Case(f"{where}: zero_grad()", zero_grad, hint=MODULE_HINTS["zero_grad"])

        # Tie a parameter into another module, then re-assign one: order and state_dict.
        reassigned, old_values = next((p, v) for p, v in params if "." not in p)
        tied_from = next(p for p, _ in params if p != reassigned)  # stays shared afterwards
        target = children[-1] if children else None
        new_values = rng.standard_normal(np.shape(old_values))

        def tie_and_reassign(b=box, tied_from=tied_from, target=target, reassigned=reassigned,
                             new_values=new_values):
            tree = _tree(b)
            make_param, _, _ = _factories(impl)
            holder = _resolve(tree, target) if target else tree
            setattr(holder, "tied", _resolve(tree, tied_from))
            owner_path, _, leaf = reassigned.rpartition(".")
            setattr(_resolve(tree, owner_path) if owner_path else tree, leaf, make_param(new_values))
            return [name for name, _ in tree.named_parameters()]
        yield Case(f"{where}: names after tying {tied_from} into {target or 'the root'} and "
                   f"re-assigning {reassigned}", tie_and_reassign,
                   hint=MODULE_HINTS["names"] + "; " + MODULE_HINTS["reassign"])
        yield Case(f"{where}: values after re-assigning {reassigned}",
                   lambda b=box: [_detached(p) for p in _tree(b).parameters()], hint=MODULE_HINTS["reassign"])

        def state(b=box):
            sd = _tree(b).state_dict()
            return (list(sd), [_detached(v) for v in sd.values()],
                    [bool(getattr(v, "requires_grad", False)) for v in sd.values()])
        yield Case(f"{where}: state_dict()", state,
                   names=("keys", "values", "requires_grad of the values"), hint=MODULE_HINTS["state_dict"])
    # copy.deepcopy (and pickle) make the instance with __new__ and ask it for __setstate__
    # before any __init__ ran: __getattr__ must raise AttributeError there too, not recurse.
    spec = _draw_spec(rng, depth=1, min_params=2)
    n_params = len(_param_paths(spec))
    yield Case(f"copy.deepcopy of a tree ({n_params} parameters): names and values of the copy",
               lambda: _deep_copied(impl, spec), names=("names", "values"),
               hint=MODULE_HINTS["uninitialised"])
    # A name first stored as a plain attribute, then assigned a Parameter and a Module: the
    # registries hold them, and the stale plain value must go from the instance dictionary.
    spec = [entry for entry in _draw_spec(rng, depth=1, min_params=2)
            if entry[0] not in ("plain", "tensor")]
    first, second = (str(n) for n in rng.choice(_PLAIN_NAMES, size=2, replace=False))
    values = rng.standard_normal(int(rng.integers(1, 4)))
    yield Case(f"tree.{first} = 7, then tree.{first} = Parameter(...) and tree.{second} = 7, "
               f"then tree.{second} = a Module: attribute access returns the new values",
               lambda: _plain_then_registered(impl, spec, first, second, values),
               names=(f"tree.{first}", f"tree.{second} is the Module", "names from named_parameters()"),
               hint=MODULE_HINTS["replaced"])


def _deep_copied(impl, spec) -> tuple:
    import copy
    tree = copy.deepcopy(_node_class(impl)(spec))
    return ([name for name, _ in tree.named_parameters()],
            [_detached(p) for p in tree.parameters()])


def _plain_then_registered(impl, spec, first: str, second: str, values: np.ndarray) -> tuple:
    node = _node_class(impl)
    make_param, _, _ = _factories(impl)
    tree = node(spec)
    setattr(tree, first, 7)
    setattr(tree, first, make_param(values))
    setattr(tree, second, 7)
    child = node([])
    setattr(tree, second, child)
    return (_detached(getattr(tree, first)), getattr(tree, second) is child,
            [name for name, _ in tree.named_parameters()])


# ---------------------------------------------------------------- lab04.layers

def _reference_layers():
    torch = _torch()
    return {"Linear": torch.nn.Linear, "ReLU": torch.nn.ReLU, "Sequential": torch.nn.Sequential}


LAYER_HINTS = {
    "shapes": "Linear registers weight of shape (out_features, in_features) (torch's layout) and, "
              "with bias=True, bias of shape (out_features,), in that order",
    "init": "initialise weight and bias uniformly in [-1/sqrt(in_features), 1/sqrt(in_features)], "
            "e.g. (torch.rand(shape) * 2 - 1) * bound, with the requested dtype and device",
    "dtype": "create the parameters with dtype=dtype and device=device (torch's defaults when None)",
    "forward": "Linear computes x @ weight.T + bias over the last dimension, so any leading "
               "dimensions (batch, sequence) pass through",
    "grads": "use differentiable torch ops in forward and never detach: autograd then gives the "
             "gradients of weight, bias and the input",
    "device": "create the parameters with device=device: a Linear built on the meta device must "
              "have meta parameters and produce meta outputs",
    "relu": "ReLU.forward returns max(x, 0) elementwise",
    "seq_names": "Sequential(*modules) registers its modules as children named '0', '1', '2', ... so "
                 "the parameters are named '0.weight', '0.bias', '2.weight', ...",
    "seq_forward": "Sequential.forward feeds the input through the modules in order",
    "seq_index": "Sequential supports len(seq) and seq[i]",
}


def _set_weights(module, values: dict[str, np.ndarray]) -> None:
    torch = _torch()
    named = dict(module.named_parameters())
    with torch.no_grad():
        for name, array in values.items():
            named[name].copy_(torch.as_tensor(array))


def _forward_backward(module, x: np.ndarray, g: np.ndarray, dtype) -> tuple:
    """Output, then the gradient of every parameter (by name order) and of the input."""
    torch = _torch()
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    out = module(xt)
    (out * torch.as_tensor(g, dtype=dtype)).sum().backward()
    grads = {name: p.grad for name, p in module.named_parameters()}
    return out.detach(), grads, xt.grad


def _linear_cases(impl, rng: np.random.Generator, trial: int):
    torch = _torch()
    Linear = impl["Linear"]
    i, o = int(rng.integers(2, 7)), int(rng.integers(1, 6))
    lead = tuple(int(s) for s in rng.integers(1, 4, size=1 + trial % 2))
    weights = {"weight": rng.standard_normal((o, i)), "bias": rng.standard_normal(o)}
    x, g = rng.standard_normal(lead + (i,)), rng.standard_normal(lead + (o,))
    where = f"Linear({i}, {o}), input {lead + (i,)}"
    yield Case(f"{where}: parameter names and shapes",
               lambda: [(n, tuple(p.shape)) for n, p in Linear(i, o).named_parameters()],
               hint=LAYER_HINTS["shapes"])
    # Every parameter: a float32 bias in a float64 layer still gives float64 outputs.
    yield Case(f"{where}: the dtype of every parameter of Linear({i}, {o}, dtype=float64)",
               # the tensor's own dtype: a Parameter subclass of the answer's could say another
               lambda: [(n, str(torch.Tensor.dtype.__get__(p))) for n, p in
                        Linear(i, o, dtype=torch.float64).named_parameters()],
               hint=LAYER_HINTS["dtype"])
    box: dict = {}

    def run():
        layer = Linear(i, o, dtype=torch.float64)
        _set_weights(layer, weights)
        box["result"] = _forward_backward(layer, x, g, torch.float64)
        return box["result"][0]

    def part(index: int, key: str | None = None):
        def thunk():
            if "result" not in box:
                raise EarlierStepFailed("skipped: the forward pass failed (see above)")
            item = box["result"][index]
            return item.get(key, f"no parameter named {key!r}") if key else item
        return thunk
    yield Case(f"{where}: output (float64, given weights)", run, hint=LAYER_HINTS["forward"])
    yield Case(f"{where}: gradient of weight", part(1, "weight"), hint=LAYER_HINTS["grads"])
    yield Case(f"{where}: gradient of bias", part(1, "bias"), hint=LAYER_HINTS["grads"])
    yield Case(f"{where}: gradient of the input", part(2), hint=LAYER_HINTS["grads"])


def _init_stats(Linear, i: int, o: int) -> tuple:
    torch = _torch()
    torch.manual_seed(0)
    layer = Linear(i, o)
    bound = 1 / np.sqrt(i)
    named = dict(layer.named_parameters())
    w, b = named["weight"].detach().double(), named["bias"].detach().double()
    return (str(named["weight"].dtype),
            bool(w.abs().max() <= bound) and bool(b.abs().max() <= bound),
            bool(abs(float(w.std()) / (bound / np.sqrt(3)) - 1) < 0.1),
            bool(abs(float(w.mean())) < 0.05 * bound))


def _bias_init_stats(Linear, i: int, o: int) -> tuple:
    """The bias of a wide layer: within the bound, and the spread of U(-b, b). With o = 20000
    values drawn from U(-b, b), the sample std is within 10% of b / sqrt(3) except with
    probability below 1e-50 (Hoeffding on the mean of x^2, Bernstein on the mean), whatever
    the answer draws first: a right answer never loses this case, a zero bias always does."""
    torch = _torch()
    torch.manual_seed(0)
    layer = Linear(i, o)
    bound = 1 / np.sqrt(i)
    b = dict(layer.named_parameters())["bias"].detach().double()
    return (bool(b.abs().max() <= bound),
            bool(abs(float(b.std()) / (bound / np.sqrt(3)) - 1) < 0.1))


def _meta_linear(Linear, i: int, o: int, n: int) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        layer = Linear(i, o, device="meta")
        out = layer(torch.empty(n, i, device="meta"))
        return dict(layer.named_parameters())["weight"].detach(), out.detach()
    return thunk


def _sequential(impl, sizes: tuple[int, ...], nested: bool, dtype=None):
    Linear, ReLU, Sequential = impl["Linear"], impl["ReLU"], impl["Sequential"]
    kw = {} if dtype is None else {"dtype": dtype}
    first = [Linear(sizes[0], sizes[1], **kw), ReLU()]
    if nested:
        return Sequential(Sequential(*first), Linear(sizes[1], sizes[2], **kw))
    return Sequential(*first, Linear(sizes[1], sizes[2], **kw))


@check("lab04.layers", reference=_reference_layers, after=("lab04.module",),
       forbid=("torch.nn.Linear", "torch.nn.Sequential", "torch.nn.functional", "torch.nn.Module",
               "torch.nn.modules", "torch.nn.ReLU", "coursekit.nn"))
def layers_program(impl, rng):
    """Linear, ReLU and Sequential on the student's Module, against torch.nn with the same weights."""
    torch = _torch()
    for trial in (1, 2):
        yield from _linear_cases(impl, rng, trial)
    i, o = int(rng.integers(2, 6)), int(rng.integers(1, 5))
    yield Case(f"Linear({i}, {o}, bias=False): parameter names and shapes",
               lambda: [(n, tuple(p.shape)) for n, p in impl["Linear"](i, o, bias=False).named_parameters()],
               hint=LAYER_HINTS["shapes"])
    w_nobias, x_nobias = rng.standard_normal((o, i)), rng.standard_normal((2, i))

    def no_bias():
        layer = impl["Linear"](i, o, bias=False)
        _set_weights(layer, {"weight": w_nobias})
        return layer(torch.tensor(x_nobias, dtype=torch.float32)).detach()

    yield Case(f"Linear({i}, {o}, bias=False): the output (given weights)",
               no_bias, rtol=1e-5, atol=1e-6,
               hint="without a bias, forward returns x @ weight.T (torch keeps self.bias = None "
                    "and tests it in forward)")
    yield Case("Linear(400, 50) initialisation: dtype, within ±1/sqrt(400), spread and mean of U(-b, b)",
               lambda: _init_stats(impl["Linear"], 400, 50),
               names=("dtype", "all values within the bound", "std within 10% of bound/sqrt(3)", "mean near 0"),
               hint=LAYER_HINTS["init"])
    # The bias is drawn like the weight (the text: "both weight and bias"), not set to zeros.
    yield Case("Linear(16, 20000) bias initialisation: within ±1/sqrt(16), spread of U(-b, b)",
               lambda: _bias_init_stats(impl["Linear"], 16, 20000),
               names=("bias within the bound", "bias std within 10% of bound/sqrt(3)"),
               hint="the bias starts uniform in [-1/sqrt(in_features), 1/sqrt(in_features)] like "
                    "the weight, not at zeros: draw it as (torch.rand(out_features) * 2 - 1) * bound")
    yield Case(f"Linear({i}, {o}, device='meta'): meta parameters, meta output",
               _meta_linear(impl["Linear"], i, o, 3), names=("weight", "output"), hint=LAYER_HINTS["device"])
    x = rng.standard_normal((3, 4))
    x[0, 0] = -abs(x[0, 0]) - 0.1   # a negative element in every seed
    yield Case("ReLU()(x) values", lambda: impl["ReLU"]()(torch.tensor(x)), hint=LAYER_HINTS["relu"])

    def relu_input_afterwards():
        given = torch.tensor(x)
        impl["ReLU"]()(given)
        return given

    yield Case("ReLU()(x) leaves x as it was", relu_input_afterwards,
               hint="return a new tensor (x.clamp(min=0), torch.maximum(x, ...)): x.clamp_ or "
                    "x[x < 0] = 0 change the caller's tensor")

    for nested in (False, True):
        sizes = tuple(int(s) for s in rng.integers(2, 6, size=3))
        n = int(rng.integers(2, 5))
        kind = "Sequential(Sequential(Linear, ReLU), Linear)" if nested else "Sequential(Linear, ReLU, Linear)"
        where = f"{kind} {sizes}"
        names = (["0.0.weight", "0.0.bias", "1.weight", "1.bias"] if nested
                 else ["0.weight", "0.bias", "2.weight", "2.bias"])
        shapes = [(sizes[1], sizes[0]), (sizes[1],), (sizes[2], sizes[1]), (sizes[2],)]
        weights = {name: rng.standard_normal(shape) for name, shape in zip(names, shapes)}
        x, g = rng.standard_normal((n, sizes[0])), rng.standard_normal((n, sizes[2]))
        yield Case(f"{where}: parameter names",
                   lambda nested=nested, sizes=sizes: [name for name, _ in
                                                       _sequential(impl, sizes, nested).named_parameters()],
                   hint=LAYER_HINTS["seq_names"])
        if not nested:
            yield Case(f"{where}: len(seq) and type of seq[1] is ReLU",
                       lambda sizes=sizes: (len(_sequential(impl, sizes, False)),
                                            isinstance(_sequential(impl, sizes, False)[1], impl["ReLU"])),
                       names=("len", "seq[1] is the ReLU"), hint=LAYER_HINTS["seq_index"])
        box: dict = {}

        def run(box=box, nested=nested, sizes=sizes, weights=weights, x=x, g=g):
            model = _sequential(impl, sizes, nested, dtype=torch.float64)
            _set_weights(model, weights)
            box["result"] = _forward_backward(model, x, g, torch.float64)
            return box["result"][0]
        yield Case(f"{where}: output (float64, given weights)", run, hint=LAYER_HINTS["seq_forward"])

        def grads(box=box, names=tuple(names)):
            if "result" not in box:
                raise EarlierStepFailed("skipped: the forward pass failed (see above)")
            by_name = box["result"][1]
            return tuple(by_name.get(name, f"no parameter named {name!r}") for name in names) + (box["result"][2],)
        yield Case(f"{where}: gradients of every parameter and of the input", grads,
                   names=tuple(names) + ("input",), hint=LAYER_HINTS["grads"])


# ---------------------------------------------------------------- lab04.parallel_block

@functools.lru_cache(maxsize=None)
def _reference_parallel_block_class():
    torch = _torch()

    class ParallelBlock(torch.nn.Module):
        def __init__(self, D_in, D_out):
            super().__init__()
            self.linear1 = torch.nn.Linear(D_in, D_out)
            self.linear2 = torch.nn.Linear(D_in, D_out)

        def forward(self, x):
            return (self.linear1(x) * self.linear2(x)).clamp(min=0)

    return ParallelBlock


def _reference_parallel_block():
    cls = _reference_parallel_block_class()
    return {"ParallelBlock": cls, "MyParallelBlock": cls}


PB_HINTS = {
    "names": "two Linear layers named linear1 and linear2, each from D_in to D_out, assigned in that order",
    "forward": "forward: h1 = linear1(x), h2 = linear2(x), output (h1 * h2).clamp(min=0): an "
               "elementwise product, then a ReLU",
    "grads": "compute the output with differentiable ops only; autograd gives all gradients",
}


@check("lab04.parallel_block", reference=_reference_parallel_block)
def parallel_block_program(impl, rng):
    """The seed's ParallelBlock, in torch.nn and on the student's own Module and Linear."""
    torch = _torch()
    for key in ("ParallelBlock", "MyParallelBlock"):
        for trial in (1, 2):
            d_in, d_out, n = (int(v) for v in rng.integers(2, 6, size=3))
            names = ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]
            shapes = [(d_out, d_in), (d_out,), (d_out, d_in), (d_out,)]
            weights = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in zip(names, shapes)}
            x = rng.standard_normal((n, d_in)).astype(np.float32)
            g = rng.standard_normal((n, d_out)).astype(np.float32)
            where = f"{key}({d_in}, {d_out}), trial {trial}"
            if trial == 1:
                yield Case(f"{where}: parameter names and shapes",
                           lambda k=key, d_in=d_in, d_out=d_out: [
                               (name, tuple(p.shape)) for name, p in impl[k](d_in, d_out).named_parameters()],
                           hint=PB_HINTS["names"])
            box: dict = {}

            def run(box=box, k=key, d_in=d_in, d_out=d_out, weights=weights, x=x, g=g):
                block = impl[k](d_in, d_out)
                _set_weights(block, weights)
                box["result"] = _forward_backward(block, x, g, torch.float32)
                return box["result"][0]
            yield Case(f"{where}: output (given weights)", run, rtol=1e-4, atol=1e-5, hint=PB_HINTS["forward"])

            def grads(box=box, names=tuple(names)):
                if "result" not in box:
                    raise EarlierStepFailed("skipped: the forward pass failed (see above)")
                by_name = box["result"][1]
                return tuple(by_name.get(name, f"no parameter named {name!r}") for name in names) + (
                    box["result"][2],)
            yield Case(f"{where}: gradients", grads, names=tuple(names) + ("input",), rtol=1e-4, atol=1e-5,
                       hint=PB_HINTS["grads"])


# ---------------------------------------------------------------- lab04.sgd and lab04.adam

def _reference_sgd():
    return _torch().optim.SGD


def _reference_adam():
    return _torch().optim.Adam


OPTIM_HINTS = {
    "build": "the constructor takes params as any iterable (often a generator such as "
             "model.parameters()): turn it into a list once",
    "sgd": "with momentum μ: buf = grad on the first step, then buf = μ * buf + grad; p -= lr * buf "
           "(without momentum: p -= lr * grad); update p in place under torch.no_grad()",
    "adam": "per parameter, with t its number of steps so far: m = β1 m + (1-β1) g, v = β2 v + (1-β2) g², "
            "m̂ = m / (1 - β1^t), v̂ = v / (1 - β2^t), p -= lr * m̂ / (sqrt(v̂) + eps)",
    "skip": "a parameter whose .grad is None is skipped entirely: no update, and its state (momentum, "
            "moments, step count) does not change",
    "zero_grad": "zero_grad() sets .grad to None for every parameter (torch's default)",
    "alias": "keep state in tensors of your own (buf = p.grad.clone(), or torch.zeros_like(p) "
             "then buf.mul_(mu).add_(g)): state that is p.grad itself changes when the next "
             "backward writes into p.grad, and step() must never write into p.grad",
    "buffer": "keep the momentum buffer as torch defines it, b = mu * b + g, and multiply by lr "
              "only in the update (p -= lr * b): a buffer of lr * b gives the same steps while "
              "lr is fixed, but a learning-rate schedule that changes lr gets other updates",
    "device": "create optimizer state with torch.zeros_like(p) (or p.new_zeros / p.clone()), so it "
              "has p's device and dtype: state made with torch.zeros(p.shape) lives on the CPU in float32",
}


def _opt_problem(rng: np.random.Generator, steps: int):
    # At least two parameters, planted in every seed: skipping the first one (no grad) must not
    # skip the others.
    n_params = int(rng.integers(2, 4))
    shapes = [tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 3)))) for _ in range(n_params)]
    start = [rng.standard_normal(s) for s in shapes]
    curvature = [rng.uniform(0.5, 2.0, size=s) for s in shapes]
    noise = [[rng.standard_normal(s) * 0.3 for s in shapes] for _ in range(steps)]
    return shapes, start, curvature, noise


def _trajectory_cases(impl, label: str, hyper: dict, rng: np.random.Generator, steps: int, hint: str,
                      skip_steps: tuple[int, ...] = (), weights: dict[str, float] | None = None):
    """Optimize a noisy quadratic, one case per step (float64): the values of every parameter.

    ``weights`` (in points) is shared out over the cases: "update" over the ordinary steps,
    "skip" over the steps that skip a parameter, "build" over construction and zero_grad().
    """
    w = {"update": float(steps), "skip": float(len(skip_steps)), "build": 2.0, **(weights or {})}
    n_skip = len(skip_steps)
    torch = _torch()
    shapes, start, curvature, noise = _opt_problem(rng, steps)
    box: dict = {}

    def build():
        box.pop("opt", None)
        params = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in start]
        box["params"] = params
        box["opt"] = impl((p for p in params), **hyper)
        return True
    yield Case(f"{label}: construct from a generator of parameters", build, hint=OPTIM_HINTS["build"],
               weight=w["build"] / 2)

    def step(t: int):
        def thunk():
            if "opt" not in box:
                raise EarlierStepFailed("skipped: the optimizer could not be built")
            params = box["params"]
            for k, (p, c) in enumerate(zip(params, curvature)):
                if k == 0 and t in skip_steps:
                    p.grad = None
                    continue
                grad = torch.as_tensor(c * p.detach().numpy() + noise[t][k])
                if p.grad is None:
                    p.grad = grad
                else:  # as backward does: into the .grad tensor kept from the last step
                    with torch.no_grad():
                        p.grad.copy_(grad)
            given = [None if p.grad is None else p.grad.detach().clone() for p in params]
            box["opt"].step()
            # The gradients are the caller's: step() reads them and never writes them.
            return (tuple(p.detach().clone() for p in params),
                    [None if p.grad is None or g is None else bool(torch.equal(p.grad, g))
                     for p, g in zip(params, given)])
        return thunk
    for t in range(steps):
        skipped = " (first parameter has no grad)" if t in skip_steps else ""
        yield Case(f"{label}: parameters after step {t + 1}{skipped}", step(t), rtol=1e-9, atol=1e-12,
                   hint=(OPTIM_HINTS["skip"] if skipped else hint) + "; " + OPTIM_HINTS["alias"],
                   names=("parameters", "each .grad unchanged by step()"),
                   weight=w["skip"] / n_skip if skipped else w["update"] / (steps - n_skip))

    def zero_grad():
        if "opt" not in box:
            raise EarlierStepFailed("skipped: the optimizer could not be built")
        for p in box["params"]:
            p.grad = torch.ones_like(p)
        box["opt"].zero_grad()
        return [p.grad is None for p in box["params"]]
    yield Case(f"{label}: zero_grad()", zero_grad, hint=OPTIM_HINTS["zero_grad"], weight=w["build"] / 2)


def _meta_steps(impl, hyper: dict, shape: tuple[int, ...], box: dict) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        box.clear()
        p = torch.empty(shape, dtype=torch.float64, device="meta", requires_grad=True)
        opt = impl([p], **hyper)
        for _ in range(2):
            p.grad = torch.empty(shape, dtype=torch.float64, device="meta")
            opt.step()
        box["opt"], box["param"] = opt, p
        return p.detach()
    return thunk


def _held_tensors(opt: Any, param: Any) -> list:
    """Every tensor of ``param``'s shape reachable from the optimizer's attributes (whatever
    the student named them), ``param`` itself left out."""
    torch = _torch()
    found, seen = [], set()

    def walk(value, depth):
        if id(value) in seen or depth > 5 or len(seen) > 10_000 or callable(value) \
                and not isinstance(value, torch.Tensor):
            return  # functions, classes, modules hold no state of this optimizer
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            if value is not param and tuple(value.shape) == tuple(param.shape):
                found.append(value)
            return
        if isinstance(value, dict):
            for key, item in list(value.items()):
                walk(key, depth + 1)
                walk(item, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in list(value):
                walk(item, depth + 1)
        elif hasattr(value, "__dict__") and not isinstance(value, type):
            walk(vars(value), depth + 1)

    walk(opt, 0)
    return found


def _holds_buffer(impl, lr: float, momentum: float, grads: list) -> Callable[[], Any]:
    """Whether, after len(grads) steps, the optimizer holds b_t = mu * b_{t-1} + g_t."""
    def thunk():
        torch = _torch()
        p = torch.zeros(grads[0].shape, dtype=torch.float64, requires_grad=True)
        opt = impl([p], lr=lr, momentum=momentum)
        buffer = None
        for g in grads:
            grad = torch.tensor(g, dtype=torch.float64)
            p.grad = grad.clone()
            opt.step()
            buffer = grad if buffer is None else momentum * buffer + grad
        return p.detach().clone(), any(
            torch.allclose(t.detach().to(torch.float64), buffer, rtol=1e-9, atol=1e-12)
            for t in _held_tensors(opt, p) if t.dtype.is_floating_point)
    return thunk


def _state_devices(box: dict) -> Callable[[], Any]:
    """Device and dtype of every tensor of the parameter's shape that the optimizer holds.

    Torch lets an in-place op mix a CPU tensor with a meta one (``p.sub_(cpu_buffer)`` runs),
    so a parameter that stays on meta proves nothing about the state: look at the state itself.
    Whatever the student named it, it is reachable from the optimizer's attributes.
    """
    def thunk():
        torch = _torch()
        if "opt" not in box:
            raise EarlierStepFailed("skipped: the steps on the meta parameter failed (see above)")
        param, found, seen = box["param"], set(), set()

        def walk(value, depth):
            if id(value) in seen or depth > 5 or len(seen) > 10_000 or callable(value) \
                    and not isinstance(value, torch.Tensor):
                return  # functions, classes, modules hold no state of this optimizer
            seen.add(id(value))
            if isinstance(value, torch.Tensor):
                if value is not param and tuple(value.shape) == tuple(param.shape):
                    found.add(f"{value.device.type} {str(value.dtype).removeprefix('torch.')}")
                return
            if isinstance(value, dict):
                for key, item in list(value.items()):
                    walk(key, depth + 1)
                    walk(item, depth + 1)
            elif isinstance(value, (list, tuple, set, frozenset)):
                for item in list(value):
                    walk(item, depth + 1)
            elif hasattr(value, "__dict__") and not isinstance(value, type):
                walk(vars(value), depth + 1)

        walk(box["opt"], 0)
        return ", ".join(sorted(found)) or "no state tensors"
    return thunk


# Case weights in points, by concept, as the lab states them. SGD (2 points): plain SGD 0.3,
# momentum as torch defines it (buf = mu * buf + grad) 1.0, skipping a parameter without a
# gradient 0.2, construction from a generator and zero_grad() 0.2, state on the parameter's
# device 0.3. Trial 1 has momentum 0.9, trial 2 the default (none), trial 3 a random momentum and skips;
# the momentum point's last 0.1 goes to the buffer itself (b = mu * b + g, no lr in it).
SGD_WEIGHTS = {1: {"update": 0.4, "build": 0.05},
               2: {"update": 0.3, "build": 0.05},
               3: {"update": 0.5, "skip": 0.2, "build": 0.1}}
# Adam (3 points): the bias-corrected update, step by step in three settings, 2.1; skipping a
# parameter without a gradient (its step count stays) 0.3; construction and zero_grad() 0.3;
# state on the parameter's device 0.3. Without bias correction every step differs: that
# answer keeps the 0.6 of the parts it has right.
SGD_BUFFER_WEIGHT = 0.1
ADAM_WEIGHTS = {1: {"update": 0.7, "build": 0.1},
                2: {"update": 0.7, "skip": 0.3, "build": 0.1},
                3: {"update": 0.7, "build": 0.1}}


@check("lab04.sgd", reference=_reference_sgd, forbid=("torch.optim", "coursekit.optim"))
def sgd_program(impl, rng):
    """SGD with momentum: float64 trajectories against torch.optim.SGD."""
    steps = 25
    settings = [{"lr": 0.1, "momentum": 0.9},
                {"lr": float(rng.uniform(0.01, 0.3))},  # the default momentum, called
                {"lr": float(rng.uniform(0.01, 0.3)), "momentum": float(rng.uniform(0.3, 0.95))}]
    for trial, hyper in enumerate(settings, start=1):
        label = (f"SGD(lr={hyper['lr']:.3g}, momentum={hyper['momentum']:.3g})"
                 if "momentum" in hyper else f"SGD(lr={hyper['lr']:.3g}) (default momentum)")
        yield from _trajectory_cases(impl, label, hyper, rng, steps, OPTIM_HINTS["sgd"],
                                     skip_steps=(7, 8, 9) if trial == 3 else (),
                                     weights=SGD_WEIGHTS[trial])
    shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    box: dict = {}
    yield Case("SGD(momentum=0.9) on a meta parameter: two steps keep it on meta",
               _meta_steps(impl, {"lr": 0.1, "momentum": 0.9}, shape, box),
               hint=OPTIM_HINTS["device"], weight=0.1)
    yield Case("SGD(momentum=0.9) on a meta parameter: the momentum buffer is on meta, float64",
               _state_devices(box), hint=OPTIM_HINTS["device"], weight=0.2)
    # The buffer is torch's b_t = mu * b_{t-1} + g_t, not lr * b_t: the trajectories agree while
    # lr stays fixed, but a schedule that changes lr between steps sees the difference.
    lr, momentum = float(rng.uniform(0.01, 0.3)), float(rng.uniform(0.3, 0.95))
    grads = [rng.standard_normal(shape) for _ in range(3)]
    yield Case(f"SGD(lr={lr:.3g}, momentum={momentum:.3g}): parameters after step 3, and the "
               "optimizer holds the momentum buffer b = mu * b + g (no lr in it)",
               _holds_buffer(impl, lr, momentum, grads), rtol=1e-9, atol=1e-12,
               names=("parameters", "holds b = mu * b + g"), hint=OPTIM_HINTS["buffer"],
               weight=SGD_BUFFER_WEIGHT)


@check("lab04.adam", reference=_reference_adam, forbid=("torch.optim", "coursekit.optim"))
def adam_program(impl, rng):
    """Adam: float64 trajectories against torch.optim.Adam, with bias correction."""
    steps = 25
    settings = [{},  # every default called: lr=1e-3, betas=(0.9, 0.999), eps=1e-8
                {"lr": float(rng.uniform(0.005, 0.1)), "betas": (0.8, 0.99), "eps": 1e-3},
                {"lr": float(rng.uniform(0.005, 0.1)),
                 "betas": (float(rng.uniform(0.5, 0.95)), float(rng.uniform(0.9, 0.999))), "eps": 0.1}]
    for trial, hyper in enumerate(settings, start=1):
        betas = hyper.get("betas", (0.9, 0.999))
        label = (f"Adam(lr={hyper['lr']:.3g}, betas=({betas[0]:.3g}, {betas[1]:.3g}), "
                 f"eps={hyper.get('eps', 1e-8):.3g})" if hyper else "Adam() (the defaults)")
        yield from _trajectory_cases(impl, label, hyper, rng, steps, OPTIM_HINTS["adam"],
                                     skip_steps=(4, 5, 6) if trial == 2 else (),
                                     weights=ADAM_WEIGHTS[trial])
    shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    box: dict = {}
    yield Case("Adam on a meta parameter: two steps keep it on meta",
               _meta_steps(impl, {"lr": 0.01}, shape, box), hint=OPTIM_HINTS["device"], weight=0.1)
    yield Case("Adam on a meta parameter: the moments are on meta, float64",
               _state_devices(box), hint=OPTIM_HINTS["device"], weight=0.2)


# The graded answers are classes: their rows are promises and edges (the test derives no
# parameters from a class handed to grade()).
PROPERTIES = {
    "lab04.module": (
        promise("__init__ makes the registries and training = True",
                "eval() then right.train(): .training of a new tree"),
        promise("a Parameter is registered, in assignment order", "names from named_parameters()"),
        promise("parameters() gives the very objects, in the same order",
                "values from parameters()"),
        promise("a Module is registered as a child, its parameters dotted after the own ones",
                "tree 2 (11 parameters, 3 submodules): names from named_parameters()"),
        promise("anything else is a plain attribute", "plain attribute tree."),
        promise("__getattr__ returns a registered parameter or module", "attribute access tree."),
        promise("__getattr__ raises AttributeError otherwise",
                "a missing attribute raises AttributeError"),
        promise("children() gives the direct submodules", "children() and modules(): number of children"),
        promise("modules() gives the module, then every descendant depth first",
                "modules() starts with the module itself"),
        promise("calling the module runs forward (given)", "calling the module runs forward"),
        promise("train(mode) sets training on the whole tree and returns self",
                "train()/eval() return the module"),
        promise("eval() on the whole tree, train() on a subtree only",
                "eval() then fc.dec.train(): .training after fc.dec.train()"),
        promise("zero_grad() sets .grad = None on every parameter of the tree", "zero_grad()"),
        promise("state_dict() maps dotted names to detached tensors",
                "state_dict(): requires_grad of the values"),
        promise("torch.nn.Module is not used", forbidden="torch.nn.Module"),
        promise("coursekit.nn is not used", forbidden="coursekit.nn"),
        promise("__getattr__ raises AttributeError before __init__ ran (copy.deepcopy)",
                "copy.deepcopy of a tree"),
        promise("a Parameter or Module assigned over a plain attribute replaces it",
                "attribute access returns the new values"),
        edge("re-assigning a name keeps its position", "values after re-assigning"),
        edge("a tied parameter is listed once, under its first name", "names after tying"),
        edge("a tied parameter appears in state_dict under each name", "state_dict(): keys"),
    ),
    "lab04.layers": (
        promise("Linear registers weight (out, in), then bias (out,)",
                "input (3, 3): parameter names and shapes"),
        promise("Linear computes x @ weight.T + bias", "input (3, 3): output (float64, given weights)"),
        promise("gradients reach weight, bias and the input", "gradient of the input"),
        promise("any leading dimensions", "input (3, 1, 4): output"),
        promise("initialised U(-1/sqrt(in), 1/sqrt(in))",
                "initialisation: dtype, within ±1/sqrt(400), spread and mean of U(-b, b): "
                "std within 10% of bound/sqrt(3)"),
        promise("the bias initialised U(-1/sqrt(in), 1/sqrt(in)) too, not zeros",
                "bias initialisation: within ±1/sqrt(16), spread of U(-b, b): "
                "bias std within 10% of bound/sqrt(3)"),
        promise("torch's default dtype when dtype is None",
                "spread and mean of U(-b, b): dtype"),
        promise("the given dtype is used", "Linear(4, 2), input (3, 1, 4): output (float64"),
        promise("the given dtype for every parameter, the bias too",
                "the dtype of every parameter of Linear(4, 2, dtype=float64)"),
        promise("the given device is used", "device='meta'): meta parameters, meta output: weight"),
        promise("ReLU gives max(x, 0)", "ReLU()(x) values"),
        promise("ReLU returns a new tensor: x is left as it was", "ReLU()(x) leaves x as it was"),
        promise("Sequential names its children 0, 1, ...",
                "Sequential(Linear, ReLU, Linear) (2, 3, 2): parameter names"),
        promise("Sequential feeds the input through them in order",
                "Sequential(Linear, ReLU, Linear) (2, 3, 2): output"),
        promise("len(seq) works", "len(seq) and type of seq[1] is ReLU: len"),
        promise("seq[i] works", "seq[1] is the ReLU"),
        promise("torch.nn.Linear is not used", forbidden="torch.nn.Linear"),
        promise("torch.nn.Sequential is not used", forbidden="torch.nn.Sequential"),
        promise("torch.nn.ReLU is not used", forbidden="torch.nn.ReLU"),
        promise("torch.nn.functional is not used", forbidden="torch.nn.functional"),
        edge("bias=False: no bias parameter", "bias=False): parameter names and shapes"),
        edge("bias=False: no addition", "bias=False): the output (given weights)"),
        edge("device='meta': meta output", "device='meta'): meta parameters, meta output: output"),
        edge("a nested Sequential's dotted names", "Sequential(Sequential(Linear, ReLU), Linear)"),
    ),
    "lab04.parallel_block": (
        promise("ParallelBlock registers linear1 then linear2, each D_in -> D_out",
                "ParallelBlock(2, 2), trial 1: parameter names and shapes"),
        promise("ParallelBlock computes relu((x W1^T + b1) * (x W2^T + b2))",
                "ParallelBlock(5, 3), trial 2: output (given weights)"),
        promise("ParallelBlock's gradients", "ParallelBlock(2, 2), trial 1: gradients: input"),
        promise("MyParallelBlock on your Module and Linear: the same names",
                "MyParallelBlock(5, 2), trial 1: parameter names and shapes"),
        promise("MyParallelBlock: the same output", "MyParallelBlock(4, 2), trial 2: output"),
        promise("MyParallelBlock: the same gradients",
                "MyParallelBlock(5, 2), trial 1: gradients: linear2.weight"),
    ),
    "lab04.sgd": (
        promise("params any iterable, a generator included",
                "construct from a generator of parameters"),
        promise("plain SGD: p -= lr * grad", "(default momentum): parameters after step 1"),
        promise("momentum=0.0 by default", "SGD(lr=0.0923) (default momentum)"),
        promise("momentum as torch: b = mu * b + g, no dampening",
                "SGD(lr=0.1, momentum=0.9): parameters after step 2"),
        promise("step() leaves each .grad as it is", "each .grad unchanged by step()"),
        promise("zero_grad() sets every .grad to None", "SGD(lr=0.1, momentum=0.9): zero_grad()"),
        promise("state on the parameter's device and dtype",
                "the momentum buffer is on meta, float64"),
        promise("torch.optim is not used", forbidden="torch.optim"),
        promise("coursekit.optim is not used", forbidden="coursekit.optim"),
        promise("the buffer is b = mu * b + g, lr only in the update",
                "the optimizer holds the momentum buffer b = mu * b + g"),
        edge("a parameter without a gradient is skipped", "(first parameter has no grad)"),
        edge("a parameter on the meta device", "on a meta parameter: two steps keep it on meta"),
    ),
    "lab04.adam": (
        promise("lr=1e-3, betas=(0.9, 0.999), eps=1e-8 by default",
                "Adam() (the defaults): parameters after step 1"),
        promise("moments with bias correction, step by step",
                "Adam(lr=0.04, betas=(0.8, 0.99), eps=0.001): parameters after step 25"),
        promise("eps added to sqrt(v_hat), not inside the root", "eps=0.1): parameters after step"),
        promise("params any iterable, a generator included",
                "Adam() (the defaults): construct from a generator of parameters"),
        promise("zero_grad() sets every .grad to None", "Adam() (the defaults): zero_grad()"),
        promise("the moments on the parameter's device and dtype",
                "the moments are on meta, float64"),
        promise("torch.optim is not used", forbidden="torch.optim"),
        promise("coursekit.optim is not used", forbidden="coursekit.optim"),
        edge("a parameter without a gradient is skipped, its step count stays",
             "(first parameter has no grad)"),
        edge("a parameter on the meta device", "Adam on a meta parameter: two steps keep it on meta"),
    ),
}
