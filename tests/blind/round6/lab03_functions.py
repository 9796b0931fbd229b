"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "sigmoid": [
        ("forward casts the input with x.float() 'so integer inputs work': a float64 input gives a float32 output (and float32-precision gradient), not x's dtype", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        x = x.float()  # make sure we compute on floating point numbers
        y = 1.0 / (1.0 + torch.exp(-x))
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
        ("forward written as exp(x) / (1 + exp(x)): inf / inf = NaN values (and NaN gradients) for large positive x (x > 88.7 in float32, > 709 in float64)", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        e = torch.exp(x)
        y = e / (1 + e)
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
        ("backward zeroes the gradient in place with grad_output.masked_fill_(...) and returns it: the caller's grad_output (shared with other nodes) is modified, no new tensor", '''class MyReLU(torch.autograd.Function):
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
        return grad_output.masked_fill_(x <= 0, 0.0)
'''),
        ("saves the output y and masks with y >= 0 (clamp's convention at the kink): y is never negative, so the upstream gradient also passes where x < 0", '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        y = x.clamp(min=0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        (y,) = ctx.saved_tensors
        return torch.where(y >= 0, grad_output, torch.zeros_like(grad_output))
'''),
    ],
    "softplus": [
        ("stable max/abs rewrite but torch.log(1 + e) instead of torch.log1p(e): for very negative x (float64, x <= -37) 1 + e rounds to 1 and the value is 0 instead of ~exp(x)", '''class Softplus(torch.autograd.Function):
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
        ("saves the output y and uses sigmoid(x) = 1 - exp(-y) in backward: for very negative x, y is tiny, exp(-y) rounds to 1 and the gradient is 0 instead of ~exp(x) (relative accuracy lost)", '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # exp(-softplus(x)) = 1 / (1 + exp(x)) = 1 - sigmoid(x)
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    "ck_sigmoid": [
        ("forward fills a np.zeros(x.shape) buffer by masks: the result is always float64, a float32 input does not get a float32 output", '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        y = np.zeros(x.shape)
        pos = x >= 0
        y[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
        e = np.exp(x[~pos])
        y[~pos] = e / (1.0 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
    ],
    "my_gradcheck": [
        ("compares with torch.allclose(numerical, analytical, ...): the arguments are swapped, so the tolerance is atol + rtol * |analytical|, and a backward 24% too large passes with rtol=0.2", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytical = torch.autograd.grad(out, checked, v, allow_unused=True)
    for k, (t, a) in enumerate(zip(checked, analytical)):
        if a is None:
            a = torch.zeros_like(t)
        numerical = torch.zeros_like(t)
        with torch.no_grad():
            for idx in np.ndindex(*t.shape):
                t[idx] += eps
                plus = (v * fn(*inputs)).sum()
                t[idx] -= 2 * eps
                minus = (v * fn(*inputs)).sum()
                t[idx] += eps
                numerical[idx] = (plus - minus) / (2 * eps)
        if not torch.allclose(numerical, a, rtol=rtol, atol=atol):
            print(f"input {k}: analytical {a.flatten().tolist()} vs numerical {numerical.flatten().tolist()}")
            return False
    return True
'''),
        ("perturbs t.detach().reshape(-1), which is a view only for contiguous tensors: for a non-contiguous input it is a copy, every finite difference is 0, and a right backward is rejected", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    out = fn(*inputs)
    v = torch.randn_like(out)
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    grads = torch.autograd.grad(out, checked, v, allow_unused=True)
    for k, (t, g) in enumerate(zip(checked, grads)):
        g = torch.zeros_like(t) if g is None else g
        flat = t.detach().reshape(-1)
        analytical = g.reshape(-1)
        for i in range(flat.numel()):
            old = flat[i].item()
            flat[i] = old + eps
            plus = (v * fn(*inputs)).sum().item()
            flat[i] = old - eps
            minus = (v * fn(*inputs)).sum().item()
            flat[i] = old
            numerical = (plus - minus) / (2 * eps)
            a = analytical[i].item()
            if abs(a - numerical) > atol + rtol * abs(numerical):
                print(f"input {k}, element {i}: analytical {a}, numerical {numerical}")
                return False
    return True
'''),
        ("works on requires_grad_() copies of all inputs, so inputs without requires_grad are checked too instead of skipped: a right Function with a constant input (backward returns None or a dummy there) is rejected", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    # Work on copies, so the caller's tensors are never touched.
    xs = [t.detach().contiguous().clone().requires_grad_() for t in inputs]
    out = fn(*xs)
    v = torch.randn_like(out)
    grads = torch.autograd.grad(out, xs, v, allow_unused=True)
    with torch.no_grad():
        for k, (x, g) in enumerate(zip(xs, grads)):
            g = torch.zeros_like(x) if g is None else g
            for i in range(x.numel()):
                flat = x.view(-1)
                flat[i] += eps
                plus = (v * fn(*xs)).sum()
                flat[i] -= 2 * eps
                minus = (v * fn(*xs)).sum()
                flat[i] += eps
                numerical = (plus - minus) / (2 * eps)
                a = g.reshape(-1)[i]
                if (a - numerical).abs() > atol + rtol * numerical.abs():
                    print(f"input {k}, element {i}: analytical {a.item()}, numerical {numerical.item()}")
                    return False
    return True
'''),
    ],
}

RIGHT = {
    "sigmoid": [
        ("stable forward: e = exp(-|x|) and torch.where(x >= 0, 1/(1+e), e/(1+e)), so no exp ever overflows; backward written with torch.mul", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        e = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        y, = ctx.saved_tensors
        return torch.mul(grad_output, torch.mul(y, 1 - y))


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "ck_sigmoid": [
        ("fills np.empty_like(x) (keeps the dtype) through boolean masks, each half with its own non-overflowing formula", '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        y = np.empty_like(x)
        nonneg = x >= 0
        y[nonneg] = 1 / (1 + np.exp(-x[nonneg]))
        e = np.exp(x[~nonneg])
        y[~nonneg] = e / (1 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * (y * (1 - y))
'''),
    ],
    "my_gradcheck": [
        ("walks multi-indices with np.ndindex and perturbs t[idx] directly under torch.no_grad() (works for non-contiguous inputs), restores the saved element exactly", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    positions = [k for k, t in enumerate(inputs) if t.requires_grad]
    if not positions:
        return True
    out = fn(*inputs)
    v = torch.randn(out.shape, dtype=out.dtype, device=out.device)
    analytical = torch.autograd.grad(out, [inputs[k] for k in positions], v,
                                     allow_unused=True)

    def projected():
        return (v * fn(*inputs)).sum().item()

    for k, a in zip(positions, analytical):
        t = inputs[k]
        if a is None:
            a = torch.zeros_like(t)
        for idx in np.ndindex(*t.shape):
            with torch.no_grad():
                saved = t[idx].clone()
                t[idx] = saved + eps
                f_plus = projected()
                t[idx] = saved - eps
                f_minus = projected()
                t[idx] = saved
            n = (f_plus - f_minus) / (2 * eps)
            a_i = a[idx].item()
            if not abs(a_i - n) <= atol + rtol * abs(n):
                print(f"input {k}, element {idx}: analytical {a_i:.6g}, numerical {n:.6g}")
                return False
    return True
'''),
    ],
}

SURVIVORS = {
    ("my_gradcheck", 1): "not a mistake the text defines: the inputs are 'a list of float64 "
                         "tensors' and nothing says they may be non-contiguous. Every input "
                         "the exercise (and the notebook's own demo) hands over is contiguous, "
                         "and perturbing a flat view (t.data.view(-1), as the course's solution, "
                         "two accepted alternatives and round 5's right answer do) is the "
                         "ordinary way to write it; a non-contiguous case would take points "
                         "from all of those, so the check does not plant one",
}
