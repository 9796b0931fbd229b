"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "per_example_grads": [
        ('Converts x and y to NumPy "to be safe about dtypes": fine eagerly, but under jax.jit np.asarray meets a tracer and raises, breaking the promise that it works called under jax.jit (and it also drops float64 to float32).',
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    xs = jnp.asarray(np.asarray(x, dtype=np.float32))
    ys = jnp.asarray(np.asarray(y, dtype=np.float32))
    return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, xs, ys)
'''),
        ('Returns each example\'s contribution to the mean-loss gradient (divides by N), so entry i is grad/N instead of the gradient of example_loss(params, x[i], y[i]); identical only for a batch of one.',
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    n = x.shape[0]
    grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
    # each example's share of the batch gradient, so that they sum to grad(batch_loss)
    return jax.tree.map(lambda g: g / n, grads)
'''),
    ],
    "prng": [
        ('Masks drawn with probability 1 - keep_prob ("bernoulli draws the dropped units"), but the text says jax.random.bernoulli(step_key, keep_prob, shape) with True = keep: exact values break for any keep_prob != 0.5.',
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in),
            "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
            "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        dropped = jax.random.bernoulli(step_key, 1.0 - keep_prob, shape)
        masks.append(~dropped)
    return jnp.stack(masks)
'''),
        ('Carries the key in the wrong slot of the split (step_key, key = split(key)): masks are still fresh and reproducible, but not the fixed key, step_key = split(key) scheme, so every exact value differs.',
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    w1 = jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in)
    w2 = jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden)
    return {"w1": w1, "b1": jnp.zeros((hidden,)), "w2": w2, "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    masks = []
    for _ in range(steps):
        step_key, key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ('Keys the cache by n only, forgetting that jit also caches per dtype: an int32 call after a float32 call of the same length is predicted as a cache hit (no print, old scale).',
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    SCALE = scale
    cache = {}                       # length -> SCALE seen by that trace
    out = []
    for event in events:
        if event[0] == "scale":
            SCALE = event[1]
        elif event[0] == "clear":
            cache.clear()
        else:
            n = event[1]
            printed = n not in cache
            if printed:
                cache[n] = SCALE
            out.append((printed, float(sum(range(n)) * cache[n])))
    return out
'''),
        ('Freezes one SCALE for the whole cache (the one the first trace after a clear saw) instead of one per cached version, so a new shape traced after a scale change is predicted with the stale scale.',
         '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    SCALE = scale
    traced = set()
    frozen = None                    # the constant baked into the compiled program
    out = []
    for event in events:
        if event[0] == "scale":
            SCALE = event[1]
        elif event[0] == "clear":
            traced.clear()
            frozen = None
        else:
            _, n, dtype = event
            printed = (n, dtype) not in traced
            if printed:
                traced.add((n, dtype))
                if frozen is None:
                    frozen = SCALE
            out.append((printed, float(sum(range(n)) * frozen)))
    return out
'''),
    ],
    "time_jit": [
        ('Takes the median as sorted(times)[len // 2], the upper middle value: right for an odd repeats, but for an even count it is not the mean of the two middle ones that statistics.median gives.',
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
    steady_s = sorted(times)[len(times) // 2]
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
        ('Jits f a second time for the steady loop ("a clean compiled function"), so the first steady call compiles again on a jit without a shared cache; breaks "compiled = jit(f), once".',
         '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    def timed(fn):
        start = clock()
        jax.block_until_ready(fn(x))
        return clock() - start

    first_call_s = timed(jit(f))
    compiled = jit(f)
    steady_s = statistics.median([timed(compiled) for _ in range(repeats)])
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
    ],
    "data_parallel_grad": [
        ('One reshape helper a.reshape(n, N // n, -1) for both x and y gives y the shape (n, N//n, 1); inside batch_loss (N//n,) - (N//n, 1) broadcasts to a matrix and the gradient is silently wrong.',
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    shard = lambda a: a.reshape(n, a.shape[0] // n, -1)

    def device_grad(params, x_shard, y_shard):
        return jax.lax.pmean(jax.grad(batch_loss)(params, x_shard, y_shard), "devices")

    return jax.pmap(device_grad, axis_name="devices", in_axes=(None, 0, 0))(
        params, shard(x), shard(y))
'''),
        ('Copies the shard_map pattern into pmap: grad of the pmean of the shard losses. Under pmap the unmapped params are per-device, so each copy is just its own shard\'s gradient: the devices disagree and none equals the full-batch gradient.',
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    xs = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    ys = y.reshape(n, y.shape[0] // n, *y.shape[1:])

    def global_loss(params, x_shard, y_shard):
        return jax.lax.pmean(batch_loss(params, x_shard, y_shard), "devices")

    return jax.pmap(jax.grad(global_loss), axis_name="devices", in_axes=(None, 0, 0))(
        params, xs, ys)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ('Closes over params in a lambda instead of in_axes=(None, 0, 0): vmap batches only x and y.',
         '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    return jax.vmap(lambda xi, yi: jax.grad(example_loss)(params, xi, yi))(x, y)
'''),
    ],
    "prng": [
        ('Carries the key through jax.lax.scan (JAX\'s loop primitive) instead of a Python loop and jnp.stack; the same split sequence, so the same masks.',
         '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    return {
        "w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(float(d_in)),
        "b1": jnp.zeros((hidden,), dtype=jnp.float32),
        "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(float(hidden)),
        "b2": jnp.zeros((), dtype=jnp.float32),
    }


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    def one_step(carried, _):
        carried, step_key = jax.random.split(carried)
        return carried, jax.random.bernoulli(step_key, keep_prob, shape)

    _, masks = jax.lax.scan(one_step, key, None, length=steps)
    return masks
'''),
    ],
    "data_parallel_grad": [
        ('pmap as a decorator (functools.partial) and shards built with jnp.split + jnp.stack instead of reshape; the same (n, N//n, ...) layout.',
         '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    from functools import partial

    n = jax.local_device_count()

    @partial(jax.pmap, axis_name="batch", in_axes=(None, 0, 0))
    def averaged(params, x_shard, y_shard):
        grads = jax.grad(batch_loss)(params, x_shard, y_shard)
        return jax.tree.map(lambda g: jax.lax.pmean(g, axis_name="batch"), grads)

    return averaged(params, jnp.stack(jnp.split(x, n)), jnp.stack(jnp.split(y, n)))
'''),
    ],
}
