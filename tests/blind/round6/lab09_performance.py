"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "read_profile": [
        ("waiting share from the regions' self_cpu_time_total instead of their cpu_time_total (a marked region's self time is tiny, so the share is wrong)", '''from torch.autograd import DeviceType


def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    rows = prof.key_averages()
    ops = [row for row in rows if row.key.startswith("aten::")]
    top = max(ops, key=lambda row: row.self_cpu_time_total)
    cpu_rows = {row.key: row for row in rows if row.device_type == DeviceType.CPU}
    wait = cpu_rows["wait for batch"].self_cpu_time_total
    train = cpu_rows["train step"].self_cpu_time_total
    return {
        "costliest op": top.key,
        "self CPU ms": top.self_cpu_time_total / 1000.0,
        "waiting share": wait / (wait + train),
    }
'''),
        ("costliest operator taken from prof.events(), the single longest call, instead of the key_averages() row that adds up all calls of a name", '''from torch.autograd import DeviceType


def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    calls = [event for event in prof.events() if event.name.startswith("aten::")]
    top = max(calls, key=lambda event: event.self_cpu_time_total)
    wait = train = 0.0
    for row in prof.key_averages():
        if row.device_type != DeviceType.CPU:
            continue
        if row.key == "wait for batch":
            wait = row.cpu_time_total
        elif row.key == "train step":
            train = row.cpu_time_total
    return {
        "costliest op": top.name,
        "self CPU ms": top.self_cpu_time_total / 1000.0,
        "waiting share": wait / (wait + train),
    }
'''),
    ],
    "faster_loader": [
        ("pin_memory tested with str(device) == 'cuda', so a CUDA device with an index (cuda:1) gets no pinned memory", '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(
        loader.dataset,
        batch_size=loader.batch_size,
        sampler=loader.sampler,
        drop_last=loader.drop_last,
        collate_fn=loader.collate_fn,
        num_workers=num_workers,
        persistent_workers=True,
        pin_memory=str(device) == "cuda",
    )
'''),
    ],
    "bf16_report": [
        ("error is the mean absolute difference over max|ref| instead of the largest difference (max), so every error comes out far too small", '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {
        "matmul": lambda a, b, x: a @ b,
        "sum": lambda a, b, x: x.sum(dim=-1),
        "softmax": lambda a, b, x: torch.softmax(x, dim=-1),
    }
    report = {}
    for name, op in ops.items():
        ref = op(a, b, x)
        with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
            auto = op(a, b, x)
        low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
        scale = ref.abs().max()
        report[name] = {
            "autocast dtype": str(auto.dtype),
            "autocast error": ((auto.float() - ref).abs().mean() / scale).item(),
            "bf16 error": ((low.float() - ref).abs().mean() / scale).item(),
        }
    return report
'''),
    ],
    "loss_scaler": [
        ("unscale_ overwrites the found-inf flag for every parameter, so only the LAST gradient's finiteness counts: an inf in an earlier parameter is missed and the step is not skipped", '''class LossScaler:
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
        self._found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                self._found_inf = not bool(torch.isfinite(p.grad).all())
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
'''),
        ("backing off does not reset the count of good steps, so an overflow in the middle of a run of good steps does not restart the growth interval (the scale grows too early)", '''class LossScaler:
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
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
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
            self._scale *= self.backoff_factor
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
'''),
    ],
    "saved_bytes": [
        ("distinct storages found correctly, but each is sized by the packed tensor's numel() * element_size() instead of storage.nbytes(), so a view (half of a tensor) undercounts its storage", '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    param_storages = [p.untyped_storage() for p in model.parameters()]
    kept = []      # (storage, bytes) pairs, one per distinct storage

    def pack(t):
        storage = t.untyped_storage()
        if any(storage is s for s in param_storages):
            return t
        if any(storage is s for s, _ in kept):
            return t
        kept.append((storage, t.numel() * t.element_size()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    total = sum(size for _, size in kept)
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ("layers cut with range(0, len, size), so an uneven split makes an extra piece: the left-over layers become their own last segment and one segment too many is checkpointed", '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    pieces = [layers[i:i + size] for i in range(0, len(layers), size)]

    def make_function(piece):
        def run(inputs):
            for layer in piece:
                inputs = layer(inputs)
            return inputs
        return run

    for piece in pieces[:-1]:
        x = checkpoint(make_function(piece), x, use_reentrant=False)
    return make_function(pieces[-1])(x)
'''),
    ],
    "predict": [
        ("the batches run inside inference_mode but torch.cat joins them outside it, so the output is an ordinary tensor, not an inference tensor", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    outputs = []
    try:
        with torch.inference_mode():
            for i in range(0, len(x), batch_size):
                outputs.append(model(x[i:i + batch_size]))
    finally:
        model.train(was_training)
    return torch.cat(outputs)
'''),
        ("the finally clause always calls model.train(), so a model handed over in eval mode comes back in train mode", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    model.eval()
    try:
        with torch.inference_mode():
            outputs = [model(x[i:i + batch_size]) for i in range(0, x.shape[0], batch_size)]
            return torch.cat(outputs)
    finally:
        model.train()
'''),
    ],
}

RIGHT = {
    "loss_scaler": [
        ("scale kept as a float32 0-dim tensor like GradScaler's, one torch.stack/isfinite test over all gradients, an explicit per-iteration state string", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = torch.tensor(float(init_scale), dtype=torch.float32)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._state = "ready"          # "ready" or "unscaled" within one iteration
        self._found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale.to(device=loss.device)

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        scale = self._scale.item()
        for g in grads:
            g.div_(scale)
        finite = [torch.isfinite(g).all() for g in grads]
        self._found_inf = bool(len(finite) > 0 and not torch.stack(finite).all())
        self._state = "unscaled"

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if self._state != "unscaled":
            self.unscale_(optimizer)
        if self._found_inf:
            return None
        return optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale = self._scale * self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker >= self._growth_interval:
                self._scale = self._scale * self._growth_factor
                self._growth_tracker = 0
        self._state = "ready"
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return self._scale.item()
'''),
    ],
    "checkpointed": [
        ("each piece wrapped in a throw-away nn.Sequential and cut by index arithmetic; the last piece takes layers[(segments-1)*size:] plainly", '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    last_start = (segments - 1) * size
    for start in range(0, last_start, size):
        piece = nn.Sequential(*layers[start:start + size])
        x = checkpoint(piece, x, use_reentrant=False)
    tail = layers[last_start:]
    for layer in tail:
        x = layer(x)
    return x
'''),
    ],
    "predict": [
        ("x.split(batch_size) instead of index slicing, the mode captured before eval() and restored in finally; the whole body, cat included, inside one inference_mode block", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    try:
        model.eval()
        with torch.inference_mode():
            return torch.cat([model(chunk) for chunk in x.split(batch_size)], dim=0)
    finally:
        model.train(was_training)
'''),
    ],
}
