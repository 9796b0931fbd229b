"""Checks for lab07_tensorflow: a TF1 static graph, GradientTape, tf.function tracing, a Keras
custom training loop, TensorBoard event files, and one net's gradients in Keras and PyTorch.

References: the two-layer net's training in NumPy (float64, hand-derived gradients) for the
TF1 graph and the tape; PyTorch's double backward for higher derivatives; a real
``tf.function`` that counts its traces for the tracing predictions; Keras' own ``fit`` for
the custom loop; ``tf.summary`` and the event files' protocol buffers for TensorBoard; the
net's hand-derived float64 gradients, in each framework's weight layout, for the comparison of
Keras and PyTorch.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..program import Case, EarlierStepFailed, check, handed
from ..properties import edge, parameter, promise


# TensorFlow's start-up notices (oneDNN, CPU features) are configured off before its first
# import, as the lab's setup cell does, and warnings stay on. Here, at import of the checks:
# the grader resolves the forbidden names (tensorflow.GradientTape, ...) right after, and
# that imports TensorFlow in the grader's process and in `coursekit validate`'s.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")


def _tf():
    import tensorflow as tf
    return tf


def _keras():
    _tf()
    import keras
    return keras


# ---------------------------------------------------------------- the two-layer net (lecture)

def _numpy_train(x, y, w1, w2, lr, steps):
    """The lecture's net: loss = mean over rows of sum((relu(x @ w1) @ w2 - y)**2), gradient
    descent with hand-derived gradients in float64."""
    x, y, w1, w2 = (np.asarray(a, dtype=np.float64) for a in (x, y, w1, w2))
    losses = []
    for _ in range(steps):
        h = x @ w1
        h_relu = np.maximum(h, 0.0)
        diff = h_relu @ w2 - y
        losses.append(np.mean(np.sum(diff ** 2, axis=1)))
        grad_y_pred = 2.0 * diff / x.shape[0]
        grad_w2 = h_relu.T @ grad_y_pred
        grad_w1 = x.T @ ((grad_y_pred @ w2.T) * (h > 0))
        w1, w2 = w1 - lr * grad_w1, w2 - lr * grad_w2
    return np.array(losses), w1, w2


def _reference_train():
    # A function of its own, so that a kernel that runs it is seen running a reference.
    def train(x, y, w1, w2, lr, steps):
        return _numpy_train(x, y, w1, w2, lr, steps)
    return train


def _net_problem(rng, n: int, d_in: int, h: int, d_out: int):
    """float32 data and weights whose ReLU is neither all on nor all off."""
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    y = rng.standard_normal((n, d_out)).astype(np.float32)
    w2 = (rng.standard_normal((h, d_out)) / np.sqrt(h)).astype(np.float32)
    while True:
        w1 = (rng.standard_normal((d_in, h)) / np.sqrt(d_in)).astype(np.float32)
        if 0.2 <= (x @ w1 > 0).mean() <= 0.8:
            return x, y, w1, w2


def _result_part(box: dict, index: int) -> Any:
    if "result" not in box:
        raise EarlierStepFailed("skipped: the call to your function failed (see the case above)")
    try:
        item = box["result"][index]
    except Exception as error:  # a wrong return type is the student's outcome
        raise TypeError(f"expected a tuple (losses, w1, w2), got "
                        f"{type(box['result']).__name__}") from error
    # A list of numbers stands for its array; anything else is sent as it is (an array or a
    # tensor as its values, any other object as the description of its type).
    return np.asarray(item, dtype=np.float64) if isinstance(item, (list, tuple)) else item


def _inputs_changed(box: dict, given: tuple, originals: tuple) -> str:
    """The names of the caller's arrays the call wrote into, once it has returned."""
    if "result" not in box:
        raise EarlierStepFailed("skipped: the call to your function failed (see the case above)")
    changed = [name for name, now, before in zip(("x", "y", "w1", "w2"), given, originals)
               if not np.array_equal(now, before)]
    return ", ".join(changed) or "none"


def _weight_types(box: dict) -> str:
    """The types of the final weights returned, once the call has returned a triple: a
    tf.Variable or a tensor compares equal by its values, so only its type tells it apart."""
    if "result" not in box:
        raise EarlierStepFailed("skipped: the call to your function failed (see the case above)")
    if type(box["result"]) not in (tuple, list) or len(box["result"]) != 3:
        raise TypeError(f"expected a tuple (losses, w1, w2), got {type(box['result']).__name__}")

    def kind(w: Any) -> str:
        if isinstance(w, np.ndarray):
            return "a NumPy array"
        return f"a {type(w).__module__}.{type(w).__qualname__}"

    return ", ".join(f"{name}: {kind(w)}" for name, w in zip(("w1", "w2"), box["result"][1:]))


def _still_eager(box: dict) -> bool:
    """Whether eager execution is on, once the call has returned a triple (anything else, or
    an object that pretends to be one, fails here as in the other cases)."""
    if "result" not in box:
        raise EarlierStepFailed("skipped: the call to your function failed (see the case above)")
    if type(box["result"]) not in (tuple, list) or len(box["result"]) != 3:
        raise TypeError(f"expected a tuple (losses, w1, w2), got {type(box['result']).__name__}")
    return bool(_tf().executing_eagerly())


_TRAIN_HINTS = {
    "losses": "loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1)), the loss of "
              "each step before its update, one value per step",
    "w1": "each step: w1 <- w1 - lr * dloss/dw1, the gradient taken at the step's weights",
    "w2": "each step: w2 <- w2 - lr * dloss/dw2, the gradient taken at the step's weights",
}


