"""Checks for lab02_autograd: a reverse-mode engine of the student's own, and torch autograd.

The student's engine (``Node``, ``unbroadcast``, ``toposort``, ``backward``, ``no_grad``) is
compared with the coursekit reference engine through a thin adapter, :class:`_RefNode`, that
offers the same interface as the lab's ``Node`` and does all of its differentiation with
``coursekit.autograd``. Each program builds the same random expression in both engines and
compares the forward value and every leaf gradient. The torch exercises are compared with
torch itself.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..capabilities import AUTODIFF
from ..program import Case, EarlierStepFailed, check
from ..properties import edge, parameter, promise

# The engine exercises rebuild coursekit's Tensor and engine: all of coursekit, and every way
# torch has to compute a gradient.
ENGINE_FORBID = ("coursekit",) + AUTODIFF


# ------------------------------------------------------------------ the reference engine adapter

class _RefNode:
    """The lab's ``Node`` interface on top of ``coursekit.autograd`` (the reference)."""

    def __init__(self, data: Any, requires_grad: bool = False, *, _tensor: Any = None) -> None:
        import coursekit as ck
        self.t = (_tensor if _tensor is not None else
                  ck.tensor(np.array(data, dtype=np.float64), requires_grad=requires_grad))
        self.parents: tuple = ()
        self.op = "leaf"
        self._local: Any = None

    @property
    def data(self) -> np.ndarray:
        return self.t.data

    @property
    def grad(self) -> np.ndarray | None:
        return None if self.t.grad is None else self.t.grad.data

    @property
    def requires_grad(self) -> bool:
        return self.t.requires_grad

    def _apply(self, fn: Callable, others: tuple, op: str) -> "_RefNode":
        inputs = (self,) + tuple(o if isinstance(o, _RefNode) else _RefNode(o) for o in others)
        out = _RefNode(None, _tensor=fn(*(n.t for n in inputs)))
        out.op = op
        if out.t.requires_grad:
            out.parents = inputs
            out._local = (fn, inputs)
        return out

    def backward_fn(self, grad: Any) -> tuple:
        """Local gradients, by running this one op through the reference on fresh leaves."""
        import coursekit as ck
        fn, inputs = self._local
        leaves = [ck.tensor(n.t.data.copy(), requires_grad=True) for n in inputs]
        fn(*leaves).backward(ck.tensor(np.array(grad, dtype=np.float64)))
        return tuple(leaf.grad.data for leaf in leaves)

    def __add__(self, other): return self._apply(lambda a, b: a + b, (other,), "add")
    def __radd__(self, other): return _RefNode(other)._apply(lambda a, b: a + b, (self,), "add")
    def __mul__(self, other): return self._apply(lambda a, b: a * b, (other,), "mul")
    def __rmul__(self, other): return _RefNode(other)._apply(lambda a, b: a * b, (self,), "mul")
    def __sub__(self, other): return self._apply(lambda a, b: a - b, (other,), "sub")
    def __neg__(self): return self._apply(lambda a: -a, (), "neg")
    def __matmul__(self, other): return self._apply(lambda a, b: a @ b, (other,), "matmul")
    def relu(self): return self._apply(lambda a: a.relu(), (), "relu")
    def sum(self): return self._apply(lambda a: a.sum(), (), "sum")


