"""Realistic wrong answers for lab09_performance: each must lose points in its checks cell.
ALTERNATIVES: right answers written differently, which must keep full marks."""

_BF16_HEAD = '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    ops = {"matmul": lambda a, b, x: a @ b,
           "sum": lambda a, b, x: x.sum(dim=-1),
           "softmax": lambda a, b, x: torch.softmax(x, dim=-1)}
'''


def _bf16(error: str, autocast_dtype: str = "torch.bfloat16", reference: str = "op(a, b, x)") -> str:
    return _BF16_HEAD + f'''
    def error(got, ref):
        return {error}

    report = {{}}
    for name, op in ops.items():
        ref = {reference}
        with torch.autocast(device_type=a.device.type, dtype={autocast_dtype}):
            automatic = op(a, b, x)
        low = op(a.bfloat16(), b.bfloat16(), x.bfloat16())
        report[name] = {{"autocast dtype": str(automatic.dtype),
                        "autocast error": error(automatic, ref),
                        "bf16 error": error(low, ref)}}
    return report
'''


_RELATIVE = "((got.float() - ref).abs().max() / ref.abs().max()).item()"

_SCALER = '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self._scale = float(init_scale)
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.growth_interval = growth_interval
        self._good_steps = 0
        self._found_inf = None

    def scale(self, loss):
        return loss * self._scale

    @torch.no_grad()
    def unscale_(self, optimizer):
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self._scale)
                    found_inf = found_inf or not bool(torch.isfinite(p.grad).all())
        self._found_inf = found_inf

    def step(self, optimizer):
        if self._found_inf is None:
            self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()

    def update(self):
        if self._found_inf:
            self._scale *= self.backoff_factor
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps == self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0
        self._found_inf = None

    def get_scale(self):
        return float(self._scale)
'''


def _scaler(old: str, new: str) -> str:
    assert old in _SCALER, old
    return _SCALER.replace(old, new)


_SAVED_HEAD = '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
'''

_CKPT_HEAD = '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    def run(piece):
        def forward(h):
            for layer in piece:
                h = layer(h)
            return h
        return forward

'''

_PREDICT_HEAD = '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
'''

_READ_HEAD = '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
'''


def _read(costliest: str = "max(ops, key=lambda row: row.self_cpu_time_total)",
          ops: str = '[row for row in rows.values() if row.key.startswith("aten::")]',
          wait: str = 'rows["wait for batch"].cpu_time_total', share: str = "wait / (wait + train)",
          ms: str = "costliest.self_cpu_time_total / 1e3",
          keep: str = " if row.device_type == DeviceType.CPU") -> str:
    return _READ_HEAD + f'''    from torch.autograd import DeviceType

    rows = {{row.key: row for row in prof.key_averages(){keep}}}
    ops = {ops}
    costliest = {costliest}
    wait = {wait}
    train = rows["train step"].cpu_time_total
    return {{"costliest op": costliest.key, "self CPU ms": {ms},
            "waiting share": {share}}}
'''


def _loader(*, order: str = "sampler=loader.sampler", keep: str = ", drop_last=loader.drop_last, "
            "collate_fn=loader.collate_fn", workers: str = "num_workers=num_workers, "
            "persistent_workers=True", pin: str = 'device.type == "cuda"') -> str:
    return f'''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    return DataLoader(loader.dataset, batch_size=loader.batch_size,
                      {order}{keep},
                      {workers}, pin_memory={pin})
'''


