"""Realistic wrong answers for lab06_static_graphs: each must lose points in its checks cell."""

_TC_HEAD = '''def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    if sync is None:
        def sync():
            synchronize(example.device)

    def seconds(f):
        sync()
        start = clock()
        f(example)
        sync()
        return clock() - start

'''
_TC_SOLUTION = _TC_HEAD + '''    compiled = compile(fn)
    first_call_s = seconds(compiled)
    for _ in range(warmup):
        compiled(example)
    compiled_s = sum(seconds(compiled) for _ in range(repeats)) / repeats
    for _ in range(warmup):
        fn(example)
    eager_s = sum(seconds(fn) for _ in range(repeats)) / repeats
    compile_s = first_call_s - compiled_s
    saved_s = eager_s - compiled_s
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s,
            "break_even_calls": math.ceil(compile_s / saved_s) if saved_s > 0 else None}
'''

_W2_SCRIPTED = '''

w2_model = torch.jit.script(w2_model)
'''

MUTANTS = {
    "trace_disagreements": [
        ("traces again on every input, so the trace always agrees", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    verdicts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in inputs:
            traced = torch.jit.trace(fn, x)
            verdicts.append(not torch.allclose(traced(x), fn(x), rtol=rtol, atol=atol))
    return verdicts
'''),
        ("lets the traced call's exception escape", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for x in inputs:
            got, expected = traced(x), fn(x)
            same = got.shape == expected.shape and torch.allclose(got, expected, rtol=rtol,
                                                                  atol=atol)
            verdicts.append(not same)
    return verdicts
'''),
        ("compares values only where the shapes match, else says they agree", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
                verdicts.append(False)
            else:
                verdicts.append(not torch.allclose(got, expected, rtol=rtol, atol=atol))
    return verdicts
'''),
        ("returns True where they agree (the question turned round)", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for x in inputs:
            expected = fn(x)
            try:
                got = traced(x)
            except Exception:
                verdicts.append(False)
                continue
            verdicts.append(got.shape == expected.shape and torch.allclose(got, expected))
    return verdicts
'''),
        ("torch.allclose with its own defaults: rtol and atol ignored", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
            verdicts.append(got.shape != expected.shape
                            or not torch.allclose(got, expected))
    return verdicts
'''),
        ("rtol and atol swapped", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
            verdicts.append(got.shape != expected.shape
                            or not torch.allclose(got, expected, rtol=atol, atol=rtol))
    return verdicts
'''),
        ("torch.allclose(eager, traced): the arguments swapped, the tolerance scaled by the trace's value", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
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
            verdicts.append(got.shape != expected.shape
                            or not torch.allclose(expected, got, rtol=rtol, atol=atol))
    return verdicts
'''),
        ("torch.allclose alone, no shape test: shapes it broadcasts count as agreeing", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, example)
        verdicts = []
        for x in inputs:
            expected = fn(x)
            try:
                got = traced(x)
                verdicts.append(not torch.allclose(got, expected, rtol=rtol, atol=atol))
            except Exception:
                verdicts.append(True)
    return verdicts
'''),
    ],
    "grow_or_shrink_traceable": [
        ("keeps the Python if (the trace freezes one branch)", '''def grow_or_shrink_traceable(x):
    if x.sum() > 0:
        return x * 2.0
    return x / 2.0 - 1.0
'''),
        ("decides with .item(), a Python number the trace keeps", '''def grow_or_shrink_traceable(x):
    grow = x.sum().item() > 0
    return torch.where(torch.tensor(grow), x * 2.0, x / 2.0 - 1.0)
'''),
        ("decides element by element instead of on the sum", '''def grow_or_shrink_traceable(x):
    return torch.where(x > 0, x * 2.0, x / 2.0 - 1.0)
'''),
        ("forgets the - 1 of the shrinking branch", '''def grow_or_shrink_traceable(x):
    return torch.where(x.sum() > 0, x * 2.0, x / 2.0)
'''),
        (">= 0: a sum of exactly 0 grows", '''def grow_or_shrink_traceable(x):
    return torch.where(x.sum() >= 0, x * 2.0, x / 2.0 - 1.0)
'''),
    ],
    "w2_model": [
        ("traces instead of scripting: one branch frozen", '''def w2_model(x, y, w1, w2a, w2b, prev_loss):
    w2 = w2a if prev_loss < 5.0 else w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()


w2_model = torch.jit.trace(w2_model, (torch.randn(4, 3), torch.randn(4, 2), torch.randn(3, 5),
                                      torch.randn(5, 2), torch.randn(5, 2), torch.tensor(1.0)))
'''),
        ("prev_loss without annotation: a Python float is refused", '''@torch.jit.script
def w2_model(x, y, w1, w2a, w2b, prev_loss):
    w2 = w2a if prev_loss < 5.0 else w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
'''),
        ("a threshold of 4 instead of 5", '''@torch.jit.script
def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    w2 = w2a if prev_loss < 4.0 else w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
'''),
        ("<= instead of <: prev_loss = 5.0 takes w2a", '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    w2 = w2a if prev_loss <= 5.0 else w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
''' + _W2_SCRIPTED),
        ("right values, never compiled: still a Python function", '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    w2 = w2a if prev_loss < 5.0 else w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).sum()
'''),
        ("mean instead of sum", '''def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    w2 = w2a if prev_loss < 5.0 else w2b
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    return (y_pred - y).pow(2).mean()
''' + _W2_SCRIPTED),
    ],
    "export_for_inference": [
        ("forgets model.eval(): BatchNorm's batch statistics and dropout are exported", '''def export_for_inference(model, example):
    batch = torch.export.Dim("batch")
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
        ("no dynamic_shapes: the example's batch size is fixed", '''def export_for_inference(model, example):
    model.eval()
    return torch.export.export(model, (example,))
'''),
        ("returns the module of the program instead of the program", '''def export_for_inference(model, example):
    model.eval()
    batch = torch.export.Dim("batch")
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}}).module()
'''),
        ("a batch between 2 and 8 only", '''def export_for_inference(model, example):
    model.eval()
    batch = torch.export.Dim("batch", min=2, max=8)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
        ("a batch Dim with max=1024: the graph refuses larger batches", '''def export_for_inference(model, example):
    model.eval()
    batch = torch.export.Dim("batch", max=1024)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''),
    ],
    "save_for_deployment": [
        ("torch.save of the whole model: a pickle that needs the class", '''def save_for_deployment(model, example, path):
    model.eval()
    torch.save(model, path)
'''),
        ("a checkpoint (state_dict), not a graph", '''def save_for_deployment(model, example, path):
    model.eval()
    torch.save(model.state_dict(), path)
'''),
        ("a batch Dim with a max: the graph refuses batches above 1024", '''def save_for_deployment(model, example, path):
    model.eval()
    batch = torch.export.Dim("batch", max=1024)
    torch.export.save(torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}}), path)