def _ref_toposort(root: Any) -> list:
    """Depth-first post-order over ``.parents``: each node after all of its parents."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)

    visit(root)
    return order


def _ref_backward(root: Any) -> None:
    root.t.backward(np.ones_like(root.t.data))


def _reference_engine() -> dict:
    import coursekit as ck
    from coursekit.autograd import unbroadcast
    return {"Node": _RefNode, "unbroadcast": unbroadcast, "toposort": _ref_toposort,
            "backward": _ref_backward, "no_grad": ck.no_grad}


# ------------------------------------------------------------------ exercise 1: ops

OP_HINTS = {
    "unbroadcast": "sum over the leading axes broadcasting added, then (keeping them) over the "
                   "axes where the target shape has size 1",
    "add": "add sends the upstream gradient to both inputs; reduce each with "
           "unbroadcast(grad, input.data.shape) so a broadcast input gets the sum",
    "mul": "d(a*b)/da is b: grad * other.data for one input, grad * self.data for the other, "
           "each unbroadcast to its input's shape",
    "matmul": "for out = a @ b: grad_a = grad @ b.T and grad_b = a.T @ grad (read it off the shapes)",
    "relu": "relu passes the gradient where its input was positive and blocks it elsewhere",
    "sum": "every element counted once: spread the upstream gradient (a scalar) to the input's shape",
}


def _op_cases(impl, label: str, op: str, make: Callable, arrays: tuple, grad: np.ndarray,
              input_names: tuple[str, ...]):
    """Forward value and local gradients of one op applied to fresh leaves."""
    Node = impl["Node"]

    def build():
        return make(*(Node(a, requires_grad=True) for a in arrays))

    def run():
        out = build()
        grads = tuple(out.backward_fn(grad))
        if len(grads) != len(input_names):
            raise ValueError(f"backward_fn returned {len(grads)} gradients for "
                             f"{len(input_names)} inputs ({', '.join(input_names)})")
        return (out.data, *grads)

    # The forward code is given in the lab; its value travels with the backward's, so a
    # broken forward is named, and an untouched stub fails every case of this check.
    yield Case(f"{label}: forward value and backward_fn(grad)", run, hint=OP_HINTS[op],
               names=("forward value", *(f"gradient for {n}" for n in input_names)))


@check("lab02.node_ops", reference=_reference_engine, forbid=ENGINE_FORBID)
def node_ops_program(impl, rng):
    """unbroadcast, and each op's forward value and local backward, against coursekit."""
    # Distinct sizes, so that a gradient summed over the wrong axis has the wrong shape.
    n, d, k = (int(v) for v in rng.choice(np.arange(2, 7), size=3, replace=False))
    b = int(rng.integers(2, 4))
    # Planted in every seed: several size-1 axes (summed one after the other, each kept until
    # the end), and an axis of size 2 stretched from 1.
    for target, source in (((d,), (n, d)), ((n, 1), (n, d)), ((1, d), (n, d)), ((), (n, d)),
                           ((n, d), (b, n, d)), ((n, d), (n, d)), ((1, 1), (n, d)),
                           ((n, 1, 1), (b, n, 2, d))):
        g = rng.standard_normal(source)
        yield Case(f"unbroadcast: gradient of shape {source} to shape {target}",
                   lambda g=g, t=target: impl["unbroadcast"](g, t), hint=OP_HINTS["unbroadcast"])

    def normal(*shape):
        return rng.standard_normal(shape)

    binary = [
        ("add", (n, d), (n, d)), ("add", (n, d), (d,)), ("add", (d,), (n, d)), ("add", (n, d), ()),
        ("mul", (n, d), (n, d)), ("mul", (n, d), (d,)), ("mul", (n, 1), (1, d)),
        ("matmul", (n, k), (k, d)),
    ]
    ops = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "matmul": lambda x, y: x @ y}
    for op, sa, sb in binary:
        arrays = (normal(*sa), normal(*sb))
        out_shape = (sa[0], sb[1]) if op == "matmul" else np.broadcast_shapes(sa, sb)
        yield from _op_cases(impl, f"{op}: {sa} {'@' if op == 'matmul' else op} {sb}", op,
                             ops[op], arrays, normal(*out_shape), ("a", "b"))
    x = normal(n, d)

    y, g = normal(n, d), normal(n, d)

    def defaults():  # the default, called: Node(data) is a constant
        Node = impl["Node"]
        a, b = Node(x), Node(x)
        out = a * Node(y, requires_grad=True)
        return (bool(a.requires_grad), bool((a * b + a).requires_grad),
                bool(out.requires_grad), *out.backward_fn(g))

    yield Case("Node(data) without requires_grad is a constant, and so is a result of "
               "constants; a * c with c requiring grad", defaults,
               names=("Node(data).requires_grad", "(a * b + a).requires_grad",
                      "(a * c).requires_grad", "gradient for a", "gradient for c"),
               hint="keep Node's default requires_grad=False; " + OP_HINTS["mul"])
    # Exact zeros, planted where the seed says: the gradient there is 0, as torch.relu's
    # (x > 0, not x >= 0).
    zeros = x.copy()
    zeros.flat[rng.choice(zeros.size, size=min(2, zeros.size), replace=False)] = 0.0
    yield from _op_cases(impl, f"relu of shape {(n, d)} with two exact zeros", "relu",
                         lambda a: a.relu(), (zeros,), normal(n, d), ("x",))
    yield from _op_cases(impl, f"sum of shape {(n, d)}", "sum", lambda a: a.sum(), (x,),
                         np.asarray(rng.standard_normal()), ("x",))


# ------------------------------------------------------------------ exercise 2: the engine

