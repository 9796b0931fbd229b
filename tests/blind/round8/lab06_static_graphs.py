"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'trace_disagreements': [
        ("drops the shape test and relies on torch.allclose alone: allclose broadcasts, so a trace that returns (1, n) or a scalar where eager returns (k, n) with matching values is reported as agreeing, although 'different shapes' counts as a disagreement", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
            try:
                verdicts.append(not torch.allclose(got, expected, rtol=rtol, atol=atol))
            except RuntimeError:
                verdicts.append(True)
    return verdicts
'''),
        ("silences the tracer with a process-wide warnings.filterwarnings('ignore', category=TracerWarning) instead of inside warnings.catch_warnings(): the verdicts are right, but the filter outlives the call and hides every later trace's warnings in the session", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    traced = torch.jit.trace(fn, example)
    verdicts = []
    for x in inputs:
        expected = fn(x)
        try:
            got = traced(x)
        except Exception:
            verdicts.append(True)
            continue
        same = got.shape == expected.shape and torch.allclose(got, expected, rtol=rtol, atol=atol)
        verdicts.append(not same)
    return verdicts
'''),
    ],
    'grow_or_shrink_traceable': [
        ("blends both branches arithmetically with a 0/1 mask (m*2x + (1-m)*(x/2-1)) instead of selecting: equal for finite x, but an inf or nan in the branch not taken leaks in (0*inf = nan), so the values are not grow_or_shrink's", '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    grow = (x.sum() > 0).to(x.dtype)
    return grow * (x * 2) + (1 - grow) * (x / 2 - 1)
'''),
    ],
    'w2_model': [
        ("writes the branch as `if prev_loss >= 5.0: w2b else w2a`: the same for every number, but a NaN previous loss (a diverged step) picks w2a, whereas 'w2a when prev_loss < 5.0, else w2b' gives w2b", '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    if prev_loss >= 5.0:
        w2 = w2b
    else:
        w2 = w2a
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()


# Compile it: w2_model = torch.jit.script(w2_model), or put @torch.jit.script above the def.
w2_model = torch.jit.script(w2_model)
'''),
    ],
    'export_for_inference': [
        ("declares the batch dimension as Dim('batch', max=1024): batches of 1, the example's size and a few more work, but a batch above 1024 is refused although the program must run 'for any batch size'", '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.eval()
    batch = torch.export.Dim("batch", max=1024)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
    ],
    'save_for_deployment': [
        ("exports under torch.no_grad() in place of model.eval(): no_grad only stops recording gradients, it does not change the mode, so the saved graph keeps dropout and BatchNorm's batch statistics ('the model must be in eval mode')", '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    with torch.no_grad():
        program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    torch.export.save(program, path)
'''),
    ],
    'export_onnx': [
        ("uses the TorchScript exporter (dynamo=False) and marks only the input's axis 0 dynamic in dynamic_axes: onnxruntime still runs every batch size, but the file declares the output with the example's fixed batch size, so a runtime that trusts the declared shapes rejects other batches", '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=False, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}})
'''),
    ],
    'checkpoint': [
        ("leaves the scheduler out, reasoning that the optimizer's state_dict already holds the current lr: the lr is right right after loading, but the fresh StepLR restarts its step count, so the next decay comes at the wrong step", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    torch.set_rng_state(checkpoint["rng"])
'''),
    ],
    'time_compiled': [
        ('when sync is None it waits with a no-op (lambda: None) instead of synchronize(example.device): fine on the CPU, but on a GPU each timed call only measures the kernel launch, not the work', '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    """Time compile(fn) against fn on `example`: first call apart, warm-up, means, break-even."""
    if sync is None:
        sync = lambda: None

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
        break_even = math.ceil(compile_s / (eager_s - compiled_s))
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
    ],
    'tree_encode': [
        ("reads a leaf as embedding[tree].detach() ('a lookup, not a computation'): the root's vector is right, but no gradient reaches the embedding table, which the text requires", '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, tuple):
        left, right = tree
        h = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)])
        return torch.tanh(h @ W + b)
    return embedding[tree].detach()
'''),
    ],
}

RIGHT = {
    'grow_or_shrink_traceable': [
        ('selects a branch by indexing a stacked pair with the 0-d boolean turned into an index tensor (traced as aten::index, so the choice stays in the graph) instead of torch.where', '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    branches = torch.stack([x / 2 - 1, x * 2])
    choice = (x.sum() > 0).long()
    return branches[choice]
'''),
    ],
    'tree_encode': [
        ('iterative post-order walk with an explicit stack and W split into its left/right halves (h_l @ W[:d] + h_r @ W[d:] + b), which is the same affine map as cat(...) @ W', '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    d = embedding.shape[1]
    W_left, W_right = W[:d], W[d:]
    done = {}
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if not isinstance(node, tuple):
            done[id(node), node] = embedding[node]
        elif expanded:
            left, right = node
            h_left, h_right = done[id(left), left], done[id(right), right]
            done[id(node), node] = torch.tanh(h_left @ W_left + h_right @ W_right + b)
        else:
            stack.append((node, True))
            stack.append((node[1], False))
            stack.append((node[0], False))
    return done[id(tree), tree]
'''),
    ],
    'export_for_inference': [
        ('switches mode with model.train(False), declares the dynamic batch positionally (a tuple of per-argument specs) and exports under torch.no_grad()', '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.train(False)
    batch = torch.export.Dim("batch")
    with torch.no_grad():
        return torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
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
    ('export_onnx', 0): (
        "not a mistake here: with dynamic_axes on the input alone, the TorchScript exporter's "
        "shape inference declares the output's first dimension with the input's symbol "
        "('batch') for both models, so the file is the one that names the output too"
    ),
    ('grow_or_shrink_traceable', 0): (
        "not a mistake the checks may take points for: the accepted alternative 'a 0/1 mask "
        "instead of torch.where' blends the branches in the same way, and only an inf or an "
        "overflow in the branch not taken tells it from torch.where"
    ),
    ('time_compiled', 0): _DEVICE,
    ('trace_disagreements', 1): _METHOD,
    ('w2_model', 0): (
        "not a mistake the text defines clearly enough to take points for: prev_loss >= 5.0 "
        "is the text's rule for every number, and only a NaN tells the two apart"
    ),
}
