"""Lab 08: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    "per_example_grads": [
        ('Builds a NumPy array from each gradient (np.stack of np.asarray): works eagerly, but the text promises the function is also called under jax.jit, where np.asarray on a tracer fails; and it returns NumPy, not JAX, arrays', '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    one = jax.grad(example_loss)
    grads = [one(params, x[i], y[i]) for i in range(x.shape[0])]
    return {name: np.stack([np.asarray(g[name]) for g in grads]) for name in params}
'''),
        ('Writes the per-example backward pass of the tanh network by hand, vectorised over the batch: the numbers are right, but the text says to use jax.grad and jax.vmap, and the function no longer follows example_loss if the model changes', '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])            # (N, H)
    residual = hidden @ params["w2"] + params["b2"] - y            # (N,)
    d_out = 2.0 * residual                                         # dL/d output, per example
    d_pre = d_out[:, None] * params["w2"][None, :] * (1.0 - hidden ** 2)
    return {"w1": x[:, :, None] * d_pre[:, None, :],
            "b1": d_pre,
            "w2": d_out[:, None] * hidden,
            "b2": d_out}
'''),
    ],
    "prng": [
        ('Draws every mask from keys made by one split(key, steps) instead of carrying the key (key, step_key = split(key)) through the loop: masks are fresh and reproducible but are not the fixed scheme, so the exact values differ', '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key` (the scheme is given above)."""
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in),
            "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
            "b2": jnp.zeros(())}


def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked: shape (steps, *shape)."""
    step_keys = jax.random.split(key, steps)
    return jnp.stack([jax.random.bernoulli(k, keep_prob, shape) for k in step_keys])
'''),
        ('Returns masks as float32 0/1 (ready to multiply activations) instead of the boolean array the text asks for; values and shape are right', '''def init_params(key, d_in, hidden):
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
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape).astype(jnp.float32))
    return jnp.stack(masks)
'''),
    ],
    "predict_jit": [
        ('Computes the result in Python float64 (exact sum times scale), but the jitted call returns a float32 product: for scales like 0.1 or 1/3 the returned number differs in the last bits from what real JAX returns', '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    SCALE = scale
    frozen = {}                      # (shape, dtype) -> SCALE seen by that trace
    results = []
    for event in events:
        kind = event[0]
        if kind == "scale":
            SCALE = event[1]
        elif kind == "clear":
            frozen = {}
        elif kind == "call":
            n, dtype = event[1], event[2]
            traced = (n, dtype) not in frozen
            if traced:
                frozen[(n, dtype)] = SCALE
            results.append((traced, float(sum(range(n)) * frozen[(n, dtype)])))
    return results
'''),
        ('Reproduces the call with NumPy in the given dtype: NumPy sums an int32 array into int64 and promotes int·float to float64, where JAX keeps int32 and returns a float32 product, so an int32 call with a scale like 0.1 (or a sum past 2**31) returns another number', '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    scale_now = scale
    traced_with = {}
    out = []
    for event in events:
        if event[0] == "scale":
            scale_now = event[1]
        elif event[0] == "clear":
            traced_with.clear()
        else:
            _, n, dtype = event
            printed = (n, dtype) not in traced_with
            if printed:
                traced_with[(n, dtype)] = scale_now
            out.append((printed, float(np.arange(n, dtype=dtype).sum() * traced_with[(n, dtype)])))
    return out
'''),
    ],
    "time_jit": [
        ('Takes the median of the steady times as sorted(times)[len // 2]: the upper middle for an even count instead of the mean of the two middle ones that statistics.median gives', '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
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
        ('Starts the first-call clock before jit(f) is built: first_call_s (and so compile_s) includes wrapping f, where the text builds compiled = jit(f) once and times only the call compiled(x)', '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call of jit(f)(x), of a steady call (median), and their
    difference, the compile cost."""
    start = clock()
    compiled = jit(f)
    jax.block_until_ready(compiled(x))
    first_call_s = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        jax.block_until_ready(compiled(x))
        times.append(clock() - start)
    steady_s = statistics.median(times)
    return {"first_call_s": first_call_s, "steady_s": steady_s,
            "compile_s": first_call_s - steady_s}