def _plan(rng: np.random.Generator, n: int, d: int) -> list[tuple]:
    """A random program over leaves A, B (n, d), c (d,), W (d, d) and a constant K (n, d).

    Each step is ``(name, op, operands)``; every leaf that requires grad is used, some
    intermediate values are used more than once, and the root is the sum of the last value.
    """
    pool = ["A", "B", "K"]
    steps: list[tuple] = []
    for i in range(int(rng.integers(4, 8))):
        op = str(rng.choice(["add", "mul", "matmul", "relu", "sub", "scale", "bias", "bias_mul"]))
        first = str(rng.choice(pool))
        if op in ("add", "mul", "sub"):
            second = str(rng.choice(pool))
            operands: tuple = (first, second)
        elif op == "matmul":
            operands = (first, "W")
        elif op in ("bias", "bias_mul"):
            operands = (first, "c")
        elif op == "scale":
            operands = (first, float(np.round(rng.uniform(-2, 2), 2)))
        else:
            operands = (first,)
        name = f"v{i + 1}"
        steps.append((name, op, operands))
        pool.append(name)
        pool.append(name)  # recent values are likelier to be reused
    last = steps[-1][0]
    reached = _reachable(steps, last)
    # Every leaf is reached, the constant K too (planted in every seed: a constant in the graph
    # must keep .grad None).
    for leaf, op in (("A", "add"), ("B", "mul"), ("c", "bias"), ("W", "matmul"), ("K", "add")):
        if leaf not in reached:
            name = f"v{len(steps) + 1}"
            steps.append((name, op, (last, leaf)))
            last = name
    steps.append(("loss", "sum", (last,)))
    return steps


def _reachable(plan: list[tuple], root: str) -> set[str]:
    """Names of the values ``root`` depends on, itself included."""
    inputs = {name: [o for o in operands if isinstance(o, str)] for name, _, operands in plan}
    reached, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(inputs.get(name, []))
    return reached


def _run_plan(Node: Any, plan: list[tuple], leaves: dict[str, np.ndarray]) -> dict:
    values: dict[str, Any] = {name: Node(array, requires_grad=(name != "K"))
                              for name, array in leaves.items()}
    for name, op, operands in plan:
        args = [values[o] if isinstance(o, str) else o for o in operands]
        if op in ("add", "bias"):
            values[name] = args[0] + args[1]
        elif op in ("mul", "bias_mul", "scale"):
            values[name] = args[0] * args[1]
        elif op == "sub":
            values[name] = args[0] - args[1]
        elif op == "matmul":
            values[name] = args[0] @ args[1]
        elif op == "relu":
            values[name] = args[0].relu()
        elif op == "sum":
            values[name] = args[0].sum()
    return values


def _describe(plan: list[tuple]) -> str:
    symbols = {"add": "+", "bias": "+", "mul": "*", "bias_mul": "*", "scale": "*", "sub": "-",
               "matmul": "@"}
    parts = []
    for name, op, operands in plan:
        if op in symbols:
            parts.append(f"{name} = {operands[0]} {symbols[op]} {operands[1]}")
        else:
            parts.append(f"{name} = {operands[0]}.{op}()")
    return "; ".join(parts)


def _topo_verdict(order: Any, values: dict, plan: list[tuple]) -> str:
    """'valid', or what is wrong with ``order`` as a topological order of the named nodes."""
    try:
        order = list(order)
    except TypeError:
        return f"toposort returned a {type(order).__name__}, not a list of nodes"
    names = {id(node): name for name, node in values.items()}
    positions: dict[str, int] = {}
    for index, node in enumerate(order):
        name = names.get(id(node))
        if name is None:
            continue  # an anonymous node, e.g. the constant of `x * 2.0`
        if name in positions:
            return f"node {name} appears twice (keep a set of visited nodes)"
        positions[name] = index
    root = values["loss"]
    if not order or order[-1] is not root:
        return "the root (loss) must be the last node"
    reachable = _reachable(plan, "loss")
    for name in sorted(reachable):
        if name not in positions and values[name].requires_grad:
            return f"node {name} is missing"
    # Every node must follow its inputs. Constants (requires_grad=False) are exempt: an engine
    # may wrap them in nodes of its own (a - K as a + (-1 * K)) or leave them out.
    for name, _, operands in plan:
        for operand in operands:
            if (isinstance(operand, str) and operand in positions and name in positions
                    and values[operand].requires_grad
                    and positions[operand] > positions[name]):
                return f"{name} comes before its input {operand}"
    return "valid"


def _leaf_arrays(rng: np.random.Generator, n: int, d: int) -> dict[str, np.ndarray]:
    return {"A": rng.standard_normal((n, d)), "B": rng.standard_normal((n, d)),
            "c": rng.standard_normal(d), "W": rng.standard_normal((d, d)) / np.sqrt(d),
            "K": rng.standard_normal((n, d))}


def _stored(box: dict, key: str) -> Any:
    if key not in box:
        raise EarlierStepFailed("skipped: building the graph failed (see this program's toposort case)")
    if isinstance(box[key], BaseException):
        raise EarlierStepFailed(f"skipped: backward raised {type(box[key]).__name__}: {box[key]}")
    return box[key]


