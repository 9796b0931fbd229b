"""Checks for lab03_functions: custom autograd Functions in torch and in coursekit, and gradcheck.

The references are torch itself (values and gradients of the Functions are compared with
torch's own ops and with torch autograd) and coursekit's built-in ``Sigmoid``; the student's
gradcheck is judged against ``torch.autograd.gradcheck`` on Functions whose backward is known
to be right or deliberately wrong.
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import numpy as np

from ..capabilities import DELEGATED_BACKWARD
from ..program import Case, check
from ..properties import edge, parameter, promise
from ..warm import torch_meta as warm_up  # noqa: F401 — its checks use the meta device

# Inputs far outside the range where exp is finite (float32 overflows beyond |x| ~ 88.7,
# float64 beyond ~ 709.8), plus 0 and moderate values.
EXTREMES = (-1000.0, -750.0, -100.0, -89.0, -30.0, -1.0, 0.0, 1.0, 30.0, 89.0, 100.0, 750.0, 1000.0)

DEVICE_HINT = ("create every new tensor from the input (torch.ones_like(x), x.new_zeros(...), "
               "device=x.device); a tensor made on a fixed device breaks the Function on a GPU")
NODE_HINT = ("apply the whole op through YourFunction.apply(x): the output's grad_fn must be "
             "your Function's node, with a single edge to the input's node")
DELEGATE = DELEGATED_BACKWARD


def _torch():
    import torch
    return torch


def _dtype(name: str):
    return getattr(_torch(), name)


def _tensor(values: np.ndarray, dtype: str, requires_grad: bool = True):
    torch = _torch()
    return torch.tensor(values, dtype=_dtype(dtype), requires_grad=requires_grad)


def _meta(shape: tuple[int, ...], dtype: str, requires_grad: bool = True):
    torch = _torch()
    return torch.empty(shape, dtype=_dtype(dtype), device="meta", requires_grad=requires_grad)


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    ndim = int(rng.integers(1, 4))
    return tuple(int(n) for n in rng.integers(1, 6, size=ndim))


# ---------------------------------------------------------------- references

@functools.lru_cache(maxsize=None)
def _reference_functions() -> dict[str, Any]:
    """Correct torch Functions, built once on first use (torch is imported lazily)."""
    torch = _torch()

    class Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.sigmoid(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_y):
            (y,) = ctx.saved_tensors
            return grad_y * y * (1 - y)

    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.relu(x)

        @staticmethod
        def backward(ctx, grad_y):
            (x,) = ctx.saved_tensors
            return grad_y * (x > 0)

    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))

        @staticmethod
        def backward(ctx, grad_y):
            (x,) = ctx.saved_tensors
            return grad_y * torch.sigmoid(x)

    return {"Sigmoid": Sigmoid, "MyReLU": MyReLU, "Softplus": Softplus}


def _reference(name: str) -> Callable[[], Any]:
    return lambda: _reference_functions()[name]


def _reference_ck_sigmoid():
    from coursekit.autograd.ops.activation import Sigmoid
    return Sigmoid


def _reference_gradcheck():
    def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
        torch = _torch()
        return torch.autograd.gradcheck(fn, tuple(inputs), eps=eps, atol=atol, rtol=rtol,
                                        raise_exception=False)
    return gradcheck


# ---------------------------------------------------------------- shared cases for torch Functions

def _values(impl, x: np.ndarray, dtype: str) -> Callable[[], Any]:
    return lambda: impl.apply(_tensor(x, dtype)).detach()


def _dtype_and_shape(impl, x: np.ndarray, dtype: str) -> Callable[[], Any]:
    def thunk():
        y = impl.apply(_tensor(x, dtype))
        return str(y.dtype), tuple(int(n) for n in y.shape)
    return thunk


def _grad(impl, x: np.ndarray, g: np.ndarray, dtype: str) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        xt = _tensor(x, dtype)
        y = impl.apply(xt)
        (grad_x,) = torch.autograd.grad(y, xt, _tensor(g, dtype, requires_grad=False))
        return grad_x
    return thunk


def _all_finite_grad(impl, x: np.ndarray, dtype: str) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        xt = _tensor(x, dtype)
        (grad_x,) = torch.autograd.grad(impl.apply(xt).sum(), xt)
        return bool(torch.isfinite(grad_x).all())
    return thunk


def _torch_gradcheck(impl, x: np.ndarray) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        return torch.autograd.gradcheck(impl.apply, (_tensor(x, "float64"),), raise_exception=False)
    return thunk


def _one_node(impl, x: np.ndarray) -> Callable[[], Any]:
    """(is the output's node this Function's, how many edges, does the edge lead to h's node)."""
    def thunk():
        xt = _tensor(x, "float64")
        h = xt * 2  # a non-leaf input, so its node is a MulBackward0
        y = impl.apply(h)
        node = y.grad_fn
        if node is None:
            return "no grad_fn: the output is not part of the graph"
        edges = [edge for edge in node.next_functions if edge[0] is not None]
        mine = type(node).__name__ == f"{impl.__name__}Backward"
        return mine, len(edges), bool(edges) and edges[0][0] is h.grad_fn
    return thunk


def _meta_forward_backward(impl, shape: tuple[int, ...], dtype: str) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        x = _meta(shape, dtype)
        y = impl.apply(x)
        (grad_x,) = torch.autograd.grad(y, x, torch.empty_like(y))
        return y.detach(), grad_x
    return thunk


def _function_cases(impl, rng: np.random.Generator, name: str, draw: Callable[[tuple], np.ndarray],
                    hints: dict[str, str], weights: dict[str, float] | None = None):
    """The cases every elementwise torch Function gets: values, dtype, gradients, gradcheck, node, meta.

    ``weights`` gives each group's case weight ("values": the value and dtype cases, "grads":
    the gradient and gradcheck cases, "node": the graph-node and meta cases); 1 by default.
    """
    w = {"values": 1.0, "grads": 1.0, "node": 1.0, **(weights or {})}
    for trial, dtype in enumerate(("float32", "float64", "float64"), start=1):
        shape = _shape(rng)
        x, g = draw(shape), rng.standard_normal(shape)
        where = f"trial {trial}, shape {shape}, {dtype}"
        yield Case(f"{name}(x) values, {where}", _values(impl, x, dtype), hint=hints["forward"],
                   weight=w["values"])
        yield Case(f"gradient of x for a random grad_output, {where}", _grad(impl, x, g, dtype),
                   hint=hints["backward"], weight=w["grads"])
    shape = _shape(rng)
    yield Case(f"output keeps the input's dtype and shape ({shape}, float32)",
               _dtype_and_shape(impl, draw(shape), "float32"),
               names=("dtype", "shape"), hint="compute in the input's dtype; do not convert",
               weight=w["values"])
    yield Case("torch.autograd.gradcheck passes (float64)", _torch_gradcheck(impl, draw(_shape(rng))),
               hint=hints["backward"], weight=w["grads"])
    yield Case(f"{name}(h) is a single graph node with one edge, to h's node", _one_node(impl, draw((4,))),
               names=("node is your Function's", "number of edges", "edge leads to h's node"),
               hint=NODE_HINT, weight=w["node"])
    shape = _shape(rng)
    for dtype in ("float32", "float64"):
        yield Case(f"meta tensors in, meta tensors out (forward and backward, {dtype})",
                   _meta_forward_backward(impl, shape, dtype), names=("output", "gradient"),
                   hint=DEVICE_HINT, weight=w["node"])


# ---------------------------------------------------------------- lab03.sigmoid

SIGMOID_HINTS = {
    "forward": "y = 1 / (1 + exp(-x)); for large negative x, exp(-x) overflows to inf and "
               "1 / inf = 0 is still right, or use exp(-|x|) to avoid the overflow",
    "backward": "d sigmoid / dx = y * (1 - y) with the saved output y, times grad_output",
    "extreme": "compute the gradient from the saved output, grad_output * y * (1 - y): it stays "
               "in [0, 0.25] where exp(-x) overflows, whereas a formula in exp(-x) gives inf / inf",
    "saved": "save the output with ctx.save_for_backward(y) (not the input x): the backward "
             "needs nothing else",
    "tail": "sigmoid(-100) is about 3.7e-44, not 0: never clamp the input; for x < 0 compute "
            "exp(x) / (1 + exp(x)), which keeps the tiny value",
}


# Case weights in points (the check is worth 3): values 7 cases x 1/14 = 0.5 (the tail
# included); gradients on ordinary inputs 4 x 1/8 = 0.5; extreme gradients 5 x 1/10 = 0.5 (the
# tail included); saved output 1; one node and meta 3 x 1/6 = 0.5.
SIGMOID_WEIGHTS = {"values": 1 / 14, "grads": 1 / 8, "extreme": 1 / 10, "saved": 1.0, "node": 1 / 6}


def _saved_tensors(impl, x: np.ndarray) -> Callable[[], Any]:
    def thunk():
        y = impl.apply(_tensor(x, "float64"))
        return tuple(t.detach() for t in y.grad_fn.saved_tensors)
    return thunk


@check("lab03.sigmoid", reference=_reference("Sigmoid"),
       forbid=("torch.sigmoid", ".sigmoid", ".sigmoid_", "torch.special", "torch.nn") + DELEGATE)
def sigmoid_program(impl, rng):
    """Sigmoid as a torch.autograd.Function: values, gradients, extreme inputs, one node, saved output.

    Weighted by concept, as the lab states (of 3 points): values 0.5, gradients on ordinary
    inputs 0.5, gradients at extreme inputs 0.5, the backward from the saved output y 1,
    one node and meta devices 0.5. Saving x instead of y is the lecture's central mistake:
    it costs a third of the points even when the gradient comes out right.
    """
    yield from _function_cases(impl, rng, "sigmoid", lambda shape: 3 * rng.standard_normal(shape),
                               SIGMOID_HINTS, SIGMOID_WEIGHTS)
    extremes = np.array(EXTREMES)
    g = rng.uniform(0.5, 2.0, size=extremes.shape)
    for dtype in ("float32", "float64"):
        yield Case(f"sigmoid values at x = ±30 … ±1000, {dtype}", _values(impl, extremes, dtype),
                   hint=SIGMOID_HINTS["forward"], weight=SIGMOID_WEIGHTS["values"])
        yield Case(f"gradient is finite at x = ±30 … ±1000 (no NaN), {dtype}",
                   _all_finite_grad(impl, extremes, dtype), hint=SIGMOID_HINTS["extreme"],
                   weight=SIGMOID_WEIGHTS["extreme"])
        yield Case(f"gradient values at x = ±30 … ±1000, {dtype}", _grad(impl, extremes, g, dtype),
                   hint=SIGMOID_HINTS["extreme"], weight=SIGMOID_WEIGHTS["extreme"])
    # The tail, relative to its size: sigma(-100) is 3.7e-44, which an absolute tolerance would
    # accept as 0 or as sigma(-30) (a clamped input).
    tail = np.array([-20.0, -30.0, -50.0, -100.0, -700.0])
    yield Case("sigmoid keeps tiny values for very negative x (relative error below 1e-6, float64)",
               _values(impl, tail, "float64"), rtol=1e-6, atol=0.0, hint=SIGMOID_HINTS["tail"],
               weight=SIGMOID_WEIGHTS["values"])
    yield Case("gradient keeps tiny values for very negative x (relative error below 1e-6, "
               "float64)", _grad(impl, tail, np.ones_like(tail), "float64"), rtol=1e-6, atol=0.0,
               hint=SIGMOID_HINTS["tail"], weight=SIGMOID_WEIGHTS["extreme"])
    yield Case("forward saves the output y for backward", _saved_tensors(impl, rng.standard_normal(5)),
               hint=SIGMOID_HINTS["saved"], weight=SIGMOID_WEIGHTS["saved"])


# ---------------------------------------------------------------- lab03.my_relu

RELU_HINTS = {
    "forward": "y = max(x, 0) elementwise, e.g. x.clamp(min=0)",
    "backward": "the gradient passes where x > 0 and is 0 where x < 0: grad_output * (x > 0), "
                "with the mask taken from the saved input",
    "reused": "return a new tensor from backward (grad_output * mask, or a clone you then edit); "
              "editing grad_output in place changes the gradient other nodes receive",
}


def _away_from_zero(rng: np.random.Generator) -> Callable[[tuple], np.ndarray]:
    # ReLU has a kink at 0; keep gradchecks and comparisons away from it.
    return lambda shape: rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.1, 3.0, size=shape)