'''),
    ],
    "data_parallel_grad": [
        ('Hard-codes two shards (x.reshape(2, -1, D)) because the notebook has two CPU devices, instead of n = jax.local_device_count(): right here, wrong on any machine with another device count', '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    x_shards = x.reshape(2, -1, x.shape[-1])
    y_shards = y.reshape(2, -1)

    def shard_grad(params, xs, ys):
        return jax.lax.pmean(jax.grad(batch_loss)(params, xs, ys), axis_name="devices")

    return jax.pmap(shard_grad, axis_name="devices", in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
        ('Mistakes shards for replicas: every device gets the whole batch (broadcast to (n, N, D)) and computes the full-batch gradient, then pmean: the numbers are right, but nothing is split, so each device does all the work and the text\'s step 1 is not done', '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    n = jax.local_device_count()
    x_dev = jnp.broadcast_to(x, (n, *x.shape))
    y_dev = jnp.broadcast_to(y, (n, *y.shape))

    def device_grad(params, xs, ys):
        return jax.lax.pmean(jax.grad(batch_loss)(params, xs, ys), axis_name="i")

    return jax.pmap(device_grad, axis_name="i", in_axes=(None, 0, 0))(params, x_dev, y_dev)
'''),
    ],
}

RIGHT = {
    "per_example_grads": [
        ('No vmap of grad: the Jacobian (jax.jacrev) of the vector of per-example losses, which example_loss already returns on a batch by broadcasting; row i is example i\'s gradient', '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example: a dict like params, each leaf with a
    leading axis of size N."""
    return jax.jacrev(lambda p: example_loss(p, x, y))(params)
'''),
    ],
    "predict_jit": [
        ('Models the jit cache as a small class and reproduces JAX\'s float32 arithmetic with NumPy scalars (int32 sum, float32 product), with no JAX call', '''class _FakeJit:
    """What jax.jit keeps for scaled_sum: one compiled program per (shape, dtype)."""

    def __init__(self):
        self.programs = {}

    def call(self, n, dtype, current_scale):
        key = ((n,), dtype)
        traced = key not in self.programs
        if traced:
            self.programs[key] = current_scale      # SCALE is frozen into the program
        frozen = self.programs[key]
        if dtype == "int32":
            total = np.arange(n, dtype=np.int32).sum(dtype=np.int32)
            if isinstance(frozen, (int, np.integer)) and not isinstance(frozen, bool):
                return traced, float(np.int32(total * np.int32(frozen)))
        else:
            total = np.float32(n * (n - 1) // 2)
        return traced, float(np.float32(total) * np.float32(frozen))


def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each ("call", n, dtype) event; see the exercise text."""
    program, current = _FakeJit(), scale
    answers = []
    for event in events:
        if event[0] == "scale":
            current = event[1]
        elif event[0] == "clear":
            program.programs.clear()
        else:
            answers.append(program.call(event[1], event[2], current))
    return answers
'''),
    ],
    "data_parallel_grad": [
        ('Shards with jnp.split/jnp.stack over tree leaves and hands pmap a pytree of (x, y); the collective is pmean over the whole gradient dict', '''def data_parallel_grad(params, x, y):
    """The gradient of batch_loss over the whole batch, computed shard by shard on every local
    device and averaged across them: a dict like params with a leading device axis."""
    from functools import partial

    n = jax.local_device_count()
    shards = (jnp.stack(jnp.split(x, n)), jnp.stack(jnp.split(y, n)))

    @partial(jax.pmap, axis_name="batch", in_axes=(None, 0))
    def step(params, shard):
        x_shard, y_shard = shard
        return jax.lax.pmean(jax.grad(batch_loss)(params, x_shard, y_shard), "batch")

    return step(params, shards)
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('data_parallel_grad', 0): _DEVICE,
    ('data_parallel_grad', 1): _METHOD,
    ('per_example_grads', 1): _METHOD,
    ('predict_jit', 0): (
        "not a mistake the checks may take points for: the solution itself returns "
        "float(sum(range(n)) * scale) in Python float64, as the accepted alternative and rounds "
        "2 and 5's right answers do; the checks' scales (0.5, 2, 3, -1, 10) and small sums are "
        "exact in float32, and a scale such as 0.1 would take the solution's points too"
    ),
    ('predict_jit', 1): (
        "not a mistake the checks may take points for: where it differs from real JAX (an "
        "int32 call with a scale such as 0.1, a sum past 2**31) it returns the solution's own "
        "float64 number, float(sum(range(n)) * scale); a case there would take the solution's "
        "points too"
    ),
    ('time_jit', 1): _METHOD,
}
