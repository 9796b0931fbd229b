"""Lab 09: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "read_profile": [
        ("picks the costliest aten:: row by cpu_time_total instead of self_cpu_time_total", '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    from torch.autograd import DeviceType

    rows = prof.key_averages()
    operators = [row for row in rows if row.key.startswith("aten::")]
    costliest = max(operators, key=lambda row: row.cpu_time_total)
    totals = {"wait for batch": 0.0, "train step": 0.0}
    for row in rows:
        if row.key in totals and row.device_type == DeviceType.CPU:
            totals[row.key] += row.cpu_time_total
    wait, train = totals["wait for batch"], totals["train step"]
    return {"costliest op": costliest.key,
            "self CPU ms": costliest.self_cpu_time_total / 1000.0,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ("always starts 2 workers, whatever num_workers says", '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=2, persistent_workers=True,
                      pin_memory=device.type == "cuda")
'''),
        ("pins memory only when str(device) == 'cuda', so cuda:1 gets no pinned memory", '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, collate_fn=loader.collate_fn,
                      num_workers=num_workers, persistent_workers=True,
                      pin_memory=str(device) == "cuda")
'''),
    ],
    "bf16_report": [
        ("takes the largest elementwise relative error instead of max|diff| / max|ref|", '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {
        "matmul": lambda a, b, x: a @ b,
        "sum": lambda a, b, x: x.sum(dim=-1),
        "softmax": lambda a, b, x: torch.softmax(x, dim=-1),
    }

    def error(got, ref):
        return ((got.float() - ref).abs() / ref.abs()).max().item()

    report = {}
    for name, op in ops.items():
        ref = op(a, b, x)
        with torch.autocast(device_type=a.device.type, dtype=torch.bfloat16):
            auto = op(a, b, x)
        low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
        report[name] = {"autocast dtype": str(auto.dtype),
                        "autocast error": error(auto, ref),
                        "bf16 error": error(low, ref)}
    return report
'''),
    ],
    "loss_scaler": [
        ("looks for inf with torch.isinf only, so a NaN gradient is not caught", '''class LossScaler:
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
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                if torch.isinf(p.grad).any():
                    found_inf = True
        self._found_inf = found_inf
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
            if self._good_steps >= self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._unscaled = False
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
        ("keeps the scale as a float64 tensor 'for precision', so scale(loss) comes back float64", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = torch.tensor(init_scale, dtype=torch.float64)
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
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                if not torch.isfinite(p.grad).all():
                    found_inf = True
        self._found_inf = found_inf
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
            self._scale = self._scale * self.backoff_factor
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps >= self.growth_interval:
                self._scale = self._scale * self.growth_factor
                self._good_steps = 0
        self._unscaled = False
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return self._scale.item()
'''),
        ("update() resets the inf flag but not the 'already unscaled' flag, so later steps skip unscaling", '''class LossScaler:
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
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self._scale)
                if not torch.isfinite(p.grad).all():
                    found_inf = True
        self._found_inf = found_inf
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
            if self._good_steps >= self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._found_inf = False

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
    ],
    "saved_bytes": [
        ("leaves out the parameters by tensor identity, so the transposed weight views still count", '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    params = list(model.parameters())
    storages = []
    for t in packed:
        if any(t is p for p in params):
            continue
        storage = t.untyped_storage()
        if not any(storage is s for s in storages):
            storages.append(storage)
    total = sum(s.nbytes() for s in storages)
    del output
    return int(total)
'''),
    ],
    "checkpointed": [
        ("cuts pieces with range(0, len, size): leftover layers become an extra segment, one more checkpointed", '''def run_checkpointed(layers, x, segments):
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
        ("restores the mode after the loop but without try/finally, so an exception leaves it in eval", '''def predict(model, x, batch_size=256):
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
    "loss_scaler": [
        ("multiplies by a reciprocal (as GradScaler does), per-iteration state in a dict, explicit ==", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._iteration = {}

    def scale(self, loss):
        """The loss times the current scale."""
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        """Divide every gradient by the scale, in place; remember if any is inf or NaN."""
        inv_scale = 1.0 / self._scale
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        for g in grads:
            g.mul_(inv_scale)
        self._iteration["found_inf"] = any(not bool(torch.isfinite(g).all()) for g in grads)

    def step(self, optimizer):
        """Unscale (once per iteration), then step unless a gradient is inf or NaN."""
        if "found_inf" not in self._iteration:
            self.unscale_(optimizer)
        if self._iteration["found_inf"]:
            return None
        return optimizer.step()

    def update(self):
        """Back off after inf/NaN; grow after growth_interval good steps in a row."""
        found_inf = self._iteration.get("found_inf", False)
        self._iteration = {}
        if found_inf:
            self._scale = self._scale * self._backoff_factor
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            self._scale = self._scale * self._growth_factor
            self._growth_tracker = 0

    def get_scale(self):
        """The current scale, a Python float."""
        return float(self._scale)
'''),
    ],
    "saved_bytes": [
        ("counts inside pack: storages kept in a dict keyed by id (objects held alive), parameters pre-registered", '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    parameter_storages = {}
    for p in model.parameters():
        s = p.untyped_storage()
        parameter_storages[id(s)] = s
    activation_storages = {}

    def pack(t):
        s = t.untyped_storage()
        if id(s) not in parameter_storages:
            activation_storages[id(s)] = s
        return t

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        output = model(x)
        total = 0
        for s in activation_storages.values():
            total += s.nbytes()
    del output
    return int(total)
'''),
    ],
    "predict": [
        ("ExitStack registers model.train(was_training) first, then enters inference_mode; x.split for the batches", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    with contextlib.ExitStack() as stack:
        stack.callback(model.train, model.training)
        model.eval()
        stack.enter_context(torch.inference_mode())
        return torch.cat([model(chunk) for chunk in x.split(batch_size)])
'''),
    ],
}
