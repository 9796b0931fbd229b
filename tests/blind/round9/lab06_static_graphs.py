"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'trace_disagreements': [
        ("Passes only rtol on to torch.allclose, so allclose uses its own atol=1e-8 instead of the atol argument (default 1e-7): a caller's atol is silently ignored, breaking \"not torch.allclose(..., rtol=rtol, atol=atol)\".", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
            verdicts.append(got.shape != expected.shape or not torch.allclose(got, expected, rtol=rtol))
        return verdicts
'''),
        ("Leaves the shape comparison to torch.allclose, which broadcasts: a trace of one row called on several identical rows returns a (1, n) result that allclose finds close to the (k, n) one, breaking \"the two results have different shapes\" counts as a disagreement.", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for x in inputs:
            expected = fn(x)
            try:
                # allclose raises when the shapes do not fit together, which counts as a disagreement
                same = torch.allclose(traced(x), expected, rtol=rtol, atol=atol)
            except Exception:
                same = False
            verdicts.append(not same)
        return verdicts
'''),
    ],
    'grow_or_shrink_traceable': [
        ("Uses `x.sum() >= 0` as the condition, so an input whose sum is exactly 0 is doubled instead of taking x / 2 - 1, breaking \"x * 2 when x.sum() > 0, else x / 2 - 1\" (a sum of 0 is not > 0).", '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    return torch.where(x.sum() >= 0, x * 2, x / 2 - 1)
'''),
    ],
    'w2_model': [
        ("Calls torch.jit.script(w2_model) without assigning the result, so the name w2_model still holds the plain Python function: correct values, but not TorchScript and no prim::If graph, breaking \"compile it to a TorchScript function\".", '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    if prev_loss < 5.0:
        w2 = w2a
    else:
        w2 = w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()


# Compile it: w2_model = torch.jit.script(w2_model), or put @torch.jit.script above the def.
torch.jit.script(w2_model)
'''),
    ],
    'export_for_inference': [
        ("Declares the batch as Dim(\"batch\", max=1024), as in torch's documentation example, so the program's guard refuses any batch larger than 1024 rows, breaking \"an ExportedProgram ... for any batch size\" (the text warns that a Dim with a max refuses larger ones).", '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.eval()
    batch = torch.export.Dim("batch", max=1024)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
    ],
    'save_for_deployment': [
        ("Exports the model in whatever mode it was handed in (no model.eval()), so dropout and BatchNorm's batch statistics are baked into the saved graph, breaking \"the model must be in eval mode\".", '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    batch = torch.export.Dim("batch")
    program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, path)
'''),
    ],
    'export_onnx': [
        ("Calls torch.onnx.export(..., dynamo=True) without dynamic_shapes, so the ONNX input is fixed to the example's batch size and onnxruntime refuses a batch of 1 or a larger one, breaking \"with a dynamic batch dimension\".", '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), str(path), dynamo=True, verbose=False)
'''),
    ],
    'checkpoint': [
        ("Saves and restores model, optimizer and RNG state but not the scheduler, so a resumed StepLR starts counting again and the learning rate decays at the wrong steps, breaking \"writes everything above\" (the scheduler knows how many steps have passed).", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
'''),
    ],
    'time_compiled': [
        ("Returns None only when compiled_s > eager_s, so when both are exactly as fast it divides by zero (ZeroDivisionError) instead of returning break_even_calls=None, breaking \"None when compiled_s >= eager_s\".", '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
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
    if compiled_s > eager_s:
        break_even = None
    else:
        break_even = math.ceil(compile_s / (eager_s - compiled_s))
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''),
    ],
    'tree_encode': [
        ("Looks a leaf up as embedding[[tree]], a (1, d) row, and concatenates along dim 1, so values and gradients are right but the root comes back with shape (1, d), breaking \"return the vector of the root, shape (d,)\".", '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, int):
        return embedding[[tree]]                      # keep the row 2-D: (1, d)
    left, right = tree
    h = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)], dim=1)
    return torch.tanh(h @ W + b)
'''),
    ],
}

RIGHT = {
    'trace_disagreements': [
        ("Compares with torch.isclose(...).all() after an explicit shape test, and builds the verdicts with a helper that returns early, all inside one catch_warnings block.", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    """For each input, whether torch.jit.trace(fn, example) disagrees with fn on it."""

    def disagrees(traced, x):
        eager = fn(x)
        try:
            result = traced(x)
        except Exception:
            return True
        if tuple(result.shape) != tuple(eager.shape):
            return True
        return not bool(torch.isclose(result, eager, rtol=rtol, atol=atol).all())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        return [disagrees(traced, x) for x in inputs]
'''),
    ],
    'checkpoint': [
        ("Stores the four states as a list in a fixed order and reads the generator state through torch.random, loading with map_location=\"cpu\".", '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    states = [model.state_dict(), optimizer.state_dict(), scheduler.state_dict(),
              torch.random.get_rng_state()]
    torch.save(states, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    model_state, optimizer_state, scheduler_state, rng_state = torch.load(path, map_location="cpu")
    model.load_state_dict(model_state)
    optimizer.load_state_dict(optimizer_state)
    scheduler.load_state_dict(scheduler_state)
    torch.random.set_rng_state(rng_state)
'''),
    ],
    'tree_encode': [
        ("Evaluates the tree bottom-up with an explicit stack instead of recursion, and applies W as its two halves, h_left @ W[:d] + h_right @ W[d:], which equals [h_left; h_right] @ W.", '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    d = embedding.shape[1]
    results = []                       # values of finished subtrees
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, int):
            results.append(embedding[node])
        elif expanded:
            right = results.pop()
            left = results.pop()
            results.append(torch.tanh(left @ W[:d] + right @ W[d:] + b))
        else:
            stack.append((node, True))
            stack.append((node[1], False))
            stack.append((node[0], False))
    return results.pop()
'''),
    ],
}
