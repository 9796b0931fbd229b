"""Lab 06: answers written from the released notebook's text alone (blind corpus, round 5)."""


def _sub(src, old, new):
    assert src.count(old) == 1, old
    return src.replace(old, new)


_TRACE = '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
                verdicts.append(not torch.allclose(got, expected, rtol=rtol, atol=atol))
    return verdicts
'''

_GROW = '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    return torch.where(x.sum() > 0, x * 2, x / 2 - 1)
'''

_W2 = '''@torch.jit.script
def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    """The lecture's loss: w2a or w2b by the previous loss, a ReLU layer, squared error."""
    if prev_loss < 5.0:
        w2 = w2a
    else:
        w2 = w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
'''

_EXPORT = '''def export_for_inference(model, example):
    """An ExportedProgram of `model` in eval mode, for any batch size."""
    model.eval()
    batch = torch.export.Dim("batch")
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''

_SAVE = '''def save_for_deployment(model, example, path):
    """Save `model` (eval mode, any batch size) as a graph file at `path`."""
    model.eval()
    program = torch.export.export(model, (example,),
                                  dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    torch.export.save(program, path)
'''

_ONNX = '''def export_onnx(model, example, path):
    """Write `model` (eval mode, any batch size) to `path` as ONNX."""
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=True,
                      dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
'''

_CKPT = '''def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save({"model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"])
'''

_TIME = '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
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
        break_even = math.ceil(compile_s / (eager_s - compiled_s))
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s, "break_even_calls": break_even}
'''

_TREE = '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    if isinstance(tree, int):
        return embedding[tree]
    left, right = tree
    h = torch.cat([tree_encode(left, embedding, W, b), tree_encode(right, embedding, W, b)])
    return torch.tanh(h @ W + b)
'''

WRONG = {
    "trace_disagreements": [
        ("passes the tolerances positionally in the wrong order, torch.allclose(got, expected, atol, rtol): rtol and atol swapped (visible only when they differ, e.g. one given alone)",
         _sub(_TRACE, "torch.allclose(got, expected, rtol=rtol, atol=atol)", "torch.allclose(got, expected, atol, rtol)")),
    ],
    "grow_or_shrink_traceable": [
        ("condition x.sum() >= 0: a sum of exactly 0 takes the grow branch instead of x / 2 - 1",
         _sub(_GROW, "torch.where(x.sum() > 0,", "torch.where(x.sum() >= 0,")),
    ],
    "w2_model": [
        ("branch prev_loss <= 5.0: at exactly 5.0 it uses w2a instead of w2b",
         _sub(_W2, "if prev_loss < 5.0:", "if prev_loss <= 5.0:")),
    ],
    "export_for_inference": [
        ("declares the batch Dim with min=2 (since export refuses sizes 0 and 1): the exported module rejects a batch of 1",
         _sub(_EXPORT, 'torch.export.Dim("batch")', 'torch.export.Dim("batch", min=2)')),
    ],
    "save_for_deployment": [
        ("exports the model without model.eval(): dropout and BatchNorm's batch statistics are frozen into the saved graph in training mode",
         _sub(_SAVE, "    model.eval()\n", "")),
    ],
    "export_onnx": [
        ("no dynamic_shapes given: the ONNX input keeps the example's batch size and onnxruntime refuses any other batch",
         _sub(_ONNX, ''', dynamo=True,
                      dynamic_shapes={"x": {0: torch.export.Dim("batch")}})''', ''', dynamo=True)''')),
    ],
    "checkpoint": [
        ("the scheduler's state is not saved or restored: the resumed run's learning rate restarts from the scheduler's beginning",
         _sub(_sub(_CKPT, '''                "scheduler": scheduler.state_dict(),\n''', ''),
              '''    scheduler.load_state_dict(state["scheduler"])\n''', '')),
    ],
    "time_compiled": [
        ("break-even set to None only when compiled_s > eager_s: when both are exactly as fast, it divides by zero (ZeroDivisionError)",
         _sub(_TIME, "if compiled_s >= eager_s:", "if compiled_s > eager_s:")),
        ("default repeats=10 in the signature instead of 20: right when repeats is passed, wrong call count and means with the defaults",
         _sub(_TIME, "warmup=3, repeats=20,", "warmup=3, repeats=10,")),
    ],
    "tree_encode": [
        ("reads a leaf as embedding.data[tree] (to avoid copying): values right, but no gradient reaches the embedding table",
         _sub(_TREE, "return embedding[tree]", "return embedding.data[tree]")),
    ],
}

RIGHT = {
    "grow_or_shrink_traceable": [
        ("arithmetic blend with a 0/1 float mask from (x.sum() > 0) instead of torch.where",
         '''def grow_or_shrink_traceable(x):
    """x * 2 if x.sum() > 0 else x / 2 - 1, as tensor operations only."""
    grow = (x.sum() > 0).to(x.dtype)
    return grow * (x * 2) + (1 - grow) * (x / 2 - 1)
'''),
    ],
    "tree_encode": [
        ("iterative post-order walk with an explicit stack and a dict of computed node vectors, no recursion",
         '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
    done = {}
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, int):
            done[id(node), node] = embedding[node]
            continue
        if expanded:
            left, right = node
            key_l = (id(left), left) if isinstance(left, int) else id(left)
            key_r = (id(right), right) if isinstance(right, int) else id(right)
            done[id(node)] = torch.tanh(torch.cat([done[key_l], done[key_r]]) @ W + b)
        else:
            stack.append((node, True))
            stack.append((node[1], False))
            stack.append((node[0], False))
    return done[(id(tree), tree) if isinstance(tree, int) else id(tree)]
'''),
    ],
    "checkpoint": [
        ("one dict built by a helper with torch.random.get_rng_state, restored with torch.random.set_rng_state; map_location='cpu'",
         '''def _training_state(model, optimizer, scheduler):
    return {"model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
            "scheduler_state_dict": scheduler.state_dict(),
            "cpu_rng_state": torch.random.get_rng_state()}


def save_checkpoint(path, model, optimizer, scheduler):
    """Write model, optimizer, scheduler and CPU RNG state to `path`."""
    torch.save(_training_state(model, optimizer, scheduler), path)


def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what save_checkpoint wrote into the given objects and the CPU generator."""
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    model.load_state_dict(ckpt["model_state_dict"])
    optimizer.load_state_dict(ckpt["optimizer_state_dict"])
    scheduler.load_state_dict(ckpt["scheduler_state_dict"])
    torch.random.set_rng_state(ckpt["cpu_rng_state"])
'''),
    ],
}

SURVIVORS = {
    ("export_for_inference", 0): "not a mistake under this torch: torch 2.13's exported module "
                                 "records Dim('batch', min=2) as the range but runs a batch of "
                                 "1 all the same (checked: ep.module()(torch.randn(1, 4)) "
                                 "returns a (1, 3) output), so the answer behaves as the "
                                 "text asks",
}