def _relu_reused(impl, x: np.ndarray, g: np.ndarray) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        xt = _tensor(x, "float64")
        out = 3 * impl.apply(xt) + xt  # x reaches the output along two paths
        (grad_x,) = torch.autograd.grad(out, xt, _tensor(g, "float64", requires_grad=False))
        return grad_x
    return thunk


def _grad_output_untouched(impl, x: np.ndarray, g: np.ndarray) -> Callable[[], Any]:
    def thunk():
        torch = _torch()
        xt = _tensor(x, "float64")
        grad_output = _tensor(g, "float64", requires_grad=False)
        torch.autograd.grad(impl.apply(xt), xt, grad_output)
        return grad_output
    return thunk


@check("lab03.my_relu", reference=_reference("MyReLU"), forbid=DELEGATE)
def my_relu_program(impl, rng):
    """MyReLU as a torch.autograd.Function: values, masked gradients, one node, devices."""
    draw = _away_from_zero(rng)
    yield from _function_cases(impl, rng, "relu", draw, RELU_HINTS)
    shape = _shape(rng)
    x, g = draw(shape), rng.standard_normal(shape)
    x.flat[0] = -abs(x.flat[0])  # planted in every seed: a negative input, whose gradient is masked
    yield Case(f"gradient of 3 * relu(x) + x (x used twice), shape {shape}", _relu_reused(impl, x, g),
               hint=RELU_HINTS["reused"])
    yield Case("backward leaves the caller's grad_output unchanged", _grad_output_untouched(impl, x, g),
               rtol=0, atol=0, hint=RELU_HINTS["reused"])
    yield Case("forward keeps what backward needs through ctx.save_for_backward",
               _saves_tensors(impl, x),
               hint="save tensors with ctx.save_for_backward(...) (x, or the mask x > 0) and read "
                    "them back from ctx.saved_tensors: an attribute such as ctx.mask escapes "
                    "autograd's checks and saved-tensor hooks")