MUTANTS = {
    "read_profile": [
        ("sorts by CPU total, which counts what a row calls: aten::linear outranks its addmm",
         _read(costliest="max(ops, key=lambda row: row.cpu_time_total)")),
        ("takes the top row of the table without keeping to aten:: operators",
         _read(ops="list(rows.values())")),
        ("the longest single call in prof.events(), not the row that adds up all calls",
         _read(costliest='max((e for e in prof.events() if e.name.startswith("aten::")), '
                         'key=lambda e: e.self_cpu_time_total)')),
        (("one row per key of all devices: on a GPU the GPU's row of each region, whose CPU "
          "time is 0, replaces the CPU's"), _read(keep="")),
        ("counts the wait by the self time of `wait for batch`, not its CPU total",
         _read(wait='rows["wait for batch"].self_cpu_time_total')),
        ("counts the wait by the DataLoader row: the copies to the device are left out",
         _read(wait="next(row for key, row in rows.items() "
                    'if key.startswith("enumerate(DataLoader)")).cpu_time_total')),
        ("divides the wait by the training time only", _read(share="wait / train")),
        ("reports microseconds as milliseconds", _read(ms="costliest.self_cpu_time_total")),
    ],
    "faster_loader": [
        ("no workers: the batches are still prepared in the main process",
         _loader(workers="persistent_workers=False")),
        ("pins memory on every device", _loader(pin="True")),
        ("pins memory when this machine has a GPU, whatever the device",
         _loader(pin="torch.cuda.is_available()")),
        ("pins memory on every device but the CPU (the meta device too)",
         _loader(pin='device.type != "cpu"')),
        ("compares with torch.device('cuda'): cuda:1 gets no pinned memory",
         _loader(pin='device == torch.device("cuda")')),
        ("no persistent workers: they start again at every epoch",
         _loader(workers="num_workers=num_workers")),
        ("shuffles whatever the given loader did", _loader(order="shuffle=True")),
        ("re-creates the order with shuffle=isinstance(sampler, RandomSampler): the loader's "
         "generator is lost", _loader(
             order="shuffle=isinstance(loader.sampler, torch.utils.data.RandomSampler)")),
        ("keeps the dataset and batch size only: drop_last and collate_fn are lost",
         _loader(keep="")),
    ],
    "bf16_report": [
        ("errors as 0-d tensors, not Python floats",
         _bf16("(got.float() - ref).abs().max() / ref.abs().max()")),
        ("autocasts to float16 instead of bfloat16", _bf16(_RELATIVE, "torch.float16")),
        ("absolute error, not relative to the largest value",
         _bf16("(got.float() - ref).abs().max().item()")),
        ("mean error instead of the largest",
         _bf16("((got.float() - ref).abs().mean() / ref.abs().max()).item()")),
        ("compares with the op on bf16 inputs instead of the float32 result",
         _bf16(_RELATIVE, reference="op(a.bfloat16(), b.bfloat16(), x.bfloat16()).float()")),
        ("a float64 reference: an op autocast keeps in float32 gets a rounding error, not 0",
         _bf16("((got.double() - ref).abs().max() / ref.abs().max()).item()",
               reference="op(a.double(), b.double(), x.double())")),
    ],
    "loss_scaler": [
        ("the default growth_interval is 1000, not GradScaler's 2000", _scaler(
            "growth_interval=2000):", "growth_interval=1000):")),
        ("the default growth_factor is 1.5, not GradScaler's 2.0", _scaler(
            "growth_factor=2.0,", "growth_factor=1.5,")),
        ("keeps counting good steps across an overflow (no reset)", _scaler(
            '''            self._scale *= self.backoff_factor
            self._good_steps = 0''', '''            self._scale *= self.backoff_factor''')),
        ("steps the optimizer even when a gradient is inf/NaN", _scaler(
            '''        if not self._found_inf:
            optimizer.step()''', '''        optimizer.step()''')),
        ("looks for inf only: torch.isinf misses NaN", _scaler(
            "found_inf or not bool(torch.isfinite(p.grad).all())",
            "found_inf or bool(torch.isinf(p.grad).any())")),
        ("step() unscales again after unscale_()", _scaler(
            '''        if self._found_inf is None:
            self.unscale_(optimizer)
        if not''', '''        self.unscale_(optimizer)
        if not''')),
        ("counts every step towards growth, skipped ones too", _scaler(
            '''        if self._found_inf:
            self._scale *= self.backoff_factor
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps == self.growth_interval:
                self._scale *= self.growth_factor
                self._good_steps = 0''', '''        self._good_steps += 1
        if self._found_inf:
            self._scale *= self.backoff_factor
        elif self._good_steps >= self.growth_interval:
            self._scale *= self.growth_factor
            self._good_steps = 0''')),
        ("unscale_ walks only the first parameter group", _scaler(
            '''        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:''', '''        for group in optimizer.param_groups[:1]:
            for p in group["params"]:
                if p.grad is not None:''')),
        ("unscales into a new tensor (p.grad = p.grad / scale), not in place", _scaler(
            "                    p.grad.div_(self._scale)",
            "                    p.grad = p.grad / self._scale")),
        ("unscales a copy: the optimizer steps with the scaled gradients", _scaler(
            '''                    p.grad.div_(self._scale)
                    found_inf = found_inf or not bool(torch.isfinite(p.grad).all())''',
            '''                    unscaled = p.grad / self._scale
                    found_inf = found_inf or not bool(torch.isfinite(unscaled).all())''')),
    ],
    "saved_bytes": [
        ("adds up every packed tensor: shared and parameter storages counted again", _SAVED_HEAD + '''    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return sum(sizes)
'''),
        ("tells storages apart by data_ptr(), which is 0 for every meta tensor", _SAVED_HEAD + '''    storages = []

    def pack(t):
        storages.append(t.untyped_storage())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    owned = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen, total = set(), 0
    for storage in storages:
        if storage.data_ptr() not in seen and storage.data_ptr() not in owned:
            seen.add(storage.data_ptr())
            total += storage.nbytes()
    return total
'''),
        ("counts the parameters' storages too", _SAVED_HEAD + '''    storages = []

    def pack(t):
        storages.append(t.untyped_storage())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    distinct = []
    for storage in storages:
        if not any(storage is seen for seen in distinct):
            distinct.append(storage)
    return sum(storage.nbytes() for storage in distinct)
'''),
        ("leaves out the buffers' storages too: BatchNorm's running statistics go uncounted",
         _SAVED_HEAD + '''    storages = []

    def pack(t):
        storages.append(t.untyped_storage())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    owned = [t.untyped_storage() for t in list(model.parameters()) + list(model.buffers())]
    distinct = []
    for storage in storages:
        if not any(storage is seen for seen in distinct + owned):
            distinct.append(storage)
    return sum(storage.nbytes() for storage in distinct)
'''),
        ("counts the bytes of the saved views, not of the storages they keep alive", _SAVED_HEAD + '''    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    owned = [p.untyped_storage() for p in model.parameters()]
    distinct, total = [], 0
    for t in saved:
        storage = t.untyped_storage()
        if not any(storage is seen for seen in distinct + owned):
            distinct.append(storage)
            total += t.numel() * t.element_size()
    return total
'''),
    ],
    "checkpointed": [
        ("checkpoints the last segment too", _CKPT_HEAD + '''    size = len(layers) // segments
    start = 0
    for _ in range(segments - 1):
        x = checkpoint(run(layers[start:start + size]), x, use_reentrant=False)
        start += size
    return checkpoint(run(layers[start:]), x, use_reentrant=False)
'''),
        ("preserve_rng_state=False: backward recomputes other dropout masks", _CKPT_HEAD + '''    size = len(layers) // segments
    start = 0
    for _ in range(segments - 1):
        x = checkpoint(run(layers[start:start + size]), x, use_reentrant=False,
                       preserve_rng_state=False)
        start += size
    return run(layers[start:])(x)
'''),
        ("reentrant checkpoint: weights get no gradient when x does not require grad", _CKPT_HEAD + '''    size = len(layers) // segments
    start = 0
    for _ in range(segments - 1):
        x = checkpoint(run(layers[start:start + size]), x, use_reentrant=True)
        start += size
    return run(layers[start:])(x)
'''),
        ("rounds the segment size up, so the last segment is short", _CKPT_HEAD + '''    size = -(-len(layers) // segments)
    start = 0
    for _ in range(segments - 1):
        x = checkpoint(run(layers[start:start + size]), x, use_reentrant=False)
        start += size
    return run(layers[start:])(x)
'''),
        ("drops the layers left over after the last full segment", _CKPT_HEAD + '''    size = len(layers) // segments
    start = 0
    for _ in range(segments - 1):
        x = checkpoint(run(layers[start:start + size]), x, use_reentrant=False)
        start += size
    return run(layers[start:start + size])(x)
'''),
    ],
    "predict": [
        ("torch.no_grad instead of inference_mode", _PREDICT_HEAD + '''    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return torch.cat([model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])
    finally:
        model.train(was_training)
'''),
        ("forgets model.eval(): dropout and batch statistics stay on", _PREDICT_HEAD + '''    with torch.inference_mode():
        return torch.cat([model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])
'''),
        ("restores the mode only when every forward pass succeeds (no finally)",
         _PREDICT_HEAD + '''    was_training = model.training
    model.eval()
    with torch.inference_mode():
        out = torch.cat([model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])
    model.train(was_training)
    return out
'''),
        ("leaves the model in eval mode", _PREDICT_HEAD + '''    model.eval()
    with torch.inference_mode():
        return torch.cat([model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])
'''),
        ("switches the model to train mode afterwards, whatever it was", _PREDICT_HEAD + '''    model.eval()
    try:
        with torch.inference_mode():
            return torch.cat([model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])
    finally:
        model.train()
'''),
        ("loses the last, partial batch", _PREDICT_HEAD + '''    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            return torch.cat([model(x[i * batch_size:(i + 1) * batch_size])
                              for i in range(max(1, len(x) // batch_size))])
    finally:
        model.train(was_training)
'''),
    ],
}

