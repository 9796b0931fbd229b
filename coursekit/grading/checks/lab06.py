"""Checks for lab06_static_graphs: where a trace goes wrong, a branch-free rewrite, the lecture's
scripted model, ``torch.export`` with a free batch dimension, a graph that runs in a fresh
process without the code that built it, ONNX run by onnxruntime, a checkpoint that resumes
exactly, and how to time ``torch.compile`` against eager (on a pretend device, see
``NOTE [timing torch.compile without a real clock]``).

References: :func:`coursekit.graphs.trace_disagreements`; ``torch.jit.script``,
``torch.export`` and ``torch.onnx`` themselves. The models and functions the programs hand to
the student's code live in :mod:`coursekit.graphs.models` (not under ``coursekit.grading``:
exporting a model calls its ``forward`` from the student's code).
"""
from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..program import Case, EarlierStepFailed, check, handed
from ..properties import edge, parameter, promise

# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def _reference_trace_disagreements():
    from coursekit.graphs import trace_disagreements

    # A function of the check's own, so that an answer that hands in the reference is seen as
    # the grader's code (a reference is reported whoever calls it), not only as the library's.
    def trace_disagreements_reference(fn, example, inputs, rtol=1e-5, atol=1e-7):
        return trace_disagreements(fn, example, inputs, rtol=rtol, atol=atol)

    return trace_disagreements_reference


def _reference_grow_or_shrink():
    import torch

    def grow_or_shrink_traceable(x):
        return torch.where(x.sum() > 0, x * 2.0, x / 2.0 - 1.0)

    return grow_or_shrink_traceable


def _reference_w2_model():
    import torch

    def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
        w2 = w2a if prev_loss < 5.0 else w2b
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        return (y_pred - y).pow(2).sum()

    return torch.jit.script(w2_model)


def _batch_dim():
    import torch

    return {"x": {0: torch.export.Dim("batch")}}


def _reference_export():
    import torch

    def export_for_inference(model, example):
        model.eval()
        return torch.export.export(model, (example,), dynamic_shapes=_batch_dim())

    return export_for_inference


def _reference_deploy():
    import torch

    def save_for_deployment(model, example, path):
        model.eval()
        torch.export.save(torch.export.export(model, (example,), dynamic_shapes=_batch_dim()),
                          path)

    return save_for_deployment


def _reference_onnx():
    import torch

    def export_onnx(model, example, path):
        # The older exporter: deprecated, but it gives the same graph in a fraction of the
        # time, and the grader runs this reference for every submission.
        model.eval()
        torch.onnx.export(model, (example,), path, input_names=["x"], dynamo=False,
                          dynamic_axes={"x": {0: "batch"}})

    return export_onnx


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _tensor(array: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(array))


def _with_sum_sign(rng, shape: tuple[int, ...], sign: int) -> np.ndarray:
    """A float64 array of ``shape`` whose sum has the given sign (far from zero)."""
    values = rng.standard_normal(shape)
    return values - values.mean() + sign * rng.uniform(0.2, 1.0)


def _with_exact_sum(rng, shape: tuple[int, ...], total: float) -> np.ndarray:
    """A float64 array of ``shape`` whose sum is exactly ``total`` (a multiple of 0.5): small
    integers, and a last element that makes up the rest, all exact in binary."""
    values = rng.integers(-4, 5, size=shape).astype(np.float64)
    flat = values.reshape(-1)
    flat[-1] = total - flat[:-1].sum()
    return values


def _kind(value: Any) -> str:
    """The kind of object an answer returned, in words the student can read."""
    import torch

    if isinstance(value, torch.jit.ScriptFunction):
        return "a TorchScript function (torch.jit.ScriptFunction)"
    if isinstance(value, torch.export.ExportedProgram):
        return "a torch.export.ExportedProgram"
    return f"a {type(value).__module__}.{type(value).__qualname__}"


def _batch_sizes(rng, example_batch: int) -> list[int]:
    """Batch sizes a deployment sees: one sample, the example's, and a larger one."""
    return [1, example_batch, int(rng.integers(example_batch + 2, 40))]


def _kept(box: dict, key: str, step: str) -> Any:
    """What an earlier case of the same program stored in ``box`` (a graph, a program)."""
    if key not in box:
        raise EarlierStepFailed(f"skipped because an earlier step failed: {step}")
    return box[key]


_EVAL_HINT = ("call model.eval() before exporting: in training mode BatchNorm normalizes with "
              "the batch's own statistics and dropout is on, and the graph records that")
_BATCH_HINT = ("make the batch dimension dynamic: dynamic_shapes={'x': {0: "
               "torch.export.Dim('batch')}}; without it the graph only accepts the example's "
               "batch size")

# ---------------------------------------------------------------------------------------------
# lab06.trace_disagreements
# ---------------------------------------------------------------------------------------------

# (function, what the example looks like, inputs drawn around it)
_TRACE_CASES = {
    "grow_or_shrink": "an example with a positive sum",
    "keep_first_half": "an example of 4 rows",
    "scale_by_length": "an example of 4 rows",
    "double_each_row": "an example of 4 rows",
    "via_numpy": "one example",
    "repeat_by_max": "an example whose maximum is 2.5",
    "smooth_gate": "an example of 4 rows",
}


def _trace_inputs(rng, name: str) -> tuple[np.ndarray, list[np.ndarray]]:
    cols = int(rng.integers(2, 6))
    if name == "grow_or_shrink":
        example = _with_sum_sign(rng, (4, cols), +1)
        inputs = [_with_sum_sign(rng, (int(rng.integers(1, 7)), cols), int(s))
                  for s in rng.permutation([1, 1, -1, -1, -1])]
    elif name == "repeat_by_max":   # the loop runs int(max) times: 2 for the example
        example = rng.uniform(-1, 2.5, (4, cols))
        example[0, 0] = 2.5
        inputs = []
        for top in rng.permutation([2.5, 0.8, 3.7, 5.0]):
            x = rng.uniform(-1, top, (4, cols))
            x[0, 0] = top
            inputs.append(x)
    else:
        example = rng.standard_normal((4, cols))
        rows = [4, 4, int(rng.integers(5, 9)), int(rng.integers(1, 4))]
        inputs = [rng.standard_normal((r, cols)) for r in rng.permutation(rows)]
        if name == "via_numpy":
            inputs.insert(1, example.copy())  # the example itself: the frozen result is right
    return example, inputs


@check("lab06.trace_disagreements", reference=_reference_trace_disagreements,
       forbid=("coursekit.graphs.tracing",))
