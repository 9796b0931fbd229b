"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "sigmoid": [
        ("keeps the output for backward as a ctx attribute (ctx.y = y) instead of ctx.save_for_backward(y): the gradient is right, but nothing is saved through save_for_backward (the part worth 1 point), the output's version is never checked and ctx -> y -> grad_fn -> ctx is a reference cycle", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        y = 1.0 / (1.0 + torch.exp(-x))
        ctx.y = y                       # keep the output for backward
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        y = ctx.y
        return grad_output * y * (1 - y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
        ("backward reuses the saved output's memory (y.mul_(1 - y).mul_(grad_output)) to avoid allocating: the first gradient is right, but the caller's output tensor is overwritten with y(1-y)g and a second backward through the graph (retain_graph, gradcheck) fails the saved-tensor version check", '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        y = torch.reciprocal(1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        # y is not needed after this: reuse its memory instead of allocating two temporaries
        return y.mul_(1 - y).mul_(grad_output)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "my_relu": [
        ("forward clamps x in place (x.clamp_(min=0)) to save an allocation: the returned values and the gradient of relu(x) alone are right, but the caller's x is overwritten, so in 3 * relu(x) + x the second path sees the clamped x", '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.save_for_backward(x)
        return x.clamp_(min=0)          # no extra tensor of x's size

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0)
'''),
        ('the mask is made with the old idiom (x > 0).type(torch.FloatTensor), which is a float32 tensor on the CPU whatever x is: right values on the CPU, but the backward breaks on the meta device or a GPU (a fixed device written into the code)', '''class MyReLU(torch.autograd.Function):
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
        mask = (x > 0).type(torch.FloatTensor)
        return grad_output * mask
'''),
    ],
    "softplus": [
        ('the stable rewrite with torch.log(1 + exp(-|x|)) instead of torch.log1p: no overflow and right near 0, but for very negative x the 1 + tiny rounds to 1 and the value becomes 0 (x = -50 gives 0 instead of 1.9e-22), the precision the text asks log1p for', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        ctx.save_for_backward(x)
        return torch.clamp(x, min=0) + torch.log(1 + torch.exp(-torch.abs(x)))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
'''),
        ('saves the output y (the lesson of Exercise 1) and gets sigmoid(x) back as 1 - exp(-y): an exact identity, but for very negative x, exp(-y) rounds to 1 and the gradient loses all its digits (x = -50: 0 instead of 1.9e-22), breaking the relative 1e-6 accuracy of the gradients', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)        # like Sigmoid: backward from the output
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # y = log(1 + e^x)  =>  e^-y = 1 / (1 + e^x) = 1 - sigmoid(x)
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    "ck_sigmoid": [
        ("fills a preallocated np.zeros(x.shape) branch by branch: stable values, but np.zeros is float64, so a float32 input gives a float64 output (and gradient), not an array of x's dtype", '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        y = np.zeros(x.shape)
        pos = x >= 0
        y[pos] = 1 / (1 + np.exp(-x[pos]))
        e = np.exp(x[~pos])                 # x < 0 here: no overflow
        y[~pos] = e / (1 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ("backward computes y * (1 - y) in place in the saved array (y *= 1 - y) to skip a temporary: the saved array is the output's data, so after backward the forward output shows y(1-y) and a second backward gets a wrong gradient", '''class CkSigmoid(ck.autograd.Function):
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
        y *= 1 - y                      # reuse the saved buffer
        return grad_output * y
'''),
    ],
    "my_gradcheck": [
        ('compares with torch.allclose(numerical, analytical, rtol, atol), whose tolerance is atol + rtol * |second argument|: rtol is applied to the analytical value, not |numerical| as the text says, so a backward 24% too large passes with rtol = 0.2', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    out = fn(*inputs)
    v = torch.randn_like(out)                       # random vector-Jacobian product
    analytical = torch.autograd.grad(out, checked, v, allow_unused=True)
    for k, (t, a) in enumerate(zip(checked, analytical)):
        a = torch.zeros_like(t) if a is None else a
        numerical = torch.zeros_like(t)
        with torch.no_grad():
            for idx in np.ndindex(*t.shape):
                old = t[idx].item()
                t[idx] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                t[idx] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                t[idx] = old
                numerical[idx] = (plus - minus) / (2 * eps)
        if not torch.allclose(numerical, a.detach(), rtol=rtol, atol=atol):
            print(f"input {k}: largest difference {(numerical - a).abs().max().item():.3g}")
            return False
    return True
'''),
        ('one-sided (forward) differences (f(x + eps) - f(x)) / eps instead of the central differences the text asks for: error of order eps instead of eps^2, within rtol for most functions, so it usually agrees and nobody notices', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytical = torch.autograd.grad(out, checked, v, allow_unused=True)
    with torch.no_grad():
        f0 = (v * out).sum().item()              # f(x): one evaluation serves every element
        for k, (t, a) in enumerate(zip(checked, analytical)):
            a = torch.zeros_like(t) if a is None else a
            for idx in np.ndindex(*t.shape):
                old = t[idx].item()
                t[idx] = old + eps
                numerical = ((v * fn(*inputs)).sum().item() - f0) / eps
                t[idx] = old
                if abs(a[idx].item() - numerical) > atol + rtol * abs(numerical):
                    print(f"input {k}, element {idx}: backward {a[idx].item():.6g}, finite differences {numerical:.6g}")
                    return False
    return True
'''),
    ],
}

RIGHT = {
    "sigmoid": [
        ('the overflow-free two-branch form with torch.where on e = exp(-|x|) (never exponentiates a positive number) instead of 1 / (1 + exp(-x)); still saves the output and uses it in backward', '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        e = torch.exp(-x.abs())                      # in (0, 1]: never overflows
        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
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
        ('saves the output y rather than x and recovers sigmoid(x) = 1 - exp(-y) with -torch.expm1(-y), which keeps full relative precision for very negative x; forward is torch.maximum with a zeros_like plus log1p', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = torch.maximum(x, torch.zeros_like(x)) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # y = log(1 + e^x), so 1 - e^(-y) = e^x / (1 + e^x) = sigmoid(x);
        # expm1 keeps the digits that 1 - exp(-y) would cancel away when y is tiny
        return grad_output * -torch.expm1(-y)
'''),
    ],
    "my_gradcheck": [
        ("builds the full Jacobian both ways, row by row with one-hot grad_outputs through torch.autograd.grad and column by column with central differences on a detached copy (so the caller's inputs are never touched), then compares element by element", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    for k, t in enumerate(inputs):
        if not t.requires_grad:
            continue
        probe = t.detach().clone().requires_grad_(True)      # the caller's tensor stays as it is

        def f(value):
            args = list(inputs)
            args[k] = value
            return fn(*args)

        out = f(probe)
        rows = out.numel()
        # analytical Jacobian, one row per output element
        jac_a = torch.zeros(rows, t.numel(), dtype=t.dtype, device=t.device)
        for r in range(rows):
            one_hot = torch.zeros(rows, dtype=out.dtype, device=out.device)
            one_hot[r] = 1
            (g,) = torch.autograd.grad(out, probe, one_hot.view(out.shape),
                                       retain_graph=True, allow_unused=True)
            if g is not None:
                jac_a[r] = g.reshape(-1)
        # numerical Jacobian, one column per input element
        jac_n = torch.zeros_like(jac_a)
        base = t.detach().clone()
        with torch.no_grad():
            for c in range(t.numel()):
                step = torch.zeros_like(base).view(-1)
                step[c] = eps
                step = step.view(base.shape)
                plus = f(base + step).reshape(-1)
                minus = f(base - step).reshape(-1)
                jac_n[:, c] = (plus - minus) / (2 * eps)
        bad = (jac_a - jac_n).abs() > atol + rtol * jac_n.abs()
        if bad.any():
            r, c = (int(i) for i in bad.nonzero()[0])
            print(f"input {k}: d out[{r}] / d in[{c}]: backward {jac_a[r, c].item():.6g}, "
                  f"finite differences {jac_n[r, c].item():.6g}")
            return False
    return True
'''),
    ],
}
