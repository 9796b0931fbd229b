"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 5)."""

WRONG = {
    "per_example_grads": [
        ("vmap(grad) for a batch, but a 'fast path' for a batch of one returns the plain gradient: the leading axis of size 1 is missing when N == 1",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    if x.shape[0] == 1:                      # one example: no need to vmap
        return jax.grad(example_loss)(params, x[0], y[0])
    return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
'''),
        ("Jacobian of the per-example losses, but divided by N as if it were the mean loss: every gradient is N times too small (right only for N == 1)",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    n = x.shape[0]
    return jax.jacrev(lambda p: example_loss(p, x, y) / n)(params)
'''),
    ],
    "prng": [
        ("the mask is drawn with probability 1 - keep_prob (the drop probability) of True: only right when keep_prob == 0.5",
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in),
            "b1": jnp.zeros((hidden,)),
            "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
            "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    drop_prob = 1.0 - keep_prob
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, drop_prob, shape))
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ("the cache is keyed on the length n only, not on (n, dtype): an int32 call after a float32 call of the same n is predicted as a cache hit with the old scale",
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    current = scale
    cache = {}                       # n -> SCALE frozen in at trace time
    out = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            cache.clear()
        else:
            n = event[1]
            printed = n not in cache
            if printed:
                cache[n] = current
            out.append((printed, float(sum(range(n)) * cache[n])))
    return out
'''),
        ("ignores the `scale` argument: SCALE always starts at 1.0",
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    SCALE = 1.0
    compiled = {}
    results = []
    for event in events:
        kind = event[0]
        if kind == "scale":
            SCALE = event[1]
        elif kind == "clear":
            compiled = {}
        elif kind == "call":
            _, n, dtype = event
            key = (n, dtype)
            traced = key not in compiled
            if traced:
                compiled[key] = SCALE
            results.append((traced, float(n * (n - 1) / 2 * compiled[key])))
    return results
'''),
    ],
    "time_jit": [
        ("times the first call without blocking on its result: first_call_s (and compile_s) measure the dispatch only",
         '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
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
        ("compiles with jax.jit instead of the `jit` argument it was given (the pretend accelerator's jit is ignored)",
         '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jax.jit(f)
    start = clock()
    compiled(x).block_until_ready()
    first_call_s = clock() - start
    steady = []
    for _ in range(repeats):
        start = clock()
        compiled(x).block_until_ready()
        steady.append(clock() - start)
    steady_s = statistics.median(steady)
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
        ("default repeats changed to 5 (everything else right): a call with the default times 5 steady calls instead of 10",
         '''def time_jit(f, x, repeats=5, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    compiled = jit(f)
    start = clock()
    compiled(x).block_until_ready()
    first_call_s = clock() - start
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
        ("y reshaped with the same pattern as x, (n, N // n, -1): each shard's y gets a trailing axis, predict - y broadcasts to a (k, k) matrix and the loss is wrong (right only for one row per device)",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    xs = x.reshape(n, x.shape[0] // n, -1)
    ys = y.reshape(n, y.shape[0] // n, -1)

    def shard_grad(p, xb, yb):
        return jax.lax.pmean(jax.grad(batch_loss)(p, xb, yb), axis_name="devices")

    return jax.pmap(shard_grad, axis_name="devices", in_axes=(None, 0, 0))(params, xs, ys)
'''),
        ("each device differentiates the SUM of its shard's example losses instead of batch_loss (the mean): the gradient is N / n times too large (right only for one row per device)",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    xs = x.reshape((n, x.shape[0] // n) + x.shape[1:])
    ys = y.reshape((n, y.shape[0] // n) + y.shape[1:])

    def shard_loss(p, xb, yb):
        return jnp.sum(example_loss(p, xb, yb))

    def on_device(p, xb, yb):
        return jax.lax.pmean(jax.grad(shard_loss)(p, xb, yb), "batch")

    return jax.pmap(on_device, axis_name="batch", in_axes=(None, 0, 0))(params, xs, ys)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ("the Jacobian of the vector of per-example losses with jax.jacrev: row i is the gradient of example i",
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    return jax.jacrev(lambda p: example_loss(p, x, y))(params)
'''),
    ],
    "predict_jit": [
        ("a set of cached signatures plus a dict of frozen scales, results from the closed form n(n-1)/2",
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    state = {"SCALE": scale, "traced": {}}

    def call(n, dtype):
        signature = (int(n), str(dtype))
        fresh = signature not in state["traced"]
        if fresh:
            state["traced"][signature] = state["SCALE"]
        return fresh, float((n * (n - 1)) // 2) * state["traced"][signature]

    handlers = {
        "scale": lambda e: state.__setitem__("SCALE", e[1]),
        "clear": lambda e: state["traced"].clear(),
    }
    out = []
    for event in events:
        if event[0] == "call":
            out.append(call(event[1], event[2]))
        else:
            handlers[event[0]](event)
    return out
'''),
    ],
    "data_parallel_grad": [
        ("psum over the devices then divides by the device count (the same average as pmean), shards made with a reshape helper",
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()

    def shard(a):
        return a.reshape((n, a.shape[0] // n) + a.shape[1:])

    def device_step(p, xb, yb):
        g = jax.grad(batch_loss)(p, xb, yb)
        total = jax.lax.psum(g, axis_name="d")
        return jax.tree.map(lambda t: t / n, total)

    return jax.pmap(device_step, axis_name="d", in_axes=(None, 0, 0))(params, shard(x), shard(y))
'''),
    ],
}