def trace_disagreements_program(impl: Any, rng):
    """trace_disagreements: which inputs a trace of each function gets wrong."""
    from coursekit.graphs.models import FUNCTIONS

    for name, description in _TRACE_CASES.items():
        example, inputs = _trace_inputs(rng, name)
        yield Case(f"{name}: traced on {description}, tried on {len(inputs)} inputs",
                   lambda fn=FUNCTIONS[name], e=example, i=inputs: impl(
                       fn, _tensor(e), [_tensor(x) for x in i]),
                   hint="trace once, on the example; then compare traced(x) with fn(x) for "
                        "every input: a traced call that raises, a different shape or "
                        "values that are not allclose all count as a disagreement (True)")
    yield from _tolerance_cases(impl, rng)
    yield _broadcast_case(impl, rng)


def _broadcast_case(impl: Any, rng) -> Case:
    """via_numpy traced on one row keeps that row's square, shape (1, n). Inputs of k rows
    whose squares all equal it give eager results of shape (k, n) with the same values in
    every row: torch.allclose broadcasts (1, n) against (k, n) and finds them close, but the
    shapes differ, which is a disagreement. One input of one such row agrees."""
    from coursekit.graphs.models import FUNCTIONS

    cols = int(rng.integers(2, 6))
    example = rng.standard_normal((1, cols))
    inputs = [example * rng.choice([-1.0, 1.0], (int(k), cols))
              for k in rng.permutation([1, int(rng.integers(2, 4)), int(rng.integers(4, 8))])]
    return Case("via_numpy: traced on an example of 1 row, tried on inputs of 1 or more rows "
                "that all square to the example's",
                lambda e=example, i=inputs: impl(FUNCTIONS["via_numpy"], _tensor(e),
                                                  [_tensor(x) for x in i]),
                hint="compare the shapes before the values: torch.allclose broadcasts, so a "
                     "trace that returns 1 row where fn returns k equal rows passes it; "
                     "different shapes are a disagreement (True) whatever the values")


def _near(rng, example: np.ndarray, spread: float, relative: bool) -> np.ndarray:
    """An input that differs from ``example`` by at most ``spread`` (relatively or not), and
    by exactly that at [0, 0], so that the default tolerances never cover it."""
    step = rng.uniform(-spread, spread, example.shape)
    step[0, 0] = spread
    return example * (1 + step) if relative else example + step


def _tolerance_cases(impl: Any, rng):
    """rtol and atol, each given alone: via_numpy's trace keeps the example's square, so an
    input near the example agrees only within the tolerance given. One input of another
    shape disagrees whatever the tolerance."""
    from coursekit.graphs.models import FUNCTIONS

    cols = int(rng.integers(2, 6))
    large = rng.uniform(100, 200, (3, cols)) * rng.choice([-1.0, 1.0], (3, cols))
    small = rng.uniform(-1, 1, (3, cols))
    small[0, 0] = 0.0   # no relative tolerance covers a change at an exact zero
    given = (("a relative 1e-4 of an example of magnitude 100 to 200", large, True, 1e-4,
              {"rtol": 1e-3, "atol": 0.0}),
             ("1e-3 of an example in [-1, 1] that holds a zero", small, False, 1e-3,
              {"rtol": 0.0, "atol": 1e-2}))
    for description, example, relative, spread, tolerance in given:
        inputs = [_near(rng, example, spread, relative) for _ in range(2)]
        inputs.append(rng.standard_normal((int(rng.integers(4, 7)), cols)))
        yield Case(f"via_numpy: inputs within {description}, "
                   f"{', '.join(f'{k}={v:g}' for k, v in tolerance.items())} given",
                   lambda e=example, i=inputs, t=tolerance: impl(
                       FUNCTIONS["via_numpy"], _tensor(e), [_tensor(x) for x in i], **t),
                   hint="pass rtol and atol on to torch.allclose(traced_result, eager_result, "
                        "rtol=rtol, atol=atol): each input's verdict depends on them")
    yield _argument_order_case(impl, rng)


# The relative tolerance of the argument-order case: torch.allclose(a, b) asks
# |a - b| <= atol + rtol * |b|, so with atol=0 it matters whether b is the traced or the eager
# result once the two differ by between rtol / (1 + rtol) and rtol / (1 - rtol) of b.
_ORDER_RTOL = 0.25


def _squares_scaled(rng, example: np.ndarray, low: float, high: float, sign: int) -> np.ndarray:
    """An input whose square is ``example``'s square times (1 + sign * d): d in [0, low) for
    every element but [0, 0], whose d lies well inside (low, high)."""
    change = rng.uniform(0.0, low, example.shape)
    margin = 0.2 * (high - low)
    change[0, 0] = rng.uniform(low + margin, high - margin)
    return example * np.sqrt(1.0 + sign * change)


def _argument_order_case(impl: Any, rng) -> Case:
    """via_numpy's trace returns the example's square: one input's square lies above it by
    more than rtol of the trace's value but within rtol of its own, the other lies below it by
    less than rtol of the trace's value but more than rtol of its own. The documented order,
    torch.allclose(traced_result, eager_result), scales the tolerance with the eager result:
    the first agrees, the second disagrees; the arguments swapped give both verdicts the other
    way round."""
    from coursekit.graphs.models import FUNCTIONS

    r = _ORDER_RTOL
    cols = int(rng.integers(2, 6))
    example = rng.uniform(1.0, 3.0, (3, cols)) * rng.choice([-1.0, 1.0], (3, cols))
    above = _squares_scaled(rng, example, r, r / (1 - r), +1)     # eager above the trace
    below = _squares_scaled(rng, example, r / (1 + r), r, -1)     # eager below the trace
    inputs = [above, below] if rng.integers(2) else [below, above]
    return Case(f"via_numpy: one input whose square is above the example's by more than "
                f"rtol of the example's, one below by less, rtol={r:g}, atol=0 given",
                lambda e=example, i=inputs: impl(FUNCTIONS["via_numpy"], _tensor(e),
                                                  [_tensor(x) for x in i], rtol=r, atol=0.0),
                hint="torch.allclose is not symmetric: allclose(a, b) allows atol + rtol * |b|, "
                     "scaled by its second argument. Call it as torch.allclose(traced_result, "
                     "eager_result, rtol=rtol, atol=atol), the eager result second, not with "
                     "the arguments swapped")


# ---------------------------------------------------------------------------------------------
# lab06.grow_or_shrink
# ---------------------------------------------------------------------------------------------


