"""Realistic wrong answers for lab08_jax: each must lose points in its checks cell."""

_PER_EXAMPLE = '''def per_example_grads(params, x, y):
    """The gradient of example_loss for every example."""
{body}
'''

_INIT_PARAMS = '''def init_params(key, d_in, hidden):
    """Parameters of the network of Section 1, drawn from `key`."""
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in),
            "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
            "b2": jnp.zeros(())}
'''

_DROPOUT_MASKS = '''

def dropout_masks(key, steps, shape, keep_prob):
    """One boolean keep-mask per training step, stacked."""
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''

_PREDICT = '''def predict_jit_calls(events, scale=1.0):
    """[(printed, result)] for each call event."""
{body}
'''

_TIME_JIT = '''def time_jit(f, x, repeats=10, clock=time.perf_counter, jit=jax.jit):
    """Seconds of the first call, of a steady call (median), and the compile cost."""
{body}
'''

_PARALLEL = '''def data_parallel_grad(params, x, y):
    """The full-batch gradient, shard by shard on every device, averaged."""
    n = jax.local_device_count()
    x_shards = x.reshape(n, x.shape[0] // n, *x.shape[1:])
    y_shards = y.reshape(n, y.shape[0] // n)
{body}
'''

MUTANTS = {
    "per_example_grads": [
        ("the gradient of the batch loss: one gradient, not one per example",
         _PER_EXAMPLE.format(body="    return jax.grad(batch_loss)(params, x, y)")),
        ("vmaps over the parameters too (in_axes=0 everywhere)",
         _PER_EXAMPLE.format(body="    return jax.vmap(jax.grad(example_loss))(params, x, y)")),
        ("the gradient with respect to x (argnums=1), not params",
         _PER_EXAMPLE.format(body="    return jax.vmap(jax.grad(example_loss, argnums=1), "
                                  "in_axes=(None, 0, 0))(params, x, y)")),
        ("each example's share of the mean loss: every gradient divided by N",
         _PER_EXAMPLE.format(body="""    n = x.shape[0]
    share = lambda p, xi, yi: example_loss(p, xi, yi) / n
    return jax.vmap(jax.grad(share), in_axes=(None, 0, 0))(params, x, y)""")),
        ("a loop that collects the gradients in NumPy: right values, but not traceable",
         _PER_EXAMPLE.format(body="""    grads = [jax.grad(example_loss)(params, x[i], y[i]) for i in range(len(x))]
    return {k: np.stack([np.asarray(g[k]) for g in grads]) for k in params}""")),
        ("delegates to torch.func",
         _PER_EXAMPLE.format(body="""    import torch
    from torch.func import grad, vmap

    def loss(p, xi, yi):
        return (torch.tanh(xi @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yi) ** 2

    tp = {k: torch.from_numpy(np.array(v)) for k, v in params.items()}
    g = vmap(grad(loss), in_dims=(None, 0, 0))(tp, torch.from_numpy(np.array(x)),
                                                torch.from_numpy(np.array(y)))
    return {k: jnp.asarray(v.numpy()) for k, v in g.items()}""")),
    ],
    "prng": [
        ("one key for both weight matrices", '''def init_params(key, d_in, hidden):
    return {"w1": jax.random.normal(key, (d_in, hidden)) / jnp.sqrt(d_in),
            "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(key, (hidden,)) / jnp.sqrt(hidden),
            "b2": jnp.zeros(())}
''' + _DROPOUT_MASKS),
        ("draws w1 from the key it then splits for w2", '''def init_params(key, d_in, hidden):
    w1 = jax.random.normal(key, (d_in, hidden)) / jnp.sqrt(d_in)
    key, key_w2 = jax.random.split(key)
    return {"w1": w1, "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
            "b2": jnp.zeros(())}
''' + _DROPOUT_MASKS),
        ("weights not scaled by 1/sqrt(fan-in)", '''def init_params(key, d_in, hidden):
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)), "b1": jnp.zeros(hidden),
            "w2": jax.random.normal(key_w2, (hidden,)), "b2": jnp.zeros(())}
''' + _DROPOUT_MASKS),
        ("the same key every step: the same mask every step", _INIT_PARAMS + '''

def dropout_masks(key, steps, shape, keep_prob):
    return jnp.stack([jax.random.bernoulli(key, keep_prob, shape) for _ in range(steps)])
'''),
        ("draws from the carried key instead of the step key", _INIT_PARAMS + '''

