"""Lab 09: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "read_profile": [
        ("ranks the aten:: operators by CPU total instead of self CPU time", '''from torch.autograd import DeviceType


def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    rows = prof.key_averages()
    operators = [row for row in rows if row.key.startswith("aten::")]
    top = max(operators, key=lambda row: row.cpu_time_total)
    cpu_rows = [row for row in rows if row.device_type == DeviceType.CPU]
    wait = sum(row.cpu_time_total for row in cpu_rows if row.key == "wait for batch")
    train = sum(row.cpu_time_total for row in cpu_rows if row.key == "train step")
    return {"costliest op": top.key,
            "self CPU ms": top.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
        ("region times read from prof.events() into a dict: only the last call of each region counts", '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    rows = prof.key_averages()
    top = max((row for row in rows if row.key.startswith("aten::")),
              key=lambda row: row.self_cpu_time_total)
    times = {event.name: event.cpu_time_total for event in prof.events()}
    wait, train = times["wait for batch"], times["train step"]
    return {"costliest op": top.key,
            "self CPU ms": top.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ("pins memory whenever this machine has CUDA, instead of looking at device.type", '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=num_workers, persistent_workers=True,
                      pin_memory=torch.cuda.is_available())
'''),
    ],
    "bf16_report": [
        ("whole function inside one autocast block: the float32 reference is itself computed in bf16", '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda a, b, x: a @ b,
           "sum": lambda a, b, x: x.sum(dim=-1),
           "softmax": lambda a, b, x: torch.softmax(x, dim=-1)}
    report = {}
    with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
        for name, op in ops.items():
            ref = op(a, b, x).float()
            auto = op(a, b, x)
            low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
            scale = ref.abs().max()
            report[name] = {
                "autocast dtype": str(auto.dtype),
                "autocast error": ((auto.float() - ref).abs().max() / scale).item(),
                "bf16 error": ((low.float() - ref).abs().max() / scale).item(),
            }
    return report
'''),
    ],
    "loss_scaler": [
        ("backoff does not reset the count of good steps, so the scale grows again too early", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self._good_steps = 0
        self._found_inf = False
        self._unscaled = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                if not torch.isfinite(p.grad).all():
                    self._found_inf = True
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
            if self._good_steps >= self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._found_inf = False
        self._unscaled = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
        ("step() unscales again after an explicit unscale_: clipped gradients are divided twice", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self._good_steps = 0
        self._found_inf = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                if not torch.isfinite(p.grad).all():
                    self._found_inf = True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
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
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
    ],
    "saved_bytes": [
        ("distinct storages, but sums the saved view's own bytes instead of its storage's nbytes()", '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        out = model(x)
    params = [p.untyped_storage() for p in model.parameters()]
    seen = []
    total = 0
    for t in packed:
        storage = t.untyped_storage()
        if any(storage is s for s in params) or any(storage is s for s in seen):
            continue
        seen.append(storage)
        total += t.numel() * t.element_size()
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ("piece function closes over the loop variable: backward recomputes the wrong segment", '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    out = x
    for i in range(segments - 1):
        def piece(inp):
            for layer in layers[i * size:(i + 1) * size]:
                inp = layer(inp)
            return inp
        out = checkpoint(piece, out, use_reentrant=False)
    for layer in layers[(segments - 1) * size:]:
        out = layer(out)
    return out
'''),
    ],
    "predict": [
        ("torch.cat runs outside inference_mode: the output is an ordinary tensor", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    outputs = []
    try:
        for i in range(0, x.shape[0], batch_size):
            with torch.inference_mode():
                outputs.append(model(x[i:i + batch_size]))
    finally:
        model.train(was_training)
    return torch.cat(outputs)
'''),
        ("mode restored only on the normal path: a raising forward leaves the model in eval mode", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        out = torch.cat([model(x[i:i + batch_size]) for i in range(0, x.shape[0], batch_size)])
    model.train(was_training)
    return out
'''),
    ],
}

RIGHT = {
    "predict": [
        ("try/finally around one inference_mode block with a list comprehension", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            return torch.cat([model(x[start:start + batch_size])
                              for start in range(0, len(x), batch_size)])
    finally:
        model.train(was_training)
'''),
    ],
    "loss_scaler": [
        ("scale kept as a float32 tensor and gradients multiplied by its reciprocal, as GradScaler stores it", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = torch.tensor(float(init_scale), dtype=torch.float32)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._found_inf = False
        self._unscaled = False

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale.to(loss.device)

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        inv_scale = self._scale.double().reciprocal().float()
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.mul_(inv_scale.to(p.grad.device))
                found = found or not bool(torch.isfinite(p.grad).all())
        self._found_inf = self._found_inf or found
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
            self._scale = self._scale * self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale = self._scale * self._growth_factor
                self._growth_tracker = 0
        self._found_inf = False
        self._unscaled = False

    def get_scale(self):
        """The current scale, a Python float."""
        return self._scale.item()
'''),
    ],
    "checkpointed": [
        ("each piece wrapped as an nn.Sequential and passed to checkpoint as the function", '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    starts = range(0, size * (segments - 1), size)
    for start in starts:
        x = checkpoint(nn.Sequential(*layers[start:start + size]), x, use_reentrant=False)
    for layer in layers[size * (segments - 1):]:
        x = layer(x)
    return x
'''),
    ],
}