@check("lab06.grow_or_shrink", reference=_reference_grow_or_shrink)
def grow_or_shrink_program(impl: Any, rng):
    """grow_or_shrink_traceable: its trace follows the data on both sides of the branch."""
    import torch

    for sign, side in ((+1, "positive"), (-1, "negative")):
        cols = int(rng.integers(2, 6))
        example = _with_sum_sign(rng, (3, cols), sign)
        inputs = [(s, _with_sum_sign(rng, (int(rng.integers(1, 6)), cols), s))
                  for s in (int(v) for v in rng.permutation([1, 1, -1, -1]))]
        box: dict[str, Any] = {}

        def trace(example=example, box=box):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                box["traced"] = torch.jit.trace(impl, _tensor(example))
            return "traced"

        yield Case(f"torch.jit.trace on an example with a {side} sum", trace,
                   hint="the function must run on a float64 tensor and return a tensor",
                   weight=0.5)
        for k, (s, x) in enumerate(inputs):
            yield Case(f"traced on a {side} sum, called on input {k} ({x.shape}, sum "
                       f"{'positive' if s > 0 else 'negative'})",
                       lambda x=x, box=box: _kept(box, "traced", "torch.jit.trace")(_tensor(x)),
                       hint="no Python `if` on a tensor's value: compute both results and pick "
                            "with torch.where(x.sum() > 0, ..., ...), so the choice is an "
                            "operation the trace records")
    x = _with_sum_sign(rng, (int(rng.integers(2, 6)), 3), -1)
    # Sums at and near the branch's edge (drawn last: the cases above keep their inputs): a
    # test of >= 0, > 1 or > -1 agrees with > 0 on every sum far from zero.
    edges = [_with_exact_sum(rng, (2, 3), total) for total in (0.0, 0.5, -0.5)]
    yield Case(f"called eagerly on a negative sum ({x.shape}), and on sums of exactly 0, 0.5 "
               f"and -0.5", lambda: tuple(impl(_tensor(v)) for v in [x, *edges]),
               names=("negative sum", "sum 0", "sum 0.5", "sum -0.5"),
               hint="keep the function's values: x * 2 when x.sum() > 0 (strictly: a sum of "
                    "exactly 0 takes the other branch), x / 2 - 1 otherwise")


# ---------------------------------------------------------------------------------------------
# lab06.w2_model
# ---------------------------------------------------------------------------------------------


def _takes_tensor_prev_loss(impl) -> bool:
    """Whether a TorchScript function declares its sixth argument (prev_loss) a Tensor: the
    type TorchScript gives an argument without annotation, and every argument of a trace."""
    try:
        arguments = impl.schema.arguments
    except AttributeError:
        return False
    return len(arguments) >= 6 and str(arguments[5].type).startswith("Tensor")


def _loss_and_grads(impl, x, y, w1, w2a, w2b, prev_loss, *, as_declared=True):
    """Loss and gradients in float64; ``as_declared``: prev_loss as a 0-d tensor where the
    function declares a Tensor, so that its values are checked apart from that mistake."""
    import torch

    if as_declared and _takes_tensor_prev_loss(impl):
        prev_loss = torch.tensor(prev_loss, dtype=torch.float64)
    leaves = [torch.tensor(w, requires_grad=True) for w in (w1, w2a, w2b)]
    loss = impl(torch.tensor(x), torch.tensor(y), *leaves, prev_loss)
    loss.backward()
    grads = [torch.zeros_like(w) if w.grad is None else w.grad for w in leaves]
    return (loss.detach(), *grads)


_FLOAT_HINT = ("TorchScript takes an argument without annotation to be a Tensor, and a "
               "scripted function refuses the Python float the training loop passes "
               "(prev_loss = loss.item()): write prev_loss: float in the signature")


@check("lab06.w2_model", reference=_reference_w2_model)
def w2_model_program(impl: Any, rng):
    """w2_model: scripted, both branches in the graph, a float prev_loss, loss and gradients."""
    probe = [rng.standard_normal(s) for s in ((2, 3), (2, 2), (3, 4), (4, 2), (4, 2))]
    # Each case calls the function first: an unwritten one says so, whatever the case looks at.
    yield Case("w2_model is compiled to TorchScript",
               lambda: (_loss_and_grads(impl, *probe, 1.0), _kind(impl))[1],
               hint="decorate the function with @torch.jit.script (or assign "
                    "w2_model = torch.jit.script(...)): a plain Python function is not a graph",
               weight=0.5)
    yield Case("its graph holds both branches (a prim::If node)",
               lambda: (_loss_and_grads(impl, *probe, 1.0), "prim::If" in str(impl.graph))[1],
               hint="script, do not trace: torch.jit.trace runs one branch and records only "
                    "that one; torch.jit.script compiles the source, `if` included", weight=0.5)
    yield Case("it takes prev_loss as a Python float, as the training loop passes it",
               lambda: (_loss_and_grads(impl, *probe, 7.5, as_declared=False), True)[1],
               hint=_FLOAT_HINT, weight=0.5)
    n, d_in, h, d_out = (int(v) for v in rng.integers(2, 7, size=4))
    x, y = rng.standard_normal((n, d_in)), rng.standard_normal((n, d_out))
    w1, w2a, w2b = (rng.standard_normal(s) for s in ((d_in, h), (h, d_out), (h, d_out)))
    # Just below 5.0, just at it, and above: a threshold of 4.0 (or any below 5.0) shows.
    for prev_loss in (float(rng.uniform(4.0, 4.9)), 5.0, float(rng.uniform(5.1, 50))):
        branch = "w2a" if prev_loss < 5.0 else "w2b"
        yield Case(f"prev_loss={prev_loss:.3g} (uses {branch}): loss and gradients",
                   lambda p=prev_loss: _loss_and_grads(impl, x, y, w1, w2a, w2b, p),
                   names=("loss", "grad w1", "grad w2a", "grad w2b"), rtol=1e-9, atol=1e-12,
                   weight=1 / 6,
                   hint="use w2a when prev_loss < 5.0, else w2b (5.0 itself takes w2b); the "
                        "loss is (y_pred - y).pow(2).sum() with "
                        "y_pred = x.mm(w1).clamp(min=0).mm(w2)")


# ---------------------------------------------------------------------------------------------
# lab06.export_for_inference
# ---------------------------------------------------------------------------------------------