def _saves_tensors(impl, x: np.ndarray) -> Callable[[], Any]:
    """Whether forward saved a tensor through ctx.save_for_backward: autograd hands every
    such tensor to the saved-tensor hooks, and no tensor kept as a ctx attribute."""
    def thunk():
        torch = _torch()
        packed = []

        def pack(tensor):
            packed.append(tensor.shape)
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            impl.apply(_tensor(x, "float64"))
        return len(packed) > 0
    return thunk


# ---------------------------------------------------------------- lab03.softplus

SOFTPLUS_HINTS = {
    "forward": "softplus(x) = log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)); the second form "
               "never overflows",
    "backward": "d softplus / dx = sigmoid(x) (compute it without overflow), times grad_output",
    "extreme": "for x = 1000, log(1 + exp(x)) is inf in floating point but the answer is 1000: "
               "rewrite it as max(x, 0) + log1p(exp(-|x|))",
    "tiny": "log(1 + t) loses the digits of a tiny t (for x << 0, t = exp(-|x|)); "
            "torch.log1p(t) keeps them: write torch.log1p(torch.exp(-x.abs()))",
    "grad_tiny": "for x << 0 the gradient sigmoid(x) is tiny (sigmoid(-700) is about 1e-304) "
                 "and must keep its relative accuracy: a formula that takes it as a difference "
                 "from 1 (1 - exp(-y) from the output, 0.5 * (1 + tanh(x / 2))) rounds it to 0 "
                 "there; compute e / (1 + e) with e = exp(-|x|)",
    "grad_extreme": "the gradient sigmoid(x) must stay finite for every x and equal 0.5 at x = 0; "
                    "differentiating the stable formula piece by piece gets x = 0 wrong",
}


@check("lab03.softplus", reference=_reference("Softplus"),
       forbid=("torch.nn", ".softplus", "torch.logaddexp", ".logaddexp", "torch.special") + DELEGATE)
def softplus_program(impl, rng):
    """Softplus with a hand-written backward: values, gradients, stability at extreme inputs."""
    yield from _function_cases(impl, rng, "softplus", lambda shape: 5 * rng.standard_normal(shape),
                               SOFTPLUS_HINTS)
    extremes = np.array(EXTREMES)
    g = rng.uniform(0.5, 2.0, size=extremes.shape)
    for dtype in ("float32", "float64"):
        yield Case(f"softplus values at x = ±30 … ±1000 and 0, {dtype}", _values(impl, extremes, dtype),
                   hint=SOFTPLUS_HINTS["extreme"])
        yield Case(f"gradient values at x = ±30 … ±1000 and 0, {dtype}", _grad(impl, extremes, g, dtype),
                   hint=SOFTPLUS_HINTS["grad_extreme"])
    tiny = np.array([-20.0, -30.0, -50.0, -100.0, -700.0])
    yield Case("softplus keeps tiny values for very negative x (relative error below 1e-6, float64)",
               _values(impl, tiny, "float64"), rtol=1e-6, atol=0.0, hint=SOFTPLUS_HINTS["tiny"])
    # sigmoid(-700) is 1e-304: an absolute tolerance would take 0 for it, and so would a gradient
    # written 1 - exp(-y) from the saved output, which cancels to 0 there.
    yield Case("gradient keeps tiny values for very negative x (relative error below 1e-6, "
               "float64)", _grad(impl, tiny, np.ones_like(tiny), "float64"), rtol=1e-6, atol=0.0,
               hint=SOFTPLUS_HINTS["grad_tiny"])
    shape = _shape(rng)
    x, g = 5 * rng.standard_normal(shape), rng.standard_normal(shape)
    yield Case("backward leaves the caller's grad_output unchanged",
               _grad_output_untouched(impl, x, g), rtol=0, atol=0, hint=RELU_HINTS["reused"])


