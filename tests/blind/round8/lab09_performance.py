"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 8)."""

_LOSS_SCALER_BASE = '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self._good_steps = 0
        self._unscaled = False
        self._found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
UNSCALE_BODY
        self._unscaled = True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if not self._unscaled:
            self.unscale_(optimizer)
        if not self._found_inf:
            return optimizer.step()
        return None

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale *= self.backoff_factor
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps == self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._unscaled = False
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''


def _scaler(body):
    return _LOSS_SCALER_BASE.replace("UNSCALE_BODY", body)


WRONG = {
    "read_profile": [
        ('Looks the two regions up in a dict built from every row of key_averages(), without keeping to DeviceType.CPU: on a GPU profile the region\'s GPU row (cpu_time_total 0) overwrites the CPU row', '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    rows = prof.key_averages()
    ops = [row for row in rows if row.key.startswith("aten::")]
    top = max(ops, key=lambda row: row.self_cpu_time_total)
    total = {row.key: row.cpu_time_total for row in rows}
    wait, train = total["wait for batch"], total["train step"]
    return {"costliest op": top.key,
            "self CPU ms": top.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ('Re-creates the order with shuffle=isinstance(loader.sampler, RandomSampler) instead of handing over loader.sampler: same batches for a plain shuffled or sequential loader, but a loader with any other sampler (a subset, weighted, or a seeded generator) loses its order', '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    from torch.utils.data import RandomSampler
    return DataLoader(loader.dataset,
                      batch_size=loader.batch_size,
                      shuffle=isinstance(loader.sampler, RandomSampler),
                      drop_last=loader.drop_last,
                      collate_fn=loader.collate_fn,
                      num_workers=num_workers,
                      persistent_workers=True,
                      pin_memory=device.type == "cuda")
'''),
    ],
    "bf16_report": [
        ('Writes torch.autocast(device_type="cpu", ...) (the lab runs on a CPU) where the text says to use a.device.type, never "cpu": on a GPU autocast would not touch the CUDA ops and the report would show float32 and zero error', '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda a, b, x: a @ b,
           "sum": lambda a, b, x: x.sum(dim=-1),
           "softmax": lambda a, b, x: torch.softmax(x, dim=-1)}
    report = {}
    for name, op in ops.items():
        ref = op(a, b, x)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            auto = op(a, b, x)
        low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
        scale = ref.abs().max()
        report[name] = {"autocast dtype": str(auto.dtype),
                        "autocast error": ((auto.float() - ref).abs().max() / scale).item(),
                        "bf16 error": ((low.float() - ref).abs().max() / scale).item()}
    return report
'''),
        ('Returns each error as a 0-d tensor (no .item()/float()), where the text asks for a Python float', '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    def error(got, ref):
        return (got.float() - ref).abs().max() / ref.abs().max()

    report = {}
    for name, op in [("matmul", lambda: a @ b), ("sum", lambda: x.sum(dim=-1)),
                     ("softmax", lambda: torch.softmax(x, dim=-1))]:
        ref = op()
        with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
            auto = op()
        if name == "matmul":
            low = a.bfloat16() @ b.bfloat16()
        elif name == "sum":
            low = x.bfloat16().sum(dim=-1)
        else:
            low = torch.softmax(x.bfloat16(), dim=-1)
        report[name] = {"autocast dtype": str(auto.dtype), "autocast error": error(auto, ref),
                        "bf16 error": error(low, ref)}
    return report
'''),
    ],
    "loss_scaler": [
        ('unscale_ walks only optimizer.param_groups[0]: an optimizer with several parameter groups keeps the later groups\' gradients scaled and unchecked for inf/NaN', _scaler('''        found = False
        for p in optimizer.param_groups[0]["params"]:
            if p.grad is not None:
                p.grad.div_(self._scale)
                found = found or not bool(torch.isfinite(p.grad).all())
        self._found_inf = found''')),
        ('The inf/NaN flag is overwritten for every parameter (self._found_inf = not finite(p.grad)) instead of accumulated: an inf in any gradient but the last one is forgotten and the step is taken', _scaler('''        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                self._found_inf = not bool(torch.isfinite(p.grad).all())''')),
        ('Unscales with p.grad = p.grad / scale, a new tensor, not in place as the text asks: anything holding the old .grad tensor (a hook, a gradient bucket, a reference taken before) still sees the scaled values', _scaler('''        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad = p.grad / self._scale
                found = found or not bool(torch.isfinite(p.grad).all())
        self._found_inf = found''')),
    ],
    "saved_bytes": [
        ('Leaves out the storages of model.buffers() as well as of the parameters ("the model holds them anyway"): a BatchNorm in training mode saves its running statistics, which the rule counts', '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = []

    def pack(t):
        packed.append(t.untyped_storage())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    owned = [t.untyped_storage() for t in list(model.parameters()) + list(model.buffers())]
    distinct = []
    for storage in packed:
        if any(storage is s for s in owned) or any(storage is s for s in distinct):
            continue
        distinct.append(storage)
    total = sum(s.nbytes() for s in distinct)
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ('Passes preserve_rng_state=False to checkpoint to save the RNG stash: with Dropout (or any random layer) in a segment, the recomputation in backward draws other numbers than the forward did, so the gradients no longer match checkpoint_sequential\'s', '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = len(layers) // segments

    def piece_function(piece):
        def run(inputs):
            for layer in piece:
                inputs = layer(inputs)
            return inputs
        return run

    for k in range(segments - 1):
        x = checkpoint(piece_function(layers[k * size:(k + 1) * size]), x,
                       use_reentrant=False, preserve_rng_state=False)
    return piece_function(layers[(segments - 1) * size:])(x)
'''),
    ],
    "predict": [
        ('Restores the mode after the loop but not in a finally: if the forward pass raises, the model is left in eval mode', '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        outputs = [model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
        result = torch.cat(outputs)
    model.train(was_training)
    return result
'''),
    ],
}

RIGHT = {
    "saved_bytes": [
        ('Dedupes with a dict keyed by id(storage) whose values hold the storage objects themselves (so no id can be reused while counting), parameters filtered the same way', '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    seen = {}

    def pack(t):
        storage = t.untyped_storage()
        seen[id(storage)] = storage
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
        for p in model.parameters():
            storage = p.untyped_storage()
            if seen.get(id(storage)) is storage:
                del seen[id(storage)]
        total = sum(storage.nbytes() for storage in seen.values())
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ('Wraps each piece in an nn.Sequential and computes the cut points first; the last piece runs plainly with the leftovers', '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = len(layers) // segments
    starts = [k * size for k in range(segments)]
    pieces = [nn.Sequential(*layers[start:start + size]) for start in starts[:-1]]
    pieces.append(nn.Sequential(*layers[starts[-1]:]))
    for piece in pieces[:-1]:
        x = checkpoint(piece, x, use_reentrant=False)
    return pieces[-1](x)
'''),
    ],
    "predict": [
        ('inference_mode as a decorator on an inner function, batches from x.split, mode restored by contextlib.ExitStack callback', '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""

    @torch.inference_mode()
    def run_all():
        return torch.cat([model(chunk) for chunk in x.split(batch_size)])

    with contextlib.ExitStack() as stack:
        stack.callback(model.train, model.training)
        model.eval()
        return run_all()
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
    ('bf16_report', 0): _DEVICE,
}