def _ran_backward(impl, box: dict) -> dict:
    """The program's values after ``backward(loss)`` ran once (run on first use)."""
    values = _stored(box, "values")
    if "backward" not in box:
        try:
            impl["backward"](values["loss"])
            box["backward"] = True
        except Exception as error:  # noqa: BLE001 — recorded, reported by every leaf case
            box["backward"] = error
    _stored(box, "backward")
    return values


ENGINE_HINTS = {
    "forward": "the forward value only uses the ops of exercise 1; check those first",
    "toposort": "depth-first over .parents with a visited set; append a node after all of its "
                "parents (post-order), so the root comes last",
    "grad": "walk reversed(toposort(root)); keep each node's gradient in a dict keyed by "
            "id(node), pass it to node.backward_fn and add each result to the parent's entry "
            "(skip parents that do not require grad); at a leaf, add it into .grad (a copy the "
            "first time)",
    "constant": "a leaf with requires_grad=False gets no gradient: leave its .grad as None",
    "reuse": "a node used twice receives two gradients: add them, never overwrite",
    "accumulate": "leaf gradients add up across backward calls (as in PyTorch): backward must "
                  "add to an existing .grad, not replace it",
}


@check("lab02.engine", reference=_reference_engine, forbid=ENGINE_FORBID,
       after=("lab02.node_ops",))
def engine_program(impl, rng):
    """Random programs through the student's engine and coursekit's: values, order, gradients."""
    Node = impl["Node"]
    for trial in range(1, 4):
        n, d = (int(v) for v in rng.choice(np.arange(2, 6), size=2, replace=False))
        plan = _plan(rng, n, d)
        leaves = _leaf_arrays(rng, n, d)
        box: dict = {}
        label = f"program {trial} ({_describe(plan)})"

        def build(box=box, plan=plan, leaves=leaves):
            box.clear()
            box["values"] = _run_plan(Node, plan, leaves)
            return box["values"]["loss"].data

        # The forward value (exercise 1's ops) travels with toposort's verdict, so a broken
        # op is named, and an untouched stub fails every case of this check.
        yield Case(f"{label}: forward value of loss and toposort(loss)",
                   lambda build=build, box=box, plan=plan: (build(), _topo_verdict(
                       impl["toposort"](box["values"]["loss"]), box["values"], plan)),
                   hint=f"{ENGINE_HINTS['toposort']} ({ENGINE_HINTS['forward']})",
                   names=("forward value of loss", "toposort(loss)"))
        for leaf in ("A", "B", "c", "W"):
            yield Case(f"program {trial}: gradient of leaf {leaf}",
                       lambda box=box, leaf=leaf: _ran_backward(impl, box)[leaf].grad,
                       hint=ENGINE_HINTS["grad"])
        yield Case(f"program {trial}: constant K (requires_grad=False) keeps .grad None",
                   lambda box=box: _ran_backward(impl, box)["K"].grad is None,
                   hint=ENGINE_HINTS["constant"])

    d = int(rng.integers(2, 5))
    a0 = rng.standard_normal(d)

    def reused_add():
        a = Node(a0, requires_grad=True)
        b = a + a
        c = b + b
        impl["backward"](c.sum())
        return a.grad

    def intermediate_grad():
        a = Node(a0, requires_grad=True)
        b = a + a
        impl["backward"]((b * b).sum())
        return b.grad is None

    yield Case("reused node: b = a + a; c = b + b; gradient of a", reused_add,
               hint=ENGINE_HINTS["reuse"])
    yield Case("an intermediate node (b = a + a in sum(b * b)) keeps .grad None",
               intermediate_grad,
               hint="only a leaf gets .grad; keep the gradients of other nodes in the "
                    "dictionary while backward runs, not on the nodes")

    def reused_mul():
        a = Node(a0, requires_grad=True)
        b = a * a
        impl["backward"]((b * a + b).sum())
        return a.grad

    yield Case("reused node: b = a * a; loss = sum(b * a + b); gradient of a", reused_mul,
               hint=ENGINE_HINTS["reuse"])

    b0 = rng.standard_normal(d)

    def shared_gradient():
        # + hands one array to both of its inputs: adding into a node's entry in place would
        # add into the other input's entry too (b would get 2 instead of 1).
        a, b = Node(a0, requires_grad=True), Node(b0, requires_grad=True)
        impl["backward"](((a + b) + a).sum())
        return a.grad, b.grad

    yield Case("one gradient handed to two parents: ((a + b) + a).sum(); gradients of a and b",
               shared_gradient, names=("a.grad", "b.grad"),
               hint="add a gradient into a node's entry as a new array (total = total + g), "
                    "not in place (total += g): an op may hand the very same array to several "
                    "parents")

    x0, y0 = rng.standard_normal((2, d)), rng.standard_normal((2, d))

    def twice():
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(2):
            impl["backward"]((x * y).relu().sum())  # a new graph each time, same leaves
        return x.grad

    yield Case("two backward calls on two graphs add up in x.grad", twice,
               hint=ENGINE_HINTS["accumulate"])

    def twice_shared():
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(2):
            impl["backward"]((x + y).sum())  # add hands the same gradient to both inputs
        return x.grad, y.grad

    def own_copies():
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        impl["backward"]((x + y).sum())
        return not np.shares_memory(x.grad, y.grad)

    def nothing_requires_grad():
        k = Node(x0)
        loss = (k * 2.0).sum()
        try:
            impl["backward"](loss)
        except NotImplementedError:
            raise
        except Exception:  # noqa: BLE001 — raising, as PyTorch does, is as right as doing nothing
            pass
        return loss.grad is None, k.grad is None

    yield Case("backward(loss) where nothing requires grad: raises or leaves every .grad None",
               nothing_requires_grad, names=("loss.grad is None", "constant's .grad is None"),
               hint="a node that does not require grad never gets a .grad, the root included")

    yield Case("one backward through x + y: x.grad and y.grad are arrays of their own",
               own_copies,
               hint="the first time a leaf gets a gradient, store a copy (grad.copy()): + hands "
                    "the same array to both inputs")
    yield Case("two backward calls through x + y: x.grad and y.grad", twice_shared,
               hint="the first time a leaf gets a gradient, store a copy: an op may return the "
                    "same array for several inputs, and adding into it in place later changes "
                    "the other leaves' .grad too", names=("x.grad", "y.grad"))

    # Planted in every seed: a root with several elements (no .sum() at the end). backward
    # gives d(sum of root)/d(leaf), so the seed must be ones of root's shape; a scalar 1.0
    # hands the add node a gradient of shape (), which never reaches A as an (n, d) array.
    n, d = (int(v) for v in rng.choice(np.arange(2, 6), size=2, replace=False))
    a1, c1, w1 = rng.standard_normal((n, d)), rng.standard_normal(d), rng.standard_normal((d, d))

    def non_scalar_root():
        a, c, w = (Node(v, requires_grad=True) for v in (a1, c1, w1))
        impl["backward"]((a @ w) * c + a)
        return a.grad, c.grad, w.grad

    yield Case(f"a root with several elements: backward(root) for root = (A @ W) * c + A of "
               f"shape {(n, d)} (no .sum()): gradients of A, c and W", non_scalar_root,
               names=("A.grad", "c.grad", "W.grad"),
               hint="seed the root's gradient with np.ones_like(root.data), not the scalar 1.0: "
                    "backward(root) adds d(sum of root)/d(leaf), and a root with several "
                    "elements needs a gradient of its own shape")