# ---------------------------------------------------------------- lab03.ck_sigmoid (coursekit API)

CK_HINTS = {
    "forward": "forward receives a NumPy array: return 1 / (1 + np.exp(-x)), or the overflow-free "
               "form with np.exp(-np.abs(x)), as an array of x's dtype",
    "backward": "backward receives grad_output as a NumPy array: return grad_output * y * (1 - y) "
                "with y from ctx.saved_tensors",
    "saved": "save the output with ctx.save_for_backward(y); read it back as (y,) = ctx.saved_tensors",
    "node": "use the Function through CkSigmoid.apply(x): the output's grad_fn is then your "
            "Function's node, with one edge to the input's node",
    "kept": "the saved array is the output y itself: backward must not write into it (y *= 1 - y "
            "changes the forward's result); compute grad_output * y * (1 - y) as a new array",
    "grad_output": "backward must not write into grad_output (grad_output *= ... edits the "
                   "caller's gradient array): return grad_output * y * (1 - y), a new array",
}


def _ck_tensor(values: np.ndarray, dtype: str, requires_grad: bool = True):
    from coursekit.autograd import Tensor
    return Tensor(np.array(values, dtype=dtype), requires_grad=requires_grad)


def _ck_values(impl, x: np.ndarray, dtype: str) -> Callable[[], Any]:
    def thunk():
        y = impl.apply(_ck_tensor(x, dtype))
        return y.data
    return thunk


def _ck_dtype_and_shape(impl, x: np.ndarray, dtype: str) -> Callable[[], Any]:
    def thunk():
        y = impl.apply(_ck_tensor(x, dtype))
        return str(y.dtype), tuple(int(n) for n in y.shape)
    return thunk


def _ck_grad(impl, x: np.ndarray, g: np.ndarray, dtype: str) -> Callable[[], Any]:
    def thunk():
        from coursekit.autograd import Tensor
        xt = _ck_tensor(x, dtype)
        impl.apply(xt).backward(Tensor(np.array(g, dtype=dtype)))
        return xt.grad.data if xt.grad is not None else "x.grad is None after backward"
    return thunk


def _ck_gradcheck(impl, x: np.ndarray) -> Callable[[], Any]:
    def thunk():
        from coursekit.autograd import gradcheck
        return gradcheck(impl.apply, (_ck_tensor(x, "float64"),), raise_exception=False)
    return thunk


def _ck_one_node(impl, x: np.ndarray) -> Callable[[], Any]:
    def thunk():
        xt = _ck_tensor(x, "float64")
        h = xt * 2
        y = impl.apply(h)
        node = y.grad_fn
        if node is None:
            return "no grad_fn: the output is not part of the graph"
        edges = [edge for edge in node.next_functions if edge[0] is not None]
        return getattr(node, "fn", None) is impl, len(edges), bool(edges) and edges[0][0] is h.grad_fn
    return thunk


def _ck_saved(impl, x: np.ndarray) -> Callable[[], Any]:
    def thunk():
        y = impl.apply(_ck_tensor(x, "float64"))
        return tuple(np.asarray(t.data if hasattr(t, "data") and not isinstance(t, np.ndarray) else t)
                     for t in y.grad_fn.saved_tensors)
    return thunk


def _ck_output_kept(impl, x: np.ndarray, g: np.ndarray) -> Callable[[], Any]:
    def thunk():
        from coursekit.autograd import Tensor
        y = impl.apply(_ck_tensor(x, "float64"))
        y.backward(Tensor(np.array(g, dtype="float64")))
        return y.data
    return thunk


def _ck_grad_output_kept(impl, x: np.ndarray, g: np.ndarray) -> Callable[[], Any]:
    """The caller's gradient after y.backward(grad_output): coursekit's engine hands its array
    to backward as it is, so a backward that edits grad_output in place edits the caller's."""
    def thunk():
        from coursekit.autograd import Tensor
        grad_output = Tensor(np.array(g, dtype="float64"))
        impl.apply(_ck_tensor(x, "float64")).backward(grad_output)
        return grad_output.data
    return thunk


def _ck_chain(impl, x: np.ndarray, w: np.ndarray) -> Callable[[], Any]:
    """The Function inside a bigger coursekit graph: loss = sum(sigmoid(x @ w) ** 2)."""
    def thunk():
        xt, wt = _ck_tensor(x, "float64"), _ck_tensor(w, "float64")
        (impl.apply(xt @ wt) ** 2).sum().backward()
        return xt.grad.data, wt.grad.data
    return thunk


@check("lab03.ck_sigmoid", reference=_reference_ck_sigmoid,
       forbid=("torch", "coursekit.autograd.ops", "coursekit.sigmoid", "coursekit.nn", ".sigmoid",
               "scipy", ".backward"))