'''),
        ("an export without a dynamic batch", '''def save_for_deployment(model, example, path):
    model.eval()
    torch.export.save(torch.export.export(model, (example,)), path)
'''),
    ],
    "export_onnx": [
        ("the old exporter without dynamic_axes: the batch size is fixed", '''def export_onnx(model, example, path):
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=False, input_names=["x"])
'''),
        ("dynamic_axes keyed by a name the input does not have: the batch stays fixed", '''def export_onnx(model, example, path):
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=False, dynamic_axes={"input": {0: "batch"}})
'''),
        ("writes a torch.export file, not ONNX", '''def export_onnx(model, example, path):
    model.eval()
    torch.export.save(torch.export.export(model, (example,),
                                          dynamic_shapes={"x": {0: torch.export.Dim("batch")}}),
                      path)
'''),
    ],
    "checkpoint": [
        ("no RNG state: the next batches and dropout masks differ", '''def save_checkpoint(path, model, optimizer, scheduler):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
'''),
        ("the model's weights only (the lecture's checkpoint)", '''def save_checkpoint(path, model, optimizer, scheduler):
    torch.save({"model_state_dict": model.state_dict()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    model.load_state_dict(torch.load(path)["model_state_dict"])
'''),
        ("no optimizer state: momentum and Adam's moments start from zero", '''def save_checkpoint(path, model, optimizer, scheduler):
    torch.save({"model": model.state_dict(), "scheduler": scheduler.state_dict(),
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"])
'''),
        ("no scheduler state: the learning rate starts over", '''def save_checkpoint(path, model, optimizer, scheduler):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
'''),
        ("loads into new objects it returns: the caller's stay as they were", '''def save_checkpoint(path, model, optimizer, scheduler):
    torch.save({"model": model, "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path, weights_only=False)
    model = state["model"]
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"])
    return model, optimizer, scheduler
'''),
    ],
    "time_compiled": [
        ("the first (compiling) call counted in the compiled mean", _TC_HEAD + '''    compiled = compile(fn)
    times = [seconds(compiled) for _ in range(1 + repeats)]
    first_call_s = times[0]
    compiled_s = sum(times) / len(times)
    for _ in range(warmup):
        fn(example)
    eager_s = sum(seconds(fn) for _ in range(repeats)) / repeats
    compile_s = first_call_s - compiled_s
    saved_s = eager_s - compiled_s
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s,
            "break_even_calls": math.ceil(compile_s / saved_s) if saved_s > 0 else None}
'''),
        ("no warm-up: times the calls right after the first one", _TC_HEAD + '''    compiled = compile(fn)
    first_call_s = seconds(compiled)
    compiled_s = sum(seconds(compiled) for _ in range(repeats)) / repeats
    eager_s = sum(seconds(fn) for _ in range(repeats)) / repeats
    compile_s = first_call_s - compiled_s
    saved_s = eager_s - compiled_s
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s,
            "break_even_calls": math.ceil(compile_s / saved_s) if saved_s > 0 else None}
'''),
        ("warms up the compiled function but not the eager one", _TC_HEAD + '''    compiled = compile(fn)
    first_call_s = seconds(compiled)
    for _ in range(warmup):
        compiled(example)
    compiled_s = sum(seconds(compiled) for _ in range(repeats)) / repeats
    eager_s = sum(seconds(fn) for _ in range(repeats)) / repeats
    compile_s = first_call_s - compiled_s
    saved_s = eager_s - compiled_s
    return {"first_call_s": first_call_s, "compiled_s": compiled_s, "eager_s": eager_s,
            "compile_s": compile_s,
            "break_even_calls": math.ceil(compile_s / saved_s) if saved_s > 0 else None}
'''),
        ("break-even off by one: int(ratio) + 1", _TC_SOLUTION.replace(
            "math.ceil(compile_s / saved_s)", "int(compile_s / saved_s) + 1")),
        ("break-even from the eager time instead of the time saved per call",
         _TC_SOLUTION.replace("math.ceil(compile_s / saved_s)", "math.ceil(compile_s / eager_s)")),
        ("break-even divided the wrong way round", _TC_SOLUTION.replace(
            "math.ceil(compile_s / saved_s)", "math.ceil(saved_s / compile_s)")),
        ("break-even from the whole first call, not its extra cost", _TC_SOLUTION.replace(
            "math.ceil(compile_s / saved_s)", "math.ceil(first_call_s / saved_s)")),
        ("never breaking even said as infinitely many calls", _TC_SOLUTION.replace(
            "if saved_s > 0 else None", "if saved_s > 0 else math.inf")),
        ("compile cost reported as the whole first call", _TC_SOLUTION.replace(
            "compile_s = first_call_s - compiled_s", "compile_s = first_call_s")),
        ("no sync after the call: times the launch, not the work", _TC_SOLUTION.replace(
            "        f(example)\n        sync()\n", "        f(example)\n")),
        ("median instead of mean", "import statistics\n\n\n" + _TC_SOLUTION.replace(
            "sum(seconds(compiled) for _ in range(repeats)) / repeats",
            "statistics.median(seconds(compiled) for _ in range(repeats))").replace(
            "sum(seconds(fn) for _ in range(repeats)) / repeats",
            "statistics.median(seconds(fn) for _ in range(repeats))")),
    ],
}

ALTERNATIVES = {
    "trace_disagreements": [
        ("a list comprehension over a helper, torch.equal on shapes first", '''def trace_disagreements(fn, example, inputs, rtol=1e-5, atol=1e-7):
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = torch.jit.trace(fn, example)

    def differs(x):
        want = fn(x)
        try:
            have = graph(x)
        except Exception:
            return True
        if have.shape != want.shape:
            return True
        return not torch.allclose(have, want, rtol=rtol, atol=atol)

    return [differs(x) for x in inputs]
'''),
    ],
    "grow_or_shrink_traceable": [
        ("a 0/1 mask instead of torch.where", '''def grow_or_shrink_traceable(x):
    grow = (x.sum() > 0).to(x.dtype)
    return grow * (x * 2.0) + (1 - grow) * (x / 2.0 - 1.0)
'''),
        ("scripted with the if kept (trace leaves a scripted function as it is)", '''@torch.jit.script
def grow_or_shrink_traceable(x):
    if bool(x.sum() > 0):
        return x * 2.0
    return x / 2.0 - 1.0
'''),
    ],
    "w2_model": [
        ("the decorator form, as on the lecture's slide", '''@torch.jit.script
def w2_model(x, y, w1, w2a, w2b, prev_loss: float):
    if prev_loss < 5.0:
        w2 = w2a
    else:
        w2 = w2b
    y_pred = torch.clamp(torch.mm(x, w1), min=0.0).mm(w2)
    diff = y_pred - y
    return (diff * diff).sum()
'''),
    ],
    "export_for_inference": [
        ("Dim.AUTO, positional dynamic_shapes", '''def export_for_inference(model, example):
    model = model.eval()
    return torch.export.export(model, args=(example,),
                               dynamic_shapes=({0: torch.export.Dim.AUTO},))
'''),
    ],
    "save_for_deployment": [
        ("TorchScript, the deprecated way: script in eval mode, jit.save", '''def save_for_deployment(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.script(model), path)
'''),
        # torch declares 2 as the least size of its own dynamic dims (Dim.AUTO) and guards a
        # min only above 2: this graph runs on a batch of 1.
        ("a batch Dim declared with min=2 (the 0/1 note read as a rule)", '''def save_for_deployment(model, example, path):
    model.eval()
    batch = torch.export.Dim("batch", min=2)
    torch.export.save(torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}}), path)
'''),
    ],
    "export_onnx": [
        ("the older TorchScript-based exporter with dynamic_axes", '''def export_onnx(model, example, path):
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=False, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "n"}, "output": {0: "n"}})
'''),
    ],
    "checkpoint": [
        ("one torch.save per part, RNG restored first", '''import os