_STEPS_HINTS = {
    # Only shown when the one-step case passed: one step is right, and what goes wrong is what
    # a step leaves for the next one.
    True: "one step is right, the next ones are not: keep the weights in the graph as "
          "Variables and run the update nodes (w1.assign(w1 - lr * grad_w1), grouped with "
          "tf.group) in the same sess.run as the loss, every step, in one session; feeding "
          "the initial weights again, or a new session per step, starts over",
    False: "one step is right, the next ones are not: keep w1 and w2 tf.Variables and change "
           "them in place with w.assign_sub(lr * g). `w1 = w1 - lr * g` replaces the Variable "
           "by a plain tensor, which the next tape does not watch (its gradient is None)",
}


def _train_program(impl, rng, *, eager_case: bool):
    # A single step first: the loss and one update, with nothing carried from step to step.
    # The trials after it then fail only for what a step leaves for the next one.
    one_step: tuple[str, ...] = ()
    for trial in range(0, 3):
        n, d_in, h, d_out = (int(rng.integers(3, 9)), int(rng.integers(2, 7)),
                             int(rng.integers(2, 8)), int(rng.integers(1, 4)))
        x, y, w1, w2 = _net_problem(rng, n, d_in, h, d_out)
        originals = tuple(a.copy() for a in (x, y, w1, w2))  # before the call can write into them
        steps, lr = (1 if trial == 0 else int(rng.integers(3, 7))), float(rng.uniform(0.02, 0.1))
        label = (f"{'one step' if trial == 0 else f'trial {trial}'} (N={n}, D_in={d_in}, H={h}, "
                 f"D_out={d_out}, {steps} step{'s' * (steps > 1)}, lr={lr:.3g})")
        box: dict = {}

        def call(box=box, args=(x, y, w1, w2, lr, steps)):
            box.pop("result", None)
            box["result"] = impl(*args)
            return _result_part(box, 0)

        labels = (f"{label}: losses", f"{label}: final w1", f"{label}: final w2")
        hints = ((_TRAIN_HINTS["losses"], _TRAIN_HINTS["w1"], _TRAIN_HINTS["w2"]) if trial == 0
                 else (_STEPS_HINTS[eager_case],) * 3)
        yield Case(labels[0], call, hint=hints[0], rtol=1e-4, atol=1e-5, follows=one_step)
        yield Case(labels[1], lambda box=box: _result_part(box, 1), hint=hints[1],
                   rtol=1e-4, atol=1e-5, follows=one_step)
        yield Case(labels[2], lambda box=box: _result_part(box, 2), hint=hints[2],
                   rtol=1e-4, atol=1e-5, follows=one_step)
        if trial == 0:
            one_step = labels
    yield Case("the caller's x, y, w1 and w2 are left as they were",
               lambda box=box, given=(x, y, w1, w2), originals=originals:
               _inputs_changed(box, given, originals),
               hint="your function wrote into an array it was given (`w1 -= ...` or "
                    "`w1[...] = ...` on the caller's NumPy array); a Variable made from w1 "
                    "holds a copy: update that, and return the final weights")
    yield Case("the final w1 and w2 are returned as NumPy arrays",
               lambda box=box: _weight_types(box),
               hint="return the final weights as NumPy arrays (w1.numpy(), or what sess.run "
                    "fetches), not the tf.Variable or tensor objects themselves")
    if eager_case:  # only once the calls above have returned (a stub changes nothing)
        yield Case("eager execution is still on after the call",
                   lambda box=box: _still_eager(box),
                   hint="build the graph inside `with tf.Graph().as_default():`; never call "
                        "tf.compat.v1.disable_eager_execution(), which switches TF2's eager "
                        "mode off for the whole notebook")


@check("lab07.tf1_train", reference=_reference_train, forbid=("tensorflow.GradientTape",))
def tf1_train_program(impl, rng):
    """The lecture's two-layer net trained in a TF1 static graph, against NumPy."""
    yield from _train_program(impl, rng, eager_case=True)


@check("lab07.tape_train", reference=_reference_train,
       forbid=("tensorflow.compat.v1.Session", "tensorflow.gradients"))
def tape_train_program(impl, rng):
    """The same net trained eagerly with tf.Variable and GradientTape, against NumPy."""
    yield from _train_program(impl, rng, eager_case=False)


# ---------------------------------------------------------------- lab07.tape_derivatives

@handed  # the check's program hands it to the student's code
class _Elementwise:
    """An elementwise function that runs on TensorFlow tensors and on torch tensors alike, so
    that the same function is differentiated by the student's tape and by torch."""

    def __init__(self, kind: str, a: float, b: float):
        self.kind, self.a, self.b = kind, a, b

    def __call__(self, t):
        import sys
        torch = sys.modules.get("torch")
        ops = torch if torch is not None and isinstance(t, torch.Tensor) else _tf().math
        if self.kind == "sin":
            return self.a * ops.sin(self.b * t) + 0.1 * t ** 3
        if self.kind == "tanh":
            return self.a * ops.tanh(self.b * t) * t
        return self.a * ops.exp(-self.b * t * t)

    def __repr__(self) -> str:
        return {"sin": f"{self.a:.2f}*sin({self.b:.2f}*x) + 0.1*x**3",
                "tanh": f"{self.a:.2f}*tanh({self.b:.2f}*x)*x",
                "gauss": f"{self.a:.2f}*exp(-{self.b:.2f}*x**2)"}[self.kind]