def _batch_is_dynamic(program) -> bool:
    """Whether the exported graph's first user input has a symbolic first dimension."""
    import torch

    inputs = [spec.arg.name for spec in program.graph_signature.input_specs
              if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    (node,) = [n for n in program.graph.nodes if n.op == "placeholder" and n.name == inputs[0]]
    return isinstance(node.meta["val"].shape[0], torch.SymInt)


@check("lab06.export_for_inference", reference=_reference_export)
def export_program(impl: Any, rng):
    """export_for_inference: an ExportedProgram in eval mode whose batch size is free."""
    from coursekit.graphs.models import random_model

    for kind in ("batchnorm_mlp", "residual_mlp"):
        model, features = random_model(kind, rng)
        batch = int(rng.integers(2, 6))
        example = rng.standard_normal((batch, features)).astype(np.float32)
        sizes = _batch_sizes(rng, batch)
        inputs = [rng.standard_normal((b, features)).astype(np.float32) for b in sizes]
        box: dict[str, Any] = {}

        def export(model=model, example=example, box=box):
            box["program"] = impl(model, _tensor(example))
            return _kind(box["program"])

        exported = f"{kind}: export on a batch of {batch} returns an ExportedProgram"
        yield Case(exported, export,
                   hint="return torch.export.export(model, (example,), dynamic_shapes=...)")
        yield Case(f"{kind}: the batch dimension of the graph's input is symbolic",
                   lambda box=box: _batch_is_dynamic(_kept(box, "program", "export")),
                   hint=_BATCH_HINT)
        # A batch Dim with a max runs on every batch drawn below and refuses larger ones.
        yield Case(f"{kind}: the largest batch the graph declares it accepts",
                   lambda box=box: _declared_batch_bound(_kept(box, "program", "export")),
                   hint="declare torch.export.Dim('batch') without a max: a Dim with max=N "
                        "makes the graph refuse every batch above N, and the program must run "
                        "for any batch size", follows=(exported,), weight=0.5)
        # The shape of the output says whether a batch size is accepted, whatever the mode;
        # the values then say whether the mode is right (a graph in training mode accepts
        # every batch size and gets every value wrong).
        for b, x in zip(sizes, inputs):
            runs = f"{kind}: program.module() runs on a batch of {b} (the output's shape)"
            yield Case(runs, lambda x=x, box=box: tuple(
                           _kept(box, "program", "export").module()(_tensor(x)).shape),
                       hint=_BATCH_HINT, follows=(exported,))
            yield Case(f"{kind}: program.module() on a batch of {b}: the values",
                       lambda x=x, box=box: _kept(box, "program", "export").module()(
                           _tensor(x)).detach(),
                       hint=_EVAL_HINT, follows=(exported, runs))


# ---------------------------------------------------------------------------------------------
# lab06.save_for_deployment
# ---------------------------------------------------------------------------------------------


def _saved_and_run(impl, model, example, inputs, box: dict) -> list[np.ndarray]:
    from coursekit.graphs import run_in_fresh_process

    path = Path(box["folder"]) / "model.pt2"
    impl(model, _tensor(example), str(path))
    outputs = run_in_fresh_process(path, inputs)
    box["saved"] = path
    return outputs


def _largest_batch_declared(box: dict) -> int | str:
    """The largest batch the saved graph says it accepts ("any" for no bound)."""
    import torch

    path = _kept(box, "saved", "saved, then loaded and run in a fresh Python process")
    try:
        program = torch.export.load(path)
    except Exception:  # noqa: BLE001 — a TorchScript file, which the fresh process ran: no bounds
        return "any"
    return _declared_batch_bound(program)


def _declared_batch_bound(program) -> int | str:
    """The largest batch an ExportedProgram says it accepts ("any" for no bound). A graph may
    accept more than it declares: torch guards a Dim's max, and its min only above 2, since 0
    and 1 are specialised while exporting (Dim.AUTO declares 2)."""
    name = program.graph_signature.user_inputs[0]
    node = next(n for n in program.graph.nodes if n.op == "placeholder" and n.name == name)
    size = node.meta["val"].shape[0]
    if isinstance(size, int):
        return size
    upper = program.range_constraints[size.node.expr].upper
    return "any" if math.isinf(float(upper)) else int(upper)


@check("lab06.save_for_deployment", reference=_reference_deploy)
def deploy_program(impl: Any, rng):
    """save_for_deployment: a file a fresh process without the model's class can run."""
    from coursekit.graphs.models import random_model

    model, features = random_model("batchnorm_mlp", rng)
    batch = int(rng.integers(2, 6))
    example = rng.standard_normal((batch, features)).astype(np.float32)
    sizes = _batch_sizes(rng, batch)
    inputs = [rng.standard_normal((b, features)).astype(np.float32) for b in sizes]
    with tempfile.TemporaryDirectory(prefix="lab06-deploy-") as folder:
        box: dict[str, Any] = {"folder": folder}
        ran = (f"saved, then loaded and run in a fresh Python process on batches of "
               f"{', '.join(map(str, sizes))}")
        yield Case(ran, lambda: _saved_and_run(impl, model, example, inputs, box),
                   names=tuple(f"batch of {b}" for b in sizes), rtol=1e-5, atol=1e-6,
                   hint="the fresh process has torch but not your code: it loads the file with "
                        "torch.export.load (or torch.jit.load). Save a graph with "
                        "torch.export.save(torch.export.export(...), path), in eval mode, with "
                        "a dynamic batch dimension; torch.save of the model or its state_dict "
                        "is a checkpoint, which needs the class to load")
        yield Case("the largest batch the saved graph declares it accepts",
                   lambda: _largest_batch_declared(box), follows=(ran,),
                   hint="the graph refuses batches above the batch Dim's max: declare "
                        "torch.export.Dim('batch') without a max, so that any batch size runs")


# ---------------------------------------------------------------------------------------------
# lab06.export_onnx
# ---------------------------------------------------------------------------------------------


def _onnx_outputs(impl, model, example, inputs) -> list[np.ndarray]:
    import onnxruntime

    with tempfile.TemporaryDirectory(prefix="lab06-onnx-") as folder:
        path = str(Path(folder) / "model.onnx")
        impl(model, _tensor(example), path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return [session.run(None, {name: x})[0] for x in inputs]


@check("lab06.export_onnx", reference=_reference_onnx)
def onnx_program(impl: Any, rng):
    """export_onnx: onnxruntime runs the file and matches eager PyTorch to 1e-5, any batch."""
    from coursekit.graphs.models import MODELS, random_model

    kind = sorted(MODELS)[int(rng.integers(len(MODELS)))]
    model, features = random_model(kind, rng)
    batch = int(rng.integers(2, 6))
    example = rng.standard_normal((batch, features)).astype(np.float32)
    sizes = _batch_sizes(rng, batch)
    inputs = [rng.standard_normal((b, features)).astype(np.float32) for b in sizes]
    yield Case(f"{kind}: onnxruntime on batches of {', '.join(map(str, sizes))}",
               lambda: _onnx_outputs(impl, model, example, inputs),
               names=tuple(f"batch of {b}" for b in sizes), rtol=1e-5, atol=1e-5,
               hint="torch.onnx.export(model, (example,), path, dynamo=True, "
                    "dynamic_shapes=...) after model.eval(); the batch dimension must be "
                    "dynamic (with the older exporter, dynamo=False, that is dynamic_axes, keyed "
                    "by a name given in input_names)")


# ---------------------------------------------------------------------------------------------
# lab06.checkpoint
# ---------------------------------------------------------------------------------------------


def _reference_checkpoint():
    import torch

    def save_checkpoint(path, model, optimizer, scheduler):
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state()}, path)

    def load_checkpoint(path, model, optimizer, scheduler):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])

    return {"save_checkpoint": save_checkpoint, "load_checkpoint": load_checkpoint}


