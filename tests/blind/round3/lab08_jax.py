"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    "per_example_grads": [
        ("a Python loop of jax.grad, one per example, stacked with np.stack: right eagerly, but under jax.jit np.stack meets tracers and raises",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    one = jax.grad(example_loss)
    grads = [one(params, x[i], y[i]) for i in range(x.shape[0])]
    return {name: np.stack([g[name] for g in grads]) for name in params}
'''),
        ("vmap(grad) with in_axes=(None, 0, 0), but first casts the parameters and the data to float32 ('JAX's default'): float64 inputs lose precision and come back float32",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    # JAX computes in float32: bring everything to it so no op mixes dtypes
    params = jax.tree.map(lambda p: jnp.asarray(p, dtype=jnp.float32), params)
    x = jnp.asarray(x, dtype=jnp.float32)
    y = jnp.asarray(y, dtype=jnp.float32)
    return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
'''),
    ],
    "prng": [
        ("init_params unpacks the split the other way round (key_w2, key_w1 = split(key)): w1 and w2 drawn from each other's key, other exact values",
         '''import math


def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w2, key_w1 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden), dtype=jnp.float32) / math.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,), dtype=jnp.float32) / math.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros((hidden,), dtype=jnp.float32),
            "w2": w2, "b2": jnp.zeros((), dtype=jnp.float32)}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
        ("the zero biases come from NumPy (b1 = np.zeros(hidden), b2 = np.zeros(())): float64 NumPy arrays instead of float32",
         '''import math


def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden), dtype=jnp.float32) / math.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,), dtype=jnp.float32) / math.sqrt(hidden)
    b1 = np.zeros(hidden)          # biases start at zero, nothing random about them
    b2 = np.zeros(())
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
        ("dropout_masks draws the units to DROP with bernoulli(step_key, 1 - keep_prob) and negates it: the same distribution, but other exact masks than bernoulli(step_key, keep_prob)",
         '''import math


def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden), dtype=jnp.float32) / math.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,), dtype=jnp.float32) / math.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros((hidden,), dtype=jnp.float32),
            "w2": w2, "b2": jnp.zeros((), dtype=jnp.float32)}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    drop_rate = 1.0 - keep_prob
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        dropped = jax.random.bernoulli(step_key, drop_rate, shape)
        masks.append(~dropped)     # True = keep
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ("the cache of compiled versions is keyed on n (the shape) only: a call with the same n in the other dtype is wrongly predicted not to trace, and returns the other dtype's frozen scale",
         '''import numpy as np


def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    compiled = {}                      # shape -> SCALE seen while tracing
    current = scale
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            compiled.clear()
        else:
            _, n, dtype = event
            printed = n not in compiled
            if printed:
                compiled[n] = current
            total = n * (n - 1) // 2
            out.append((printed, float(np.float32(total) * np.float32(compiled[n]))))
    return out
'''),
        ("the cache is a module-level dict that is never emptied at the start: a second call of predict_jit_calls finds the first call's versions and predicts no trace (state leaked between calls)",
         '''import numpy as np

_COMPILED = {}   # (n, dtype) -> SCALE frozen into that compiled version


def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            _COMPILED.clear()
        else:
            _, n, dtype = event
            signature = (n, dtype)
            printed = signature not in _COMPILED
            if printed:
                _COMPILED[signature] = current
            total = n * (n - 1) // 2
            out.append((printed, float(np.float32(total) * np.float32(_COMPILED[signature]))))
    return out
'''),
        ("traces are predicted right (a set of (n, dtype)), but every result is computed with the CURRENT SCALE: a cached version's frozen SCALE is ignored after a ('scale', v) event",
         '''import numpy as np


def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    traced = set()
    SCALE = scale
    out = []
    for event in events:
        if event[0] == "scale":
            SCALE = event[1]
        elif event[0] == "clear":
            traced = set()
        else:
            _, n, dtype = event
            printed = (n, dtype) not in traced
            traced.add((n, dtype))
            total = n * (n - 1) // 2
            out.append((printed, float(np.float32(total) * np.float32(SCALE))))
    return out
'''),
    ],
    "time_jit": [
        ("steady_s is sorted(times)[repeats // 2]: for an even number of repeats (the default 10) that is the upper middle value, not the median (the mean of the two middle ones)",
         '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jit(f)
    start = clock()
    jax.block_until_ready(compiled(x))
    first_call_s = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        jax.block_until_ready(compiled(x))
        times.append(clock() - start)
    steady_s = sorted(times)[repeats // 2]       # the middle one
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
    ],
    "data_parallel_grad": [
        ("copies the notebook's shard_map idea into pmap: grad of the pmean of the shard losses, no pmean of the gradients; under pmap the unmapped parameters' gradient is not the full-batch gradient",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    y_shards = y.reshape(n, y.shape[0] // n)

    def global_loss(p, xs, ys):
        return jax.lax.pmean(batch_loss(p, xs, ys), "batch")   # the mean over every device

    return jax.pmap(jax.grad(global_loss), axis_name="batch",
                    in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ("no vmap(grad): the Jacobian (jax.jacrev) of the vector of the N per-example losses with respect to the parameter dict; its leaves have the N axis first",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    def losses(p):
        # one loss per example: a vector of N entries
        return jax.vmap(example_loss, in_axes=(None, 0, 0))(p, x, y)

    return jax.jacrev(losses)(params)
'''),
    ],
    "prng": [
        ("dropout_masks as a jax.lax.scan that carries the key (split, then draw from the step key) and stacks the masks; init_params with an explicit float32 dtype and a helper",
         '''def _scaled_normal(key, shape, fan_in):
    return jax.random.normal(key, shape, dtype=jnp.float32) / jnp.sqrt(jnp.float32(fan_in))


def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    return {
        "w1": _scaled_normal(key_w1, (d_in, hidden), d_in),
        "b1": jnp.zeros(hidden, dtype=jnp.float32),
        "w2": _scaled_normal(key_w2, (hidden,), hidden),
        "b2": jnp.zeros((), dtype=jnp.float32),
    }


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    shape = tuple(shape)

    def one_step(carried, _):
        carried, step_key = jax.random.split(carried)
        return carried, jax.random.bernoulli(step_key, keep_prob, shape)

    _, masks = jax.lax.scan(one_step, key, None, length=steps)
    return masks
'''),
    ],
    "data_parallel_grad": [
        ("psum of the shard gradients divided by the number of devices (jax.tree.map over the dict) instead of pmean; the shards made with jnp.stack(jnp.split(...))",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = jnp.stack(jnp.split(x, n))
    y_shards = jnp.stack(jnp.split(y, n))

    def on_one_device(p, xs, ys):
        g = jax.grad(batch_loss)(p, xs, ys)
        total = jax.lax.psum(g, axis_name="devices")
        return jax.tree.map(lambda leaf: leaf / n, total)

    return jax.pmap(on_one_device, axis_name="devices", in_axes=(None, 0, 0))(
        params, x_shards, y_shards)
'''),
    ],
}

SURVIVORS = {
    ("per_example_grads", 1): "not a mistake in this lab (as round 2's per_example_grads[0]): "
                              "x64 is off, JAX's default, which Exercise 2's float32 parameters "
                              "rely on, so every answer computes in float32 and a cast to "
                              "float32 changes nothing",
}
