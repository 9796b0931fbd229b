"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "read_profile": [
        ('Measures the two regions by self_cpu_time_total instead of cpu_time_total: a record_function region\'s self time is only its own thin wrapper, so the waiting share is a ratio of two tiny numbers.',
         '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    from torch.autograd import DeviceType

    rows = prof.key_averages()
    ops = [row for row in rows if row.key.startswith("aten::")]
    top = max(ops, key=lambda row: row.self_cpu_time_total)
    cpu_rows = [row for row in rows if row.device_type == DeviceType.CPU]
    wait = sum(row.self_cpu_time_total for row in cpu_rows if row.key == "wait for batch")
    train = sum(row.self_cpu_time_total for row in cpu_rows if row.key == "train step")
    return {"costliest op": top.key, "self CPU ms": top.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
        ('Indexes the rows in a dict by key ({row.key: row}), so on a GPU profile the region\'s GPU row (cpu_time_total 0) overwrites its CPU row; ignores the device_type rule of the text.',
         '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    by_key = {row.key: row for row in prof.key_averages()}
    op = max((key for key in by_key if key.startswith("aten::")),
             key=lambda key: by_key[key].self_cpu_time_total)
    wait = by_key["wait for batch"].cpu_time_total
    train = by_key["train step"].cpu_time_total
    return {"costliest op": op, "self CPU ms": by_key[op].self_cpu_time_total / 1e3,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ('Decides pinning with torch.cuda.is_available() (is there a GPU on this machine?) instead of device.type: a CPU or meta loader gets pinned memory on a GPU machine, and a CUDA loader none on a machine without one.',
         '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(
        loader.dataset,
        batch_size=loader.batch_size,
        sampler=loader.sampler,
        drop_last=loader.drop_last,
        collate_fn=loader.collate_fn,
        num_workers=num_workers,
        persistent_workers=True,
        pin_memory=torch.cuda.is_available(),   # pinning only helps when there is a GPU
    )
'''),
    ],
    "bf16_report": [
        ('For "bf16 error" it rounds the float32 result to bfloat16 instead of running the op on inputs cast with .bfloat16(): it measures one output rounding, not what bf16 inputs cost the sum and softmax.',
         '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda a, b, x: a @ b,
           "sum": lambda a, b, x: x.sum(dim=-1),
           "softmax": lambda a, b, x: torch.softmax(x, dim=-1)}

    def error(got, ref):
        return ((got.float() - ref).abs().max() / ref.abs().max()).item()

    report = {}
    for name, op in ops.items():
        ref = op(a, b, x)
        with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
            auto = op(a, b, x)
        low = ref.bfloat16()
        report[name] = {"autocast dtype": str(auto.dtype), "autocast error": error(auto, ref),
                        "bf16 error": error(low, ref)}
    return report
'''),
    ],
    "loss_scaler": [
        ('update() forgets to reset the "already unscaled" flag, so from the second iteration on step() never unscales: the optimizer steps with gradients still multiplied by the scale (and inf is never looked for).',
         '''class LossScaler:
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
                if p.grad is not None:
                    p.grad.div_(self._scale)
                    found = found or not bool(torch.isfinite(p.grad).all())
        self._found_inf = found
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
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
        ('Grows when the count of good steps exceeds growth_interval (>) instead of when it reaches it: every growth comes one good step late, so LossScaler() doubles on the 2001st good step, not the 2000th.',
         '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._unscaled = False
        self._found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        for g in grads:
            g.div_(self._scale)
        self._found_inf = any(not torch.isfinite(g).all() for g in grads)
        self._unscaled = True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if not self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf:
            return None
        return optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker > self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._unscaled = False
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
    ],
    "saved_bytes": [
        ('Deduplicates by storage but adds each saved tensor\'s own bytes (numel * element_size) rather than its storage\'s nbytes(): a view such as the gated unit\'s half of a tensor counts as half, though the whole storage is kept.',
         '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    weights = [p.untyped_storage() for p in model.parameters()]
    seen, total = [], 0

    def pack(t):
        nonlocal total
        storage = t.untyped_storage()
        if not any(storage is s for s in seen) and not any(storage is w for w in weights):
            seen.append(storage)
            total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ('Applies the reentrant-era workaround x.detach().requires_grad_() to every segment input "so checkpoint keeps the weights\' gradients": each segment is cut off from the ones before, so earlier weights (and the input) get no gradient.',
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments

    def piece_function(piece):
        def forward(inp):
            for layer in piece:
                inp = layer(inp)
            return inp
        return forward

    for k in range(segments - 1):
        piece = layers[k * size:(k + 1) * size]
        # checkpoint needs an input that requires grad, or the weights lose their gradients
        x = checkpoint(piece_function(piece), x.detach().requires_grad_(), use_reentrant=False)
    return piece_function(layers[(segments - 1) * size:])(x)
'''),
        ('Cuts the pieces with range(0, len(layers), size), so a remainder becomes a piece of its own and only it runs without checkpoint, instead of the last piece taking the leftover layers: more checkpointed layers, other saved bytes and forward counts.',
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    pieces = [layers[i:i + size] for i in range(0, len(layers), size)]

    def make_function(piece):
        def forward(inp):
            for layer in piece:
                inp = layer(inp)
            return inp
        return forward

    for piece in pieces[:-1]:
        x = checkpoint(make_function(piece), x, use_reentrant=False)
    return make_function(pieces[-1])(x)
'''),
    ],
    "predict": [
        ('Reads the mode after calling model.eval(), so was_training is always False and a model handed over in train mode comes back in eval mode (even though the try/finally is there).',
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    model.eval()
    was_training = model.training
    try:
        with torch.inference_mode():
            outputs = [model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
            return torch.cat(outputs)
    finally:
        model.train(was_training)
'''),
    ],
}

RIGHT = {
    "loss_scaler": [
        ('Keeps the scale as a float32 tensor (as GradScaler does) and checks finiteness with one torch.stack over per-gradient isfinite().all() flags; state reset in one helper.',
         '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = torch.tensor(init_scale, dtype=torch.float32)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._good = 0
        self._new_iteration()

    def _new_iteration(self):
        self._unscaled = False
        self._found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale.item()

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        flags = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale.item())
                flags.append(torch.isfinite(p.grad).all())
        self._found_inf = bool(flags) and not bool(torch.stack(flags).all())
        self._unscaled = True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if not self._unscaled:
            self.unscale_(optimizer)
        return None if self._found_inf else optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale = self._scale * self._backoff_factor
            self._good = 0
        else:
            self._good += 1
            if self._good == self._growth_interval:
                self._scale = self._scale * self._growth_factor
                self._good = 0
        self._new_iteration()

    def get_scale(self):
        """The current scale, a Python float."""
        return self._scale.item()
'''),
    ],
    "checkpointed": [
        ('Wraps every piece in an nn.Sequential (a module is a callable for checkpoint) and slices by segment index, instead of a hand-written loop function.',
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    for k in range(segments - 1):
        x = checkpoint(nn.Sequential(*layers[k * size:(k + 1) * size]), x, use_reentrant=False)
    return nn.Sequential(*layers[(segments - 1) * size:])(x)
'''),
    ],
    "predict": [
        ('Batches with torch.split and remembers/restores the mode through contextlib.ExitStack.callback instead of try/finally; inference_mode wraps the whole loop and the cat.',
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    with contextlib.ExitStack() as stack:
        stack.callback(model.train, model.training)
        model.eval()
        stack.enter_context(torch.inference_mode())
        return torch.cat([model(chunk) for chunk in torch.split(x, batch_size)])
'''),
    ],
}
