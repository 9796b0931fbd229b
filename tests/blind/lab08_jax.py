"""Lab 08: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "per_example_grads": [
        ("each example's gradient divided by N (batch-mean habit): right only for a batch of one", '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
    return jax.tree.map(lambda g: g / x.shape[0], grads)   # scaled like batch_loss's mean
'''),
    ],
    "prng": [
        ("carries the wrong half of the split: `step_key, key = split(key)`", '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        step_key, key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
        ("all step keys split at once with split(key, steps) instead of carrying the key", '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    step_keys = jax.random.split(key, steps)          # one independent key per step
    return jax.vmap(lambda k: jax.random.bernoulli(k, keep_prob, shape))(step_keys)
'''),
        ("w1 drawn from the parent key, which is then split again (a key used twice)", '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    w1 = jax.random.normal(key, (d_in, hidden)) / jnp.sqrt(d_in)
    key, key_w2 = jax.random.split(key)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ("cache keyed on the length only: an int32 call after a float32 one of the same n is not retraced", '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    cache = {}
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            cache.clear()
        else:
            _, n, dtype = event
            printed = n not in cache
            if printed:
                cache[n] = current
            out.append((printed, float(n * (n - 1) / 2 * cache[n])))
    return out
'''),
        ("clear_cache also resets SCALE to its starting value", '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    cache = {}
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            cache.clear()
            current = scale          # a fresh start
        else:
            _, n, dtype = event
            key = (n, dtype)
            printed = key not in cache
            if printed:
                cache[key] = current
            out.append((printed, float(n * (n - 1) / 2 * cache[key])))
    return out
'''),
    ],
    "time_jit": [
        ("jit(f) re-applied for every timed call instead of once", '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    start = clock()
    jit(f)(x).block_until_ready()
    first_call_s = clock() - start
    steady = []
    for _ in range(repeats):
        start = clock()
        jit(f)(x).block_until_ready()      # jax caches the compiled program anyway
        steady.append(clock() - start)
    steady_s = statistics.median(steady)
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
        ("first call's clock read before blocking: first_call_s is the dispatch only", '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jit(f)
    start = clock()
    result = compiled(x)
    first_call_s = clock() - start
    result.block_until_ready()
    steady = []
    for _ in range(repeats):
        start = clock()
        compiled(x).block_until_ready()
        steady.append(clock() - start)
    steady_s = statistics.median(steady)
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
    ],
    "data_parallel_grad": [
        ("x split in contiguous blocks, y strided: shards pair the wrong labels with the examples", '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    y_shards = y.reshape(-1, n).T

    def shard_grad(p, xs, ys):
        return jax.lax.pmean(jax.grad(batch_loss)(p, xs, ys), axis_name="devices")

    return jax.pmap(shard_grad, axis_name="devices", in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
        ("no pmean: every device returns its own shard's gradient", '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    y_shards = y.reshape(n, y.shape[0] // n)
    return jax.pmap(jax.grad(batch_loss), axis_name="devices",
                    in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ("params closed over, vmap over (x, y) pairs only", '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    def one(xi, yi):
        return jax.grad(example_loss)(params, xi, yi)

    return jax.vmap(one)(x, y)
'''),
    ],
    "prng": [
        ("key carried through jax.lax.scan; init with math.sqrt", '''import math


def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / math.sqrt(d_in),
            "b1": jnp.zeros((hidden,)),
            "w2": jax.random.normal(key_w2, (hidden,)) / math.sqrt(hidden),
            "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    shape = tuple(shape)

    def step(carried, _):
        carried, step_key = jax.random.split(carried)
        return carried, jax.random.bernoulli(step_key, keep_prob, shape)

    _, masks = jax.lax.scan(step, key, None, length=steps)
    return masks
'''),
    ],
    "predict_jit": [
        ("dict of frozen scales per (n, dtype); result rounded as float32 arithmetic does", '''import numpy as np


def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    scale_now = scale
    frozen = {}                    # (n, dtype) -> the SCALE its trace read
    answers = []
    for event in events:
        if event[0] == "scale":
            scale_now = event[1]
            continue
        if event[0] == "clear":
            frozen = {}
            continue
        _, n, dtype = event
        printed = (n, dtype) not in frozen
        if printed:
            frozen[(n, dtype)] = scale_now
        seen_scale = frozen[(n, dtype)]
        total = n * (n - 1) // 2
        if dtype == "int32" and isinstance(seen_scale, int):
            value = float(total * seen_scale)               # int32 times a Python int
        else:
            value = float(np.float32(total) * np.float32(seen_scale))
        answers.append((printed, value))
    return answers
'''),
    ],
}

