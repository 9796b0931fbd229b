"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 5)."""

WRONG = {
    "sigmoid": [
        ("saves the input x and recomputes sigma(x) in backward: right gradients, but the output y is not what is saved",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node."""

    @staticmethod
    def _sigma(x):
        e = torch.exp(-x.abs())
        return torch.where(x >= 0, 1 / (1 + e), e / (1 + e))

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return Sigmoid._sigma(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        y = Sigmoid._sigma(x)
        return grad_output * y * (1 - y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
        ("backward returns y * (1 - y) without multiplying by grad_output: right only when the upstream gradient is all ones (out.sum())",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        e = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return y * (1 - y)   # d sigma / dx


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "my_relu": [
        ("backward zeroes grad_output in place where x <= 0 and returns it: the caller's grad_output (shared with other nodes) is modified",
         '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_output[x <= 0] = 0
        return grad_output
'''),
        ("forward uses torch.where with torch.zeros(x.shape, dtype=x.dtype): the zeros are created on the CPU, so a meta (or GPU) input fails",
         '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        positive = x > 0
        ctx.save_for_backward(positive)
        return torch.where(positive, x, torch.zeros(x.shape, dtype=x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (positive,) = ctx.saved_tensors
        return grad_output * positive
'''),
    ],
    "softplus": [
        ("stable forward but with torch.log(1 + exp(-|x|)) instead of log1p: for very negative x, 1 + tiny rounds to 1 and the value becomes 0",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log(1 + torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
'''),
        ("saves the output y and computes sigma(x) = 1 - exp(-y): exact in theory, but for very negative x the 1 - (1 - y) cancels and the gradient is 0",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        y = torch.relu(x) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)      # like Sigmoid: save the output
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        # exp(-softplus(x)) = 1 - sigma(x)
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    "ck_sigmoid": [
        ("np.where with a float64 np.ones(x.shape) branch: a float32 input gives a float64 output",
         '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, np.ones(x.shape), e) / (1 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
    ],
    "my_gradcheck": [
        ("tolerance scaled by the analytical value (atol + rtol * |a|) instead of the numerical one: rtol used in the wrong place",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    for i, (t, a) in enumerate(zip(checked, analytic)):
        a = torch.zeros_like(t) if a is None else a
        flat, a_flat = t.data.view(-1), a.reshape(-1)
        for j in range(flat.numel()):
            old = flat[j].item()
            with torch.no_grad():
                flat[j] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[j] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[j] = old
            n = (plus - minus) / (2 * eps)
            an = a_flat[j].item()
            if abs(an - n) > atol + rtol * abs(an):
                print(f"input {i}, element {j}: analytical {an}, numerical {n}")
                return False
    return True
'''),
        ("projects with v = ones (differentiates out.sum()): a backward that ignores grad_output passes",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    analytic = torch.autograd.grad(out.sum(), checked, allow_unused=True)
    for i, (t, a) in enumerate(zip(checked, analytic)):
        a = torch.zeros_like(t) if a is None else a
        flat, a_flat = t.data.view(-1), a.reshape(-1)
        for j in range(flat.numel()):
            old = flat[j].item()
            with torch.no_grad():
                flat[j] = old + eps
                plus = fn(*inputs).sum().item()
                flat[j] = old - eps
                minus = fn(*inputs).sum().item()
                flat[j] = old
            n = (plus - minus) / (2 * eps)
            an = a_flat[j].item()
            if abs(an - n) > atol + rtol * abs(n):
                print(f"input {i}, element {j}: analytical {an}, numerical {n}")
                return False
    return True
'''),
        ("analytical side via (v * out).sum().backward(): the inputs are left with a .grad afterwards",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    for t in checked:
        t.grad = None
    out = fn(*inputs)
    v = torch.randn_like(out)
    (v * out).sum().backward()
    ok = True
    for i, t in enumerate(checked):
        a = torch.zeros_like(t) if t.grad is None else t.grad.clone()
        flat, a_flat = t.data.view(-1), a.reshape(-1)
        for j in range(flat.numel()):
            old = flat[j].item()
            with torch.no_grad():
                flat[j] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[j] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[j] = old
            n = (plus - minus) / (2 * eps)
            if abs(a_flat[j].item() - n) > atol + rtol * abs(n):
                print(f"input {i}, element {j}: analytical {a_flat[j].item()}, numerical {n}")
                ok = False
                break
        if not ok:
            break
    return ok
'''),
    ],
}

RIGHT = {
    "sigmoid": [
        ("forward with torch.where over both plain formulas (the unselected branch may be inf/NaN, never used); a Python-scalar 1 for 1 - y",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        pos = 1.0 / (1.0 + torch.exp(-x))
        neg = torch.exp(x) / (1.0 + torch.exp(x))
        y = torch.where(x >= 0, pos, neg)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * (y - y * y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "softplus": [
        ("saves the output y and gets sigma(x) as -expm1(-y), since exp(-softplus(x)) = 1 - sigma(x); expm1 keeps the tiny values exact",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        y = torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)
'''),
    ],
    "my_gradcheck": [
        ("one input and one element at a time on clones under torch.no_grad(), analytical side per input with torch.autograd.grad and a random v",
         '''def _numerical(fn, inputs, index, v, eps):
    """Central differences of sum(v * fn(...)) w.r.t. inputs[index], element by element."""
    base = [t.detach() for t in inputs]
    target = base[index]
    grad = torch.zeros_like(target)
    with torch.no_grad():
        for j in range(target.numel()):
            e = torch.zeros_like(target).view(-1)
            e[j] = eps
            e = e.view_as(target)
            plus = list(base); plus[index] = target + e
            minus = list(base); minus[index] = target - e
            grad.view(-1)[j] = ((v * fn(*plus)).sum() - (v * fn(*minus)).sum()) / (2 * eps)
    return grad


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    out = fn(*inputs)
    v = torch.randn(out.shape, dtype=out.dtype, device=out.device)
    for index, t in enumerate(inputs):
        if not t.requires_grad:
            continue
        (analytic,) = torch.autograd.grad(out, t, v, retain_graph=True, allow_unused=True)
        if analytic is None:
            analytic = torch.zeros_like(t)
        numeric = _numerical(fn, inputs, index, v, eps)
        bad = (analytic - numeric).abs() > atol + rtol * numeric.abs()
        if bad.any():
            j = int(bad.view(-1).nonzero()[0])
            print(f"input {index}, element {j}: analytical {analytic.view(-1)[j].item()}, "
                  f"numerical {numeric.view(-1)[j].item()}")
            return False
    return True
'''),
    ],
}
