"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'sigmoid': [
        ('It saves the input x and recomputes sigma(x) in backward, where the text requires saving the output y (worth the full point).', '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        ctx.save_for_backward(x)
        return 1.0 / (1.0 + torch.exp(-x))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        (x,) = ctx.saved_tensors
        y = 1.0 / (1.0 + torch.exp(-x))
        return grad_output * y * (1 - y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
        ("It computes in float64 for stability and returns that, so a float32 input gives a float64 output instead of one in x's dtype.", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        y = 1.0 / (1.0 + torch.exp(-x.double()))
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
    'my_relu': [
        ("backward zeroes grad_output in place and returns it, so the caller's (possibly shared) grad_output is changed; the text asks for a new tensor.", '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        (x,) = ctx.saved_tensors
        grad_output[x <= 0] = 0
        return grad_output
'''),
        ('forward keeps x as a ctx attribute (ctx.x = x) instead of through ctx.save_for_backward, which the text says is checked.', '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.x = x
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        x = ctx.x
        return grad_output * (x > 0)
'''),
    ],
    'softplus': [
        ('It writes the stable formula with torch.log(1 + exp(-|x|)) instead of torch.log1p, so for very negative x (float64, -50 and below) the value rounds to 0 and loses the relative precision the text demands.', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log(1 + torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
'''),
        ('The max(x, 0) is taken against torch.zeros(x.shape, dtype=x.dtype), a CPU tensor, so the op pins a tensor to the CPU and fails on meta (or CUDA) inputs.', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        ctx.save_for_backward(x)
        return torch.maximum(x, torch.zeros(x.shape, dtype=x.dtype)) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
'''),
    ],
    'ck_sigmoid': [
        ('For negative x it computes sigma as 1 - 1/(1 + e), which cancels to 0 for x below about -37 instead of e/(1 + e), losing the relative accuracy required at x = -550 .. -700.', '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), 1 - 1 / (1 + e)).astype(x.dtype)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ('backward returns y * (1 - y) without multiplying by grad_output, which looks right under .sum() but not inside a bigger graph.', '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return y * (1 - y)
'''),
    ],
    'my_gradcheck': [
        ('It uses the forward difference (f(x + eps) - f(x)) / eps instead of the central difference the text asks for, so it rejects the right backward of 500 * x**2 at x = 0.', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    out = fn(*inputs)
    v = torch.randn_like(out)
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    with torch.no_grad():
        base = (v * fn(*inputs)).sum().item()
        for k, (t, a) in enumerate(zip(checked, analytic)):
            if a is None:
                a = torch.zeros_like(t)
            flat, a_flat = t.view(-1), a.reshape(-1)
            for i in range(flat.numel()):
                old = flat[i].item()
                flat[i] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[i] = old
                numerical = (plus - base) / eps
                if abs(a_flat[i].item() - numerical) > atol + rtol * abs(numerical):
                    print(f"input {k}, element {i}: backward {a_flat[i].item()}, finite differences {numerical}")
                    return False
    return True
'''),
        ('The tolerance scales rtol by the analytical value |a| instead of the numerical one |n|, breaking "|a - n| <= atol + rtol * |n|" (a backward 24% off passes with rtol=0.2).', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    out = fn(*inputs)
    v = torch.randn_like(out)
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    with torch.no_grad():
        for k, (t, a) in enumerate(zip(checked, analytic)):
            if a is None:
                a = torch.zeros_like(t)
            flat, a_flat = t.view(-1), a.reshape(-1)
            for i in range(flat.numel()):
                old = flat[i].item()
                flat[i] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[i] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[i] = old
                numerical = (plus - minus) / (2 * eps)
                if abs(a_flat[i].item() - numerical) > atol + rtol * abs(a_flat[i].item()):
                    print(f"input {k}, element {i}: backward {a_flat[i].item()}, finite differences {numerical}")
                    return False
    return True
'''),
    ],
}

RIGHT = {
    'sigmoid': [
        ('A stable forward from e = exp(-|x|) with torch.where (never exponentiates a positive number); still saves the output y.', '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        e = torch.exp(-torch.abs(x))
        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (y - y * y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    'softplus': [
        ('Uses torch.where for max(x, 0) and computes sigma in backward from e = exp(-|x|) as the text allows, instead of torch.sigmoid.', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        e = torch.exp(-x.abs())
        return torch.where(x > 0, x, torch.zeros_like(x)) + torch.log1p(e)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        sig = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return sig * grad_output
'''),
    ],
    'my_gradcheck': [
        ("Never touches the caller's tensors: each perturbation is made on detached clones passed to fn, and the comparison is done on whole tensors with torch.le.", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    out = fn(*inputs)
    v = torch.rand_like(out) * 2 - 1
    positions = [i for i, t in enumerate(inputs) if t.requires_grad]
    if not positions:
        return True
    analytic = torch.autograd.grad(out, [inputs[i] for i in positions], v, allow_unused=True)
    base = [t.detach().clone() for t in inputs]

    def weighted(args):
        with torch.no_grad():
            return float((v * fn(*args)).sum())

    for i, a in zip(positions, analytic):
        a = torch.zeros_like(base[i]) if a is None else a.detach()
        numerical = torch.zeros_like(base[i])
        for index in range(base[i].numel()):
            step = torch.zeros_like(base[i]).view(-1)
            step[index] = eps
            step = step.view(base[i].shape)
            plus = [b + step if j == i else b for j, b in enumerate(base)]
            minus = [b - step if j == i else b for j, b in enumerate(base)]
            numerical.view(-1)[index] = (weighted(plus) - weighted(minus)) / (2 * eps)
        good = torch.le((a - numerical).abs(), atol + rtol * numerical.abs())
        if not bool(good.all()):
            bad = int((~good).view(-1).nonzero()[0])
            print(f"input {i}, element {bad}: backward {a.view(-1)[bad].item()}, finite differences {numerical.view(-1)[bad].item()}")
            return False
    return True
'''),
    ],
}