# ------------------------------------------------------------------ exercise 3: no_grad

NO_GRAD_HINTS = {
    "inside": "while no_grad is active, new results must not require grad (the ops read the "
              "grad-mode flag; __enter__ must switch it off)",
    "after": "__exit__ must switch recording back on",
    "nested": "remember the previous state in __enter__ and restore that (not True) in __exit__",
    "error": "__exit__ runs even when the block raises: restore the previous state there",
    "backward": "a value computed under no_grad is a constant for backward: nothing flows "
                "through it to the leaves it came from",
}


@check("lab02.no_grad", reference=_reference_engine, forbid=ENGINE_FORBID,
       after=("lab02.engine",))
def no_grad_program(impl, rng):
    """no_grad switches recording off, restores it (nested, on errors), cuts backward paths."""
    Node, no_grad = impl["Node"], impl["no_grad"]

    n, d = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    a0, b0 = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    scale = float(np.round(rng.uniform(0.5, 3), 2))

    def leaves():
        return Node(a0, requires_grad=True), Node(b0, requires_grad=True)

    def inside():
        a, b = leaves()
        with no_grad():
            return bool((a * b).requires_grad)

    def after():
        a, b = leaves()
        with no_grad():
            pass
        return bool((a * b).requires_grad)

    def nested():
        a, b = leaves()
        with no_grad():
            with no_grad():
                pass
            return bool((a * b).requires_grad)

    def after_error():
        a, b = leaves()
        propagated = False
        try:
            with no_grad():
                raise KeyError("raised inside the with block")
        except KeyError:
            propagated = True
        return bool((a * b).requires_grad), propagated

    def made_before_entered():
        a, b = leaves()
        block = no_grad()            # made while recording is on ...
        with no_grad():
            with block:              # ... entered where it is off: its exit restores off
                pass
            return bool((a * b).requires_grad)

    def cut():
        a, b = leaves()
        with no_grad():
            frozen = a * scale
        impl["backward"]((frozen * b).sum())
        return (a.grad is None, b.grad)

    yield Case("a result computed inside no_grad() has requires_grad False", inside,
               hint=NO_GRAD_HINTS["inside"])
    yield Case("after the with block, results require grad again", after,
               hint=NO_GRAD_HINTS["after"])
    yield Case("inside nested no_grad() blocks, after the inner one ends", nested,
               hint=NO_GRAD_HINTS["nested"])
    yield Case("a no_grad() made while recording, entered inside another no_grad(): after "
               "its block", made_before_entered,
               hint="store the state in __enter__, when the block starts, not in __init__: the "
                    "object may be made in one mode and entered in another")
    yield Case("after an exception inside no_grad(), results require grad again", after_error,
               hint=NO_GRAD_HINTS["error"] + "; return False (or None) from __exit__, so the "
                    "exception goes on to the caller",
               names=("requires_grad after the block", "the exception reached the caller"))
    yield Case(f"frozen = a * {scale} under no_grad; backward(sum(frozen * b))", cut,
               hint=NO_GRAD_HINTS["backward"], names=("a.grad is None", "b.grad"))