def dropout_masks(key, steps, shape, keep_prob):
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(key, keep_prob, shape))
    return jnp.stack(masks)
'''),
        ("splits the original key every step instead of carrying it", _INIT_PARAMS + '''

def dropout_masks(key, steps, shape, keep_prob):
    masks = []
    for _ in range(steps):
        _, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks)
'''),
        ("b2 = jnp.zeros(1), of shape (1,), instead of a zero of shape ()",
         _INIT_PARAMS.replace('"b2": jnp.zeros(())', '"b2": jnp.zeros(1)') + _DROPOUT_MASKS),
        ("NumPy zeros for the biases: b1 and b2 float64, not float32",
         '''def init_params(key, d_in, hidden):
    key_w1, key_w2 = jax.random.split(key)
    return {"w1": jax.random.normal(key_w1, (d_in, hidden)) / jnp.sqrt(d_in),
            "b1": np.zeros(hidden),
            "w2": jax.random.normal(key_w2, (hidden,)) / jnp.sqrt(hidden),
            "b2": np.zeros(())}
''' + _DROPOUT_MASKS),
        ("masks returned as 0.0/1.0 floats, ready to multiply, not booleans", _INIT_PARAMS + '''

def dropout_masks(key, steps, shape, keep_prob):
    masks = []
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        masks.append(jax.random.bernoulli(step_key, keep_prob, shape))
    return jnp.stack(masks).astype(jnp.float32)
'''),
        ("NumPy's global generator for the masks", _INIT_PARAMS + '''

def dropout_masks(key, steps, shape, keep_prob):
    return jnp.asarray(np.random.random_sample((steps, *shape)) < keep_prob)
