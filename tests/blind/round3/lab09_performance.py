"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    "read_profile": [
        ("the costliest operator is picked by cpu_time_total (the column 'CPU total') instead of self_cpu_time_total: aten::linear, which includes the addmm it calls, wins",
         '''from torch.autograd import DeviceType


def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    rows = [row for row in prof.key_averages() if row.device_type == DeviceType.CPU]
    operators = [row for row in rows if row.key.startswith("aten::")]
    costliest = max(operators, key=lambda row: row.cpu_time_total)
    wait = sum(row.cpu_time_total for row in rows if row.key == "wait for batch")
    train = sum(row.cpu_time_total for row in rows if row.key == "train step")
    return {"costliest op": costliest.key,
            "self CPU ms": costliest.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ("pin_memory = (str(device) == 'cuda'): right for 'cuda' but False for 'cuda:1' (the device's index is not looked past)",
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
        pin_memory=str(device) == "cuda",
    )
'''),
    ],
    "bf16_report": [
        ("the 'bf16 error' rounds the float32 result to bfloat16 (ref.bfloat16()) instead of running the op on inputs cast to bfloat16: one rounding of the output, not the error of bf16 inputs",
         '''def _relative_error(got, ref):
    return ((got.float() - ref).abs().max() / ref.abs().max()).item()


def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda: a @ b,
           "sum": lambda: x.sum(dim=-1),
           "softmax": lambda: torch.softmax(x, dim=-1)}
    report = {}
    for name, op in ops.items():
        ref = op()
        with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
            auto = op()
        in_bf16 = ref.bfloat16()          # the same result, stored in bf16
        report[name] = {"autocast dtype": str(auto.dtype),
                        "autocast error": _relative_error(auto, ref),
                        "bf16 error": _relative_error(in_bf16, ref)}
    return report
'''),
    ],
    "loss_scaler": [
        ("update() backs off on inf/NaN but does not reset the count of good steps: after an overflow in a run of good steps the scale grows too early",
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
        ("update() never clears the 'already unscaled' flag: from the second iteration on step() skips unscale_, so the optimizer steps on still-scaled gradients and an inf is never looked for again",
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
        self._found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self._scale)
                    self._found_inf |= not bool(torch.isfinite(p.grad).all())
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

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
        ("grows when the count of good steps EXCEEDS growth_interval (>) instead of reaching it: the scale doubles one good step late (on the 2001st with the defaults)",
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
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                found = found or not torch.isfinite(p.grad).all().item()
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
            if self._good_steps > self.growth_interval:
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
        ("storages told apart by t.untyped_storage().data_ptr() instead of `is`: right on the CPU, but on the meta device every pointer is 0, so all saved storages (and the weights') collapse into one",
         '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    sizes = {}
    for t in packed:
        storage = t.untyped_storage()
        address = storage.data_ptr()
        if address not in weights:
            sizes[address] = storage.nbytes()
    total = sum(sizes.values())
    del out
    return int(total)
'''),
    ],
    "checkpointed": [
        ("cuts the layers with range(0, len(layers), size): when segments does not divide the layers the leftover layers become an extra last piece, and the real last segment is run under checkpoint",
         '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    layers = list(layers)
    size = len(layers) // segments
    pieces = [layers[i:i + size] for i in range(0, len(layers), size)]

    def as_function(piece):
        def run(inp):
            for layer in piece:
                inp = layer(inp)
            return inp
        return run

    for piece in pieces[:-1]:
        x = checkpoint(as_function(piece), x, use_reentrant=False)
    return as_function(pieces[-1])(x)
'''),
    ],
    "predict": [
        ("restores the mode with a plain model.train(was_training) after the loop, not in a finally: a forward pass that raises leaves the model in eval mode",
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        outputs = [model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
        result = torch.cat(outputs)
    model.train(was_training)
    return result
'''),
        ("the batches run inside inference_mode, but torch.cat is called after the with block: the joined output is an ordinary tensor, not an inference tensor",
         '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    try:
        outputs = []
        with torch.inference_mode():
            for start in range(0, x.shape[0], batch_size):
                outputs.append(model(x[start:start + batch_size]))
    finally:
        model.train(was_training)
    return torch.cat(outputs)
'''),
    ],
}

RIGHT = {
    "loss_scaler": [
        ("found-inf kept as a tensor flag over torch.stack of every gradient's isfinite().all(), unscaling through a list of gradients, state reset in a helper",
         '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._streak = 0
        self._new_iteration()

    def _new_iteration(self):
        self._finite = None          # None: nothing unscaled yet in this iteration

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        checks = []
        for g in grads:
            g.div_(self._scale)
            checks.append(torch.isfinite(g).all())
        self._finite = bool(torch.stack(checks).all()) if checks else True

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if self._finite is None:
            self.unscale_(optimizer)
        if self._finite:
            optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        if self._finite is False:
            self._scale = self._scale * self._backoff_factor
            self._streak = 0
        else:
            self._streak += 1
            if self._streak >= self._growth_interval:
                self._scale = self._scale * self._growth_factor
                self._streak = 0
        self._new_iteration()

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
    ],
    "saved_bytes": [
        ("the storages kept alive in a dict keyed by id() (safe because the dict holds them), the weights' storages removed by identity, the count made while `out` is still referenced",
         '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        storages[id(s)] = s          # the dict keeps s alive, so its id stays unique
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    weight_ids = {id(p.untyped_storage()) for p in model.parameters()}
    for key in list(storages):
        if any(storages[key] is p.untyped_storage() for p in model.parameters()):
            del storages[key]
    total = sum(s.nbytes() for key, s in storages.items() if key not in weight_ids)
    assert out is not None           # the graph (and what it saved) lived until now
    return int(total)
'''),
    ],
    "predict": [
        ("the batch loop and the torch.cat live in a helper decorated with @torch.inference_mode(), the mode restored in a finally; batches made with torch.split",
         '''@torch.inference_mode()
def _forward_in_batches(model, x, batch_size):
    return torch.cat([model(chunk) for chunk in torch.split(x, batch_size)])


def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    try:
        model.eval()
        return _forward_in_batches(model, x, batch_size)
    finally:
        model.train(was_training)
'''),
    ],
}
