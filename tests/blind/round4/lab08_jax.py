"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "per_example_grads": [
        ("vmaps grad of batch_loss over batches of one (x[None], y[None]) and then squeezes every "
         "leaf 'to drop the size-1 batch axes': for a batch of one (N = 1) the leading axis of "
         "size N is squeezed away too (and so is any parameter axis of size 1)",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    # vmap hands over one example, x[i] of shape (D,); batch_loss wants a batch: make one of size 1
    one = lambda p, xi, yi: batch_loss(p, xi[None], yi[None])
    grads = jax.vmap(jax.grad(one), in_axes=(None, 0, 0))(params, x, y)
    return jax.tree.map(jnp.squeeze, grads)   # drop the size-1 axes again
'''),
        ("one jax.grad per example in a Python loop, stacked with NumPy (np.stack of np.asarray): "
         "right values when called directly, but under jax.jit the leaves are tracers and "
         "np.asarray raises TracerArrayConversionError",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    g = jax.grad(example_loss)
    per = [g(params, x[i], y[i]) for i in range(x.shape[0])]
    return {k: np.stack([np.asarray(p[k]) for p in per]) for k in params}
'''),
    ],
    "prng": [
        ("init_params divides w2 by sqrt(d_in) instead of sqrt(hidden) (copied from the w1 line): "
         "right only when d_in == hidden",
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(d_in)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
        ("dropout_masks returns inverted-dropout masks (mask / keep_prob, float32) instead of the "
         "boolean keep-masks: wrong dtype and values (1/keep_prob where kept)",
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        keep = jax.random.bernoulli(step_key, keep_prob, shape)
        masks.append(keep / keep_prob)     # inverted dropout: scale the kept units
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ("caches compiled versions by n only, forgetting the dtype: a call with the same n but "
         "the other dtype is predicted as a cache hit (no trace, old SCALE)",
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    cache = {}          # n -> SCALE seen by that trace
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            cache.clear()
        else:
            _, n, dtype = event
            traced = n not in cache
            if traced:
                cache[n] = current
            out.append((traced, float(n * (n - 1) / 2 * cache[n])))
    return out
'''),
        ("tracing predicted right (cache by shape and dtype), but every result uses the current "
         "SCALE, not the one frozen in by the trace of that cached version",
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    seen = set()
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            seen = set()
        else:
            _, n, dtype = event
            traced = (n, dtype) not in seen
            seen.add((n, dtype))
            out.append((traced, float(sum(range(n)) * current)))
    return out
'''),
        ("ignores the `scale` argument: starts from SCALE = 1.0 (the notebook's global) whatever "
         "scale is passed; right only at the default",
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    SCALE = 1.0
    cache = {}
    out = []
    for event in events:
        if event[0] == "scale":
            SCALE = event[1]
        elif event[0] == "clear":
            cache = {}
        else:
            _, n, dtype = event
            key = (n, dtype)
            printed = key not in cache
            if printed:
                cache[key] = SCALE
            out.append((printed, float(sum(range(n)) * cache[key])))
    return out
'''),
    ],
    "time_jit": [
        ("steady_s is the upper middle value sorted(times)[repeats // 2], not statistics.median: "
         "wrong for an even repeats, the default 10 included",
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
    steady_s = sorted(times)[len(times) // 2]     # the median
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
        ("reads time.perf_counter() directly instead of the `clock` it is handed (everything else "
         "right): a pretend accelerator's clock is never read",
         '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
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
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
    ],
    "data_parallel_grad": [
        ("reshapes x and y with the same pattern (n, N // n, -1): y's shards get a trailing axis "
         "(N/n, 1), so predict (N/n,) minus y broadcasts to (N/n, N/n) and the shard loss is "
         "wrong (right only with one example per device)",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    shard = lambda a: a.reshape(n, a.shape[0] // n, -1)
    x_shards, y_shards = shard(x), shard(y)

    def device_grad(params, xs, ys):
        return jax.lax.pmean(jax.grad(batch_loss)(params, xs, ys), axis_name="batch")

    return jax.pmap(device_grad, axis_name="batch", in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ("vmap over a closure that captures params (no in_axes=None needed): vmap maps x and y "
         "only",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    grad_of_one = jax.grad(example_loss)
    return jax.vmap(lambda xi, yi: grad_of_one(params, xi, yi))(x, y)
'''),
    ],
    "prng": [
        ("split keys indexed instead of unpacked, scales written as / n ** 0.5; dropout masks drawn with jax.lax.scan carrying "
         "the key (same splits, same numbers)",
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    keys = jax.random.split(key)
    return {
        "w1": jax.random.normal(keys[0], (d_in, hidden)) / d_in ** 0.5,
        "b1": jnp.zeros((hidden,), dtype=jnp.float32),
        "w2": jax.random.normal(keys[1], (hidden,)) / hidden ** 0.5,
        "b2": jnp.zeros((), dtype=jnp.float32),
    }


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    shape = tuple(shape)

    def one_step(carry, _):
        carry, step_key = jax.random.split(carry)
        return carry, jax.random.bernoulli(step_key, keep_prob, shape)

    _, masks = jax.lax.scan(one_step, key, None, length=steps)
    return masks
'''),
    ],
    "data_parallel_grad": [
        ("parameters replicated by hand (stacked n times, in_axes=0 everywhere) and strided "
         "shards x[d::n]: equal shards, so the averaged gradient is the same",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    replicated = jax.tree.map(lambda leaf: jnp.stack([leaf] * n), params)
    x_shards = jnp.stack([x[d::n] for d in range(n)])
    y_shards = jnp.stack([y[d::n] for d in range(n)])

    def per_device(p, xs, ys):
        g = jax.grad(batch_loss)(p, xs, ys)
        return jax.tree.map(lambda leaf: jax.lax.pmean(leaf, "d"), g)

    return jax.pmap(per_device, axis_name="d")(replicated, x_shards, y_shards)
'''),
    ],
}
