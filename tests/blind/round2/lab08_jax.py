"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "per_example_grads": [
        ("casts x and y to float32 first, as the notebook's own cells build them (loses float64)", '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    x = jnp.asarray(x, dtype=jnp.float32)
    y = jnp.asarray(y, dtype=jnp.float32)
    return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
'''),
        ("squeezes every leaf to tidy the shapes, which drops the batch axis for a batch of one", '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
    # get rid of stray size-1 axes so every leaf is (N, *shape)
    return {name: jnp.squeeze(g) for name, g in grads.items()}
'''),
    ],
    "prng": [
        ("init_params carries the key forward twice (split, split) instead of the one split the text fixes", '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key, key_w1 = jax.random.split(key)
    key, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
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
        ("dropout_masks splits the key every step but never carries the new key forward", '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        next_key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ("starts from SCALE = 1.0 as the demo cell does, ignoring the scale argument", '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current_scale = 1.0
    cache = {}
    results = []
    for event in events:
        if event[0] == "scale":
            current_scale = event[1]
        elif event[0] == "clear":
            cache.clear()
        else:
            _, n, dtype = event
            traced = (n, dtype) not in cache
            if traced:
                cache[(n, dtype)] = current_scale
            results.append((traced, float(sum(range(n)) * cache[(n, dtype)])))
    return results
'''),
        ("tracks retracing correctly but multiplies by the SCALE current at call time, not the traced one", '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current_scale = scale
    traced_keys = set()
    results = []
    for event in events:
        if event[0] == "scale":
            current_scale = event[1]
        elif event[0] == "clear":
            traced_keys = set()
        else:
            _, n, dtype = event
            printed = (n, dtype) not in traced_keys
            traced_keys.add((n, dtype))
            results.append((printed, float(sum(range(n)) * current_scale)))
    return results
'''),
    ],
    "time_jit": [
        ("blocks on the first call only; the steady calls time the dispatch", '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jit(f)
    start = clock()
    jax.block_until_ready(compiled(x))
    first_call_s = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        compiled(x)
        times.append(clock() - start)
    steady_s = statistics.median(times)
    return {"first_call_s": first_call_s, "steady_s": steady_s, "compile_s": first_call_s - steady_s}
'''),
        ("reads time.perf_counter directly instead of the clock it is handed", '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jit(f)
    start = time.perf_counter()
    jax.block_until_ready(compiled(x))
    first_call_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(x))
        times.append(time.perf_counter() - start)
    steady_s = statistics.median(times)
    return {"first_call_s": first_call_s, "steady_s": steady_s, "compile_s": first_call_s - steady_s}
'''),
    ],
    "data_parallel_grad": [
        ("sums the shard gradients with psum instead of averaging them with pmean", '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    y_shards = y.reshape(n, y.shape[0] // n)

    def shard_grad(p, xs, ys):
        return jax.lax.psum(jax.grad(batch_loss)(p, xs, ys), axis_name="batch")

    return jax.pmap(shard_grad, axis_name="batch", in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
        ("returns device 0's copy only (the plain gradient dict) instead of what pmap returns", '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    y_shards = y.reshape(n, y.shape[0] // n)

    def shard_grad(p, xs, ys):
        return jax.lax.pmean(jax.grad(batch_loss)(p, xs, ys), axis_name="batch")

    copies = jax.pmap(shard_grad, axis_name="batch", in_axes=(None, 0, 0))(params, x_shards, y_shards)
    # every device holds the same gradient: keep one
    return jax.tree.map(lambda leaf: leaf[0], copies)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ("vmaps a closure over params (only x and y are mapped), no in_axes", '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    def grad_of_one(x_i, y_i):
        return jax.grad(example_loss)(params, x_i, y_i)

    return jax.vmap(grad_of_one)(x, y)
'''),
    ],
    "predict_jit": [
        ("closed form n(n-1)/2, a set of traced signatures plus a dict of frozen scales", '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    state = {"SCALE": scale, "frozen": {}}
    out = []
    for kind, *rest in events:
        if kind == "scale":
            (state["SCALE"],) = rest
        elif kind == "clear":
            state["frozen"] = {}
        elif kind == "call":
            n, dtype = rest
            signature = ((n,), str(dtype))
            printed = signature not in state["frozen"]
            frozen_scale = state["frozen"].setdefault(signature, state["SCALE"])
            out.append((printed, float(n * (n - 1) // 2) * frozen_scale))
    return out
'''),
    ],
    "data_parallel_grad": [
        ("strided shards (row i goes to device i % n) stacked by hand, pmap used as a decorator", '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    from functools import partial

    n = jax.local_device_count()
    x_shards = jnp.stack([x[i::n] for i in range(n)])
    y_shards = jnp.stack([y[i::n] for i in range(n)])

    @partial(jax.pmap, axis_name="i", in_axes=(None, 0, 0))
    def averaged(p, xs, ys):
        g = jax.grad(batch_loss)(p, xs, ys)
        return jax.tree.map(lambda leaf: jax.lax.pmean(leaf, "i"), g)

    return averaged(params, x_shards, y_shards)
'''),
    ],
}

# Wrong answers the checks do not catch, each with the reason (strict expected failures).
SURVIVORS = {
    ("per_example_grads", 0): "not a mistake in this lab: x64 is off (JAX's default, which "
                              "Exercise 2's float32 parameters rely on), so every answer computes "
                              "in float32 and a cast to float32 changes nothing; 'in float64' is "
                              "the reference's precision",
}