# ------------------------------------------------------------------ exercise 4: zero the gradients

def _reference_train() -> Callable:
    def train(x, y, w1, w2, lr, steps):
        import torch
        losses = []
        for _ in range(steps):
            loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
            losses.append(loss.item())
            loss.backward()
            with torch.no_grad():
                w1 -= lr * w1.grad
                w2 -= lr * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
        return losses
    return train


def _train_problem(rng: np.random.Generator):
    import torch
    while True:
        n, d_in, h, d_out = (int(rng.integers(3, 9)), int(rng.integers(2, 10)),
                             int(rng.integers(2, 8)), int(rng.integers(1, 5)))
        x = rng.standard_normal((n, d_in))
        w1 = rng.standard_normal((d_in, h)) / np.sqrt(d_in)
        if 0.2 <= (x @ w1 > 0).mean() <= 0.8:  # a ReLU layer neither dead nor linear
            break
    y = rng.standard_normal((n, d_out))
    w2 = rng.standard_normal((h, d_out)) / np.sqrt(h)
    tensors = [torch.tensor(v, dtype=torch.float64) for v in (x, y, w1, w2)]
    return (n, d_in, h, d_out), tensors


TRAIN_HINTS = {
    "losses": "backward() adds into .grad: after each update, reset w1.grad and w2.grad "
              "(w.grad.zero_() or w.grad = None), otherwise every step uses the sum of all "
              "gradients so far",
    "floats": "losses[t] is a Python float (loss.item()), not a tensor: a tensor in the list "
              "keeps its device's memory, and its graph unless detached",
    "weights": "update in place under torch.no_grad() (w1 -= lr * w1.grad), so w1 stays the "
               "same leaf tensor, then clear both gradients",
}