def save_checkpoint(path, model, optimizer, scheduler):
    state = {"weights": model.state_dict(), "opt": optimizer.state_dict(),
             "sched": scheduler.state_dict(), "cpu_rng": torch.random.get_rng_state()}
    torch.save(state, os.fspath(path))


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(os.fspath(path), weights_only=True)
    torch.random.set_rng_state(state["cpu_rng"])
    model.load_state_dict(state["weights"], strict=True)
    optimizer.load_state_dict(state["opt"])
    scheduler.load_state_dict(state["sched"])
'''),
    ],
    "time_compiled": [
        ("timed as one block per function, a loop that finds the break-even count",
         '''import statistics


def time_compiled(fn, example, warmup=3, repeats=20, compile=torch.compile,
                  clock=time.perf_counter, sync=None):
    wait = sync if sync is not None else (lambda: synchronize(example.device))

    def mean_seconds(f, calls):
        # One block of calls between two syncs: its total over the count is the mean.
        wait()
        begin = clock()
        for _ in range(calls):
            f(example)
        wait()
        return (clock() - begin) / calls

    fast = compile(fn)
    first = mean_seconds(fast, 1)
    for _ in range(warmup):
        fast(example)
    per_call = mean_seconds(fast, repeats)
    for _ in range(warmup):
        fn(example)
    eager = statistics.fmean([mean_seconds(fn, 1) for _ in range(repeats)])
    record = dict(first_call_s=first, compiled_s=per_call, eager_s=eager,
                  compile_s=first - per_call, break_even_calls=None)
    if per_call < eager:
        n = 1
        while first + (n - 1) * per_call > n * eager:
            n += 1
        record["break_even_calls"] = n
    return record
