"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "trace_disagreements": [
        ("passes rtol on to torch.allclose but forgets atol: allclose's own atol=1e-8 is used "
         "whatever the caller gave",
         '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for x in inputs:
            expected = fn(x)
            try:
                got = traced(x)
            except Exception:
                verdicts.append(True)
                continue
            if got.shape != expected.shape:
                verdicts.append(True)
            else:
                verdicts.append(not torch.allclose(got, expected, rtol=rtol))
    return verdicts
'''),
    ],
    "grow_or_shrink_traceable": [
        ("condition written as x.sum() >= 0: a sum of exactly 0 doubles instead of halving",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    return torch.where(x.sum() >= 0, x * 2, x / 2 - 1)
'''),
        ("no `if`, but the condition goes through .item() into a new torch.tensor: the trace "
         "stores it as a constant, the branch is frozen again",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    positive = torch.tensor(x.sum().item() > 0)
    return torch.where(positive, x * 2, x / 2 - 1)
'''),
    ],
    "w2_model": [
        ("branch written the other way round, `if prev_loss > 5.0: w2b else w2a`: at exactly "
         "5.0 it picks w2a",
         '''@torch.jit.script
def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    if prev_loss > 5.0:
        w2 = w2b
    else:
        w2 = w2a
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
'''),
    ],
    "export_for_inference": [
        ("`model.eval` without the call parentheses: the model stays in training mode and the "
         "export records dropout and batch statistics",
         '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.eval
    batch = torch.export.Dim("batch")
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
    ],
    "save_for_deployment": [
        ("the deprecated route, torch.jit.script + torch.jit.save, but without model.eval(): the "
         "saved graph runs dropout and BatchNorm in training mode",
         '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    scripted = torch.jit.script(model)
    torch.jit.save(scripted, str(path))
'''),
    ],
    "export_onnx": [
        ("the TorchScript exporter with dynamic_axes keyed by 'x', but no input_names: the key "
         "names no input, so the batch stays fixed at the example's size",
         '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), str(path), dynamo=False,
                      dynamic_axes={"x": {0: "batch"}})
'''),
    ],
    "checkpoint": [
        ("stores torch.initial_seed() and re-seeds with torch.manual_seed on load: the generator "
         "restarts from the seed instead of continuing where it was",
         '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "seed": torch.initial_seed()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    torch.manual_seed(checkpoint["seed"])
'''),
    ],
    "time_compiled": [
        ("synchronises only after the call (start = clock(); f(); sync(); stop): work still "
         "queued by the untimed warm-up calls lands in the first timed call",
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    if sync is None:
        sync = lambda: synchronize(example.device)

    def timed_call(f):
        start = clock()
        f(example)
        sync()
        return clock() - start

    compiled = compile(fn)
    first_call_s = timed_call(compiled)
    for _ in range(warmup):
        compiled(example)
    compiled_s = sum(timed_call(compiled) for _ in range(repeats)) / repeats
    for _ in range(warmup):
        fn(example)
    eager_s = sum(timed_call(fn) for _ in range(repeats)) / repeats
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
        ("bias added after the tanh, tanh([hl; hr] @ W) + b, instead of inside it",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if not isinstance(tree, (tuple, list)):
        return embedding[tree]
    left, right = tree
    children = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)])
    return torch.tanh(children @ W) + b
'''),
    ],
}

RIGHT = {
    "grow_or_shrink_traceable": [
        ("no torch.where: the comparison cast to x's dtype as a 0/1 mask blends both results "
         "arithmetically",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    up = (x.sum() > 0).to(x.dtype)
    return up * (x * 2) + (1 - up) * (x / 2 - 1)
'''),
    ],
    "tree_encode": [
        ("no recursion: an explicit stack visits the tree in post-order and a value stack "
         "combines children",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    todo = [(tree, False)]
    values = []
    while todo:
        node, children_done = todo.pop()
        if not isinstance(node, (tuple, list)):
            values.append(embedding[node])
        elif children_done:
            right = values.pop()
            left = values.pop()
            values.append(torch.tanh(torch.cat([left, right]) @ W + b))
        else:
            todo.append((node, True))
            todo.append((node[1], False))
            todo.append((node[0], False))
    (root,) = values
    return root
'''),
    ],
    "time_compiled": [
        ("one helper for both functions, per-call times kept in lists, the mean taken with "
         "statistics.fmean (exactly rounded) rather than sum / len",
         '''import statistics


def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    wait = sync if sync is not None else (lambda: synchronize(example.device))

    def one_call(f):
        wait()
        t0 = clock()
        f(example)
        wait()
        return clock() - t0

    compiled = compile(fn)
    record = {"first_call_s": one_call(compiled)}
    for key, f in (("compiled_s", compiled), ("eager_s", fn)):
        for _ in range(warmup):
            f(example)
        times = [one_call(f) for _ in range(repeats)]
        record[key] = statistics.fmean(times)
    record["compile_s"] = record["first_call_s"] - record["compiled_s"]
    saving = record["eager_s"] - record["compiled_s"]
    record["break_even_calls"] = math.ceil(record["compile_s"] / saving) if saving > 0 else None
    return record
'''),
    ],
}
