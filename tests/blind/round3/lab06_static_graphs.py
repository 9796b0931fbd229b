"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    'trace_disagreements': [
        ("passes the tolerances positionally in the wrong order, torch.allclose(got, expected, atol, rtol) (allclose's third positional is rtol): rtol and atol are swapped, so a call with only rtol or only atol given judges wrongly",
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
                continue
            verdicts.append(not torch.allclose(got, expected, atol, rtol))
    return verdicts
'''),
    ],
    'grow_or_shrink_traceable': [
        ("the condition is computed with .item() and wrapped back into a tensor: no Python if, but the trace records the example's sign as a constant, so a trace follows one branch for every input",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    positive = torch.tensor(x.sum().item() > 0)
    return torch.where(positive, x * 2, x / 2 - 1)
'''),
    ],
    'w2_model': [
        ("the branch compares with <=: prev_loss exactly 5.0 selects w2a instead of w2b (the text's rule is w2a only when prev_loss < 5.0)",
         '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    if prev_loss <= 5.0:
        w2 = w2a
    else:
        w2 = w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()


# Compile it: w2_model = torch.jit.script(w2_model), or put @torch.jit.script above the def.
w2_model = torch.jit.script(w2_model)
'''),
    ],
    'export_for_inference': [
        ("exports inside `with torch.no_grad():` instead of calling model.eval() (taking 'no gradients' for inference mode): the model stays in training mode, so the program keeps dropout and BatchNorm's batch statistics",
         '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    batch = torch.export.Dim("batch")
    with torch.no_grad():  # inference: no graph for backward
        return torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
'''),
    ],
    'save_for_deployment': [
        ("copies the docs' pattern Dim('batch', max=1024): works for the batches tried here but the saved graph declares a largest batch",
         '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    model.eval()
    batch = torch.export.Dim("batch", max=1024)
    program = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
    torch.export.save(program, path)
'''),
    ],
    'export_onnx': [
        ("uses the TorchScript exporter (dynamo=False) with dynamic_axes keyed by 'input' but gives no input_names: the key names no input, the axis is ignored, and the file accepts only the example's batch size",
         '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), str(path), dynamo=False,
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
'''),
    ],
    'checkpoint': [
        ("stores torch.initial_seed() and restores with torch.manual_seed(seed): the generator restarts from the beginning of the seed's sequence instead of where the interrupted run stood",
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
    'time_compiled': [
        ("warms up only the compiled function (eager 'needs no warm-up'): the eager mean includes eager's slow first call, so eager_s and the break-even count are off",
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
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
    eager_s = sum(timed(fn) for _ in range(repeats)) / repeats
    compile_s = first_call_s - compiled_s
    if compiled_s >= eager_s:
        break_even = None
    else:
        break_even = math.ceil(compile_s / (eager_s - compiled_s))
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
        ('break-even as floor division plus one instead of ceil: one call too many when the compile cost is exactly a whole number of savings',
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
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
    if compiled_s >= eager_s:
        break_even = None
    else:
        break_even = int(compile_s // (eager_s - compiled_s)) + 1
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
    ],
    'tree_encode': [
        ("a leaf's vector is read from embedding.data[tree]: values right, but the leaves are cut from the graph and backward never reaches embedding (W and b still get gradients)",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, tuple):
        left, right = tree
        h = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)])
        return torch.tanh(h @ W + b)
    return embedding.data[tree]
'''),
    ],
}

RIGHT = {
    'grow_or_shrink_traceable': [
        ("no torch.where: blends both results with the 0-d condition cast to x's dtype, c * (x * 2) + (1 - c) * (x / 2 - 1)",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    c = (x.sum() > 0).to(x.dtype)
    return c * (x * 2) + (1 - c) * (x / 2 - 1)
'''),
    ],
    'tree_encode': [
        ("no recursion: an explicit stack walks the tree in post-order and keeps the children's vectors in a list of results",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    results = []                 # vectors of finished subtrees, in order
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if not isinstance(node, tuple):
            results.append(embedding[node])
        elif expanded:
            right = results.pop()
            left = results.pop()
            results.append(torch.tanh(torch.cat([left, right]) @ W + b))
        else:
            stack.append((node, True))
            stack.append((node[1], False))
            stack.append((node[0], False))
    return results[0]
'''),
    ],
    'time_compiled': [
        ('a helper that times a whole list of calls, statistics.fmean for the means, and the break-even count computed through a small function; the default sync a lambda',
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    import statistics

    wait = sync if sync is not None else (lambda: synchronize(example.device))

    def one_call(f):
        wait()
        t0 = clock()
        f(example)
        wait()
        return clock() - t0

    def steady(f):
        for _ in range(warmup):
            f(example)
        return statistics.fmean([one_call(f) for _ in range(repeats)])

    def calls_to_pay_back(cost, saving):
        return None if saving <= 0 else math.ceil(cost / saving)

    compiled = compile(fn)
    record = {"first_call_s": one_call(compiled)}
    record["compiled_s"] = steady(compiled)
    record["eager_s"] = steady(fn)
    record["compile_s"] = record["first_call_s"] - record["compiled_s"]
    record["break_even_calls"] = calls_to_pay_back(record["compile_s"], record["eager_s"] - record["compiled_s"])
    return record
'''),
    ],
}
