"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'per_example_grads': [
        ('Divides every example\'s gradient by the batch size, so that the rows sum to the batch gradient: entry i is then 1/N of the gradient of example_loss(params, x[i], y[i]), not that gradient (identical only for a batch of one).', '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    n = x.shape[0]
    share = lambda p, xi, yi: example_loss(p, xi, yi) / n
    return jax.vmap(jax.grad(share), in_axes=(None, 0, 0))(params, x, y)
'''),
        ('Loops over the examples after converting x and y with np.asarray: correct when called directly, but it cannot run under jax.jit (a tracer cannot become a NumPy array), which the text checks.', '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    rows = [jax.grad(example_loss)(params, xi, yi) for xi, yi in zip(np.asarray(x), np.asarray(y))]
    return {name: jnp.stack([g[name] for g in rows]) for name in params}
'''),
    ],
    'prng': [
        ('Draws the dropout mask with probability 1 - keep_prob, reading keep_prob as the drop rate: the same masks at keep_prob = 0.5, the complement of the asked ones for any other value.', '''def init_params(key, d_in, hidden):
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
        masks.append(jax.random.bernoulli(step_key, 1 - keep_prob, shape))
    return jnp.stack(masks)
'''),
        ('Special-cases steps=1 by drawing straight from the given key without splitting it, so the single mask is not the one the fixed split scheme gives (the text checks steps=1).', '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros(hidden), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    if steps == 1:                       # one step: nothing to carry forward, no split needed
        return jax.random.bernoulli(key, keep_prob, shape)[None]
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
    ],
    'predict_jit': [
        ('Keys the cache on the length n only, forgetting the dtype: a call with int32 after a float32 call of the same length is predicted not to trace, though jit caches per shape and dtype.', '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    cache = {}
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            cache = {}
        else:
            n = event[1]
            printed = n not in cache
            if printed:
                cache[n] = current
            out.append((printed, float(n * (n - 1) / 2 * cache[n])))
    return out
'''),
        ('Tracks the traces right but computes every result with the SCALE current at the call, while a cached version answers with the SCALE frozen in by its own trace.', '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    SCALE = scale
    traced = set()
    out = []
    for event in events:
        if event[0] == "scale":
            SCALE = event[1]
        elif event[0] == "clear":
            traced.clear()
        else:
            _, n, dtype = event
            printed = (n, dtype) not in traced
            traced.add((n, dtype))
            out.append((printed, float(sum(range(n)) * SCALE)))
    return out
'''),
    ],
    'time_jit': [
        ('Takes the upper middle of the sorted times as the median, which is right for an odd repeats but not the mean of the two middle ones for an even count (the default 10 included).', '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
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
    steady_s = sorted(times)[len(times) // 2]
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
        ('Stops the clock for the first call before blocking on its result (it blocks only afterwards), so first_call_s measures the dispatch of the first call, not the call until its result is ready.', '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jit(f)
    start = clock()
    out = compiled(x)
    first_call_s = clock() - start
    jax.block_until_ready(out)
    times = []
    for _ in range(repeats):
        start = clock()
        jax.block_until_ready(compiled(x))
        times.append(clock() - start)
    steady_s = statistics.median(times)
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
        ('Calls jit(f) afresh inside every timed call instead of once, so each steady call gets a new compiled function (and on the pretend accelerator compiles again).', '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    def timed_call():
        start = clock()
        jax.block_until_ready(jit(f)(x))
        return clock() - start

    first_call_s = timed_call()
    steady_s = statistics.median([timed_call() for _ in range(repeats)])
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
    ],
    'data_parallel_grad': [
        ('Uses jax.vmap with an axis_name instead of jax.pmap: the values and the leading axis are right, but every copy sits on one device, not one per device as the text asks.', '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    xs = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    ys = y.reshape(n, y.shape[0] // n)

    def shard_grad(p, xb, yb):
        return jax.lax.pmean(jax.grad(batch_loss)(p, xb, yb), axis_name="devices")

    return jax.vmap(shard_grad, in_axes=(None, 0, 0), axis_name="devices")(params, xs, ys)
'''),
    ],
}

RIGHT = {
    'per_example_grads': [
        ('Takes jax.jacrev of example_loss on the whole batch: it broadcasts to one loss per example, each depending on its own row only, so the Jacobian has exactly the per-example gradients, leaf shapes (N, *shape).', '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    return jax.jacrev(example_loss)(params, x, y)
'''),
    ],
    'predict_jit': [
        ('Simulates the cache as a dict from (n, dtype) to the frozen scale, and computes each result in NumPy float32 as the compiled program does (sum, then times the frozen constant).', '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    state = {"SCALE": scale, "cache": {}}
    results = []
    for kind, *rest in events:
        if kind == "scale":
            state["SCALE"] = rest[0]
        elif kind == "clear":
            state["cache"].clear()
        elif kind == "call":
            n, dtype = rest
            key = (n, dtype)
            printed = key not in state["cache"]
            if printed:
                state["cache"][key] = state["SCALE"]
            total = np.float32(n * (n - 1) // 2)
            results.append((printed, float(total * np.float32(state["cache"][key]))))
    return results
'''),
    ],
    'data_parallel_grad': [
        ('Averages with psum divided by the device count (what pmean computes) and takes the shard gradient from value_and_grad, dropping the loss; shards made with jnp.stack(jnp.split(...)).', '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_shards = jnp.stack(jnp.split(x, n))
    y_shards = jnp.stack(jnp.split(y, n))

    def step(p, xb, yb):
        _, g = jax.value_and_grad(batch_loss)(p, xb, yb)
        return jax.tree.map(lambda leaf: jax.lax.psum(leaf, "batch") / n, g)

    return jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
    ],
}