'''),
    ],
}

_TREE_HEAD = '''def tree_encode(tree, embedding, W, b):
    """The root's vector of a recursive network over `tree` (an int leaf or a pair)."""
'''

MUTANTS["tree_encode"] = [
    ("a recurrent network over the leaves, left to right: right only for the left chain",
     _TREE_HEAD + '''    def leaves(t):
        return leaves(t[0]) + leaves(t[1]) if isinstance(t, tuple) else [t]

    words = leaves(tree)
    h = embedding[words[0]]
    for word in words[1:]:
        h = torch.tanh(torch.cat([h, embedding[word]]) @ W + b)
    return h
'''),
    ("the children concatenated right before left", _TREE_HEAD + '''    if isinstance(tree, tuple):
        left, right = tree
        children = torch.cat([tree_encode(right, embedding, W, b),
                              tree_encode(left, embedding, W, b)])
        return torch.tanh(children @ W + b)
    return embedding[tree]
'''),
    ("forgets the tanh of inner nodes", _TREE_HEAD + '''    if isinstance(tree, tuple):
        left, right = tree
        return torch.cat([tree_encode(left, embedding, W, b),
                          tree_encode(right, embedding, W, b)]) @ W + b
    return embedding[tree]
'''),
    ("a leaf also goes through the layer: tanh(embedding[i]) ", _TREE_HEAD + '''    if isinstance(tree, tuple):
        left, right = tree
        children = torch.cat([tree_encode(left, embedding, W, b),
                              tree_encode(right, embedding, W, b)])
        return torch.tanh(children @ W + b)
    return torch.tanh(embedding[tree])
