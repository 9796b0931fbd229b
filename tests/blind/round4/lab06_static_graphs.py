"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "trace_disagreements": [
        ("compares with torch.allclose(traced, eager, rtol=rtol): the atol argument is never passed on (torch's default 1e-8 is used instead of the given atol)",
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
        ("the condition is x.sum(dim=-1, keepdim=True) > 0, a sum per row: the same as the whole sum for a 1-D x, but each row of a 2-D x is decided on its own",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    positive = x.sum(dim=-1, keepdim=True) > 0   # broadcasts against x
    return torch.where(positive, x * 2, x / 2 - 1)
'''),
    ],
    "w2_model": [
        ("the branch tests prev_loss <= 5.0: at exactly 5.0 it picks w2a where the lecture's model (w2a only when prev_loss < 5.0) picks w2b",
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
        ("exports first and calls model.eval() just before returning: the program was captured in the training mode the model was handed in (dropout on, BatchNorm's batch statistics)",
         '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    batch = torch.export.Dim("batch")
    program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    model.eval()   # leave the model in inference mode as well
    return program
'''),
    ],
    "save_for_deployment": [
        ("declares the batch dimension as Dim('batch', max=1024), a 'sensible serving bound': the saved graph has a largest batch and refuses a batch of more than 1024 rows",
         '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    model.eval()
    batch = torch.export.Dim("batch", max=1024)
    program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, path)
'''),
    ],
    "export_onnx": [
        ("TorchScript exporter (dynamo=False) with dynamic_axes={'x': {0: 'batch'}} but no input_names: the input is named onnx::Gemm_0, the axis entry matches nothing and the file keeps the example's batch size",
         '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), str(path), dynamo=False,
                          dynamic_axes={"x": {0: "batch"}, "output": {0: "batch"}})
'''),
    ],
    "checkpoint": [
        ("saves and restores model, optimizer and the CPU generator but not the scheduler (the optimizer's state_dict already holds the current lr): the fresh StepLR counts its steps from 0, so later decays come at the wrong steps",
         '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(),
                "optimizer": optimizer.state_dict(),   # includes param_groups' current lr
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
        ("break_even_calls is None only when compiled_s > eager_s: when both are exactly as fast it divides by zero",
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
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
    if compiled_s > eager_s:
        break_even = None
    else:
        break_even = math.ceil(compile_s / (eager_s - compiled_s))
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
        ("warms up only the compiled function: fn's slow first eager call is one of the `repeats` timed ones, so eager_s is too large",
         '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    if sync is None:
        sync = lambda: synchronize(example.device)

    def mean_time(f, n):
        total = 0.0
        for _ in range(n):
            sync()
            start = clock()
            f(example)
            sync()
            total += clock() - start
        return total / n

    compiled = compile(fn)
    first_call_s = mean_time(compiled, 1)
    for _ in range(warmup):          # compiled calls just after the first can still be slow
        compiled(example)
    compiled_s = mean_time(compiled, repeats)
    eager_s = mean_time(fn, repeats)
    compile_s = first_call_s - compiled_s
    saving = eager_s - compiled_s
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s,
            "break_even_calls": None if saving <= 0 else math.ceil(compile_s / saving)}
'''),
    ],
    "tree_encode": [
        ("adds the bias after the tanh, tanh([h_l; h_r] W) + b, instead of inside it (right for a single leaf only)",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, tuple):
        left, right = tree
        h = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)])
        return torch.tanh(h @ W) + b
    return embedding[tree]
'''),
    ],
}

RIGHT = {
    "grow_or_shrink_traceable": [
        ("no torch.where: the 0-d condition is turned into a 0/1 number of x's dtype and the two results are blended arithmetically",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    grow = (x.sum() > 0).to(x.dtype)          # 1.0 or 0.0, a tensor: the trace keeps it
    return grow * (x * 2) + (1 - grow) * (x / 2 - 1)
'''),
    ],
    "time_compiled": [
        ("one helper returns the list of timed calls and statistics.fmean averages them; sync defaults through functools.partial; the break-even test is written as a saving > 0",
         '''import functools
import statistics


def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    wait = sync if sync is not None else functools.partial(synchronize, example.device)

    def one_call(f):
        wait()
        t0 = clock()
        f(example)
        wait()
        return clock() - t0

    def settle_then_time(f):
        for _ in range(warmup):
            f(example)
        return [one_call(f) for _ in range(repeats)]

    compiled = compile(fn)
    record = {"first_call_s": one_call(compiled)}
    record["compiled_s"] = statistics.fmean(settle_then_time(compiled))
    record["eager_s"] = statistics.fmean(settle_then_time(fn))
    record["compile_s"] = record["first_call_s"] - record["compiled_s"]
    saving = record["eager_s"] - record["compiled_s"]
    record["break_even_calls"] = math.ceil(record["compile_s"] / saving) if saving > 0 else None
    return record
'''),
    ],
    "tree_encode": [
        ("no recursion: an explicit stack visits the tree in post-order and keeps each finished node's vector in a dict keyed by id",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    done = {}
    stack = [(tree, False)]
    while stack:
        node, children_ready = stack.pop()
        if not isinstance(node, tuple):
            done[id(node), node] = embedding[node]
        elif children_ready:
            left, right = node
            h = torch.cat([done[id(left), left], done[id(right), right]])
            done[id(node), node] = torch.tanh(h @ W + b)
        else:
            stack.append((node, True))
            stack.append((node[1], False))
            stack.append((node[0], False))
    return done[id(tree), tree]
'''),
    ],
}