def ck_sigmoid_program(impl, rng):
    """Sigmoid on coursekit's Function API, against coursekit's own Sigmoid."""
    for trial, dtype in enumerate(("float32", "float64", "float64"), start=1):
        shape = _shape(rng)
        x, g = 3 * rng.standard_normal(shape), rng.standard_normal(shape)
        where = f"trial {trial}, shape {shape}, {dtype}"
        yield Case(f"sigmoid(x) values, {where}", _ck_values(impl, x, dtype), hint=CK_HINTS["forward"])
        yield Case(f"x.grad after y.backward(grad_output), {where}", _ck_grad(impl, x, g, dtype),
                   hint=CK_HINTS["backward"])
    shape = _shape(rng)
    yield Case(f"output keeps the input's dtype and shape ({shape}, float32)",
               _ck_dtype_and_shape(impl, rng.standard_normal(shape), "float32"), names=("dtype", "shape"),
               hint="compute in x's dtype: np.exp of a float32 array stays float32")
    extremes = np.array(EXTREMES)
    g = rng.uniform(0.5, 2.0, size=extremes.shape)
    yield Case("sigmoid values at x = ±30 … ±1000 (float64)", _ck_values(impl, extremes, "float64"),
               hint=CK_HINTS["forward"])
    tiny = np.array([-550.0, -600.0, -700.0])
    yield Case("sigmoid keeps tiny values at x = -550, -600, -700 (relative error below 1e-6, "
               "float64)", _ck_values(impl, tiny, "float64"), rtol=1e-6, atol=0.0,
               hint="sigma(-700) is about 1e-304, still a float64: do not clip x, and compute "
                    "the negative side as e / (1 + e) with e = np.exp(-np.abs(x))")
    yield Case("x.grad at x = ±30 … ±1000 (float64)", _ck_grad(impl, extremes, g, "float64"),
               hint=SIGMOID_HINTS["extreme"])
    yield Case("coursekit.autograd.gradcheck passes", _ck_gradcheck(impl, rng.standard_normal(_shape(rng))),
               hint=CK_HINTS["backward"])
    yield Case("sigmoid(h) is a single graph node with one edge, to h's node",
               _ck_one_node(impl, rng.standard_normal(4)),
               names=("node is your Function's", "number of edges", "edge leads to h's node"),
               hint=CK_HINTS["node"])
    yield Case("forward saves the output y for backward", _ck_saved(impl, rng.standard_normal(5)),
               hint=CK_HINTS["saved"])
    shape = _shape(rng)
    yield Case(f"y keeps its values after y.backward(grad_output) ({shape}, float64)",
               _ck_output_kept(impl, rng.standard_normal(shape), rng.standard_normal(shape)),
               hint=CK_HINTS["kept"])
    shape = _shape(rng)
    yield Case(f"backward leaves the caller's grad_output unchanged ({shape}, float64)",
               _ck_grad_output_kept(impl, rng.standard_normal(shape), rng.standard_normal(shape)),
               rtol=0, atol=0, hint=CK_HINTS["grad_output"])
    n, d, k = (int(v) for v in rng.integers(2, 6, size=3))
    yield Case(f"inside a graph: grads of sum(sigmoid(x @ w) ** 2), x {(n, d)}, w {(d, k)}",
               _ck_chain(impl, rng.standard_normal((n, d)), rng.standard_normal((d, k))),
               names=("x.grad", "w.grad"), hint=CK_HINTS["backward"])


# ---------------------------------------------------------------- lab03.my_gradcheck

@functools.lru_cache(maxsize=None)
def _gradcheck_families() -> dict[str, tuple[Any, Any]]:
    """family -> (Function with the right backward, Function with a broken one).

    Plain torch.autograd.Functions on float64 tensors; in each pair the two forwards are the
    same and only the backward differs. What is broken is described in ``_FAMILY_TEXT``.
    """
    torch = _torch()

    def function(name: str, forward: Callable, backward: Callable, save: Callable = lambda *a: a):
        def fwd(ctx, *inputs):
            ctx.save_for_backward(*save(*inputs))
            return forward(*inputs)

        def bwd(ctx, grad):
            return backward(grad, *ctx.saved_tensors)
        return type(name, (torch.autograd.Function,), {"forward": staticmethod(fwd),
                                                        "backward": staticmethod(bwd)})

    def one_element_off(g):
        g = g.clone()
        g.view(-1)[0] += 0.1
        return g

    mul = function("Mul", lambda a, b: a * b, lambda g, a, b: (g * b, g * a))

    def by_constant(name: str, first: float):
        # a * b with b a constant by design (a mask, a scale): backward returns None for b, as
        # torch's own Functions do for inputs that need no gradient. Right as long as b does
        # not require grad, which is how the check calls it.
        return function(name, lambda a, b: a * b, lambda g, a, b: (first * g * b, None))

    cube = function("Cube", lambda x: x ** 3, lambda g, x: 3 * x ** 2 * g)
    return {
        "mul": (mul, function("MulSwapped", lambda a, b: a * b, lambda g, a, b: (g * a, g * b))),
        "mul_second": (mul, function("MulSecondWrong", lambda a, b: a * b,
                                     lambda g, a, b: (g * b, 2 * g * a))),
        "mul_first_only": (mul, function("MulFirstWrong", lambda a, b: a * b,
                                         lambda g, a, b: (2 * g * b, g * a))),
        # Used with a second input that does not require grad: both backwards return None there.
        "mul_frozen": (by_constant("MulByConstant", 1.0), by_constant("MulByConstantFirstWrong", 2.0)),
        "ignores_grad_output": (mul, function("MulIgnoresGrad", lambda a, b: a * b,
                                              lambda g, a, b: (b.clone(), a.clone()))),
        "cube": (cube, function("CubeWrongPower", lambda x: x ** 3, lambda g, x: 3 * x * g)),
        "one_element": (cube, function("CubeOneElementOff", lambda x: x ** 3,
                                       lambda g, x: one_element_off(3 * x ** 2 * g))),
        "transposed": (function("Square", lambda x: x ** 2, lambda g, x: 2 * x * g),
                       function("SquareTransposed", lambda x: x ** 2, lambda g, x: (2 * x * g).T)),
        "matmul": (function("MatMul", lambda a, b: a @ b, lambda g, a, b: (g @ b.T, a.T @ g)),
                   function("MatMulNoTranspose", lambda a, b: a @ b, lambda g, a, b: (g @ b, a @ g))),
        "broadcast": (function("AddRow", lambda x, b: x + b, lambda g, x, b: (g, g.sum(0))),
                      function("AddRowMean", lambda x, b: x + b, lambda g, x, b: (g, g.mean(0)))),
        "sigmoid": (function("Sigmoid", torch.sigmoid, lambda g, y: g * y * (1 - y),
                             save=lambda x: (torch.sigmoid(x),)),
                    function("SigmoidFromInput", torch.sigmoid, lambda g, x: g * x * (1 - x))),
        "small_values": (function("Square", lambda x: x ** 2, lambda g, x: 2 * x * g),
                         function("SquareTooLarge", lambda x: x ** 2, lambda g, x: 3 * x * g)),
        # 10% too large everywhere: within rtol=0.2, outside the default tolerances
        "ten_percent": (cube, function("CubeTenPercentOff", lambda x: x ** 3,
                                       lambda g, x: 1.1 * 3 * x ** 2 * g)),
        # f = 500 x^2, inputs with zeros: f' = 0 and f'' = 1000 there, so central differences
        # are exact and one-sided ones are off by eps f''/2 = 5e-4, more than atol.
        "steep": (function("Steep", lambda x: 500 * x ** 2, lambda g, x: 1000 * x * g),
                  function("SteepOffAtZero", lambda x: 500 * x ** 2,
                           lambda g, x: (1000 * x + 1e-3) * g)),
        # 24% too large: outside rtol=0.2 of the numerical value, inside 0.2 of the analytical
        "quarter_off": (cube, function("CubeQuarterOff", lambda x: x ** 3,
                                       lambda g, x: 1.24 * 3 * x ** 2 * g)),
    }


