"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 4)."""

_SCALER_HEAD = '''class LossScaler:
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
'''

_SCALER_TAIL = '''
    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''

WRONG = {
    "read_profile": [
        ("picks the costliest operator from prof.events(), call by call (the single longest "
         "aten:: call), then reports that name's aggregated self time: wrong when many short "
         "calls of one op outweigh one long call of another",
         '''from torch.autograd import DeviceType


def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    calls = [e for e in prof.events()
             if e.name.startswith("aten::") and e.device_type == DeviceType.CPU]
    top = max(calls, key=lambda e: e.self_cpu_time_total).name
    rows = [r for r in prof.key_averages() if r.device_type == DeviceType.CPU]
    self_us = sum(r.self_cpu_time_total for r in rows if r.key == top)
    wait = sum(r.cpu_time_total for r in rows if r.key == "wait for batch")
    train = sum(r.cpu_time_total for r in rows if r.key == "train step")
    return {"costliest op": top, "self CPU ms": self_us / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ("pin_memory=device.type != 'cpu': right for cpu and cuda:N, but pins on the meta "
         "device (and any other non-CUDA device)",
         '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=num_workers, persistent_workers=True,
                      pin_memory=device.type != "cpu")
'''),
        ("hard-codes num_workers=2 in the DataLoader call, ignoring the argument: right only at "
         "the default",
         '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    on_gpu = device.type == "cuda"
    return DataLoader(
        loader.dataset,
        batch_size=loader.batch_size,
        sampler=loader.sampler,
        drop_last=loader.drop_last,
        collate_fn=loader.collate_fn,
        num_workers=2,
        persistent_workers=True,
        pin_memory=on_gpu,
    )
'''),
    ],
    "bf16_report": [
        ("one autocast block around everything: the float32 reference of each op is computed "
         "inside autocast too, so the matmul's ref is itself bf16 (autocast error 0, bf16 error "
         "measured against a bf16 product)",
         '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {
        "matmul": lambda a, b, x: a @ b,
        "sum": lambda a, b, x: x.sum(dim=-1),
        "softmax": lambda a, b, x: torch.softmax(x, dim=-1),
    }
    report = {}
    with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
        for name, op in ops.items():
            ref = op(a, b, x)
            auto = op(a, b, x)
            low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
            scale = ref.float().abs().max()
            report[name] = {
                "autocast dtype": str(auto.dtype),
                "autocast error": ((auto.float() - ref.float()).abs().max() / scale).item(),
                "bf16 error": ((low.float() - ref.float()).abs().max() / scale).item(),
            }
    return report
'''),
    ],
    "loss_scaler": [
        ("update() grows only when the count of good steps exceeds growth_interval (> instead "
         "of reaching it): the scale grows one step late (LossScaler() doubles on the 2001st "
         "good step)",
         _SCALER_HEAD + '''
    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale *= self.backoff_factor
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps > self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._unscaled = False
        self._found_inf = False
''' + _SCALER_TAIL),
        ("backs off by dividing by growth_factor (undoing a growth) instead of multiplying by "
         "backoff_factor: the same at the defaults (2.0 and 0.5), wrong for any other pair",
         _SCALER_HEAD + '''
    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._found_inf:
            self._scale /= self.growth_factor      # back off: undo one growth
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps == self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._unscaled = False
        self._found_inf = False
''' + _SCALER_TAIL),
        ("update() resets the inf flag but not the 'already unscaled' flag: from the second "
         "iteration on, step() never unscales, so the optimizer steps on gradients still "
         "multiplied by the scale (and an overflow is never detected)",
         _SCALER_HEAD + '''
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
''' + _SCALER_TAIL),
    ],
    "saved_bytes": [
        ("distinct storages found with `is`, parameters left out, but each storage counted as "
         "numel() * element_size() of the first tensor packed from it: a view (half of a gated "
         "unit's tensor) counts only its own part, not the whole storage",
         '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    param_storages = [p.untyped_storage() for p in model.parameters()]
    seen = []
    total = 0
    for t in packed:
        s = t.untyped_storage()
        if any(s is q for q in param_storages) or any(s is q for q in seen):
            continue
        seen.append(s)
        total += t.numel() * t.element_size()
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ("the segment function is a closure over the loop variable `piece`: the forward is "
         "right, but backward's recomputation runs the LAST checkpointed piece for every "
         "segment (late binding); shows with 3 or more segments",
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = len(layers) // segments
    for i in range(segments - 1):
        piece = layers[i * size:(i + 1) * size]

        def run_piece(t):
            for layer in piece:
                t = layer(t)
            return t

        x = checkpoint(run_piece, x, use_reentrant=False)
    for layer in layers[(segments - 1) * size:]:
        x = layer(x)
    return x
'''),
    ],
    "predict": [
        ("the batches run inside inference_mode, but torch.cat joins them after the block: the "
         "output is an ordinary tensor, not an inference tensor",
         '''def predict(model, x, batch_size=256):
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
    "read_profile": [
        ("explicit loop over key_averages() with running maxima and sums, DeviceType compared "
         "by name",
         '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    best_key, best_us = None, -1.0
    wait = train = 0.0
    for row in prof.key_averages():
        if row.device_type.name != "CPU":
            continue
        if row.key.startswith("aten::") and row.self_cpu_time_total > best_us:
            best_key, best_us = row.key, row.self_cpu_time_total
        if row.key == "wait for batch":
            wait += row.cpu_time_total
        elif row.key == "train step":
            train += row.cpu_time_total
    return {"costliest op": best_key, "self CPU ms": best_us / 1e3,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "checkpointed": [
        ("pieces built as nn.Sequential modules (no closures), checkpoint handed the module "
         "itself",
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    starts = [k * size for k in range(segments)]
    pieces = [nn.Sequential(*layers[s:s + size]) for s in starts[:-1]]
    last = nn.Sequential(*layers[starts[-1]:])
    for piece in pieces:
        x = checkpoint(piece, x, use_reentrant=False)
    return last(x)
'''),
    ],
    "predict": [
        ("contextlib.ExitStack for the mode, x.split(batch_size) for the batches, inference "
         "mode entered before the model is touched",
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    with contextlib.ExitStack() as stack:
        stack.callback(model.train, was_training)
        stack.enter_context(torch.inference_mode())
        model.eval()
        return torch.cat([model(chunk) for chunk in x.split(batch_size)])
'''),
    ],
}