ALTERNATIVES = {
    "read_profile": [
        ("sorted table, share of the whole profile, rows looked up one by one", '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    table = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    top = next(e for e in table if e.key.startswith("aten::"))
    wait = next(e.cpu_time_total for e in table if e.key == "wait for batch")
    # The loop is all the profile holds: its two regions are the only top-level rows.
    total = sum(e.self_cpu_time_total for e in table)
    return dict([("costliest op", top.key), ("self CPU ms", top.self_cpu_time_total * 0.001),
                 ("waiting share", wait / total)])
'''),
        ("sums prof.events() by name", '''def read_profile(prof):
    """The costliest operator by self CPU time, and the share of the loop waiting for data."""
    self_us, total_us = {}, {}
    for event in prof.events():
        self_us[event.name] = self_us.get(event.name, 0) + event.self_cpu_time_total
        total_us[event.name] = total_us.get(event.name, 0) + event.cpu_time_total
    name = max((n for n in self_us if n.startswith("aten::")), key=self_us.get)
    wait, train = total_us["wait for batch"], total_us["train step"]
    return {"costliest op": name, "self CPU ms": self_us[name] / 1000,
            "waiting share": wait / (wait + train)}
'''),
    ],
    "faster_loader": [
        ("shuffle from the sampler's type, the generator kept, a deeper prefetch", '''def faster_loader(loader, device, num_workers=2):
    """loader's batches, prepared by worker processes; pinned memory only for a CUDA device."""
    from torch.utils.data import RandomSampler

    settings = dict(batch_size=loader.batch_size, drop_last=loader.drop_last,
                    collate_fn=loader.collate_fn, generator=loader.generator,
                    shuffle=isinstance(loader.sampler, RandomSampler))
    pin = str(device).startswith("cuda")
    return DataLoader(loader.dataset, num_workers=num_workers, persistent_workers=True,
                      prefetch_factor=4, pin_memory=pin, **settings)
'''),
    ],
    "bf16_report": [
        ("torch.amp.autocast, errors through torch.max and .to(torch.float32)", '''def bf16_report(a, b, x):
    """Output dtype under bf16 autocast, and errors against float32, per op class."""
    def rel(got, ref):
        return float(torch.max(torch.abs(got.to(torch.float32) - ref)) / torch.max(torch.abs(ref)))

    out = {}
    for name in ("matmul", "sum", "softmax"):
        def op(a, b, x):
            if name == "matmul":
                return torch.matmul(a, b)
            if name == "sum":
                return torch.sum(x, dim=x.dim() - 1)
            return x.softmax(-1)
        ref = op(a, b, x)
        with torch.amp.autocast(a.device.type, dtype=torch.bfloat16):
            auto = op(a, b, x)
        low = op(*(t.to(torch.bfloat16) for t in (a, b, x)))
        out[name] = {"autocast dtype": str(auto.dtype), "autocast error": rel(auto, ref),
                     "bf16 error": rel(low, ref)}
    return out
'''),
    ],
    "loss_scaler": [
        ("state per optimizer, multiply by the inverse, isnan/isinf, >= for growth", '''class LossScaler:
    """Dynamic loss scaling, step for step as torch.amp.GradScaler."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.current = init_scale
        self.factors = (growth_factor, backoff_factor)
        self.interval = growth_interval
        self.streak = 0
        self.unscaled = {}

    def scale(self, loss):
        return self.current * loss

    def unscale_(self, optimizer):
        bad = False
        inverse = 1.0 / self.current
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inverse)
                    if torch.isnan(p.grad).any() or torch.isinf(p.grad).any():
                        bad = True
        self.unscaled[id(optimizer)] = bad

    def step(self, optimizer):
        if id(optimizer) not in self.unscaled:
            self.unscale_(optimizer)
        if self.unscaled[id(optimizer)]:
            return None
        return optimizer.step()

    def update(self):
        if any(self.unscaled.values()):
            self.current = self.current * self.factors[1]
            self.streak = 0
        else:
            self.streak = self.streak + 1
            if self.streak >= self.interval:
                self.current = self.current * self.factors[0]
                self.streak = 0
        self.unscaled = {}

    def get_scale(self):
        return float(self.current)
'''),
    ],
    "saved_bytes": [
        ("storages kept in a dict by id, parameters removed afterwards", '''def saved_activation_bytes(model, x):
    """Bytes of the distinct storages the graph of model(x) saves for backward, parameters excluded."""
    kept = {}

    def pack(t):
        s = t.untyped_storage()
        kept[id(s)] = s          # the dict keeps s alive, so its id stays its own
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = model(x)
        for p in model.parameters():
            kept.pop(id(p.untyped_storage()), None)
        return sum(s.nbytes() for s in kept.values())
'''),
    ],
    "checkpointed": [
        ("segments as nn.Sequential, built first, then run", '''def run_checkpointed(layers, x, segments):
    """checkpoint_sequential's forward: all segments but the last under checkpoint."""
    size = len(layers) // segments
    cuts = [nn.Sequential(*layers[i * size:(i + 1) * size]) for i in range(segments - 1)]
    last = nn.Sequential(*layers[(segments - 1) * size:])
    for segment in cuts:
        x = checkpoint(segment, x, use_reentrant=False)
    return last(x)
'''),
    ],
    "predict": [
        ("torch.split and inference_mode as a decorator", '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    mode = model.training

    @torch.inference_mode()
    def run():
        return torch.cat([model(chunk) for chunk in torch.split(x, batch_size)], dim=0)

    model.train(False)
    try:
        out = run()
    finally:
        model.train(mode)
    return out
'''),
    ],
}