def _training(seed: int, features: int, optimizer_kind: str):
    """A model with dropout, its optimizer and a step schedule, all made from ``seed``."""
    import torch

    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(features, 8), torch.nn.Dropout(0.3),
                                torch.nn.ReLU(), torch.nn.Linear(8, 1))
    if optimizer_kind == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    return model, optimizer, scheduler


def _steps(model, optimizer, scheduler, count: int, features: int) -> None:
    """``count`` training steps; each batch and each dropout mask come from torch's generator."""
    import torch

    for _ in range(count):
        x, y = torch.randn(8, features), torch.randn(8, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()


def _parameters(model) -> list:
    return [p.detach().clone() for p in model.parameters()]


def _resume(impl, seed: int, features: int, kind: str, total: int, stop: int):
    """Train ``total`` steps straight; then ``stop`` steps, save, build everything anew from
    another seed, load, and train the rest. Returns the resumed run's parameters and learning
    rate, and whether it equals the straight run bit for bit."""
    import torch

    model, optimizer, scheduler = _training(seed, features, kind)
    _steps(model, optimizer, scheduler, total, features)
    straight = _parameters(model)
    with tempfile.TemporaryDirectory(prefix="lab06-checkpoint-") as folder:
        path = str(Path(folder) / "checkpoint.pt")
        model, optimizer, scheduler = _training(seed, features, kind)
        _steps(model, optimizer, scheduler, stop, features)
        impl["save_checkpoint"](path, model, optimizer, scheduler)
        # Another process would start from other weights and another generator state.
        model, optimizer, scheduler = _training(seed + 1, features, kind)
        torch.randn(int(seed % 7) + 1)
        impl["load_checkpoint"](path, model, optimizer, scheduler)
        _steps(model, optimizer, scheduler, total - stop, features)
    resumed = _parameters(model)
    return (resumed, optimizer.param_groups[0]["lr"],
            all(torch.equal(a, b) for a, b in zip(resumed, straight)))


@check("lab06.checkpoint", reference=_reference_checkpoint)
def checkpoint_program(impl: Any, rng):
    """save_checkpoint / load_checkpoint: a resumed run equals the uninterrupted one."""
    for kind in ("sgd", "adam"):
        seed, features = int(rng.integers(0, 2**31 - 8)), int(rng.integers(2, 6))
        total = int(rng.integers(6, 10))
        # Not a multiple of the schedule's step: a scheduler that starts counting again from
        # the restart then decays at other steps than the uninterrupted run.
        stop = int(rng.choice([s for s in range(2, total - 1) if s % 3]))
        yield Case(f"{kind} with momentum state, StepLR and dropout: {total} steps, "
                   f"interrupted after {stop}",
                   lambda s=seed, f=features, k=kind, t=total, p=stop: _resume(impl, s, f, k, t, p),
                   names=("parameters after resuming", "learning rate after resuming",
                          "resumed run equals the uninterrupted one bit for bit"),
                   rtol=1e-6, atol=1e-7,
                   hint="save and restore all four: model.state_dict(), optimizer.state_dict() "
                        "(momentum, Adam's moments and step count), scheduler.state_dict() "
                        "(its epoch, hence the learning rate) and torch.get_rng_state() (the "
                        "next batches and dropout masks); load them into the objects given")


# ---------------------------------------------------------------------------------------------
# lab06.time_compiled
# ---------------------------------------------------------------------------------------------

# NOTE [timing torch.compile without a real clock]
# A speed cannot be graded: it depends on the machine and its load. The methodology can. The
# check hands the student's code a pretend device with its own clock, an eager function for
# it, and a `compile` for that function whose costs the check drew: the first compiled call
# spends `compile_s` of host time before its work, the second is still slow (CUDA graphs are
# recorded, kernels autotuned), the first eager call is slow too (lazy initialisation). Work is
# queued and only finished by `sync()`, as on a GPU; a launch costs no host time, so timing
# the calls one by one or as one block gives the same mean. On that clock every correct answer
# returns the same record, and each usual mistake (the compile call in the mean, no warm-up, no
# sync, the break-even count off by one or divided the wrong way) returns another one.


def _reference_time_compiled():
    import math
    import statistics

    import torch

    from coursekit.hardware import synchronize

    def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                      clock=time.perf_counter, sync=None):
        if sync is None:
            def sync():
                synchronize(example.device)

        def seconds(f):
            sync()
            start = clock()
            f(example)
            sync()
            return clock() - start

        compiled = compile(fn)
        first_call_s = seconds(compiled)
        for _ in range(warmup):
            compiled(example)
        compiled_s = statistics.fmean([seconds(compiled) for _ in range(repeats)])
        for _ in range(warmup):
            fn(example)
        eager_s = statistics.fmean([seconds(fn) for _ in range(repeats)])
        compile_s = first_call_s - compiled_s
        saved_s = eager_s - compiled_s
        return {"first_call_s": first_call_s, "compile_s": compile_s, "compiled_s": compiled_s,
                "eager_s": eager_s,
                "break_even_calls": math.ceil(compile_s / saved_s) if saved_s > 0 else None}

    return time_compiled