@check("lab02.train", reference=_reference_train)
def train_program(impl, rng):
    """The fixed autograd training loop: trajectory and final weights against torch."""
    for trial in range(1, 3):
        (n, d_in, h, d_out), (x, y, w1, w2) = _train_problem(rng)
        w1.requires_grad_(True)
        w2.requires_grad_(True)
        steps = int(rng.integers(4, 11))
        lr = 0.05 / (n + d_in)
        label = f"trial {trial} (N={n}, D_in={d_in}, H={h}, D_out={d_out}, {steps} steps)"
        box: dict = {}

        def run(box=box, args=(x, y, w1, w2, lr, steps)):
            box["losses"] = impl(*args)
            return np.asarray([float(v) for v in box["losses"]], dtype=np.float64)

        yield Case(f"{label}: losses", run, hint=TRAIN_HINTS["losses"], rtol=1e-6, atol=1e-9)

        def kinds(box=box):
            if "losses" not in box:
                raise EarlierStepFailed("skipped: the call to train failed (see losses)")
            return ["float" if isinstance(v, float) else type(v).__name__
                    for v in box["losses"]]

        yield Case(f"{label}: each loss a Python float", kinds, hint=TRAIN_HINTS["floats"])

        def final(box=box, w1=w1, w2=w2):
            if "losses" not in box:
                raise EarlierStepFailed("skipped: the call to train failed (see losses)")
            return (w1.detach(), w2.detach())

        yield Case(f"{label}: w1 and w2 after training (updated in place)", final,
                   hint=TRAIN_HINTS["weights"], names=("w1", "w2"), rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------ exercise 5: next_functions

def _reference_graph_nodes() -> Callable:
    def graph_nodes(t):
        order, seen = [], set()

        def visit(node):
            if node is None or node in seen:
                return
            seen.add(node)
            for child, _ in node.next_functions:
                visit(child)
            order.append(node)

        visit(t.grad_fn)
        return order
    return graph_nodes


def _torch_program(rng: np.random.Generator):
    """A random torch expression: leaves that do and do not require grad, reused values."""
    import torch
    n, d = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    leaves = {
        "x": torch.tensor(rng.standard_normal((n, d))),                         # data: no grad
        "w": torch.tensor(rng.standard_normal((d, d)), requires_grad=True),
        "b": torch.tensor(rng.standard_normal(d), requires_grad=True),
        "v": torch.tensor(rng.standard_normal((n, d)), requires_grad=True),
    }
    ops = [str(o) for o in rng.choice(["mm", "add_b", "mul_v", "relu", "tanh", "sigmoid",
                                       "pow", "exp_scale", "sub_x", "reuse"],
                                      size=int(rng.integers(3, 7)))]

    def build():
        h = leaves["x"]
        for op in ops:
            if op == "mm":
                h = h.mm(leaves["w"])
            elif op == "add_b":
                h = h + leaves["b"]
            elif op == "mul_v":
                h = h * leaves["v"]
            elif op == "relu":
                h = h.clamp(min=0)
            elif op == "tanh":
                h = torch.tanh(h)
            elif op == "sigmoid":
                h = torch.sigmoid(h)
            elif op == "pow":
                h = h.pow(2)
            elif op == "exp_scale":
                h = (0.1 * h).exp()
            elif op == "sub_x":
                h = h - leaves["x"]
            elif op == "reuse":
                h = h * h + h
        return (h.mm(leaves["w"]) + leaves["b"]).pow(2).sum()

    return ops, build


GRAPH_HINTS = {
    "set": "visit every node once: keep a set of visited nodes (a reused tensor is reachable "
           "along two paths), and skip the None entries of next_functions (inputs that need "
           "no gradient)",
    "order": "depth-first from t.grad_fn, children in next_functions order, and append a node "
             "only after all of its children (post-order)",
    "root": "the node that produced t (t.grad_fn) comes last",
    "leaves": "the leaves are AccumulateGrad nodes; their .variable is the leaf tensor",
}


def _names(nodes: Any) -> list[str]:
    return [type(node).__name__ for node in nodes]


@check("lab02.graph_nodes", reference=_reference_graph_nodes)
def graph_nodes_program(impl, rng):
    """Walk a torch graph through next_functions: node set, post-order, root, leaves."""
    for trial in range(1, 4):
        ops, build = _torch_program(rng)
        if trial == 1:  # planted in every seed: a value that needs a gradient, used twice
            ops += ["add_b", "reuse"]
        box: dict = {}
        label = f"graph {trial} (x then {', '.join(ops)}, then (h @ w + b)^2 summed)"

        def call(box=box, build=build):
            t = build()
            box["t"], box["nodes"] = t, list(impl(t))
            return sorted(_names(box["nodes"]))

        def stored(box=box):
            if "nodes" not in box:
                raise EarlierStepFailed("skipped: graph_nodes failed (see the first case)")
            return box["nodes"]

        yield Case(f"{label}: the nodes (as a sorted list of type names)", call,
                   hint=GRAPH_HINTS["set"])
        yield Case(f"graph {trial}: the order of the nodes", lambda s=stored: _names(s()),
                   hint=GRAPH_HINTS["order"])
        yield Case(f"graph {trial}: the last node is t.grad_fn",
                   lambda s=stored, box=box: bool(len(s()) > 0 and s()[-1] is box["t"].grad_fn),
                   hint=GRAPH_HINTS["root"])
        # Sorted: the order case above already judges the order, so an order mistake costs
        # one case, not two.
        yield Case(f"graph {trial}: shapes of the leaf tensors (sorted)",
                   lambda s=stored: sorted(tuple(node.variable.shape) for node in s()
                                           if type(node).__name__ == "AccumulateGrad"),
                   hint=GRAPH_HINTS["leaves"])


# ------------------------------------------------------------------ property tables (issue 27)
# Each promise, parameter and edge of the exercises' texts, and the case that tests it (see
# coursekit.grading.properties).

_OWN_ENGINE = (promise("no coursekit in the answer", forbidden="coursekit"),
               promise("no torch autograd in the answer", forbidden="torch.autograd.grad"))

PROPERTIES = {
    "lab02.node_ops": (
        parameter("grad", "unbroadcast: gradient of shape"),
        parameter("shape", "unbroadcast: gradient of shape"),
        promise("unbroadcast sums the leading axes broadcasting added",
                "unbroadcast: gradient of shape ("),
        promise("unbroadcast sums, keeping them, the axes where shape has size 1",
                "to shape (1, 1)"),
        promise("+ hands the gradient to both inputs, unbroadcast to each one's shape",
                "add: ("),
        promise("* gives each input the gradient times the other factor", "mul: ("),
        promise("@ : grad @ b.T and a.T @ grad", "matmul: ("),
        promise("relu passes the gradient where the input was positive", "relu of shape"),
        edge("an input of exactly 0: gradient 0, as torch.relu", "with two exact zeros"),
        promise("sum spreads the scalar gradient to the input's shape", "sum of shape"),
        promise("one gradient per parent, in the order of parents", ": gradient for b"),
        promise("Node(data) defaults to a constant, and results of constants are constants",
                "Node(data) without requires_grad is a constant"),
        *_OWN_ENGINE,
        edge("a bias of shape (D,) broadcast against (N, D)", ",) add ("),
        edge("a number added: the gradient summed to shape ()", "add (): forward"),
        edge("both inputs stretched: (N, 1) * (1, D)", "1) mul (1,"),
        edge("unbroadcast to shape ()", "to shape ()"),
    ),
    "lab02.engine": (
        parameter("root", "forward value of loss and toposort(loss)"),
        promise("toposort lists every reachable node once, after its parents, root last",
                ": toposort(loss)"),
        promise("backward seeds ones and adds gradients into the leaves' .grad",
                "gradient of leaf A"),
        promise("every leaf that requires grad gets its gradient", "gradient of leaf W"),
        promise("parents that do not require grad are skipped: a constant keeps .grad None",
                "constant K (requires_grad=False) keeps .grad None"),
        promise("a node used twice gets the sum of its gradients",
                "reused node: b = a * a; loss = sum(b * a + b)"),
        promise("two backward calls add up in .grad", "two backward calls on two graphs add up"),
        promise("gradients are added, never into an array another node holds",
                "one gradient handed to two parents"),
        promise("a leaf's first gradient is stored as a copy",
                "two backward calls through x + y"),
        promise("leaves never share a gradient array", "x.grad and y.grad are arrays of their own"),
        promise("only leaves get .grad", "an intermediate node"),
        *_OWN_ENGINE,
        edge("the lecture's b = a + a; c = b + b gives a a gradient of 4",
             "reused node: b = a + a; c = b + b"),
        edge("a root with several elements: seeded with np.ones_like(root.data)",
             "a root with several elements: backward(root)"),
    ),
    "lab02.no_grad": (
        parameter("root", "backward(sum(frozen * b))"),
        promise("results inside the block do not require grad",
                "a result computed inside no_grad() has requires_grad False"),
        promise("recording is back on after the block", "after the with block"),
        promise("__exit__ restores the stored state, so nested blocks work",
                "inside nested no_grad() blocks"),
        promise("the state is stored in __enter__", "a no_grad() made while recording"),
        promise("the state is restored when the block raises",
                "after an exception inside no_grad(), results require grad again: "
                "requires_grad after the block"),
        promise("the exception is not swallowed", ": the exception reached the caller"),
        promise("a value computed under no_grad is a constant for backward", ": a.grad is None"),
        *_OWN_ENGINE,
        edge("nested no_grad blocks", "inside nested no_grad() blocks"),
        edge("an exception inside the block", "after an exception inside no_grad()"),
    ),
    "lab02.train": (
        parameter("x", ": losses"),
        parameter("y", ": losses"),
        parameter("w1", "(updated in place): w1"),
        parameter("w2", "(updated in place): w2"),
        parameter("lr", "w1 and w2 after training"),
        parameter("steps", ": losses"),
        promise("the gradients are reset after each update", ": losses"),
        promise("w1 and w2 updated in place under torch.no_grad()",
                "w1 and w2 after training (updated in place)"),
        promise("losses[t] is the loss before update t", ": losses"),
        promise("each loss a Python float", "each loss a Python float"),
    ),
    "lab02.graph_nodes": (
        parameter("t", "the nodes (as a sorted list of type names)"),
        promise("every node reached from t.grad_fn through next_functions, AccumulateGrad "
                "included", "the nodes (as a sorted list of type names)"),
        promise("depth-first post-order, children in next_functions order",
                "the order of the nodes"),
        promise("t.grad_fn comes last", "the last node is t.grad_fn"),
        promise("the leaves' AccumulateGrad nodes hold the leaf tensors",
                "shapes of the leaf tensors"),
        edge("a tensor used twice: its node listed once", "add_b, reuse, then"),
        edge("inputs that need no gradient: None entries skipped", "graph 1 (x then"),
    ),
}
