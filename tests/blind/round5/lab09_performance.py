"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 5)."""

WRONG = {
    "read_profile": [
        ("picks the costliest aten:: row by cpu_time_total instead of self_cpu_time_total: aten::linear (which includes the addmm it calls) wins",
         '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    from torch.autograd import DeviceType
    rows = prof.key_averages()
    ops = [r for r in rows if r.key.startswith("aten::")]
    top = max(ops, key=lambda r: r.cpu_time_total)
    cpu = {r.key: r for r in rows if r.device_type == DeviceType.CPU}
    wait = cpu["wait for batch"].cpu_time_total
    train = cpu["train step"].cpu_time_total
    return {"costliest op": top.key, "self CPU ms": top.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ("pins memory on every device that is not the CPU: the meta device gets pin_memory=True",
         '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=num_workers, persistent_workers=True,
                      pin_memory=torch.device(device).type != "cpu")
'''),
        ("drop_last not copied: a loader that drops its last partial batch gets it back",
         '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      collate_fn=loader.collate_fn, num_workers=num_workers,
                      persistent_workers=True, pin_memory=torch.device(device).type == "cuda")
'''),
        ("num_workers argument ignored: always two workers",
         '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=2, persistent_workers=True,
                      pin_memory=torch.device(device).type == "cuda")
'''),
    ],
    "bf16_report": [
        ("computes the float32 reference inside the same autocast block: the matmul reference is itself bf16, so the autocast error of the matmul comes out 0",
         '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda p, q, r: p @ q,
           "sum": lambda p, q, r: r.sum(dim=-1),
           "softmax": lambda p, q, r: torch.softmax(r, dim=-1)}

    def err(got, ref):
        return ((got.float() - ref).abs().max() / ref.abs().max()).item()

    report = {}
    with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
        for name, op in ops.items():
            ref = op(a, b, x).float()
            got = op(a, b, x)
            report[name] = {"autocast dtype": str(got.dtype), "autocast error": err(got, ref)}
    for name, op in ops.items():
        ref = op(a, b, x)
        low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
        report[name]["bf16 error"] = err(low, ref)
    return report
'''),
    ],
    "loss_scaler": [
        ("backoff multiplies by 1 / growth_factor instead of backoff_factor (the backoff_factor argument is ignored)",
         '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self._good = 0
        self._unscaled = False
        self._found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self._scale)
                    if not torch.isfinite(p.grad).all():
                        found = True
        self._found_inf = found
        self._unscaled = True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if not self._unscaled:
            self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale /= self.growth_factor
            self._good = 0
        else:
            self._good += 1
            if self._good == self.growth_interval:
                self._scale *= self.growth_factor
                self._good = 0
        self._unscaled = False
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
        ("the count of good steps is not reset on a back-off: an overflow in the middle of a run of good steps lets the scale grow too early",
         '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.current = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.good_steps = 0
        self.unscaled = False
        self.found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self.current

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self.current)
                if not bool(torch.isfinite(p.grad).all()):
                    self.found_inf = True
        self.unscaled = True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if not self.unscaled:
            self.unscale_(optimizer)
        if not self.found_inf:
            optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self.found_inf:
            self.current *= self.backoff_factor
        else:
            self.good_steps += 1
            if self.good_steps >= self.growth_interval:
                self.current *= self.growth_factor
                self.good_steps = 0
        self.unscaled = False
        self.found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self.current)
'''),
    ],
    "saved_bytes": [
        ("counts each distinct storage by the size of the first tensor packed from it (numel * element_size) instead of storage.nbytes(): a view of half a storage counts half",
         '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    params = [p.untyped_storage() for p in model.parameters()]
    seen = []
    sizes = []

    def pack(t):
        s = t.untyped_storage()
        if not any(s is q for q in params) and not any(s is q for q in seen):
            seen.append(s)
            sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
        total = int(sum(sizes))
    del out
    return total
'''),
    ],
    "checkpointed": [
        ("cuts range(0, L, size) into pieces: when segments does not divide the layers, the leftover layers form an extra last piece and the piece before it is checkpointed too",
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = len(layers) // segments
    pieces = [list(layers[i:i + size]) for i in range(0, len(layers), size)]

    def runner(piece):
        def run(inp):
            for layer in piece:
                inp = layer(inp)
            return inp
        return run

    for piece in pieces[:-1]:
        x = checkpoint(runner(piece), x, use_reentrant=False)
    return runner(pieces[-1])(x)
'''),
    ],
    "predict": [
        ("restores the mode with an unconditional model.train() in finally: a model handed over in eval mode comes back in train mode",
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    model.eval()
    try:
        with torch.inference_mode():
            outs = [model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
            return torch.cat(outs)
    finally:
        model.train()
'''),
    ],
}

RIGHT = {
    "saved_bytes": [
        ("storages kept in a dict keyed by id() (the storage objects are held in the dict, so ids stay unique), parameters filtered at the end",
         '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = {}

    def pack(t):
        storage = t.untyped_storage()
        packed[id(storage)] = storage
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    param_storages = [p.untyped_storage() for p in model.parameters()]
    total = 0
    for storage in packed.values():
        if any(storage is s for s in param_storages):
            continue
        total += storage.nbytes()
    del output
    return int(total)
'''),
    ],
    "checkpointed": [
        ("an nn.Sequential per piece as the checkpointed function, the last piece built from the remaining layers",
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    start = 0
    for _ in range(segments - 1):
        piece = nn.Sequential(*layers[start:start + size])
        x = checkpoint(piece, x, use_reentrant=False)
        start += size
    for layer in layers[start:]:
        x = layer(x)
    return x
'''),
    ],
    "predict": [
        ("a while loop over batch starts, collecting into a list, mode remembered and restored with model.train(was_training) in finally",
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            pieces = []
            start = 0
            while start < x.shape[0]:
                pieces.append(model(x[start:start + batch_size]))
                start += batch_size
            result = torch.cat(pieces, dim=0)
        return result
    finally:
        model.train(was_training)
'''),
    ],
}