def _reference_tape_derivatives():
    def tape_derivatives(f, x):
        import torch
        xt = torch.tensor(np.asarray(x), dtype=torch.float64, requires_grad=True)
        y = f(xt)
        (dy,) = torch.autograd.grad(y.sum(), xt, create_graph=True)
        (d2y,) = torch.autograd.grad(dy.sum(), xt, retain_graph=True)
        (dz,) = torch.autograd.grad((y * y).sum(), xt)
        # Tensors, as the text asks (torch computes them; TensorFlow holds them).
        return tuple(_tf().constant(g.detach().numpy()) for g in (dy, d2y, dz))
    return tape_derivatives


_DERIVATIVE_HINTS = (
    "dy: the gradient of y = f(x) with respect to x (x is a constant: tape.watch(x) first)",
    "d2y: differentiate dy again with an outer tape that was recording while the inner "
    "tape's gradient was computed (call inner.gradient inside the outer `with` block)",
    "dz: z = reduce_sum(y * y), recorded on the same persistent tape; a tape that is not "
    "persistent can be asked for one gradient only",
)


@check("lab07.tape_derivatives", reference=_reference_tape_derivatives)
def tape_derivatives_program(impl, rng):
    """First and second derivatives and a second target from one persistent tape, against
    torch's double backward."""
    tf = _tf()
    kinds = ["sin", "tanh", "gauss"]
    for trial, index in enumerate(rng.permutation(3), start=1):
        f = _Elementwise(kinds[int(index)], float(rng.uniform(0.5, 2.0)),
                         float(rng.uniform(0.5, 1.5)))
        x = rng.uniform(-2.0, 2.0, size=int(rng.integers(2, 7)))
        variable = trial == 3  # planted: a tf.Variable is watched without being asked
        given = (lambda x=x: tf.Variable(x)) if variable else (lambda x=x: tf.constant(x))
        what = "a tf.Variable" if variable else "a float64 constant"
        for part, name in enumerate(("dy", "d2y", "dz")):
            yield Case(f"trial {trial}: f(x) = {f!r}, x {what} of shape {x.shape}: {name}",
                       lambda f=f, given=given, part=part: impl(f, given())[part],
                       hint=_DERIVATIVE_HINTS[part], rtol=1e-7, atol=1e-9)
        if trial == 1:
            yield Case(f"trial {trial}: dy, d2y and dz are TensorFlow tensors",
                       lambda f=f, given=given: [isinstance(v, tf.Tensor)
                                                 for v in impl(f, given())],
                       names=("dy", "d2y", "dz"),
                       hint="return what tape.gradient gives, tf.Tensors; .numpy() makes NumPy "
                            "arrays")


# ---------------------------------------------------------------- lab07.predict_traces

def _counting_function():
    """A tf.function with a Python-side counter: the counter moves only while it traces."""
    tf = _tf()
    traces = [0]

    def double(x):
        traces[0] += 1
        return x * 2

    return tf.function(double), traces


def _reference_predict_traces():
    def predict_traces(calls):
        function, traces = _counting_function()
        # Retracing is what this check provokes on purpose: TF's advice against it would be
        # about the check's own function, so it is kept out of the student's output.
        logger = _tf().get_logger()
        level = logger.level
        logger.setLevel("ERROR")
        try:
            counts = []
            for argument in calls:
                function(argument)
                counts.append(traces[0])
        finally:
            logger.setLevel(level)
        return counts
    return predict_traces


def _draw_call(rng, kind: str, length: int | None = None):
    """One argument and how it reads in a label."""
    tf = _tf()
    length = int(rng.integers(1, 4)) if length is None else length
    values = rng.standard_normal(length)
    if kind == "int":
        value = int(rng.integers(1, 4))
        return value, repr(value)
    if kind == "float":
        value = float(rng.choice([0.5, 1.5, 2.5]))
        return value, repr(value)
    if kind == "tf32":
        return tf.constant(values, dtype=tf.float32), f"tf.float32{(length,)}"
    if kind == "tf64":
        return tf.constant(values, dtype=tf.float64), f"tf.float64{(length,)}"
    if kind == "np32":
        return values.astype(np.float32), f"np.float32{(length,)}"
    return values, f"np.float64{(length,)}"


@check("lab07.predict_traces", reference=_reference_predict_traces,
       forbid=("tensorflow.function",))
def predict_traces_program(impl, rng):
    """Predicted trace counts of a plain tf.function, against a real one's."""
    kinds = ["int", "float", "tf32", "tf64", "np32", "np64"]
    # Planted in every seed: four ints from three values (a repeat) and a float equal to one
    # of them (one key: a number is keyed by value, 1 == 1.0), float32 tensors of
    # three lengths and a repeat (a third shape traces again: no relaxation after the
    # second), and one vector as NumPy and as tf.constant in both float dtypes.
    lengths = [int(n) for n in rng.permutation([1, 2, 3])]
    lengths.append(lengths[int(rng.integers(0, 3))])
    changing = [_draw_call(rng, "tf32", n) for n in lengths]
    sequences: list[list] = [["int"] * 4, changing]
    for _ in range(3):
        sequences.append([kinds[int(k)] for k in rng.integers(0, len(kinds), size=6)])
    same = rng.standard_normal(int(rng.integers(1, 4)))
    tf = _tf()
    planted = [(same.astype(np.float32), f"np.float32{same.shape}"),
               (tf.constant(same, dtype=tf.float32), f"tf.float32{same.shape}"),
               (same, f"np.float64{same.shape}"),
               (tf.constant(same, dtype=tf.float64), f"tf.float64{same.shape}")]
    sequences.insert(2, planted)
    for trial, sequence in enumerate(sequences, start=1):
        drawn = sequence if trial in (2, 3) else [_draw_call(rng, kind) for kind in sequence]
        if trial == 1:
            same_value = float(drawn[int(rng.integers(0, len(drawn)))][0])
            drawn.append((same_value, repr(same_value)))
        calls = [argument for argument, _ in drawn]
        shown = ", ".join(text for _, text in drawn)
        yield Case(f"sequence {trial}: calls with {shown}",
                   lambda calls=calls: [int(c) for c in impl(calls)],
                   hint="a Python number is part of the trace's key by value (each new value "
                        "traces again); a tensor or NumPy array by dtype and shape only (NumPy "
                        "float32 and tf.float32 of one shape share a trace); an argument seen "
                        "before reuses its trace")


