"""Checks for lab08_jax: per-example gradients, PRNG keys, what a jitted function does when it
is traced, timing jit, and data-parallel gradients with pmap.

The lab's model is a one-hidden-layer tanh network for one example, ``params`` a dict
``{"w1": (D, H), "b1": (H,), "w2": (H,), "b2": ()}``, with a squared-error loss. Gradients are
judged against PyTorch (``torch.func`` and autograd in float64), an oracle independent of JAX.

NOTE [two devices]: XLA reads ``XLA_FLAGS`` once, when JAX is first imported. The lab's setup
cell asks for two host CPU devices before it imports JAX, so the data-parallel exercise runs on
two devices in every kernel. The reference never needs more than one device: the grader's
process may have imported JAX with one. Processes that run student answers in-process (the
mutant suite, the student's own notebook) must have two, so importing this module asks for
them as well when JAX is not imported yet.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any

import numpy as np

from ..monitor import ENGINE_TARGET
from ..program import Case, check, handed
from ..properties import edge, parameter, promise

HOST_DEVICES_FLAG = "--xla_force_host_platform_device_count=2"
if "jax" not in sys.modules and "xla_force_host_platform_device_count" not in os.environ.get(
        "XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {HOST_DEVICES_FLAG}".strip()

_PARAM_NAMES = ("w1", "b1", "w2", "b2")

# ---------------------------------------------------------------------------------------------
# the model, in PyTorch (the oracle) and as data
# ---------------------------------------------------------------------------------------------


def _draw_problem(rng, n: int, d: int, h: int):
    """float32 params, inputs (n, d) and targets (n,) as NumPy arrays."""
    params = {"w1": rng.standard_normal((d, h)) / np.sqrt(d), "b1": rng.standard_normal(h) * 0.1,
              "w2": rng.standard_normal(h) / np.sqrt(h), "b2": np.asarray(rng.standard_normal())}
    params = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return params, x, y


def _jax(params, *arrays):
    import jax.numpy as jnp

    return ({k: jnp.asarray(v) for k, v in params.items()}, *(jnp.asarray(a) for a in arrays))


def _torch_example_loss(p, x, y):
    import torch

    return (torch.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2


def _to_torch(params, *arrays):
    import torch

    as64 = lambda a: torch.from_numpy(np.array(a, dtype=np.float64))
    return ({k: as64(v) for k, v in params.items()}, *(as64(a) for a in arrays))


def _torch_per_example_grads(params, x, y) -> dict:
    """Per-example gradients with ``torch.func.vmap(torch.func.grad(...))``, in float64."""
    from torch.func import grad, vmap

    p, tx, ty = _to_torch(params, x, y)
    grads = vmap(grad(_torch_example_loss), in_dims=(None, 0, 0))(p, tx, ty)
    return {k: grads[k].numpy() for k in _PARAM_NAMES}


def _torch_full_batch_grad(params, x, y) -> dict:
    """The gradient of the mean loss over the whole batch, by torch autograd in float64."""
    import torch

    p, tx, ty = _to_torch(params, x, y)
    for v in p.values():
        v.requires_grad_(True)
    loss = _torch_example_loss(p, tx, ty).mean()
    grads = torch.autograd.grad(loss, [p[k] for k in _PARAM_NAMES])
    return {k: g.numpy() for k, g in zip(_PARAM_NAMES, grads)}


# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def _reference_per_example_grads():
    """torch.func's per-example gradients, called from JAX through ``jax.pure_callback`` so
    that the reference also runs under ``jax.jit``."""
    import jax

    def per_example_grads(params, x, y):
        shapes = {k: jax.ShapeDtypeStruct((x.shape[0], *params[k].shape), np.float32)
                  for k in _PARAM_NAMES}

        def on_host(params, x, y):
            grads = _torch_per_example_grads({k: np.asarray(v) for k, v in params.items()},
                                             np.asarray(x), np.asarray(y))
            return {k: g.astype(np.float32) for k, g in grads.items()}

        return jax.pure_callback(on_host, shapes, params, x, y)

    return per_example_grads


def _reference_prng():
    import jax
    import jax.numpy as jnp

    def init_params(key, d_in, hidden):
        key_w1, key_w2 = jax.random.split(key)
        return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in),
                "b1": jnp.zeros(hidden),
                "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
                "b2": jnp.zeros(())}

    def dropout_masks(key, steps, shape, keep_prob):
        masks = []
        for _ in range(steps):
            key, step_key = jax.random.split(key)
            masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
        return jnp.stack(masks)

    return {"init_params": init_params, "dropout_masks": dropout_masks}


def _reference_predict_jit():
    """Not a prediction: the real thing. A fresh jitted function per sequence of events, whose
    trace count and results are recorded as they happen."""
    import jax
    import jax.numpy as jnp

    def predict_jit_calls(events, scale=1.0):
        state = {"scale": scale}  # stands for the notebook's global SCALE
        traces = []

        def scaled_sum(x):
            traces.append(x.shape)  # a side effect, like the notebook's print
            return jnp.sum(x) * state["scale"]

        jitted = jax.jit(scaled_sum)
        results = []
        for event in events:
            if event[0] == "scale":
                state["scale"] = event[1]
            elif event[0] == "clear":
                jitted.clear_cache()
            else:
                before = len(traces)
                value = jitted(jnp.arange(event[1], dtype=event[2]))
                results.append((len(traces) > before, float(value)))
        return results

    return predict_jit_calls


def _reference_time_jit():
    import jax

    def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
        compiled = jit(f)
        start = clock()
        compiled(x).block_until_ready()
        first = clock() - start
        steady = []
        for _ in range(repeats):
            start = clock()
            compiled(x).block_until_ready()
            steady.append(clock() - start)
        median = statistics.median(steady)
        return {"first_call_s": first, "steady_s": median, "compile_s": first - median}

    return time_jit


def _reference_data_parallel():
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    def data_parallel_grad(params, x, y):
        """The full-batch gradient (torch, float64), one copy on each local device."""
        numpy_params = {k: np.asarray(v) for k, v in params.items()}
        grads = _torch_full_batch_grad(numpy_params, np.asarray(x), np.asarray(y))
        devices = jax.local_devices()
        spread = NamedSharding(Mesh(np.array(devices), ("devices",)), PartitionSpec("devices"))
        return {k: jax.device_put(np.stack([g.astype(np.float32)] * len(devices)), spread)
                for k, g in grads.items()}

    return data_parallel_grad


# ---------------------------------------------------------------------------------------------
# lab08.per_example_grads
# ---------------------------------------------------------------------------------------------

_PER_EXAMPLE_HINT = ("take jax.grad of example_loss with respect to params (argument 0), then "
                     "jax.vmap it over the examples: in_axes=(None, 0, 0), since params are "
                     "shared and x, y carry the batch axis; the result is a dict like params "
                     "with a leading axis of size N on every leaf")


def _jitted(impl, *args):
    import jax

    return jax.jit(impl)(*args)


@check("lab08.per_example_grads", reference=_reference_per_example_grads,
       forbid=("torch", ENGINE_TARGET))
def per_example_grads_program(impl: Any, rng):
    """per_example_grads: one gradient per example, against torch.func in float64."""
    # Eager once; then under jax.jit, which also proves the answer traceable (and compiles one
    # program per shape instead of one per operation).
    shapes = [(int(rng.integers(3, 9)), int(rng.integers(2, 6)), int(rng.integers(2, 7)), False),
              (int(rng.integers(3, 9)), int(rng.integers(2, 6)), int(rng.integers(2, 7)), True),
              (1, int(rng.integers(2, 6)), int(rng.integers(2, 7)), True)]  # a batch of one
    for n, d, h, jitted in shapes:
        params, x, y = _draw_problem(rng, n, d, h)
        call = "jax.jit(per_example_grads)" if jitted else "per_example_grads"

        def observe(params=params, x=x, y=y, jitted=jitted):
            return _jitted(impl, *_jax(params, x, y)) if jitted else impl(*_jax(params, x, y))

        yield Case(f"{call} on N={n} examples, D={d} inputs, H={h} hidden units", observe,
                   hint=(_PER_EXAMPLE_HINT if not jitted else
                         "the function must be traceable: no float(), .item() or NumPy on "
                         "traced values, and no Python branch on them; " + _PER_EXAMPLE_HINT),
                   rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# lab08.init_params and lab08.dropout_masks
# ---------------------------------------------------------------------------------------------

_INIT_HINT = ("split the key once: key_w1, key_w2 = jax.random.split(key); w1 = "
              "jax.random.normal(key_w1, (d_in, hidden)) / sqrt(d_in), w2 = "
              "jax.random.normal(key_w2, (hidden,)) / sqrt(hidden), b1 and b2 zeros; never draw "
              "twice from one key")
_MASK_HINT = ("carry the key through the loop: each step does key, step_key = "
              "jax.random.split(key) and draws the mask with "
              "jax.random.bernoulli(step_key, keep_prob, shape); stack the masks")
_RANDOM_STATE = ("numpy.random", "random", "torch")


@check("lab08.init_params", reference=lambda: _reference_prng()["init_params"],
       forbid=_RANDOM_STATE)
def init_params_program(impl: Any, rng):
    """init_params: one split, one key per weight matrix, reproducible from the key."""
    for _ in range(2):
        seed, d_in, hidden = (int(rng.integers(0, 2**31)), int(rng.integers(2, 7)),
                              int(rng.integers(2, 9)))

        def values(seed=seed, d_in=d_in, hidden=hidden):
            import jax

            return impl(jax.random.key(seed), d_in, hidden)

        yield Case(f"init_params(jax.random.key({seed}), d_in={d_in}, hidden={hidden})", values,
                   hint=_INIT_HINT, rtol=1e-6, atol=1e-7)
    seed, d_in, hidden = (int(rng.integers(0, 2**31)), int(rng.integers(2, 7)),
                          int(rng.integers(2, 9)))

    def legacy_key():
        import jax

        return impl(jax.random.PRNGKey(seed), d_in, hidden)

    yield Case(f"a legacy key: init_params(jax.random.PRNGKey({seed}), {d_in}, {hidden})",
               legacy_key, hint="use only jax.random functions on the key, which accept both "
                                "kinds; " + _INIT_HINT, rtol=1e-6, atol=1e-7)

    def properties():
        import jax

        key = jax.random.key(seed)
        first, again = impl(key, d_in, hidden), impl(key, d_in, hidden)
        return {"the same key gives the same parameters": all(
            np.array_equal(np.asarray(first[k]), np.asarray(again[k])) for k in first)}

    yield Case("the same key gives the same parameters", properties, hint=_INIT_HINT)

    def dtypes():
        import jax

        got = impl(jax.random.key(seed), d_in, hidden)
        return {"every parameter is a float32 array": all(
            np.asarray(v).dtype == np.float32 for v in got.values())}

    yield Case("float32 parameters (JAX's default)", dtypes,
               hint="make every parameter with jax.numpy (jnp.zeros(hidden), jnp.zeros(())): "
                    "np.zeros gives float64 arrays and a Python 0.0 a float64 scalar; "
                    + _INIT_HINT)

    def shapes():
        import jax

        got = impl(jax.random.key(seed), d_in, hidden)
        # As text: the comparison of values lets an array of one element stand for a scalar.
        return {name: str(tuple(np.shape(value))) for name, value in got.items()}

    yield Case(f"the parameters' shapes: w1 ({d_in}, {hidden}), b1 ({hidden},), w2 ({hidden},), "
               f"b2 ()", shapes,
               hint="b2 is a zero of shape (), a scalar: jnp.zeros(()), not jnp.zeros(1), whose "
                    "shape is (1,); b1 is jnp.zeros(hidden), of shape (hidden,)")


@check("lab08.dropout_masks", reference=lambda: _reference_prng()["dropout_masks"],
       forbid=_RANDOM_STATE)
def dropout_masks_program(impl: Any, rng):
    """dropout_masks: a fresh key every step, split from the carried key."""
    for _ in range(2):
        seed, steps = int(rng.integers(0, 2**31)), int(rng.integers(2, 6))
        shape = (int(rng.integers(2, 6)), int(rng.integers(2, 6)))
        keep = float(rng.choice([0.5, 0.8, 0.9]))

        def masks(seed=seed, steps=steps, shape=shape, keep=keep):
            import jax

            return impl(jax.random.key(seed), steps, shape, keep)

        yield Case(f"dropout_masks(jax.random.key({seed}), steps={steps}, shape={shape}, "
                   f"keep_prob={keep})", masks, hint=_MASK_HINT)
    seed, shape = int(rng.integers(0, 2**31)), (int(rng.integers(3, 6)), int(rng.integers(3, 6)))

    def properties():
        import jax

        key = jax.random.key(seed)
        first = np.asarray(impl(key, 4, shape, 0.5))
        again = np.asarray(impl(key, 4, shape, 0.5))
        return {"the same key gives the same masks": bool(np.array_equal(first, again)),
                "no two steps share a mask": len({m.tobytes() for m in first}) == len(first)}

    yield Case(f"reproducible, and a new mask every step (4 steps of {shape})", properties,
               hint=_MASK_HINT)
    yield Case(f"the masks are booleans, True = keep ({shape})",
               lambda: {"dtype is bool": np.asarray(
                   impl(__import__("jax").random.key(seed), 2, shape, 0.5)).dtype == np.bool_},
               hint="return the boolean masks jax.random.bernoulli draws, stacked, without "
                    "converting them to 0.0/1.0 floats or integers; " + _MASK_HINT)
    yield Case(f"steps=1 gives one mask of shape {shape}",
               lambda: impl(__import__("jax").random.key(seed), 1, shape, 0.5),
               hint="return an array of shape (steps, *shape), even for one step; " + _MASK_HINT)


# ---------------------------------------------------------------------------------------------
# lab08.predict_jit
# ---------------------------------------------------------------------------------------------

_SCALES = (0.5, 2.0, 3.0, -1.0, 10.0)
_DTYPES = ("float32", "int32")
# Planted in every seed: a repeat after SCALE changed (stale), two shapes traced under two
# different SCALEs, a new dtype of a known shape, and a cleared cache.
_PLANTED = [("call", 3, "float32"), ("call", 3, "float32"), ("scale", 2.0),
            ("call", 3, "float32"), ("call", 4, "float32"), ("scale", 10.0),
            ("call", 3, "int32"), ("call", 4, "float32"), ("call", 3, "float32"),
            ("clear",), ("call", 3, "float32"), ("call", 4, "float32")]


def _describe_events(events) -> str:
    words = {"call": lambda e: f"f({e[1]} {e[2]})", "scale": lambda e: f"SCALE={e[1]:g}",
             "clear": lambda e: "clear"}
    return ", ".join(words[e[0]](e) for e in events)


def _random_events(rng, length: int) -> list:
    events = []
    for _ in range(length):
        kind = float(rng.random())
        if kind < 0.22:
            events.append(("scale", float(_SCALES[int(rng.integers(0, len(_SCALES)))])))
        elif kind < 0.3:
            events.append(("clear",))
        else:
            events.append(("call", int(rng.integers(2, 5)),
                           _DTYPES[int(rng.integers(0, len(_DTYPES)))]))
    return events


@check("lab08.predict_jit", reference=_reference_predict_jit, forbid=("jax",))
def predict_jit_program(impl: Any, rng):
    """predict_jit_calls: which calls trace (print) and what they return, against real JAX."""
    hint = ("a jitted function is traced once per (shape, dtype) it has not seen since its "
            "cache was last cleared; tracing runs the Python body (the print) and bakes in "
            "the value SCALE has at that moment; a call that hits the cache prints nothing and "
            "uses the SCALE of its own trace, however SCALE changed since")
    scale = float(_SCALES[int(rng.integers(0, len(_SCALES)))])
    # The planted sequence leaves scale at its default (SCALE = 1.0 at first), as the text's
    # example does; the random ones pass it.
    sequences = [(_PLANTED, None, 2.0)]
    sequences += [(_random_events(rng, int(rng.integers(8, 13))), scale, 1.0) for _ in range(3)]
    for number, (events, start, weight) in enumerate(sequences):
        at_first = "SCALE=1 at first: scale left at its default" if start is None else \
            f"SCALE={start:g} at first"
        yield Case(f"sequence {number} ({at_first}): {_describe_events(events)}",
                   lambda events=events, start=start: [
                       (bool(traced), float(value)) for traced, value in
                       (impl(events) if start is None else impl(events, start))],
                   hint=hint, weight=weight)


# ---------------------------------------------------------------------------------------------
# lab08.time_jit
# ---------------------------------------------------------------------------------------------


CLOCK_ORIGIN_S = 100.0   # where the pretend clock starts


@handed  # the check's program hands it to the student's code
class _FakeAccelerator:
    """A pretend accelerator with its own clock, and a ``jit`` for it.

    ``jit(f)`` returns a compiled function; the first call for a given ``f`` costs
    ``compile_s`` of host time (tracing and compiling, as JAX does once per function and input
    signature). Every call costs ``dispatch_s`` of host time and queues ``durations[i]`` seconds
    of device work; what it returns is ready only after its ``block_until_ready()``.
    """

    def __init__(self, compile_s: float, durations: list[float], dispatch_s: float = 1e-5,
                 synchronous: bool = False):
        self.compile_s, self.durations, self.dispatch_s = compile_s, list(durations), dispatch_s
        self.synchronous = synchronous   # a call returns only once its work is done
        # Like time.perf_counter, the clock counts from an arbitrary origin, not from 0: a time
        # must be the difference of two readings (`clock() + start`, or a first call's bare
        # `clock()`, read as the right time on a clock that starts at 0).
        self.now = self.busy_until = CLOCK_ORIGIN_S
        self.calls = 0
        self.jits = 0   # how often jit itself was applied
        self.compiled: set[int] = set()

    def clock(self) -> float:
        return self.now

    def jit(self, f):
        self.jits += 1

        def compiled(*args):
            if id(f) not in self.compiled:
                self.compiled.add(id(f))
                self.now += self.compile_s
            self.now += self.dispatch_s
            duration = self.durations[min(self.calls, len(self.durations) - 1)]
            self.calls += 1
            self.busy_until = max(self.busy_until, self.now) + duration
            if self.synchronous:
                self.now = self.busy_until
            return _FakeResult(self, self.busy_until)

        return compiled


@handed  # the check's program hands it to the student's code
class _FakeResult:
    """What a compiled call returns: ready once the pretend device has worked until ``ready``."""

    def __init__(self, device: _FakeAccelerator, ready: float):
        self.device, self.ready = device, ready

    def block_until_ready(self) -> "_FakeResult":
        self.device.now = max(self.device.now, self.ready)
        return self


def _run_fake(impl, compile_s, durations, repeats=None, synchronous=False,
              keys=("first_call_s", "steady_s", "compile_s")):
    """The record ``impl`` returns on a pretend accelerator (only ``keys`` of it: a case that
    isolates one habit looks only at what that habit changes), and the number of calls."""
    device = _FakeAccelerator(compile_s, durations, synchronous=synchronous)
    kwargs = {} if repeats is None else {"repeats": repeats}
    got = impl(lambda x: x, 0.0, clock=device.clock, jit=device.jit, **kwargs)
    return ({k: float(got[k]) for k in keys}, device.calls)


def _jit_applications(impl, repeats: int) -> int:
    """How often ``impl`` applies ``jit`` in one run on the pretend accelerator."""
    device = _FakeAccelerator(0.1, [1e-3] * (repeats + 1))
    impl(lambda x: x, 0.0, clock=device.clock, jit=device.jit, repeats=repeats)
    return device.jits


_TIME_NAMES = ("returned times", "number of calls")
_TIME_HINT = ("compiled = jit(f) once; time the first call until its result is ready "
              "(compiled(x).block_until_ready()); then time each of `repeats` calls the same "
              "way, one at a time; steady_s is their median and compile_s = first_call_s - "
              "steady_s; read every time from clock()")


@check("lab08.time_jit", reference=_reference_time_jit,
       forbid=("timeit", "coursekit.hardware.timing"))
def time_jit_program(impl: Any, rng):
    """time_jit: the first call apart, block_until_ready, the median, on a pretend accelerator."""
    # Each of the next cases isolates one habit. Work that is queued (an accelerator, and
    # JAX's CPU backend too) needs block_until_ready; on a device whose calls return only when
    # their work is done, waiting changes nothing, so the median and the defaults are checked
    # there, apart from it.
    # Every call equally long: mean and median agree, so only the waiting matters.
    duration = float(rng.uniform(1e-3, 5e-3))
    waits = ("calls return before their work is done: first_call_s and steady_s include "
             "waiting for it")
    yield Case(waits,
               lambda: _run_fake(impl, 0.1, [duration] * 8, 5,
                                 keys=("first_call_s", "steady_s")),
               hint="a jitted call returns as soon as its work is queued: time until "
                    "compiled(x).block_until_ready() returns, for the first call and for "
                    "every timed one", rtol=1e-9, atol=1e-12, names=_TIME_NAMES)
    repeats = int(rng.choice([5, 7, 9]))
    durations = list(rng.uniform(1e-3, 2e-3, size=repeats + 1))
    durations[1 + int(rng.integers(0, repeats))] = 0.2  # one steady call is interrupted
    median = (f"one slow call among {repeats} repeats (calls that wait for their work): the "
              f"median ignores it")
    yield Case(median,
               lambda: _run_fake(impl, 0.1, durations, repeats, synchronous=True,
                                 keys=("steady_s",)),
               hint="steady_s is the median of the timed calls (statistics.median), not their "
                    "mean: one interrupted call must not move it", rtol=1e-9, atol=1e-12,
               names=_TIME_NAMES)
    # An even count: the median is the mean of the two middle calls, not either one.
    repeats = int(rng.choice([4, 6, 8]))
    durations = [0.1] + list(rng.uniform(1e-3, 2e-3, size=repeats))
    yield Case(f"an even number of repeats ({repeats}, calls that wait for their work): "
               f"the median is the mean of the two middle calls",
               lambda d=durations, r=repeats: _run_fake(impl, 0.1, d, r, synchronous=True,
                                                        keys=("steady_s",)),
               hint="for an even number of timed calls the median is the mean of the two "
                    "middle ones (statistics.median), not the upper or the lower one",
               rtol=1e-9, atol=1e-12, names=_TIME_NAMES)
    repeats = int(rng.integers(3, 9))
    yield Case(f"jit(f) is applied once ({repeats} repeats)",
               lambda r=repeats: _jit_applications(impl, r), names=("calls of jit",),
               hint="compiled = jit(f), once, before the first call: every later call uses "
                    "that compiled function (applying jit again before each call re-creates it)")
    durations = list(rng.uniform(1e-3, 5e-3, size=12))
    yield Case("defaults: time_jit(f, x, clock=..., jit=...) times 10 steady calls (calls that "
               "wait for their work)",
               lambda: _run_fake(impl, 0.2, durations, synchronous=True, keys=()),
               hint="keep the default repeats=10: one first call and 10 timed ones",
               rtol=1e-9, atol=1e-12, names=_TIME_NAMES)
    # The whole record, on queued work: what the cases above isolate comes together here, so
    # a failure there is said there, once.
    for trial in range(2):
        repeats = int(rng.integers(3, 9))
        compile_s = float(rng.uniform(0.05, 0.5))
        durations = list(rng.uniform(1e-3, 5e-3, size=repeats + 3))
        yield Case(f"compile {compile_s:.3g} s, {repeats} repeats (trial {trial})",
                   lambda c=compile_s, d=durations, r=repeats: _run_fake(impl, c, d, r),
                   hint=_TIME_HINT, rtol=1e-9, atol=1e-12, names=_TIME_NAMES,
                   follows=(waits, median))
    size = int(rng.integers(48, 97))

    def real():
        import jax.numpy as jnp

        x = jnp.ones((size, size))
        got = impl(lambda a: jnp.tanh(a @ a.T).sum(axis=0), x, repeats=5)
        return {"every time is positive": all(float(got[k]) > 0 for k in ("first_call_s",
                                                                          "steady_s")),
                "compiling costs more than a steady call":
                    float(got["compile_s"]) > float(got["steady_s"]),
                "compile_s is first_call_s - steady_s": bool(np.isclose(
                    float(got["compile_s"]), float(got["first_call_s"]) - float(got["steady_s"])))}

    yield Case(f"real jax.jit on this machine ({size}x{size} matrix, default clock and jit)",
               real, hint="by default use time.perf_counter and jax.jit; " + _TIME_HINT)


# ---------------------------------------------------------------------------------------------
# lab08.data_parallel_grad
# ---------------------------------------------------------------------------------------------

_PARALLEL_HINT = ("split x and y into jax.local_device_count() equal shards along the batch "
                  "axis; inside jax.pmap(..., axis_name=...), take jax.grad of batch_loss on "
                  "the device's shard and average over devices with jax.lax.pmean (not psum: "
                  "each shard's loss is already a mean); params go to every device unsplit "
                  "(in_axes=(None, 0, 0))")


@check("lab08.data_parallel_grad", reference=_reference_data_parallel, forbid=("torch",))
def data_parallel_program(impl: Any, rng):
    """data_parallel_grad: every device ends with the full-batch gradient, computed by pmap."""
    for trial in range(2):
        n, d, h = int(rng.integers(1, 4)) * 8, int(rng.integers(2, 6)), int(rng.integers(2, 7))
        params, x, y = _draw_problem(rng, n, d, h)

        def observe(params=params, x=x, y=y):
            import jax

            got = impl(*_jax(params, x, y))
            devices = jax.local_device_count()
            leaves = jax.tree_util.tree_leaves(got)
            return {"gradient held by the first device": {k: got[k][0] for k in got},
                    "gradient held by the last device": {k: got[k][-1] for k in got},
                    "one copy per device": all(leaf.shape[0] == devices for leaf in leaves),
                    "the copies live on every device": all(
                        len(leaf.sharding.device_set) == devices for leaf in leaves)}

        yield Case(f"batch of N={n} over the local devices (D={d}, H={h}, trial {trial})",
                   observe, hint=_PARALLEL_HINT, rtol=1e-4, atol=1e-5)


PROPERTIES = {
    "lab08.per_example_grads": (
        parameter("params", "per_example_grads on N="),
        parameter("x", "per_example_grads on N="),
        parameter("y", "per_example_grads on N="),
        promise("a dict like params, each leaf with a leading axis of size N",
                "per_example_grads on N="),
        promise("entry i is the gradient of example_loss on example i, for params",
                "per_example_grads on N="),
        promise("traceable: it runs under jax.jit", "jax.jit(per_example_grads) on N="),
        promise("JAX only: no call into PyTorch", forbidden="torch"),
        edge("a batch of one", "on N=1 examples"),
    ),
    "lab08.init_params": (
        parameter("key", "init_params(jax.random.key("),
        parameter("d_in", "d_in="),
        parameter("hidden", "hidden="),
        promise("one split; w1 and w2 normal from their own keys, scaled by 1/sqrt(fan-in); "
                "zero biases", "init_params(jax.random.key("),
        promise("float32 values", "float32 parameters"),
        promise("shapes (d_in, hidden), (hidden,), (hidden,) and b2 of shape ()",
                "the parameters' shapes"),
        promise("the same key gives the same parameters", "the same key gives the same"),
        promise("JAX keys only: no numpy.random", forbidden="numpy.random"),
        promise("JAX keys only: no random", forbidden="random"),
        promise("JAX keys only: no torch", forbidden="torch"),
        edge("a legacy jax.random.PRNGKey", "a legacy key"),
    ),
    "lab08.dropout_masks": (
        parameter("key", "dropout_masks(jax.random.key("),
        parameter("steps", "steps="),
        parameter("shape", "shape=("),
        parameter("keep_prob", "keep_prob="),
        promise("the key carried and split every step, the mask drawn from the step key",
                "dropout_masks(jax.random.key("),
        promise("stacked into shape (steps, *shape)", "dropout_masks(jax.random.key("),
        promise("boolean masks, True = keep", "the masks are booleans"),
        promise("reproducible from the key, a new mask every step",
                "reproducible, and a new mask every step"),
        promise("JAX keys only: no numpy.random", forbidden="numpy.random"),
        promise("JAX keys only: no random", forbidden="random"),
        promise("JAX keys only: no torch", forbidden="torch"),
        edge("steps=1", "steps=1 gives one mask"),
    ),
    "lab08.predict_jit": (
        parameter("events", "sequence 0"),
        parameter("scale", "sequence 1 (SCALE="),
        promise("scale defaults to 1.0", "scale left at its default"),
        promise("one (printed, result) pair per call, in order", "sequence 0"),
        promise("a call traces once per (shape, dtype) not yet in the cache", "sequence 0"),
        promise("a cached call returns with the SCALE its own trace read", "SCALE=2, f(3"),
        promise("a prediction: it may not call JAX", forbidden="jax"),
        edge("a new dtype of a shape already traced", "f(3 int32)"),
        edge("clear_cache() forgets every compiled version", "clear, f(3 float32)"),
        edge("random sequences of events", "sequence 3"),
    ),
    "lab08.time_jit": (
        parameter("f", "real jax.jit on this machine"),
        parameter("x", "real jax.jit on this machine"),
        parameter("repeats", "repeats (trial 0)"),
        parameter("clock", "(trial 0): returned times"),
        parameter("jit", "jit(f) is applied once"),
        promise("compiled = jit(f), once", "jit(f) is applied once"),
        promise("the first call timed until its result is ready",
                "calls return before their work is done"),
        promise("each timed call waits for its result", "calls return before their work is done"),
        promise("steady_s is the median of the timed calls", "the median ignores it"),
        edge("an even number of repeats: the median is the mean of the two middle calls",
             "an even number of repeats"),
        promise("compile_s = first_call_s - steady_s", "(trial 0): returned times"),
        promise("repeats=10 by default", "defaults: time_jit"),
        promise("time.perf_counter and jax.jit by default", "default clock and jit"),
        promise("every time read from clock()", "(trial 1): returned times"),
        promise("timeit is not used", forbidden="timeit"),
        promise("coursekit's timer is not used", forbidden="coursekit.hardware.timing"),
        edge("one interrupted call among the repeats", "one slow call among"),
    ),
    "lab08.data_parallel_grad": (
        parameter("params", "over the local devices"),
        parameter("x", "batch of N="),
        parameter("y", "batch of N="),
        promise("the batch split into equal shards, one per device", "over the local devices"),
        promise("every device's copy is the full-batch gradient (pmean of the shards')",
                "over the local devices (D="),
        promise("one copy per device, on every device", "over the local devices"),
        promise("JAX only: no call into PyTorch", forbidden="torch"),
    ),
}