'''),
    ],
    "predict_jit": [
        ("SCALE starts at 0 when scale is not given",
         _PREDICT.replace("scale=1.0", "scale=0.0").format(body='''    frozen, out = {}, []
    for event in events:
        if event[0] == "scale":
            scale = event[1]
        elif event[0] == "clear":
            frozen.clear()
        else:
            key = (event[1], event[2])
            if key not in frozen:
                frozen[key] = scale
                out.append((True, float(sum(range(event[1])) * scale)))
            else:
                out.append((False, float(sum(range(event[1])) * frozen[key])))
    return out''')),
        ("the cache is keyed on the shape only, not the dtype", _PREDICT.format(body='''    frozen, out = {}, []
    for event in events:
        if event[0] == "scale":
            scale = event[1]
        elif event[0] == "clear":
            frozen.clear()
        else:
            traced = event[1] not in frozen
            if traced:
                frozen[event[1]] = scale
            out.append((traced, float(sum(range(event[1])) * frozen[event[1]])))
    return out''')),
        ("no stale results: every call uses the current SCALE", _PREDICT.format(body='''    seen, out = set(), []
    for event in events:
        if event[0] == "scale":
            scale = event[1]
        elif event[0] == "clear":
            seen.clear()
        else:
            traced = (event[1], event[2]) not in seen
            seen.add((event[1], event[2]))
            out.append((traced, float(sum(range(event[1])) * scale)))
    return out''')),
        ("every call traces (as if jit were not there)", _PREDICT.format(body='''    out = []
    for event in events:
        if event[0] == "scale":
            scale = event[1]
        elif event[0] == "call":
            out.append((True, float(sum(range(event[1])) * scale)))
    return out''')),
        ("clear_cache is ignored", _PREDICT.format(body='''    frozen, out = {}, []
    for event in events:
        if event[0] == "scale":
            scale = event[1]
        elif event[0] == "call":
            traced = (event[1], event[2]) not in frozen
            if traced:
                frozen[(event[1], event[2])] = scale
            out.append((traced, float(sum(range(event[1])) * frozen[(event[1], event[2])])))
    return out''')),
        ("one SCALE frozen at the first trace, for every shape", _PREDICT.format(body='''    seen, out, frozen = set(), [], None
    for event in events:
        if event[0] == "scale":
            scale = event[1]
        elif event[0] == "clear":
            seen.clear()
        else:
            traced = (event[1], event[2]) not in seen
            seen.add((event[1], event[2]))
            if frozen is None:
                frozen = scale
            out.append((traced, float(sum(range(event[1])) * frozen)))
    return out''')),
        ("runs JAX to find out instead of predicting", _PREDICT.format(body='''    state, traces, out = {"scale": scale}, [], []

    def body(x):
        traces.append(1)
        return jnp.sum(x) * state["scale"]

    f = jax.jit(body)
    for event in events:
        if event[0] == "scale":
            state["scale"] = event[1]
        elif event[0] == "clear":
            f.clear_cache()
        else:
            before = len(traces)
            value = float(f(jnp.arange(event[1], dtype=event[2])))
            out.append((len(traces) > before, value))
    return out''')),
    ],
    "time_jit": [
        ("the first call's time is the clock's bare reading, as if the clock started at 0",
         _TIME_JIT.format(body='''    compiled = jit(f)
    start = clock()
    compiled(x).block_until_ready()
    first = clock()
    times = []
    for _ in range(repeats):
        start = clock()
        compiled(x).block_until_ready()
        times.append(clock() - start)
    steady = statistics.median(times)
    return {"first_call_s": first, "steady_s": steady, "compile_s": first - steady}''')),
        ("applies jit again before every call instead of once", _TIME_JIT.format(body='''    start = clock()
    jit(f)(x).block_until_ready()
    first = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        jit(f)(x).block_until_ready()
        times.append(clock() - start)
    steady = statistics.median(times)
    return {"first_call_s": first, "steady_s": steady, "compile_s": first - steady}''')),
        ("no block_until_ready: times the dispatch, not the work", _TIME_JIT.format(body='''    compiled = jit(f)
    start = clock()
    compiled(x)
    first = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        compiled(x)
        times.append(clock() - start)
    steady = statistics.median(times)
    return {"first_call_s": first, "steady_s": steady, "compile_s": first - steady}''')),
        ("the mean of the steady calls, not the median", _TIME_JIT.format(body='''    compiled = jit(f)
    start = clock()
    compiled(x).block_until_ready()
    first = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        compiled(x).block_until_ready()
        times.append(clock() - start)
    steady = sum(times) / len(times)
    return {"first_call_s": first, "steady_s": steady, "compile_s": first - steady}''')),
        ("compile_s is the whole first call", _TIME_JIT.format(body='''    compiled = jit(f)
    start = clock()
    compiled(x).block_until_ready()
    first = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        compiled(x).block_until_ready()
        times.append(clock() - start)
    steady = statistics.median(times)
    return {"first_call_s": first, "steady_s": steady, "compile_s": first}''')),
        ("a warm-up call before timing the first call", _TIME_JIT.format(body='''    compiled = jit(f)
    compiled(x).block_until_ready()
    start = clock()
    compiled(x).block_until_ready()
    first = clock() - start
    times = []
    for _ in range(repeats):
        start = clock()
        compiled(x).block_until_ready()
        times.append(clock() - start)
    steady = statistics.median(times)
    return {"first_call_s": first, "steady_s": steady, "compile_s": first - steady}''')),
        ("times the whole loop and blocks only at its end", _TIME_JIT.format(body='''    compiled = jit(f)
    start = clock()
    compiled(x).block_until_ready()
    first = clock() - start
    start = clock()
    for _ in range(repeats):
        result = compiled(x)
    result.block_until_ready()
    steady = (clock() - start) / repeats
    return {"first_call_s": first, "steady_s": steady, "compile_s": first - steady}''')),
        ("the first call counted among the steady ones", _TIME_JIT.format(body='''    compiled = jit(f)
    times = []
    for _ in range(repeats + 1):
        start = clock()
        compiled(x).block_until_ready()
        times.append(clock() - start)
    steady = statistics.median(times)
    return {"first_call_s": times[0], "steady_s": steady, "compile_s": times[0] - steady}''')),
    ],
    "data_parallel_grad": [
        ("psum instead of pmean: the sum of the shard gradients", _PARALLEL.format(body='''
    def shard_grad(params, xs, ys):
        return jax.lax.psum(jax.grad(batch_loss)(params, xs, ys), axis_name="devices")

    return jax.pmap(shard_grad, axis_name="devices", in_axes=(None, 0, 0))(params, x_shards, y_shards)''')),
        ("no all-reduce: each device keeps its own shard's gradient", _PARALLEL.format(body='''
    return jax.pmap(jax.grad(batch_loss), in_axes=(None, 0, 0))(params, x_shards, y_shards)''')),
        ("the full-batch gradient stacked on one device, no pmap", _PARALLEL.format(body='''    g = jax.grad(batch_loss)(params, x, y)
    return jax.tree.map(lambda leaf: jnp.stack([leaf] * n), g)''')),
        ("the summed loss per shard, averaged", _PARALLEL.format(body='''
    def shard_grad(params, xs, ys):
        total = lambda p: jnp.sum(example_loss(p, xs, ys))
        return jax.lax.pmean(jax.grad(total)(params), axis_name="devices")

    return jax.pmap(shard_grad, axis_name="devices", in_axes=(None, 0, 0))(params, x_shards, y_shards)''')),
        ("shards flattened: reshape(n, -1) mixes the features of several examples",
         '''def data_parallel_grad(params, x, y):
    n = jax.local_device_count()

    def shard_grad(params, xs, ys):
        return jax.lax.pmean(jax.grad(batch_loss)(params, xs.reshape(-1, params["w1"].shape[0]), ys),
                             axis_name="devices")

    return jax.pmap(shard_grad, axis_name="devices", in_axes=(None, 0, 0))(
        params, x.T.reshape(n, -1), y.reshape(n, -1))