def _gradcheck_inputs(family: str, rng: np.random.Generator) -> list[np.ndarray]:
    if family.startswith("mul") or family == "ignores_grad_output":
        shape = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))
        return [rng.standard_normal(shape), rng.standard_normal(shape)]
    if family == "small_values":  # planted in every seed: values where rtol * |n| is tiny
        return [1e-3 * rng.standard_normal((int(rng.integers(2, 4)), int(rng.integers(2, 4))))]
    if family == "steep":  # planted in every seed: half of the elements exactly 0
        x = rng.standard_normal((int(rng.integers(2, 4)), int(rng.integers(2, 4))))
        x.flat[rng.choice(x.size, size=x.size // 2, replace=False)] = 0.0
        return [x]
    if family in ("cube", "one_element", "sigmoid"):
        return [rng.standard_normal((int(rng.integers(2, 4)), int(rng.integers(2, 4))))]
    if family == "matmul":  # square, so that the broken backward still has the right shapes
        n = int(rng.integers(2, 5))
        return [rng.standard_normal((n, n)), rng.standard_normal((n, n))]
    if family == "transposed":
        n = int(rng.integers(2, 5))
        return [rng.standard_normal((n, n))]
    n, d = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    return [rng.standard_normal((n, d)), rng.standard_normal(d)]


def _verdict(call: Callable[[], Any]) -> Any:
    """True / False from the student's gradcheck; raising (other than the stub's) counts as False."""
    try:
        result = call()
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 — rejecting by raising is allowed
        return False
    if type(result) is bool:
        return result
    if isinstance(result, np.bool_):
        return bool(result)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(result, torch.Tensor) and result.numel() == 1 \
            and result.dtype == torch.bool:
        return bool(result)
    return f"returned {type(result).__name__}, expected True or False"


def _pair(impl, family: str, arrays: list[np.ndarray], frozen: tuple[bool, ...]) -> Callable[[], Any]:
    """Run the broken Function, then the correct one, on the same input tensors."""
    def thunk():
        correct, broken = _gradcheck_families()[family]
        inputs = [_tensor(a, "float64", requires_grad=not f) for a, f in zip(arrays, frozen)]
        on_broken = _verdict(lambda: impl(broken.apply, inputs, eps=1e-6, atol=1e-5, rtol=1e-3))
        on_correct = _verdict(lambda: impl(correct.apply, inputs, eps=1e-6, atol=1e-5, rtol=1e-3))
        return on_broken, on_correct
    return thunk


def _tolerances_in_place(impl, arrays: list[np.ndarray]) -> Callable[[], Any]:
    """The verdicts on a backward 10% off with ``atol=1e-9, rtol=0.2`` (inside: |g| >= 3, so
    0.1 |g| <= 0.2 |g|) and with the defaults (outside), and on one 24% off with ``atol=1e-9,
    rtol=0.2`` (outside: 0.24 |n| > 0.2 |n|). With atol and rtol swapped, the first call
    allows 0.2 in absolute terms only, and the 10% (0.3 or more) is outside; with rtol times
    the analytical value, the third allows 0.2 * 1.24 |n| = 0.248 |n|, and the 24% is inside."""
    def thunk():
        families = _gradcheck_families()
        inputs = [_tensor(a, "float64", requires_grad=True) for a in arrays]
        ten, quarter = families["ten_percent"][1].apply, families["quarter_off"][1].apply
        return (_verdict(lambda: impl(ten, inputs, eps=1e-6, atol=1e-9, rtol=0.2)),
                _verdict(lambda: impl(ten, inputs)),
                _verdict(lambda: impl(quarter, inputs, eps=1e-6, atol=1e-9, rtol=0.2)))
    return thunk


def _pair_defaults(impl, family: str, arrays: list[np.ndarray]) -> Callable[[], Any]:
    """As :func:`_pair`, calling ``impl(fn, inputs)`` with its default eps, atol and rtol."""
    def thunk():
        correct, broken = _gradcheck_families()[family]
        inputs = [_tensor(a, "float64") for a in arrays]
        return _verdict(lambda: impl(broken.apply, inputs)), \
            _verdict(lambda: impl(correct.apply, inputs))
    return thunk


def _inputs_untouched(impl, arrays: list[np.ndarray]) -> Callable[[], Any]:
    def thunk():
        correct = _gradcheck_families()["mul"][0]
        inputs = [_tensor(a, "float64") for a in arrays]
        impl(correct.apply, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
        return tuple(t.detach() for t in inputs)
    return thunk


def _no_leftover_grad(impl, arrays: list[np.ndarray]) -> Callable[[], Any]:
    def thunk():
        correct = _gradcheck_families()["mul"][0]
        inputs = [_tensor(a, "float64") for a in arrays]
        impl(correct.apply, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
        return all(t.grad is None for t in inputs)
    return thunk



@check("lab03.my_gradcheck", reference=_reference_gradcheck,
       forbid=("torch.autograd.gradcheck", "torch.autograd.gradgradcheck", "torch.autograd.functional",
               "torch.func", "coursekit.autograd.gradcheck", "coursekit.autograd", "torch.testing"))
def my_gradcheck_program(impl, rng):
    """The student's finite-difference gradcheck accepts right backwards and rejects wrong ones."""
    for family in _FAMILY_ORDER:
        arrays = _gradcheck_inputs(family, rng)
        shapes = ", ".join(str(a.shape) for a in arrays)
        what, hint = _FAMILY_TEXT[family]
        yield Case(f"{family} (inputs {shapes}): rejects {what}, accepts the right backward",
                   _pair(impl, family, arrays, (False,) * len(arrays)),
                   names=("verdict on the broken backward", "verdict on the right backward"), hint=hint)
    # An input that does not require grad must be skipped, not differentiated: the second
    # input is a constant of the Function (its backward returns None for it), so a gradcheck
    # that checks it anyway (on copies that all require grad, say) compares its finite
    # differences with zeros and rejects the right backward.
    arrays = _gradcheck_inputs("mul_first_only", rng)
    yield Case("mul by a constant second input that does not require grad (backward returns "
               "None for it): rejects a wrong first gradient, accepts the right one",
               _pair(impl, "mul_frozen", arrays, (False, True)),
               names=("verdict on the broken backward", "verdict on the right backward"),
               hint="skip the inputs whose requires_grad is False, as the caller set it: a "
                    "Function may treat them as constants (its backward returns None for "
                    "them), so do not check them, and do not check copies that all require grad")
    # The defaults, called: eps=1e-6 (x^3 has a central-difference error of eps^2), atol=1e-5
    # and rtol=1e-3 (an element off by 0.1 is rejected).
    for family in ("cube", "one_element"):
        arrays = _gradcheck_inputs(family, rng)
        yield Case(f"defaults: my_gradcheck(fn, inputs) on {family} (inputs "
                   f"{', '.join(str(a.shape) for a in arrays)}): rejects "
                   f"{_FAMILY_TEXT[family][0]}, accepts the right backward",
                   _pair_defaults(impl, family, arrays),
                   names=("verdict on the broken backward", "verdict on the right backward"),
                   hint="keep the defaults of the signature: eps=1e-6, atol=1e-5, rtol=1e-3")
    # atol and rtol each in its place: |x| in [1, 2], so every gradient 3x^2 is 3 or more.
    shape = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))
    arrays = [rng.choice([-1.0, 1.0], size=shape) * rng.uniform(1.0, 2.0, size=shape)]
    yield Case(f"a backward 10% off (inputs {shape}): accepted with atol=1e-9, rtol=0.2, "
               f"rejected with the defaults; one 24% off rejected with atol=1e-9, rtol=0.2",
               _tolerances_in_place(impl, arrays),
               names=("10% off, verdict with atol=1e-9, rtol=0.2",
                      "10% off, verdict with the defaults",
                      "24% off, verdict with atol=1e-9, rtol=0.2"),
               hint="an element agrees when |analytical - numerical| <= atol + rtol * "
                    "|numerical|: rtol times the numerical value, not the analytical one, and "
                    "the atol and rtol given (torch.allclose's third parameter is rtol, its "
                    "fourth atol: pass them by name)")
    arrays = _gradcheck_inputs("mul", rng)
    yield Case("inputs hold their original values afterwards", _inputs_untouched(impl, arrays),
               rtol=0, atol=1e-12,
               hint="after x[i] += eps and x[i] -= 2 * eps, add eps back (do it under torch.no_grad() "
                    "or on x.data), or perturb a copy")
    # The same inputs again: the text promises no .grad left on them either.
    yield Case("inputs have no leftover .grad afterwards", _no_leftover_grad(impl, arrays),
               hint="take the analytical gradient with torch.autograd.grad, which fills no .grad; "
                    "after out.backward(...), set each input's .grad back to None")


_FAMILY_TEXT = {
    "mul": ("the two gradients swapped", "compare every input's gradient, element by element, "
                                         "with finite differences"),
    "mul_second": ("only the second input's gradient wrong (doubled)",
                   "check every input that requires grad, not only the first"),
    "ignores_grad_output": ("a backward that ignores grad_output",
                            "backpropagate a random grad_output (or one one-hot vector per output "
                            "element), not ones: with ones, a backward that ignores grad_output looks right"),
    "cube": ("d(x^3)/dx computed as 3x",
             "numerical gradient: (f(x + eps) - f(x - eps)) / (2 eps) for each element of x"),
    "one_element": ("a gradient off by 0.1 in its first element only",
                    "compare every element: |analytical - numerical| <= atol + rtol * |numerical|"),
    "transposed": ("a transposed gradient (same sum, elements in the wrong places)",
                   "compare element by element, not sums or norms"),
    "matmul": ("matmul gradients without the transposes",
               "perturb each input element separately and watch every output element"),
    "broadcast": ("the broadcast gradient averaged instead of summed",
                  "the output can have more elements than an input: sum the contributions of every "
                  "output element"),
    "sigmoid": ("sigmoid backward computed from x instead of y",
                "compare with finite differences of the function itself"),
    "small_values": ("a gradient 1.5 times too large where every value is about 1e-3",
                     "the tolerance grows with the value: atol + rtol * |numerical|"),
    "steep": ("a gradient 1e-3 off where f = 500 x^2 has x = 0 (f' = 0, f'' = 1000)",
              "central differences, (f(x + eps) - f(x - eps)) / (2 eps): one-sided ones are off "
              "by eps * f''/2, here 5e-4 at x = 0, and reject the right backward"),
}
_FAMILY_ORDER = tuple(_FAMILY_TEXT)


# ---------------------------------------------------------------- property tables (issue 27)
# Each promise and edge of the exercises' texts, and the case that tests it (see
# coursekit.grading.properties). The Functions are classes: no parameter rows.

_ONE_NODE_AND_META = (
    promise("one graph node, with one edge to the input's node", "is a single graph node"),
    promise("new tensors made on the input's device", "meta tensors in, meta tensors out"),
)

PROPERTIES = {
    "lab03.sigmoid": (
        promise("forward returns sigma(x) elementwise", "sigmoid(x) values, trial"),
        promise("the output in x's dtype and shape", "output keeps the input's dtype and shape"),
        promise("forward saves the output y for backward", "forward saves the output y"),
        promise("backward returns grad_output * y * (1 - y)",
                "gradient of x for a random grad_output"),
        promise("the gradient passes torch's gradcheck", "torch.autograd.gradcheck passes"),
        *_ONE_NODE_AND_META,
        promise("no torch.sigmoid", forbidden="torch.sigmoid"),
        promise("no .sigmoid()", forbidden=".sigmoid"),
        promise("no torch.special", forbidden="torch.special"),
        promise("no torch.nn", forbidden="torch.nn"),
        edge("|x| up to 1000: right values", "sigmoid values at x = ±30 … ±1000"),
        edge("|x| up to 1000: finite gradients", "gradient is finite at x = ±30 … ±1000"),
        edge("very negative x keeps its tiny value", "sigmoid keeps tiny values for very negative x"),
        edge("float32 inputs", "float32"),
    ),
    "lab03.my_relu": (
        promise("forward returns max(x, 0)", "relu(x) values, trial"),
        promise("backward passes grad_output where x > 0, 0 where x < 0",
                "gradient of x for a random grad_output"),
        promise("the output in x's dtype and shape", "output keeps the input's dtype and shape"),
        promise("the gradient passes torch's gradcheck", "torch.autograd.gradcheck passes"),
        promise("backward returns a new tensor: grad_output left unchanged",
                "backward leaves the caller's grad_output unchanged"),
        promise("tensors saved through ctx.save_for_backward",
                "forward keeps what backward needs through ctx.save_for_backward"),
        *_ONE_NODE_AND_META,
        promise("the backward computes its gradient itself", forbidden="torch.autograd.grad"),
        edge("x reaching the output along two paths", "gradient of 3 * relu(x) + x"),
    ),
    "lab03.softplus": (
        promise("forward returns log(1 + exp(x))", "softplus(x) values, trial"),
        promise("backward returns grad_output * sigmoid(x)", "gradient of x for a random grad_output"),
        promise("the output in x's dtype and shape", "output keeps the input's dtype and shape"),
        promise("the gradient passes torch's gradcheck", "torch.autograd.gradcheck passes"),
        promise("no inf for any finite input", "softplus values at x = ±30 … ±1000 and 0"),
        promise("log1p: no precision lost for very negative x",
                "softplus keeps tiny values for very negative x"),
        promise("the gradient keeps relative accuracy 1e-6 for very negative x",
                "gradient keeps tiny values for very negative x"),
        promise("backward returns a new tensor: grad_output left unchanged",
                "backward leaves the caller's grad_output unchanged"),
        *_ONE_NODE_AND_META,
        promise("no torch.nn.functional.softplus", forbidden=".softplus"),
        promise("no torch.logaddexp", forbidden="torch.logaddexp"),
        promise("no torch.special", forbidden="torch.special"),
        edge("the gradient at x = 0 is 0.5", "gradient values at x = ±30 … ±1000 and 0"),
        edge("|x| up to 1000 in float32 and float64", "softplus values at x = ±30 … ±1000 and 0, "
             "float32"),
    ),
    "lab03.ck_sigmoid": (
        promise("forward returns sigma(x) on NumPy arrays", "sigmoid(x) values, trial"),
        promise("the output in x's dtype", "output keeps the input's dtype and shape"),
        promise("backward returns grad_output * y * (1 - y)", "x.grad after y.backward(grad_output)"),
        promise("forward saves the output", "forward saves the output y for backward"),
        promise("one graph node with one edge to the input's", "is a single graph node"),
        promise("the gradient passes coursekit's gradcheck", "coursekit.autograd.gradcheck passes"),
        promise("works inside a bigger graph", "inside a graph: grads of sum(sigmoid(x @ w) ** 2)"),
        promise("NumPy only: no torch", forbidden="torch"),
        promise("no ck.sigmoid", forbidden="coursekit.sigmoid"),
        promise("no .backward() in the answer", forbidden=".backward"),
        edge("|x| up to 1000", "sigmoid values at x = ±30 … ±1000"),
        promise("backward returns a new array: grad_output left unchanged",
                "backward leaves the caller's grad_output unchanged ("),
        edge("tiny values for very negative x kept to 1e-6", "sigmoid keeps tiny values"),
    ),
    "lab03.my_gradcheck": (
        parameter("fn", "mul (inputs"),
        parameter("inputs", "mul (inputs"),
        parameter("eps", "cube (inputs"),
        parameter("atol", "one_element (inputs"),
        parameter("rtol", "small_values (inputs"),
        promise("True for a right backward", ": verdict on the right backward"),
        promise("False for a wrong one", ": verdict on the broken backward"),
        promise("every input that requires grad is compared", "mul_second (inputs"),
        promise("inputs without requires_grad are skipped",
                "mul by a constant second input that does not require grad"),
        promise("element by element", "one_element (inputs"),
        promise("central finite differences", "cube (inputs"),
        promise("central, not one-sided: exact where f' = 0 and f'' is large", "steep (inputs"),
        promise("the tolerance is atol + rtol * |numerical|", "small_values (inputs"),
        promise("the atol and rtol given, each in its place",
                "rejected with the defaults; one 24% off rejected with atol=1e-9, rtol=0.2: "
                "10% off, verdict with atol=1e-9, rtol=0.2"),
        promise("rtol times the numerical value, not the analytical one",
                "24% off, verdict with atol=1e-9, rtol=0.2"),
        promise("defaults eps=1e-6, atol=1e-5, rtol=1e-3", "defaults: my_gradcheck(fn, inputs)"),
        promise("the inputs keep their values", "inputs hold their original values afterwards"),
        promise("no .grad left on the inputs", "inputs have no leftover .grad afterwards"),
        promise("no torch.autograd.gradcheck", forbidden="torch.autograd.gradcheck"),
        promise("no torch.autograd.functional", forbidden="torch.autograd.functional"),
        promise("no coursekit gradcheck", forbidden="coursekit.autograd.gradcheck"),
        edge("fn's output of another shape than its inputs", "matmul (inputs"),
        edge("an input broadcast in fn", "broadcast (inputs"),
    ),
}
