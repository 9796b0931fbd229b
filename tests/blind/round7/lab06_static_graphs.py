"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    'trace_disagreements': [
        ('passes the tolerances positionally as torch.allclose(a, b, atol, rtol), but the signature is allclose(input, other, rtol, atol): the two tolerances are swapped (breaks: allclose with rtol=rtol, atol=atol)', '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for inp in inputs:
            eager = fn(inp)
            try:
                got = traced(inp)
            except Exception:
                verdicts.append(True)
                continue
            if got.shape != eager.shape:
                verdicts.append(True)
            else:
                verdicts.append(not torch.allclose(got, eager, atol, rtol))
    return verdicts
'''),
    ],
    'grow_or_shrink_traceable': [
        ('decides per row with x.sum(dim=-1, keepdim=True) > 0: identical for vectors, but a 2-D input whose rows have different signs gets mixed branches (breaks: one choice from x.sum() for the whole tensor)', '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    return torch.where(x.sum(dim=-1, keepdim=True) > 0, x * 2, x / 2 - 1)
'''),
    ],
    'w2_model': [
        ("picks the weight with torch.where(torch.tensor(prev_loss < 5.0), w2a, w2b) inside the scripted function (Exercise 2's trick): same loss, but no prim::If in the graph and the unused weight gets a zero gradient instead of none (breaks: the branch kept as a conditional in the TorchScript graph)", '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    w2 = torch.where(torch.tensor(prev_loss < 5.0), w2a, w2b)
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()


# Compile it: w2_model = torch.jit.script(w2_model), or put @torch.jit.script above the def.
w2_model = torch.jit.script(w2_model)
'''),
    ],
    'export_for_inference': [
        ("wraps the export in torch.no_grad() instead of calling model.eval(), taking 'no gradients' for inference mode: dropout and BatchNorm's batch statistics are recorded in the graph (breaks: put the model in evaluation mode)", '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    batch = torch.export.Dim("batch")
    with torch.no_grad():
        return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
    ],
    'save_for_deployment': [
        ('exports first and calls model.eval() afterwards: the graph has already recorded training mode (dropout, BatchNorm batch statistics), so the saved file computes something else (breaks: the model must be in eval mode in the file)', '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    model.eval()
    torch.export.save(program, path)
'''),
    ],
    'export_onnx': [
        ("uses the TorchScript exporter with input_names=['input'] but keys dynamic_axes by 'x', the forward argument's name: the exporter only warns, and the ONNX input keeps the example's fixed batch size (breaks: a dynamic batch dimension)", '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=False, input_names=["input"],
                      output_names=["output"], dynamic_axes={"x": {0: "batch"}, "output": {0: "batch"}})
'''),
    ],
    'checkpoint': [
        ("saves the scheduler's current learning rate and writes it into the new optimizer's param_groups instead of loading the scheduler's state: the fresh scheduler restarts its step count, so the next decay comes at the wrong step (breaks: load_state_dict of each of the three)", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "lr": scheduler.get_last_lr(), "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    checkpoint = torch.load(path, weights_only=False)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    for group, lr in zip(optimizer.param_groups, checkpoint["lr"]):
        group["lr"] = lr
    torch.set_rng_state(checkpoint["rng"])
'''),
    ],
    'time_compiled': [
        ('times each call as start = clock(); f(); sync() without the sync() before start: the first timed call also pays for the work the untimed warm-up calls left queued (breaks: sync(); start = clock(); f(example); sync())', '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
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
        ('computes the break-even as int(compile_s // saving) + 1, one too many when compile_s is an exact multiple of the saving (breaks: math.ceil(compile_s / (eager_s - compiled_s)), N calls break even)', '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    if sync is None:
        sync = lambda: synchronize(example.device)

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
    if compiled_s >= eager_s:
        break_even = None
    else:
        break_even = int(compile_s // (eager_s - compiled_s)) + 1
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
    ],
    'tree_encode': [
        ("takes a leaf as embedding[tree:tree + 1] and concatenates along the last dim: values and gradients are right but every vector, the root's too, has shape (1, d) (breaks: return the root's vector, shape (d,))", '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, tuple):
        left, right = tree
        h = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)], dim=-1)
        return torch.tanh(h @ W + b)
    return embedding[tree:tree + 1]
'''),
    ],
}

RIGHT = {
    'export_for_inference': [
        ('switches mode with model.train(False) and gives dynamic_shapes positionally, as a tuple matching the args, instead of a dict keyed by the argument name', '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model = model.train(False)
    rows = torch.export.Dim("rows")
    program = torch.export.export(model, args=(example,), dynamic_shapes=({0: rows},))
    return program
'''),
    ],
    'checkpoint': [
        ("one flat dict built from a name -> object table with a loop, rng state via torch.random, and torch.load with map_location='cpu' through an open file", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    parts = {"model": model, "optimizer": optimizer, "scheduler": scheduler}
    state = {f"{name}_state_dict": obj.state_dict() for name, obj in parts.items()}
    state["cpu_rng_state"] = torch.random.get_rng_state()
    with open(path, "wb") as f:
        torch.save(state, f)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    with open(path, "rb") as f:
        state = torch.load(f, map_location="cpu", weights_only=False)
    for name, obj in {"model": model, "optimizer": optimizer, "scheduler": scheduler}.items():
        obj.load_state_dict(state[f"{name}_state_dict"])
    torch.random.set_rng_state(state["cpu_rng_state"])
'''),
    ],
    'tree_encode': [
        ('no recursion: an explicit stack walks the tree in post-order and a list of child vectors is reduced node by node, with torch.stack/flatten in place of cat', '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    stack = [(tree, False)]
    vectors = []
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, tuple):
            vectors.append(embedding[node])
        elif children_done:
            right = vectors.pop()
            left = vectors.pop()
            vectors.append(torch.tanh(torch.stack([left, right]).flatten() @ W + b))
        else:
            left, right = node
            stack.append((node, True))
            stack.append((right, False))
            stack.append((left, False))
    (root,) = vectors
    return root
'''),
    ],
}
