"""Lab 06: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "trace_disagreements": [
        ("re-traces fn on each input instead of once on `example`: a trace never disagrees", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    verdicts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in inputs:
            traced = torch.jit.trace(fn, value)   # trace on the input so the shapes fit
            expected = fn(value)
            try:
                got = traced(value)
            except Exception:
                verdicts.append(True)
                continue
            if got.shape != expected.shape:
                verdicts.append(True)
            else:
                verdicts.append(not torch.allclose(got, expected, rtol=rtol, atol=atol))
    return verdicts
'''),
    ],
    "grow_or_shrink_traceable": [
        ("condition turned into a Python bool before torch.where: the trace freezes the branch", '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    positive = bool(x.sum() > 0)          # no `if` here, only torch.where below
    return torch.where(torch.tensor(positive), x * 2, x / 2 - 1)
'''),
    ],
    "w2_model": [
        ("boundary wrong: `prev_loss <= 5.0` picks w2a at exactly 5.0", '''@torch.jit.script
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
        ("sets `model.training = False` on the top module only: dropout and BatchNorm stay in training mode", '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.training = False
    batch = torch.export.Dim("batch")
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
    ],
    "save_for_deployment": [
        ("batch Dim declared with min=2, max=4096 (misreading the 0/1 note): the graph declares it refuses batches above 4096 (min=2 is what torch's Dim.AUTO declares; a batch of 1 runs)", '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    model.eval()
    batch = torch.export.Dim("batch", min=2, max=4096)
    program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, path)
'''),
    ],
    "export_onnx": [
        ("legacy exporter: dynamic_axes keyed by the forward argument name, not the input_names given: batch stays fixed", '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), str(path), dynamo=False,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"x": {0: "batch"}, "output": {0: "batch"}})
'''),
    ],
    "checkpoint": [
        ("scheduler state not saved: the optimizer's lr looks right but StepLR restarts its count", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(),
                "optimizer": optimizer.state_dict(),    # holds the current lr already
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
'''),
    ],
    "time_compiled": [
        ("the `sync` argument is ignored: always waits with synchronize(example.device)", '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    def wait():
        synchronize(example.device)

    def timed(f):
        wait()
        start = clock()
        f(example)
        wait()
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
        ("break-even as floor + 1: one call too many when the compile cost is exactly N savings", '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    if sync is None:
        def sync():
            synchronize(example.device)

    def timed(f):
        sync()
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
    saving = eager_s - compiled_s
    # the first whole number of calls past the crossing point
    break_even = None if saving <= 0 else int(compile_s // saving) + 1
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
    ],
    "tree_encode": [
        ("memoises leaf vectors by word index in a module-level dict: stale across embeddings and calls", '''_leaf_vectors = {}


def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, int):
        if tree not in _leaf_vectors:          # each word looked up once
            _leaf_vectors[tree] = embedding[tree]
        return _leaf_vectors[tree]
    left, right = tree
    children = torch.cat([tree_encode(left, embedding, W, b),
                          tree_encode(right, embedding, W, b)])
    return torch.tanh(children @ W + b)
'''),
    ],
}

RIGHT = {
    "grow_or_shrink_traceable": [
        ("arithmetic blend with a 0-d float mask instead of torch.where", '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    take_grow = (x.sum() > 0).to(x.dtype)
    return take_grow * (x * 2) + (1 - take_grow) * (x / 2 - 1)
'''),
    ],
    "checkpoint": [
        ("one tuple under a single key, loaded with weights_only=True, rng via torch.random", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    states = (model.state_dict(), optimizer.state_dict(), scheduler.state_dict(),
              torch.random.get_rng_state())
    torch.save({"states": states}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    model_state, optimizer_state, scheduler_state, rng = torch.load(path, weights_only=True)["states"]
    for target, state in ((model, model_state), (optimizer, optimizer_state),
                          (scheduler, scheduler_state)):
        target.load_state_dict(state)
    torch.random.set_rng_state(rng)
'''),
    ],
    "tree_encode": [
        ("iterative post-order walk with an explicit stack, no recursion", '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    done = []                       # vectors of finished subtrees, left before right
    todo = [(tree, False)]
    while todo:
        node, children_ready = todo.pop()
        if not isinstance(node, (tuple, list)):
            done.append(embedding[node])
        elif children_ready:
            right = done.pop()
            left = done.pop()
            done.append(torch.tanh(torch.cat([left, right]) @ W + b))
        else:
            todo.append((node, True))
            todo.append((node[1], False))
            todo.append((node[0], False))
    return done[0]
'''),
    ],
}