'''),
    ("leaf vectors copied out of the table: no gradient reaches the embedding", _TREE_HEAD + '''    if isinstance(tree, tuple):
        left, right = tree
        children = torch.cat([tree_encode(left, embedding, W, b),
                              tree_encode(right, embedding, W, b)])
        return torch.tanh(children @ W + b)
    return torch.tensor(embedding[tree].tolist(), dtype=embedding.dtype)
'''),
    ("the bias left out", _TREE_HEAD + '''    if isinstance(tree, tuple):
        left, right = tree
        children = torch.cat([tree_encode(left, embedding, W, b),
                              tree_encode(right, embedding, W, b)])
        return torch.tanh(children @ W)
    return embedding[tree]
'''),
]

ALTERNATIVES["tree_encode"] = [
    ("no recursion: an explicit stack in post-order, W split into its two halves",
     _TREE_HEAD + '''    d = embedding.shape[1]
    W_left, W_right = W[:d], W[d:]
    done, todo = [], [(tree, False)]
    while todo:
        node, expanded = todo.pop()
        if not isinstance(node, tuple):
            done.append(embedding[node])
        elif expanded:
            right, left = done.pop(), done.pop()
            done.append(torch.tanh(left @ W_left + right @ W_right + b))
        else:
            todo += [(node, True), (node[1], False), (node[0], False)]
    return done[0]
'''),
    ("an nn.functional.linear over the pair, leaves by index_select", _TREE_HEAD + '''    import torch.nn.functional as F

    def h(node):
        if type(node) is int:
            return embedding.index_select(0, torch.tensor([node])).squeeze(0)
        return F.linear(torch.cat((h(node[0]), h(node[1]))), W.T, b).tanh()

    return h(tree)
'''),
]