# ---------------------------------------------------------------- lab07.signature_function

def _reference_signature_function():
    def signature_function(fn):
        tf = _tf()
        return tf.function(fn, input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
    return signature_function


def _error_or_value(thunk) -> Any:
    """The exception's class name if ``thunk`` raises TypeError or ValueError, else its value."""
    try:
        return np.asarray(thunk())
    except (TypeError, ValueError) as error:
        return f"raised {type(error).__name__}"


def _built(box: dict):
    if "function" not in box:
        raise EarlierStepFailed("skipped: signature_function(fn) failed (see the case above)")
    return box["function"]


@check("lab07.signature_function", reference=_reference_signature_function)
def signature_function_program(impl, rng):
    """One trace for float32 vectors of any length; other inputs refused."""
    tf = _tf()
    for trial in range(1, 3):
        scale = float(rng.uniform(0.5, 2.0))
        lengths = [int(n) for n in rng.permutation(np.arange(1, 9))[:5]]
        inputs = [rng.standard_normal(n).astype(np.float32) for n in lengths]
        box: dict = {}

        def build(box=box, scale=scale):
            traces = [0]

            def weighted_sum(x):
                traces[0] += 1
                return tf.reduce_sum(x * scale) + tf.cast(tf.shape(x)[0], tf.float32)

            box["function"], box["traces"] = impl(weighted_sum), traces
            return True

        def run(box=box, inputs=inputs):
            values = [float(_built(box)(tf.constant(v) if i % 2 else v))
                      for i, v in enumerate(inputs)]
            return values, box["traces"][0]

        yield Case(f"trial {trial}: signature_function(fn) returns", build,
                   hint="return tf.function(fn, input_signature=[...])")
        yield Case(f"trial {trial}: calls with float32 vectors of lengths {lengths}", run,
                   names=("values", "number of traces"),
                   hint="input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)]: "
                        "None leaves the length free, so one trace serves every length "
                        "(reduce_retracing=True would still trace twice)")
        bad = [("an int32 vector", lambda: tf.constant([1, 2, 3])),
               ("a float32 matrix", lambda: tf.zeros((2, 2)))][trial - 1]
        yield Case(f"trial {trial}: a call with {bad[0]} is refused",
                   lambda box=box, bad=bad: _error_or_value(lambda: _built(box)(bad[1]())),
                   hint="the signature fixes the dtype (float32) and the rank (1): other inputs "
                        "raise TypeError instead of tracing again")


# ---------------------------------------------------------------- lab07.custom_fit

def _reference_custom_fit():
    def custom_fit(model, x, y, epochs, batch_size, lr):
        keras = _keras()
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
        history = model.fit(x, y, epochs=epochs, batch_size=batch_size, shuffle=False,
                            verbose=0)
        return history.history["loss"]
    return custom_fit


_FIT_HINTS = {
    "losses": "each epoch's loss is the mean of the per-sample losses over the epoch: weight "
              "every batch's mean loss by its size (the last batch may be smaller)",
    "weights": "one SGD step per batch, in order (no shuffling): "
               "grads = tape.gradient(loss, model.trainable_variables), then "
               "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
}


@check("lab07.custom_fit", reference=_reference_custom_fit,
       forbid=("keras.Model.fit", "keras.Model.train_on_batch", "keras.Model.train_step"))
def custom_fit_program(impl, rng):
    """A custom training loop against Keras' own fit: epoch losses and final weights."""
    keras = _keras()
    for trial in range(1, 3):
        d_in, h, d_out = int(rng.integers(2, 6)), int(rng.integers(3, 8)), int(rng.integers(1, 4))
        batch_size = int(rng.integers(3, 7))
        n = batch_size * int(rng.integers(2, 4)) + (int(rng.integers(1, batch_size)) if trial == 1
                                                    else 0)  # planted: a partial last batch
        epochs, lr = int(rng.integers(2, 4)), float(rng.uniform(0.05, 0.2))
        x = rng.standard_normal((n, d_in)).astype(np.float32)
        y = rng.standard_normal((n, d_out)).astype(np.float32)
        weights = [(rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
                   for shape in ((d_in, h), (h,), (h, d_out), (d_out,))]
        box: dict = {}

        def train(box=box, args=(x, y, epochs, batch_size, lr), weights=weights,
                  sizes=(d_in, h, d_out)):
            model = keras.Sequential([keras.Input((sizes[0],)),
                                      keras.layers.Dense(sizes[1], activation="relu"),
                                      keras.layers.Dense(sizes[2])])
            model.set_weights(weights)
            losses = impl(model, *args)
            box["model"] = model  # only a model your function trained has weights to compare
            return np.asarray([float(v) for v in losses])

        def final_weights(box=box):
            if "model" not in box:
                raise EarlierStepFailed("skipped: the training call failed")
            return box["model"].get_weights()

        label = (f"trial {trial} (N={n}, batch_size={batch_size}, {epochs} epochs, "
                 f"Dense({h}, relu) -> Dense({d_out}))")
        yield Case(f"{label}: loss of each epoch", train, hint=_FIT_HINTS["losses"],
                   rtol=1e-4, atol=1e-6)
        yield Case(f"{label}: weights after training", final_weights,
                   hint=_FIT_HINTS["weights"], rtol=1e-4, atol=1e-6,
                   names=("kernel 1", "bias 1", "kernel 2", "bias 2"))


# ---------------------------------------------------------------- TensorBoard event files

def _event_scalars(logdir: str) -> list[tuple[str, int, float]]:
    """Every scalar in the event files under ``logdir``: (tag, step, value), file by file."""
    tf = _tf()
    found = []
    for name in sorted(os.listdir(logdir)):
        if not name.startswith("events.out.tfevents"):
            continue
        for record in tf.data.TFRecordDataset(os.path.join(logdir, name)):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                found.append((value.tag, int(event.step), float(tf.make_ndarray(value.tensor))))
    return found


def _reference_write_scalars():
    def write_scalars(logdir: str, tag: str, values) -> None:
        tf = _tf()
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default():
            for step, value in enumerate(values):
                tf.summary.scalar(tag, float(value), step=step)
        writer.close()
    return write_scalars


def _reference_read_scalars():
    def read_scalars(logdir, tag):
        return sorted((step, value) for t, step, value in _event_scalars(logdir) if t == tag)
    return read_scalars


@check("lab07.write_scalars", reference=_reference_write_scalars)
def write_scalars_program(impl, rng):
    """Scalars written with tf.summary, read back from the event files."""
    for trial in range(1, 4):
        tag = str(rng.choice(["loss", "accuracy", "train/loss", "lr"]))
        values = [float(v) for v in rng.uniform(0, 2, size=int(rng.integers(2, 8)))]

        def written(tag=tag, values=values):
            with tempfile.TemporaryDirectory() as logdir:
                impl(logdir, tag, values)
                return [(t, step, value) for t, step, value in _event_scalars(logdir)]

        yield Case(f"trial {trial}: tag {tag!r}, {len(values)} values", written, rtol=1e-6,
                   atol=1e-7,
                   hint="tf.summary.scalar(tag, value, step=step) for step 0, 1, ... inside "
                        "`with writer.as_default():`, with writer = "
                        "tf.summary.create_file_writer(logdir); close (or flush) the writer "
                        "before returning, or the events stay in its buffer")


@check("lab07.read_scalars", reference=_reference_read_scalars)
def read_scalars_program(impl, rng):
    """(step, value) pairs of one tag, read from event files the check wrote."""
    for trial in range(1, 4):
        tags = [str(t) for t in rng.choice(["loss", "accuracy", "lr", "val/loss"], size=2,
                                           replace=False)]
        first = rng.uniform(0, 2, size=(2, int(rng.integers(2, 6))))
        resumed = trial == 3  # planted: a second run writes a second file into the folder
        second = rng.uniform(0, 2, size=(2, int(rng.integers(2, 4))))
        wanted = tags[int(rng.integers(0, 2))]

        files = "two event files (a resumed run)" if resumed else "one event file"
        yield Case(f"trial {trial}: tag {wanted!r} of {tags}, {files}",
                   lambda tags=tags, first=first, second=second, wanted=wanted, resumed=resumed:
                       _read_back(impl, tags, first, second if resumed else None, wanted),
                   rtol=1e-6, atol=1e-7,
                   hint="read every events.out.tfevents.* file in the folder with "
                        "tf.data.TFRecordDataset, parse each record with "
                        "tf.compat.v1.Event.FromString, keep the values whose tag matches; TF2 "
                        "stores a scalar in value.tensor (tf.make_ndarray), not "
                        "value.simple_value; sort the pairs by step")
    # Planted, drawn after the trials above so that they keep their inputs: the resumed run's
    # file is named with an earlier timestamp than the first run's (a folder copied between
    # machines), so the file that sorts first holds the later steps; only sorting the pairs by
    # step gives them in order, whatever the order the files are read in.
    tags = [str(t) for t in rng.choice(["loss", "accuracy", "lr", "val/loss"], size=2,
                                       replace=False)]
    first = rng.uniform(0, 2, size=(2, int(rng.integers(2, 6))))
    second = rng.uniform(0, 2, size=(2, int(rng.integers(2, 4))))
    wanted = tags[int(rng.integers(0, 2))]
    yield Case(f"tag {wanted!r} of {tags}, two event files, the later steps in the file whose "
               "name sorts first",
               lambda: _read_back(impl, tags, first, second, wanted, resumed_named_first=True),
               rtol=1e-6, atol=1e-7, weight=0.5,
               hint="return the pairs sorted by step: the files of a folder need not come (by "
                    "name, or by the order the file system lists them) in the order of their "
                    "steps")
    # Planted, drawn last: the folder also holds a file that is not an event file and a
    # plugins/ folder, as TensorBoard's log folders often do.
    tags = [str(t) for t in rng.choice(["loss", "accuracy", "lr", "val/loss"], size=2,
                                       replace=False)]
    first = rng.uniform(0, 2, size=(2, int(rng.integers(2, 6))))
    wanted = tags[int(rng.integers(0, 2))]
    yield Case(f"tag {wanted!r} of {tags}, one event file beside a projector_config.pbtxt "
               "and a plugins/ folder",
               lambda: _read_back(impl, tags, first, None, wanted, other_entries=True),
               rtol=1e-6, atol=1e-7, weight=0.5,
               hint="read only the event files (names that start with events.out.tfevents): "
                    "a log folder may hold other files and folders, which TFRecordDataset "
                    "cannot read")


def _read_back(impl, tags, first, second, wanted, resumed_named_first=False,
               other_entries=False):
    """``impl(logdir, wanted)`` on a folder the check wrote: ``first[row]`` under ``tags[row]``
    at steps 0, 1, ..., and, unless ``second`` is None, a resumed run's file with ``second``
    at the steps after those (named to sort before the first file if
    ``resumed_named_first``); with ``other_entries``, beside them a text file and a plugins/
    folder with a file inside, none of them an event file."""
    with tempfile.TemporaryDirectory() as logdir:
        tf = _tf()
        if other_entries:
            Path(logdir, "projector_config.pbtxt").write_text('embeddings { tensor_name: "w" }\n')
            Path(logdir, "plugins", "profile").mkdir(parents=True)
            Path(logdir, "plugins", "profile", "trace.json").write_text("{}\n")
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default():
            for step in range(first.shape[1]):
                for row, tag in enumerate(tags):
                    tf.summary.scalar(tag, first[row, step], step=step)
        writer.close()
        if second is not None:
            writer = tf.summary.create_file_writer(logdir, filename_suffix=".resumed")
            with writer.as_default():
                for step in range(second.shape[1]):
                    for row, tag in enumerate(tags):
                        tf.summary.scalar(tag, second[row, step],
                                          step=first.shape[1] + step)
            writer.close()
            if resumed_named_first:
                (name,) = [n for n in os.listdir(logdir) if n.endswith(".resumed")]
                # events.out.tfevents.<seconds>.<host>...: an earlier time, as many digits
                stamp = name.split(".")[3]
                renamed = name.replace(f".{stamp}.", f".{'1' + '0' * (len(stamp) - 1)}.", 1)
                os.rename(os.path.join(logdir, name), os.path.join(logdir, renamed))
        return [(int(s), float(v)) for s, v in impl(logdir, wanted)]


# ---------------------------------------------------------------- lab07.tf_torch_grads

_PARAMETERS = ("w1", "b1", "w2", "b2")


def _numpy_net_grads(x, y, w1, b1, w2, b2) -> tuple[float, list[np.ndarray]]:
    """loss = mean over rows of sum((relu(x @ w1 + b1) @ w2 + b2 - y)**2) and its gradients
    with respect to w1, b1, w2, b2 (the (in, out) layout), by hand in float64."""
    x, y, w1, b1, w2, b2 = (np.asarray(a, dtype=np.float64) for a in (x, y, w1, b1, w2, b2))
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0.0)
    diff = h @ w2 + b2 - y
    loss = float(np.mean(np.sum(diff ** 2, axis=1)))
    grad_out = 2.0 * diff / x.shape[0]
    grad_z1 = (grad_out @ w2.T) * (z1 > 0)
    return loss, [x.T @ grad_z1, grad_z1.sum(axis=0), h.T @ grad_out, grad_out.sum(axis=0)]


def _reference_tf_torch_grads():
    def tf_torch_grads(x, y, w1, b1, w2, b2):
        loss, grads = _numpy_net_grads(x, y, w1, b1, w2, b2)
        # Keras keeps a Dense kernel as (in, out), torch an nn.Linear weight as (out, in): the
        # same gradient, transposed.
        in_torch = [g.T if g.ndim == 2 else g for g in grads]
        return {"tf": {"loss": loss, **dict(zip(_PARAMETERS, grads))},
                "torch": {"loss": loss, **dict(zip(_PARAMETERS, in_torch))}}
    return tf_torch_grads


def _tf_torch_problem(rng):
    """Sizes D_in, H and D_out all different, as the text says (a forgotten transpose cannot go
    unnoticed), float64 data and weights, and pre-activations neither all on nor all off, none
    within float32 rounding of the ReLU's kink."""
    d_in = int(rng.integers(2, 6))
    h = int(rng.choice([v for v in range(3, 8) if v != d_in]))
    d_out = int(rng.choice([v for v in range(2, 5) if v not in (h, d_in)]))
    n = int(rng.integers(4, 9))
    x = rng.standard_normal((n, d_in))
    y = rng.standard_normal((n, d_out))
    w2 = rng.standard_normal((h, d_out)) / np.sqrt(h)
    b2 = rng.uniform(-0.5, 0.5, d_out)
    while True:
        w1 = rng.standard_normal((d_in, h)) / np.sqrt(d_in)
        b1 = rng.uniform(-0.5, 0.5, h)
        z1 = x @ w1 + b1
        if 0.2 <= (z1 > 0).mean() <= 0.8 and np.abs(z1).min() > 1e-3:
            return (n, d_in, h, d_out), (x, y, w1, b1, w2, b2)


def _framework_part(box: dict, framework: str, key: str) -> Any:
    if "result" not in box:
        raise EarlierStepFailed("skipped: the call to your function failed (see the case above)")
    result = box["result"]
    if not isinstance(result, dict) or not isinstance(result.get(framework), dict):
        raise TypeError(f"expected a dict {{'tf': {{...}}, 'torch': {{...}}}} of dicts, got "
                        f"{type(result).__name__}"
                        + (f" with keys {sorted(map(str, result))}" if isinstance(result, dict)
                           else ""))
    part = result[framework]
    if key == "loss":
        if "loss" not in part:
            raise KeyError(f"result[{framework!r}] has no 'loss'")
        return float(part["loss"])
    missing = [name for name in _PARAMETERS if name not in part]
    if missing:
        raise KeyError(f"result[{framework!r}] has no gradient for {missing}")
    return [part[name] for name in _PARAMETERS]


def _structure(result: Any) -> Any:
    """Which of the required entries a result {'tf': {...}, 'torch': {...}} holds (extra
    entries are ignored), or what came back instead."""
    if not isinstance(result, dict):
        return f"a {type(result).__name__}, not a dict"
    wanted = ("loss", *_PARAMETERS)
    found: dict = {}
    for framework in ("tf", "torch"):
        part = result.get(framework)
        found[framework] = ([k for k in wanted if k in part] if isinstance(part, dict)
                            else "missing" if part is None
                            else f"a {type(part).__name__}, not a dict")
    return found


_CALL_HINT = ("convert x and y to float32 (torch refuses float64 inputs to float32 layers); "
              "Keras takes w1, w2 as they are ((in, out) kernels), torch's nn.Linear wants "
              "w1.T, w2.T ((out, in) weights); return {'tf': {'loss', 'w1', 'b1', 'w2', "
              "'b2'}, 'torch': {...}}")

_FRAMEWORK_HINTS = {
    "tf": {
        "loss": "the lecture's loss, tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1)): "
                "a sum over the outputs, a mean over the rows (keras' MeanSquaredError also "
                "averages over the outputs), on Dense layers holding w1, b1, w2, b2 as given",
        "grads": "a Keras Dense kernel is (in, out), the layout of w1 and w2: "
                 "model.set_weights([w1, b1, w2, b2]) as given; take the gradients of the "
                 "lecture's loss with respect to [kernel, bias] of each Dense and return them "
                 "in that layout",
    },
    "torch": {
        "loss": "the lecture's loss, ((y_pred - y) ** 2).sum(dim=1).mean() (nn.MSELoss also "
                "averages over the outputs), on nn.Linear layers holding w1.T, b1, w2.T, b2: "
                "a reshape is not a transpose, and nn.Linear keeps its random biases unless "
                "you copy b1 and b2 in",
        "grads": "a torch nn.Linear weight is (out, in), the transpose of w1 and w2: copy "
                 "w.T into linear.weight and the biases into linear.bias; return "
                 "linear.weight.grad as it is, (out, in), not transposed back",
    },
}

_FRAMEWORK_NAMES = {"tf": "TensorFlow (Keras Dense)", "torch": "PyTorch (nn.Linear)"}
_GRAD_NAMES = {
    "tf": ("dloss/dw1 (first Dense's kernel, (D_in, H))", "dloss/db1 (first Dense's bias)",
           "dloss/dw2 (second Dense's kernel, (H, D_out))", "dloss/db2 (second Dense's bias)"),
    "torch": ("dloss/dw1 (first Linear's weight, (H, D_in))", "dloss/db1 (first Linear's bias)",
              "dloss/dw2 (second Linear's weight, (D_out, H))",
              "dloss/db2 (second Linear's bias)"),
}


@check("lab07.tf_torch_grads", reference=_reference_tf_torch_grads)
def tf_torch_grads_program(impl, rng):
    """One two-layer net in Keras and in PyTorch from the same weights: each framework's loss
    and gradients against hand-derived float64 ones, each in its framework's layout."""
    for trial in range(1, 3):
        (n, d_in, h, d_out), args = _tf_torch_problem(rng)
        label = f"trial {trial} (N={n}, D_in={d_in}, H={h}, D_out={d_out})"
        box: dict = {}

        def call(box=box, args=args):
            box.pop("result", None)
            box["result"] = impl(*(a.copy() for a in args))
            return _structure(box["result"])

        yield Case(f"{label}: the call returns {{'tf': {{...}}, 'torch': {{...}}}}", call,
                   hint=_CALL_HINT)
        for framework in ("tf", "torch"):
            name = _FRAMEWORK_NAMES[framework]
            hints = _FRAMEWORK_HINTS[framework]
            yield Case(f"{label}: {name} loss",
                       lambda box=box, framework=framework: _framework_part(box, framework,
                                                                            "loss"),
                       hint=hints["loss"], rtol=1e-4, atol=1e-5)
            yield Case(f"{label}: {name} gradients",
                       lambda box=box, framework=framework: _framework_part(box, framework,
                                                                            "grads"),
                       hint=hints["grads"], rtol=1e-4, atol=1e-5,
                       names=_GRAD_NAMES[framework])


PROPERTIES = {
    "lab07.tf1_train": (
        parameter("x", "trial 1 (N=7, D_in=2, H=7, D_out=2, 6 steps, lr=0.0634): losses"),
        parameter("y", "trial 2 (N=8, D_in=3, H=6, D_out=1, 5 steps, lr=0.0384): losses"),
        parameter("w1", "final w1"),
        parameter("w2", "final w2"),
        parameter("lr", "lr=0.0634): final w2"),
        parameter("steps", "6 steps"),
        promise("losses[t] is the lecture's loss before step t", "): losses"),
        promise("the final weights after gradient descent", "trial 2 (N=8, D_in=3, H=6, D_out=1, "
                                                           "5 steps, lr=0.0384): final w1"),
        promise("the arrays given are left as they were",
                "the caller's x, y, w1 and w2 are left as they were"),
        promise("the final weights as NumPy arrays",
                "the final w1 and w2 are returned as NumPy arrays"),
        promise("eager execution stays on (no disable_eager_execution)",
                "eager execution is still on after the call"),
        promise("tf.GradientTape is not used", forbidden="tensorflow.GradientTape"),
        edge("one step", "one step (N=4"),
    ),
    "lab07.tape_train": (
        parameter("x", "trial 1 (N=5, D_in=3, H=2, D_out=1, 4 steps, lr=0.0907): losses"),
        parameter("y", "trial 2 (N=4, D_in=5, H=4, D_out=1, 3 steps, lr=0.0217): losses"),
        parameter("w1", "final w1"),
        parameter("w2", "final w2"),
        parameter("lr", "lr=0.0907): final w2"),
        parameter("steps", "4 steps"),
        promise("the same training as Exercise 1: losses before each step", "): losses"),
        promise("the same final weights", "trial 1 (N=5, D_in=3, H=2, D_out=1, 4 steps, "
                                          "lr=0.0907): final w1"),
        promise("the arrays given are left as they were",
                "the caller's x, y, w1 and w2 are left as they were"),
        promise("the final weights as NumPy arrays, not tf.Variables",
                "the final w1 and w2 are returned as NumPy arrays"),
        promise("no tf1.Session", forbidden="tensorflow.compat.v1.Session"),
        promise("no tf1.gradients", forbidden="tensorflow.gradients"),
        edge("one step", "one step (N=5"),
    ),
    "lab07.tape_derivatives": (
        parameter("f", "f(x) = 1.65*exp(-0.75*x**2)"),
        parameter("x", "x a float64 constant of shape (4,)"),
        promise("dy, the derivative of y = f(x)", "of shape (3,): dy"),
        promise("d2y, the second derivative (nested tapes)", "of shape (3,): d2y"),
        promise("dz, the gradient of sum(y * y) (the persistent tape's second gradient)",
                "of shape (4,): dz"),
        edge("x a tf.Variable", "x a tf.Variable of shape (2,): d2y"),
        promise("three tensors, not NumPy arrays", "dy, d2y and dz are TensorFlow tensors"),
    ),
    "lab07.predict_traces": (
        parameter("calls", "sequence 1: calls with"),
        promise("a Python number traces once per new value", "sequence 1: calls with 1, 2, 3, 1"),
        promise("a tensor traces once per new dtype and shape",
                "sequence 2: calls with tf.float32(2,), tf.float32(1,)"),
        promise("a NumPy array traces like a tf.constant of its dtype and shape",
                "sequence 3: calls with np.float32(2,), tf.float32(2,)"),
        promise("the count after each call, in mixtures of all kinds", "sequence 5"),
        promise("no tf.function is run: the rule is written", forbidden="tensorflow.function"),
        edge("an int and a float of equal value", "1, 1.0"),
        edge("the same values as NumPy and as tf.constant", "np.float64(2,), tf.float64(2,)"),
    ),
    "lab07.signature_function": (
        parameter("fn", "signature_function(fn) returns"),
        promise("fn's values for float32 vectors", "calls with float32 vectors of lengths "
                                                   "[2, 3, 6, 5, 7]: values"),
        promise("one trace for vectors of every length (NumPy and tensors)", "number of traces"),
        promise("another dtype raises TypeError", "a call with an int32 vector is refused"),
        promise("another rank raises TypeError", "a call with a float32 matrix is refused"),
    ),
    "lab07.custom_fit": (
        parameter("model", "weights after training: kernel 1"),
        parameter("x", "trial 1 (N=11"),
        parameter("y", "Dense(3)): loss of each epoch"),
        parameter("epochs", "2 epochs"),
        parameter("batch_size", "batch_size=4"),
        parameter("lr", "weights after training: bias 2"),
        promise("one loss per epoch, as fit's history reports it", "loss of each epoch"),
        promise("one SGD step per batch, in order, the model trained in place",
                "weights after training"),
        promise("model.fit is not called", forbidden="keras.Model.fit"),
        promise("train_on_batch is not called", forbidden="keras.Model.train_on_batch"),
        promise("train_step is not called", forbidden="keras.Model.train_step"),
        edge("a partial last batch (an epoch's loss weights it by its size)",
             "N=11, batch_size=4, 2 epochs, Dense(3, relu) -> Dense(3)): loss of each epoch"),
        edge("batches that divide evenly", "N=15, batch_size=5"),
    ),
    "lab07.write_scalars": (
        parameter("logdir", "trial 1: tag 'accuracy', 6 values"),
        parameter("tag", "tag 'loss'"),
        parameter("values", "7 values"),
        promise("values[i] under tag at step i, in an event file in logdir",
                "trial 3: tag 'loss', 7 values"),
    ),
    "lab07.read_scalars": (
        parameter("logdir", "one event file"),
        parameter("tag", "tag 'val/loss' of ['val/loss', 'lr']"),
        promise("only the scalars of the tag asked for",
                "trial 1: tag 'loss' of ['loss', 'accuracy'], one event file"),
        promise("every event file of logdir is read", "two event files (a resumed run)"),
        promise("the pairs sorted by step", "the later steps in the file whose name sorts first"),
        promise("only event files are read: other files and folders of logdir are left alone",
                "beside a projector_config.pbtxt and a plugins/ folder"),
    ),
    "lab07.tf_torch_grads": (
        parameter("x", "TensorFlow (Keras Dense) loss"),
        parameter("y", "PyTorch (nn.Linear) loss"),
        parameter("w1", "dloss/dw1 (first Dense's kernel, (D_in, H))"),
        parameter("b1", "dloss/db1 (first Linear's bias)"),
        parameter("w2", "dloss/dw2 (second Linear's weight, (D_out, H))"),
        parameter("b2", "dloss/db2 (second Dense's bias)"),
        promise("a dict {'tf': {...}, 'torch': {...}}", "the call returns {'tf': {...}, 'torch'"),
        promise("each framework's loss as a float, the lecture's loss",
                "TensorFlow (Keras Dense) loss"),
        promise("Keras' gradients in the (in, out) kernel layout",
                "dloss/dw2 (second Dense's kernel, (H, D_out))"),
        promise("torch's gradients in the (out, in) weight layout (w1, w2 transposed in)",
                "dloss/dw1 (first Linear's weight, (H, D_in))"),
        edge("sizes that differ (a forgotten transpose shows)", "(N=7, D_in=5, H=3, D_out=4)"),
    ),
}