@handed  # the check's program hands it to the student's code
class _FakeCompiler:
    """A pretend device with its own clock, an eager function for it and a ``compile``.

    ``eager(x)`` queues ``eager_costs[i]`` seconds of device work (its i-th call). ``compile(f)``
    returns a compiled function whose first call spends ``compile_s`` of host time (capturing
    the graph and generating code) and then queues ``compiled_costs[0]``; its i-th call queues
    ``compiled_costs[i]``. ``sync()`` waits until the queue is empty; ``clock()`` reads the
    time. Every call is counted.
    """

    def __init__(self, eager_costs: list[float], compiled_costs: list[float], compile_s: float):
        self.eager_costs, self.compiled_costs = list(eager_costs), list(compiled_costs)
        self.compile_s = compile_s
        self.now = self.busy_until = 0.0
        self.counts = {"compile(fn) calls": 0, "compiled calls": 0, "eager calls": 0}

    def clock(self) -> float:
        return self.now

    def sync(self) -> None:
        self.now = max(self.now, self.busy_until)

    def _queue(self, costs: list[float], index: int) -> None:
        self.busy_until = max(self.busy_until, self.now) + costs[min(index, len(costs) - 1)]

    def eager(self, x):
        self._queue(self.eager_costs, self.counts["eager calls"])
        self.counts["eager calls"] += 1
        return x

    def compile(self, fn):
        self.counts["compile(fn) calls"] += 1
        calls = [0]

        def compiled(x):
            if calls[0] == 0:
                self.now += self.compile_s
            self._queue(self.compiled_costs, calls[0])
            calls[0] += 1
            self.counts["compiled calls"] += 1
            return x

        return compiled


_RECORD_KEYS = ("first_call_s", "compiled_s", "eager_s", "compile_s", "break_even_calls")


def _record(got: Any) -> Any:
    """The student's record with plain numbers (a whole float count becomes an int)."""
    if not isinstance(got, dict):
        return got
    record: dict[str, Any] = {}
    for key in _RECORD_KEYS:
        if key not in got:
            continue
        value = got[key]
        if key == "break_even_calls":
            if value is not None and not isinstance(value, bool):
                value = float(value)
                value = int(value) if value.is_integer() else value
        elif value is not None:
            value = float(value)
        record[key] = value
    return record


def _run_compiler(impl, eager: list[float], compiled: list[float], compile_s: float,
                  **kwargs):
    import torch

    fake = _FakeCompiler(eager, compiled, compile_s)
    got = impl(fake.eager, torch.zeros(2), compile=fake.compile, clock=fake.clock,
               sync=fake.sync, **kwargs)
    return _record(got), dict(fake.counts)


def _costs(rng, calls: int, low: float, high: float, first_extra: float = 0.0) -> list[float]:
    costs = [float(c) for c in rng.uniform(low, high, size=calls)]
    costs[0] += first_extra
    return costs


_COMPILED_NAMES = ("returned record", "calls the pretend device counted")
_COMPILED_HINT = ("compiled = compile(fn), once; time its first call alone (first_call_s); then "
                  "call it `warmup` times untimed; then time `repeats` calls, each as sync(); "
                  "start = clock(); compiled(example); sync(); clock() - start, and take their "
                  "mean (compiled_s); fn the same way: `warmup` untimed calls, then the mean of "
                  "`repeats` timed ones (eager_s); compile_s = first_call_s - compiled_s")
_BREAK_EVEN_HINT = ("break_even_calls = math.ceil(compile_s / (eager_s - compiled_s)): the "
                    "compile cost divided by the time each compiled call saves")


@check("lab06.time_compiled", reference=_reference_time_compiled,
       forbid=("timeit", "torch.utils.benchmark", "coursekit.hardware.timing"))
def time_compiled_program(impl: Any, rng):
    """time_compiled: the compile call apart, warm-up, sync, means and the break-even count."""
    # 1. Compiling pays off: the compile cost apart, the slow early calls warmed up.
    for trial in range(2):
        warmup, repeats = int(rng.integers(1, 5)), int(rng.integers(3, 13))
        calls = 1 + warmup + repeats + 2
        compile_s = float(rng.uniform(0.5, 5.0))
        compiled = _costs(rng, calls, 1e-3, 3e-3)
        compiled[1] += float(rng.uniform(0.05, 0.3))   # the second call is still slow
        eager = _costs(rng, calls, 4e-3, 8e-3, first_extra=float(rng.uniform(0.05, 0.2)))
        yield Case(f"compiling costs {compile_s:.3g} s and makes calls faster, warmup={warmup}, "
                   f"repeats={repeats} (trial {trial})",
                   lambda e=eager, c=compiled, s=compile_s, w=warmup, r=repeats:
                       _run_compiler(impl, e, c, s, warmup=w, repeats=r),
                   hint=_COMPILED_HINT + "; " + _BREAK_EVEN_HINT, rtol=1e-9, atol=1e-12,
                   names=_COMPILED_NAMES)
    # 2. The compiled function is slower per call: compiling never pays back.
    warmup, repeats = int(rng.integers(1, 4)), int(rng.integers(3, 9))
    calls = 1 + warmup + repeats + 2
    compiled = _costs(rng, calls, 2.5e-3, 4e-3)
    compiled[1] += 0.1
    eager = _costs(rng, calls, 1e-3, 2e-3, first_extra=0.1)
    yield Case(f"the compiled function is slower per call: it never breaks even "
               f"(warmup={warmup}, repeats={repeats})",
               lambda e=eager, c=compiled, w=warmup, r=repeats:
                   _run_compiler(impl, e, c, 1.0, warmup=w, repeats=r),
               hint="when compiled_s >= eager_s compiling never pays back: break_even_calls is "
                    "None (not 0, inf or a negative count); " + _COMPILED_HINT,
               rtol=1e-9, atol=1e-12, names=_COMPILED_NAMES)
    # 3. Planted: costs in powers of two, so the compile cost is exactly `calls` times the
    # saving. After that many calls both totals are equal: that count is the break-even.
    calls, warmup, repeats = int(rng.integers(50, 500)), int(rng.integers(1, 4)), 8
    tick = 2.0 ** -10
    eager = [3 * tick + 2.0 ** -4] + [3 * tick] * 20
    compiled = [tick, tick + 2.0 ** -3] + [tick] * 20
    yield Case(f"the compile cost is exactly {calls} times the time a call saves: "
               f"{calls} calls break even",
               lambda e=eager, c=compiled, s=calls * 2 * tick, w=warmup:
                   _run_compiler(impl, e, c, s, warmup=w, repeats=repeats),
               hint="after break_even_calls calls the compiled total (first_call_s + the other "
                    "calls at compiled_s) is no larger than the eager total; at an exact tie that "
                    "is the ratio itself: math.ceil, not int(...) + 1; " + _BREAK_EVEN_HINT,
               rtol=1e-9, atol=1e-12, names=_COMPILED_NAMES)
    # 4. Exactly as fast: no saving to divide by.
    eager = [2 * tick + 2.0 ** -4] + [2 * tick] * 20
    compiled = [2 * tick, 2 * tick + 2.0 ** -3] + [2 * tick] * 20
    yield Case("compiled exactly as fast as eager: it never breaks even",
               lambda e=eager, c=compiled: _run_compiler(impl, e, c, 0.5, warmup=2, repeats=4),
               hint="no time saved per call (eager_s - compiled_s == 0): break_even_calls is "
                    "None, and nothing is divided by zero", rtol=1e-9, atol=1e-12,
               names=_COMPILED_NAMES, weight=0.5)
    # 5. The defaults: warmup=3 and repeats=20.
    compiled = _costs(rng, 30, 1e-3, 3e-3)
    compiled[1] += 0.2
    eager = _costs(rng, 30, 4e-3, 8e-3, first_extra=0.2)
    yield Case("defaults: time_compiled(fn, example, compile=..., clock=..., sync=...) warms "
               "up 3 times and times 20 calls",
               lambda e=eager, c=compiled: _run_compiler(impl, e, c, 2.0),
               hint="keep the defaults of the signature: warmup=3, repeats=20; " + _COMPILED_HINT,
               rtol=1e-9, atol=1e-12, names=_COMPILED_NAMES, weight=0.5)

    # 6. The real clock and the default sync, on a compiler that sleeps.
    def real_clock():
        import torch

        def sleepy_compile(fn):
            calls = [0]

            def compiled(x):
                calls[0] += 1
                time.sleep(0.05 if calls[0] == 1 else 0.001)
                return x

            return compiled

        def eager(x):
            time.sleep(0.002)
            return x

        got = impl(eager, torch.zeros(2), warmup=1, repeats=3, compile=sleepy_compile)
        first, compiled_s, eager_s = (float(got[k]) for k in ("first_call_s", "compiled_s",
                                                              "eager_s"))
        # Lower bounds a little under the sleeps (clock granularity), upper ones far above
        # them: a loaded machine only makes sleeps longer; milliseconds would be 1000x.
        return {"first_call_s in seconds (slept 0.05 s)": 0.045 <= first < 5.0,
                "compiled_s in seconds (slept 0.001 s)": 0.0009 <= compiled_s < 5.0,
                "eager_s in seconds (slept 0.002 s)": 0.0018 <= eager_s < 5.0}

    yield Case("real clock: a compile that sleeps 0.05 s is timed in seconds (default clock "
               "and sync, example on the CPU)", real_clock,
               hint="by default read time.perf_counter (seconds); when sync is None wait with "
                    "coursekit.hardware.synchronize(example.device), a no-op on the CPU",
               weight=0.5)


