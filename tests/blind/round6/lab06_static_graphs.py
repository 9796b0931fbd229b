"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "trace_disagreements": [
        ("forwards rtol to torch.allclose but not atol, so the torch default atol=1e-8 is used instead of the caller's (default 1e-7) atol",
         '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for inp in inputs:
            expected = fn(inp)
            try:
                got = traced(inp)
            except Exception:
                verdicts.append(True)
                continue
            if got.shape != expected.shape:
                verdicts.append(True)
            else:
                verdicts.append(not torch.allclose(got, expected, rtol=rtol))
    return verdicts
'''),
        ("calls torch.allclose(eager, traced) with the arguments swapped, so the relative tolerance scales with the traced value instead of the eager one (allclose is not symmetric)",
         '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for inp in inputs:
            eager_result = fn(inp)
            try:
                traced_result = traced(inp)
            except Exception:
                verdicts.append(True)
                continue
            if traced_result.shape != eager_result.shape:
                verdicts.append(True)
                continue
            same = torch.allclose(eager_result, traced_result, rtol=rtol, atol=atol)
            verdicts.append(not same)
    return verdicts
'''),
    ],
    "grow_or_shrink_traceable": [
        ("turns the condition into a Python bool and back (torch.tensor(bool(...))), so torch.jit.trace freezes the example's branch as a constant",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    positive = torch.tensor(bool(x.sum() > 0))
    return torch.where(positive, x * 2, x / 2 - 1)
'''),
    ],
    "w2_model": [
        ("tests prev_loss <= 5.0, so a prev_loss of exactly 5.0 picks w2a instead of w2b",
         '''@torch.jit.script
def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    if prev_loss <= 5.0:
        w2 = w2a
    else:
        w2 = w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
'''),
    ],
    "export_for_inference": [
        ("sets model.training = False instead of calling model.eval(): only the top module's flag changes, so its Dropout/BatchNorm children are exported in training mode",
         '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.training = False
    batch = torch.export.Dim("batch")
    return torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
'''),
    ],
    "save_for_deployment": [
        ("declares the batch dimension with an upper bound (Dim('batch', max=4096)), so the saved graph declares a largest batch",
         '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    model.eval()
    batch = torch.export.Dim("batch", max=4096)
    program = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
    torch.export.save(program, path)
'''),
    ],
    "export_onnx": [
        ("uses the legacy exporter's dynamic_axes keyed by 'x' without input_names=['x'], so the key matches no input (only a warning) and the batch stays fixed to the example's size",
         '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), str(path), dynamo=False,
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
'''),
    ],
    "checkpoint": [
        ("stores torch.initial_seed() and reseeds with torch.manual_seed on load, which restarts the random stream from its beginning instead of where training stopped",
         '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "seed": torch.initial_seed()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.manual_seed(state["seed"])
'''),
    ],
    "time_compiled": [
        ("synchronises only after the timed call, not before starting the clock, so work still queued from the untimed warm-up calls (or the previous call) is billed to the first timed call",
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    if sync is None:
        sync = lambda: synchronize(example.device)

    def timed(f):
        start = clock()
        f(example)
        sync()
        return clock() - start

    compiled = compile(fn)
    first_call_s = timed(compiled)
    for _ in range(warmup):
        compiled(example)
    compiled_s = sum(timed(compiled) for _ in range(repeats)) / repeats
    for _ in range(warmup):
        fn(example)
    eager_s = sum(timed(fn) for _ in range(repeats)) / repeats
    compile_s = first_call_s - compiled_s
    if compiled_s >= eager_s:
        break_even = None
    else:
        break_even = math.ceil(compile_s / (eager_s - compiled_s))
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
    ],
    "tree_encode": [
        ("reads a leaf through embedding.data[tree], which detaches it, so backward() never reaches the embedding table",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, tuple):
        left = tree_encode(tree[0], embedding, W, b)
        right = tree_encode(tree[1], embedding, W, b)
        return torch.tanh(torch.cat([left, right]) @ W + b)
    return embedding.data[tree]
'''),
    ],
}

RIGHT = {
    "checkpoint": [
        ("one dict built from getattr over the three objects, written through an open file handle, loaded with weights_only=True and map_location, torch.random's get/set_rng_state",
         '''_PARTS = ("model", "optimizer", "scheduler")


def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    objects = dict(zip(_PARTS, (model, optimizer, scheduler)))
    state = {name: obj.state_dict() for name, obj in objects.items()}
    state["cpu_rng"] = torch.random.get_rng_state()
    with open(path, "wb") as handle:
        torch.save(state, handle)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    with open(path, "rb") as handle:
        state = torch.load(handle, map_location="cpu", weights_only=True)
    for name, obj in zip(_PARTS, (model, optimizer, scheduler)):
        obj.load_state_dict(state[name])
    torch.random.set_rng_state(state["cpu_rng"])
'''),
    ],
    "time_compiled": [
        ("one helper measures a whole phase (first call, warm-up, timed repeats) per function, the phases run from a list, times collected in lists",
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    wait = sync if sync is not None else (lambda: synchronize(example.device))

    def one_call(f):
        wait()
        start = clock()
        f(example)
        wait()
        return clock() - start

    def steady(f):
        for _ in range(warmup):
            f(example)
        times = [one_call(f) for _ in range(repeats)]
        return sum(times) / len(times)

    compiled = compile(fn)
    record = {"first_call_s": one_call(compiled)}
    record["compiled_s"] = steady(compiled)
    record["eager_s"] = steady(fn)
    record["compile_s"] = record["first_call_s"] - record["compiled_s"]
    saving = record["eager_s"] - record["compiled_s"]
    record["break_even_calls"] = math.ceil(record["compile_s"] / saving) if saving > 0 else None
    return record
'''),
    ],
    "tree_encode": [
        ("no recursion: an explicit stack walks the tree in post-order and a dict keeps each visited node's vector",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    done = {}
    stack = [(tree, False)]
    while stack:
        node, children_ready = stack.pop()
        if not isinstance(node, (tuple, list)):
            done[id(node)] = embedding[node]
        elif children_ready:
            both = torch.cat((done[id(node[0])], done[id(node[1])]), dim=0)
            done[id(node)] = torch.tanh(both @ W + b)
        else:
            stack.append((node, True))
            stack.append((node[1], False))
            stack.append((node[0], False))
    return done[id(tree)]
'''),
    ],
}
