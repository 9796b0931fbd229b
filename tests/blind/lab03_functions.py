"""Lab 03: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "sigmoid": [
        ("backward drops the chain rule: returns y * (1 - y) without multiplying by grad_output", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        e = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return y * (1 - y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
        ("builds a ones tensor with only dtype=x.dtype, so it lives on the CPU whatever x's device (meta/CUDA break)", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        one = torch.ones(x.shape, dtype=x.dtype)
        e = torch.exp(-x.abs())
        y = torch.where(x >= 0, one / (one + e), e / (one + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "my_relu": [
        ("reads 'the upstream gradient where ... > 0' as a mask on grad_output's sign instead of on x", '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: the upstream gradient where it is positive, else 0 (a new tensor)."""
        (x,) = ctx.saved_tensors
        return torch.where(grad_output > 0, grad_output, torch.zeros_like(grad_output))
'''),
        ("masks grad_output in place with mul_ and returns it, corrupting the caller's upstream gradient", '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0."""
        (x,) = ctx.saved_tensors
        return grad_output.mul_(x > 0)
'''),
    ],
    "softplus": [
        ("max-shifted log-sum-exp with torch.log instead of log1p: log(1 + 1e-22) rounds to 0 for very negative x", '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(exp(0) + exp(x)) with the max shifted out; save x."""
        ctx.save_for_backward(x)
        m = x.clamp(min=0)
        return m + torch.log(torch.exp(-m) + torch.exp(x - m))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        s = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return grad_output * s
'''),
        ("sigmoid in backward as e / (1 + e) with e = exp(-|x|) but no where(): right only for x <= 0 (gives 1 - sigma for x > 0)", '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        return grad_output * (e / (1 + e))
'''),
    ],
    "ck_sigmoid": [
        ("fills a np.empty(x.shape) buffer, which is float64: float32 inputs come back as float64", '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x); save the output."""
        y = np.empty(x.shape)
        pos = x >= 0
        y[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
        ex = np.exp(x[~pos])
        y[~pos] = ex / (1.0 + ex)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ("backward turns the saved output into y * (1 - y) in place (y *= 1 - y), overwriting the values forward returned", '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        y *= 1 - y                     # reuse the saved array, no temporary
        return grad_output * y
'''),
    ],
    "my_gradcheck": [
        ("return inside the loop over inputs: only the first input that requires grad is ever compared", '''import itertools


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [x for x in inputs if x.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    with torch.no_grad():
        for k, (x, a) in enumerate(zip(checked, analytic)):
            a = torch.zeros_like(x) if a is None else a
            numeric = torch.zeros_like(x)
            for idx in itertools.product(*[range(s) for s in x.shape]):
                old = x[idx].item()
                x[idx] = old + eps
                f_plus = (v * fn(*inputs)).sum().item()
                x[idx] = old - eps
                f_minus = (v * fn(*inputs)).sum().item()
                x[idx] = old
                numeric[idx] = (f_plus - f_minus) / (2 * eps)
            bad = (a - numeric).abs() > atol + rtol * numeric.abs()
            if bad.any():
                print("input", k, "disagrees at", bad.nonzero()[0].tolist())
            return not bool(bad.any())
'''),
        
    ],
}

RIGHT = {
    "my_relu": [
        ("saves the output y instead of x and masks on y > 0 with torch.where (fresh tensor)", '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0); the output alone tells backward where x > 0."""
        y = x.clamp(min=0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0 (equivalently y > 0), else 0, as a new tensor."""
        (y,) = ctx.saved_tensors
        return torch.where(y > 0, grad_output, torch.zeros_like(grad_output))
'''),
    ],
    "softplus": [
        ("torch.maximum(x, zeros_like(x)) + log1p(exp(-|x|)); sigmoid from e = exp(-|x|) with where, both branches written out", '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) + log1p(exp(-|x|)); keep only the input for backward."""
        ctx.save_for_backward(x)
        positive_part = torch.maximum(x, torch.zeros_like(x))
        return positive_part + torch.log1p(torch.exp(-torch.abs(x)))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x), sigmoid computed without overflow."""
        (x,) = ctx.saved_tensors
        e = torch.exp(-torch.abs(x))          # in (0, 1]: never overflows
        denom = 1 + e
        sig = torch.where(x >= 0, 1 / denom, e / denom)
        return grad_output * sig
'''),
    ],
    "my_gradcheck": [
        ("never touches the caller's tensors: works on detached clones, builds x +/- eps*e_i out of place, seeded random projection", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    work = [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs]
    wanted = [k for k, t in enumerate(work) if t.requires_grad]
    if not wanted:
        return True
    out = fn(*work)
    gen = torch.Generator().manual_seed(1234)
    v = torch.randn(out.shape, generator=gen, dtype=out.dtype).to(out.device)
    analytic = torch.autograd.grad(out, [work[k] for k in wanted], v, allow_unused=True)

    def projected(args):
        with torch.no_grad():
            return (v * fn(*args)).sum().item()

    for k, grad in zip(wanted, analytic):
        base = work[k].detach()
        grad = torch.zeros_like(base) if grad is None else grad.detach()
        flat_grad = grad.reshape(-1)
        for j in range(base.numel()):
            bump = torch.zeros(base.numel(), dtype=base.dtype, device=base.device)
            bump[j] = eps
            bump = bump.reshape(base.shape)
            plus, minus = list(work), list(work)
            plus[k], minus[k] = base + bump, base - bump
            numerical = (projected(plus) - projected(minus)) / (2 * eps)
            analytical = flat_grad[j].item()
            if abs(analytical - numerical) > atol + rtol * abs(numerical):
                print(f"input {k}, element {j}: backward {analytical:.6g}, finite differences {numerical:.6g}")
                return False
    return True
'''),
        ("undoes each perturbation arithmetically (+eps, -2eps, +eps): the text allows drift to rounding (first written as wrong; the text was unclear)", '''import itertools


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [x for x in inputs if x.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    ok = True
    with torch.no_grad():
        for k, (x, a) in enumerate(zip(checked, analytic)):
            a = torch.zeros_like(x) if a is None else a
            for idx in itertools.product(*[range(s) for s in x.shape]):
                x[idx] += eps
                f_plus = (v * fn(*inputs)).sum().item()
                x[idx] -= 2 * eps
                f_minus = (v * fn(*inputs)).sum().item()
                x[idx] += eps                 # back where it was
                n = (f_plus - f_minus) / (2 * eps)
                if abs(a[idx].item() - n) > atol + rtol * abs(n):
                    if ok:
                        print("input", k, "element", idx, "backward", a[idx].item(), "numerical", n)
                    ok = False
    return ok
'''),
    ],
}