# ---------------------------------------------------------------------------------------------
# lab06.tree_encode
# ---------------------------------------------------------------------------------------------


def _reference_tree_encode():
    import torch

    def tree_encode(tree, embedding, W, b):
        if isinstance(tree, tuple):
            left, right = tree
            both = torch.cat([tree_encode(left, embedding, W, b),
                              tree_encode(right, embedding, W, b)])
            return torch.tanh(both @ W + b)
        return embedding[tree]

    return tree_encode


def _encode(impl, tree, embedding, W, b, weighting, box: dict):
    """The root's vector; the gradients of a weighting of it are kept for the next case."""
    import torch

    box.clear()
    leaves = [torch.tensor(v, requires_grad=True) for v in (embedding, W, b)]
    root = impl(tree, *leaves)
    if root.requires_grad:   # else no gradient reaches anything: the next case says so
        (root * torch.from_numpy(weighting)).sum().backward()
    box["gradients"] = tuple(torch.zeros_like(v) if v.grad is None else v.grad for v in leaves)
    return root.detach()


_TREE_HINT = ("a leaf (an int) is its row embedding[i]; an inner node (left, right) is "
              "torch.tanh(torch.cat([h(left), h(right)]) @ W + b), the left child first, each "
              "child's vector computed the same way: recurse over the tree, so that the graph "
              "has the tree's shape (a loop over the leaves from left to right computes only "
              "the left-branching tree)")


@check("lab06.tree_encode", reference=_reference_tree_encode)
def tree_encode_program(impl: Any, rng):
    """tree_encode: a recursive network whose graph follows each input's tree."""
    from coursekit.graphs.models import random_tree, tree_text

    vocab, d = int(rng.integers(6, 12)), int(rng.integers(2, 6))
    embedding = rng.standard_normal((vocab, d))
    W = rng.standard_normal((2 * d, d)) / np.sqrt(2 * d)
    b = 0.1 * rng.standard_normal(d)
    trees = [("a single word", random_tree(rng, 1, vocab)),
             ("a chain read left to right (a recurrent network)",
              random_tree(rng, int(rng.integers(3, 7)), vocab, "left")),
             ("a chain that branches to the right", random_tree(rng, int(rng.integers(3, 6)),
                                                                vocab, "right")),
             ("a balanced tree", random_tree(rng, int(rng.integers(4, 9)), vocab, "balanced")),
             ("a random tree", random_tree(rng, int(rng.integers(5, 10)), vocab)),
             ("another random tree", random_tree(rng, int(rng.integers(5, 10)), vocab))]
    for what, tree in trees:
        weighting = rng.standard_normal(d)
        box: dict = {}
        label = f"{what}, {tree_text(tree)}, V={vocab}, d={d}"
        yield Case(f"{label}: the root's vector",
                   lambda t=tree, w=weighting, box=box: _encode(impl, t, embedding, W, b, w, box),
                   hint=_TREE_HINT, rtol=1e-9, atol=1e-12)
        yield Case(f"{label}: gradients of embedding, W and b",
                   lambda box=box: _kept(box, "gradients", "the root's vector"),
                   names=("embedding", "W", "b"), rtol=1e-9, atol=1e-12,
                   follows=(f"{label}: the root's vector",),
                   hint="build the root from embedding, W and b with torch operations only "
                        "(indexing, torch.cat, @, +, torch.tanh): no .item(), .numpy(), "
                        "torch.tensor(...) or .detach() on the way, so that backward reaches "
                        "all three")


# ---------------------------------------------------------------------------------------------
# property tables (see coursekit.grading.properties)
# ---------------------------------------------------------------------------------------------

