"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'read_profile': [
        ('Finds the costliest operator among the single calls of prof.events() instead of the rows of key_averages(), so one long call wins over an operator whose many short calls add up to more self time.', '''from torch.autograd import DeviceType


def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    calls = [event for event in prof.events() if event.name.startswith("aten::")]
    longest = max(calls, key=lambda event: event.self_cpu_time_total)
    cpu_rows = {row.key: row.cpu_time_total for row in prof.key_averages()
                if row.device_type == DeviceType.CPU}
    wait, train = cpu_rows["wait for batch"], cpu_rows["train step"]
    return {"costliest op": longest.name, "self CPU ms": longest.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    'faster_loader': [
        ('Pins memory on every device that is not the CPU, so the meta device gets pin_memory=True, though the text asks for pinning on CUDA devices only and False everywhere else.', '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      generator=loader.generator, num_workers=num_workers,
                      persistent_workers=True, pin_memory=device.type != "cpu")
'''),
        ('Passes shuffle=True when the given loader shuffles instead of handing over its sampler: the order matches a default shuffled loader under the same seed, but a loader made with its own generator no longer draws its order from that generator.', '''from torch.utils.data import RandomSampler


def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size,
                      shuffle=isinstance(loader.sampler, RandomSampler),
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=num_workers, persistent_workers=True,
                      pin_memory=device.type == "cuda")
'''),
    ],
    'bf16_report': [
        ('Computes the reference in float64 instead of the float32 result without autocast, so the sum and the softmax, which autocast leaves in float32, get a small non-zero autocast error instead of exactly zero.', '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda a, b, x: a @ b,
           "sum": lambda a, b, x: x.sum(dim=-1),
           "softmax": lambda a, b, x: torch.softmax(x, dim=-1)}
    report = {}
    for name, op in ops.items():
        ref = op(a.double(), b.double(), x.double())
        with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
            auto = op(a, b, x)
        low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
        error = lambda got: ((got.double() - ref).abs().max() / ref.abs().max()).item()
        report[name] = {"autocast dtype": str(auto.dtype), "autocast error": error(auto),
                        "bf16 error": error(low)}
    return report
'''),
    ],
    'loss_scaler': [
        ('Unscales by rebinding p.grad to a new tensor (p.grad = p.grad / scale) instead of dividing in place, so a .grad tensor someone took before unscale_ (for clipping) still holds the scaled values.', '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
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
                p.grad = p.grad / self._scale
                found = found or not bool(torch.isfinite(p.grad).all())
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
        ('Walks only optimizer.param_groups[0], so with two parameter groups the second group is neither unscaled nor searched for inf/NaN (the step is taken with its scaled, possibly infinite, gradients).', '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
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
        grads = [p.grad for p in optimizer.param_groups[0]["params"] if p.grad is not None]
        for g in grads:
            g.div_(self._scale)
        self._found_inf = any(not bool(torch.isfinite(g).all()) for g in grads)
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
    ],
    'saved_bytes': [
        ('Tells storages apart by data_ptr() instead of comparing them with is: right on the CPU, but on the meta device every data_ptr is 0, so all saved tensors count as one storage.', '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    sizes = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in param_ptrs:
            sizes[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    total = sum(sizes.values())
    del out
    return int(total)
'''),
    ],
    'checkpointed': [
        ('Checkpoints with preserve_rng_state=False: without Dropout the same, but with Dropout in a checkpointed segment the recomputation in backward draws new masks, not the forward\'s, so the gradients are wrong.', '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = len(layers) // segments
    for k in range(segments - 1):
        piece = nn.Sequential(*layers[k * size:(k + 1) * size])
        x = checkpoint(piece, x, use_reentrant=False, preserve_rng_state=False)
    return nn.Sequential(*layers[(segments - 1) * size:])(x)
'''),
        ('Rounds the piece length up (ceil of len(layers) / segments) instead of len(layers) // segments, so when the segments do not divide the layers the checkpointed pieces are longer and the last one shorter than checkpoint_sequential\'s (same output, other saved bytes and recomputation).', '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = -(-len(layers) // segments)
    for k in range(segments - 1):
        piece = nn.Sequential(*layers[k * size:(k + 1) * size])
        x = checkpoint(piece, x, use_reentrant=False)
    return nn.Sequential(*layers[(segments - 1) * size:])(x)
'''),
    ],
    'predict': [
        ('Joins the batches with torch.cat after leaving inference_mode: the values are right, but the result is an ordinary tensor, not an inference tensor as the text asks.', '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            outputs = [model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
    finally:
        model.train(was_training)
    return torch.cat(outputs)
'''),
    ],
}

RIGHT = {
    'saved_bytes': [
        ('Keys the distinct storages by id() in a dict that also holds the storage objects (so no id is reused while counting), and leaves out parameter storages by identity at the end.', '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = {}

    def pack(t):
        storage = t.untyped_storage()
        packed[id(storage)] = storage
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
        own = [p.untyped_storage() for p in model.parameters()]
        total = sum(s.nbytes() for s in packed.values() if all(s is not q for q in own))
    del output
    return int(total)
'''),
    ],
    'checkpointed': [
        ('Checkpoints a closure over start and end indices (as checkpoint_sequential does internally) instead of wrapping each piece in nn.Sequential.', '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    def run(start, end):
        def forward(inp):
            for layer in layers[start:end]:
                inp = layer(inp)
            return inp
        return forward

    per_piece = len(layers) // segments
    start = 0
    for _ in range(segments - 1):
        x = checkpoint(run(start, start + per_piece), x, use_reentrant=False)
        start += per_piece
    return run(start, len(layers))(x)
'''),
    ],
    'predict': [
        ('Cuts the input with x.split(batch_size) and restores the mode in a finally block entered before eval(), the whole concatenation inside inference_mode.', '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    try:
        model.eval()
        with torch.inference_mode():
            return torch.cat([model(chunk) for chunk in x.split(batch_size)])
    finally:
        model.train(was_training)
'''),
    ],
}