'''),
        ("computes the gradient in torch", _PARALLEL.format(body='''    import torch

    p = {k: torch.tensor(np.array(v), requires_grad=True) for k, v in params.items()}
    tx, ty = torch.from_numpy(np.array(x)), torch.from_numpy(np.array(y))
    loss = ((torch.tanh(tx @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - ty) ** 2).mean()
    loss.backward()
    g = {k: jnp.asarray(v.grad.numpy()) for k, v in p.items()}
    return jax.pmap(lambda g: g)(jax.tree.map(lambda leaf: jnp.stack([leaf] * n), g))''')),
    ],
}

# Right answers written differently: each must keep full marks.
ALTERNATIVES = {
    "per_example_grads": [
        ("params closed over, vmap over x and y only", _PER_EXAMPLE.format(
            body="    return jax.vmap(lambda xi, yi: jax.grad(example_loss)(params, xi, yi))(x, y)")),
        ("a traceable loop: grad per example, leaves stacked with tree.map", _PER_EXAMPLE.format(
            body="""    grads = [jax.grad(example_loss)(params, x[i], y[i]) for i in range(x.shape[0])]
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *grads)""")),
    ],
    "prng": [
        ("split(key, 2) indexed, math.sqrt, and lax.scan carrying the key", '''import math


def init_params(key, d_in, hidden):
    keys = jax.random.split(key, 2)
    return {"w1": jax.random.normal(keys[0], (d_in, hidden)) / math.sqrt(d_in),
            "b1": jnp.zeros((hidden,), dtype=jnp.float32),
            "w2": jax.random.normal(keys[1], (hidden,)) / math.sqrt(hidden),
            "b2": jnp.array(0.0)}


def dropout_masks(key, steps, shape, keep_prob):
    def step(key, _):
        key, step_key = jax.random.split(key)
        return key, jax.random.bernoulli(step_key, keep_prob, shape)

    _, masks = jax.lax.scan(step, key, None, length=steps)
    return masks
'''),
    ],
    "predict_jit": [
        ("a set of traced signatures and a list of frozen scales", _PREDICT.format(body='''    traced_with = {}
    results = []
    current = scale
    for kind, *rest in events:
        if kind == "scale":
            current = rest[0]
        elif kind == "clear":
            traced_with = {}
        else:
            signature = tuple(rest)
            printed = signature not in traced_with
            traced_with.setdefault(signature, current)
            n = rest[0]
            results.append((printed, n * (n - 1) / 2 * traced_with[signature]))
    return results''')),
    ],
    "time_jit": [
        ("jax.block_until_ready and numpy's median", _TIME_JIT.format(body='''    compiled = jit(f)
    t0 = clock()
    jax.block_until_ready(compiled(x))
    first = clock() - t0
    readings = np.empty(repeats)
    for i in range(repeats):
        t0 = clock()
        jax.block_until_ready(compiled(x))
        readings[i] = clock() - t0
    steady = float(np.median(readings))
    return dict(first_call_s=first, steady_s=steady, compile_s=first - steady)''')),
    ],
    "data_parallel_grad": [
        ("psum divided by the device count, interleaved shards", '''def data_parallel_grad(params, x, y):
    n = jax.local_device_count()
    x_shards = jnp.stack([x[i::n] for i in range(n)])
    y_shards = jnp.stack([y[i::n] for i in range(n)])

    def shard_grad(params, xs, ys):
        grads = jax.grad(batch_loss)(params, xs, ys)
        return jax.tree.map(lambda g: jax.lax.psum(g, "i") / n, grads)

    return jax.pmap(shard_grad, axis_name="i", in_axes=(None, 0, 0))(params, x_shards, y_shards)
'''),
    ],
}