PROPERTIES = {
    "lab06.trace_disagreements": (
        parameter("fn", "grow_or_shrink: traced on an example with a positive sum"),
        parameter("example", "via_numpy: traced on one example"),
        parameter("inputs", "double_each_row: traced on an example of 4 rows, tried on"),
        parameter("rtol", "rtol=0.001, atol=0 given"),
        parameter("atol", "rtol=0, atol=0.01 given"),
        promise("traced once, on the example: an input equal to it agrees",
                "via_numpy: traced on one example"),
        promise("one bool per input, True where the trace disagrees", "grow_or_shrink: traced"),
        promise("values compared with torch.allclose", "scale_by_length: traced"),
        promise("torch.allclose(traced_result, eager_result): the tolerance scales with the "
                "eager result", "one below by less, rtol=0.25, atol=0 given"),
        promise("a trace that agrees everywhere gives False everywhere", "smooth_gate: traced"),
        promise("the reference trace_disagreements is not used",
                forbidden="coursekit.graphs.tracing"),
        edge("the traced call raises", "double_each_row: traced"),
        edge("the two results have different shapes", "via_numpy: traced on one example"),
        edge("different shapes whose values allclose would broadcast and find close",
             "via_numpy: traced on an example of 1 row"),
        edge("a data-dependent loop count", "repeat_by_max: traced"),
    ),
    "lab06.grow_or_shrink": (
        parameter("x", "called eagerly on a negative sum"),
        promise("x * 2 when x.sum() > 0", "traced on a negative sum, called on input"),
        promise("x / 2 - 1 otherwise", "called eagerly on a negative sum"),
        promise("no Python if on a tensor: a trace follows both signs",
                "traced on a positive sum, called on input"),
        edge("traced on a negative sum", "torch.jit.trace on an example with a negative sum"),
        edge("a sum of exactly 0 takes x / 2 - 1 (the test is strict)",
             "and on sums of exactly 0, 0.5 and -0.5: sum 0"),
        edge("sums just above and below 0", "and on sums of exactly 0, 0.5 and -0.5: sum 0.5"),
    ),
    "lab06.w2_model": (
        parameter("x", "(uses w2a): loss and gradients: loss"),
        parameter("y", "(uses w2b): loss and gradients: loss"),
        parameter("w1", "loss and gradients: grad w1"),
        parameter("w2a", "loss and gradients: grad w2a"),
        parameter("w2b", "loss and gradients: grad w2b"),
        parameter("prev_loss", "it takes prev_loss as a Python float"),
        promise("compiled with torch.jit.script", "w2_model is compiled to TorchScript"),
        promise("the branch kept in the graph", "its graph holds both branches"),
        promise("w2 is w2a when prev_loss < 5.0, just below it too", "(uses w2a)"),
        edge("prev_loss exactly 5.0 uses w2b", "prev_loss=5 (uses w2b)"),
    ),
    "lab06.export_for_inference": (
        parameter("model", "export on a batch of"),
        parameter("example", "export on a batch of"),
        promise("returns torch.export.export(...)", "returns an ExportedProgram"),
        promise("the batch dimension is dynamic",
                "the batch dimension of the graph's input is symbolic"),
        promise("the model in eval mode (it is handed over in training mode)",
                "program.module() on a batch of 4: the values"),
        edge("a batch of 1", "program.module() runs on a batch of 1 (the output's shape)"),
        promise("any batch size: the batch Dim declares no largest batch",
                "the largest batch the graph declares it accepts"),
    ),
    "lab06.save_for_deployment": (
        parameter("model", "saved, then loaded and run in a fresh Python process"),
        parameter("example", "saved, then loaded and run in a fresh Python process"),
        parameter("path", "saved, then loaded and run in a fresh Python process"),
        promise("a new process without your code loads and runs the file",
                "loaded and run in a fresh Python process"),
        promise("the model in eval mode", "fresh Python process on batches of"),
        promise("any batch size", "the largest batch the saved graph declares it accepts"),
        edge("a batch of 1", "fresh Python process on batches of 1"),
    ),
    "lab06.export_onnx": (
        parameter("model", "onnxruntime on batches of"),
        parameter("example", "onnxruntime on batches of"),
        parameter("path", "onnxruntime on batches of"),
        promise("onnxruntime's output equals the model's in eval mode, to 1e-5",
                "onnxruntime on batches of"),
        edge("a batch of 1 (a dynamic batch dimension)", "onnxruntime on batches of 1"),
    ),
    "lab06.checkpoint": (
        parameter("path", "interrupted after 2"),
        parameter("model", ": parameters after resuming"),
        parameter("optimizer", "adam with momentum state"),
        parameter("scheduler", ": learning rate after resuming"),
        promise("restored into the objects given", ": parameters after resuming"),
        promise("the CPU generator's state saved and restored",
                ": resumed run equals the uninterrupted one bit for bit"),
        promise("the optimizer's state (SGD momentum, Adam's moments)",
                "sgd with momentum state"),
    ),
    "lab06.time_compiled": (
        parameter("fn", "calls the pretend device counted"),
        parameter("example", "example on the CPU"),
        parameter("warmup", "makes calls faster, warmup="),
        parameter("repeats", "makes calls faster, warmup="),
        parameter("compile", "compiling costs"),
        parameter("clock", ": returned record"),
        parameter("sync", "default clock and sync"),
        promise("warmup=3 and repeats=20 by default", "defaults: time_compiled(fn, example"),
        promise("times in seconds", "real clock:"),
        promise("first call timed alone, means of the timed calls, compile_s, break-even",
                "(trial 0): returned record"),
        promise("timeit is not used", forbidden="timeit"),
        promise("torch.utils.benchmark is not used", forbidden="torch.utils.benchmark"),
        edge("compiled calls slower: None", "it never breaks even (warmup"),
        edge("the compile cost exactly N savings: N calls", "calls break even"),
        edge("compiled exactly as fast as eager: None", "compiled exactly as fast as eager"),
    ),
    "lab06.tree_encode": (
        parameter("tree", "a balanced tree"),
        parameter("embedding", "gradients of embedding, W and b: embedding"),
        parameter("W", "gradients of embedding, W and b: W"),
        parameter("b", "gradients of embedding, W and b: b"),
        promise("the root's vector, tanh(cat([h(left), h(right)]) @ W + b)",
                "a random tree"),
        promise("backward reaches embedding, W and b", "gradients of embedding, W and b"),
        edge("a leaf (one word)", "a single word"),
        edge("a chain to the left (a recurrent network)", "a chain read left to right"),
        edge("a chain to the right", "a chain that branches to the right"),
    ),
}
