"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 3).

The written answer `when_custom_function` is graded by hand and has no entries here.
"""

WRONG = {
    "sigmoid": [
        ('backward multiplies the saved output in place (y.mul_(1 - y)) to save memory: the forward result the caller holds becomes y(1-y), and a second backward through a retained graph breaks',
         '''class Sigmoid(torch.autograd.Function):
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
        (y,) = ctx.saved_tensors
        y.mul_(1 - y)  # y * (1 - y) without allocating another tensor of x's size
        return grad_output * y

def sigmoid(x):
    return Sigmoid.apply(x)
'''),
        ("clamps x to [-88, 88] (float32's exp limit) in every dtype: in float64, sigma(-100) comes out as sigma(-88) ~ 6e-39 instead of 3.7e-44, and its gradient likewise",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        # exp overflows float32 beyond 88.7: keep the argument inside that range
        x = x.clamp(-88.0, 88.0)
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
    ],
    "my_relu": [
        ("backward zeroes the masked entries of grad_output in place and returns it: the caller's grad_output is changed (and other users of it get corrupted gradients)",
         '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.save_for_backward(x > 0)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        (positive,) = ctx.saved_tensors
        grad_input = grad_output
        grad_input[~positive] = 0
        return grad_input
'''),
    ],
    "softplus": [
        ('uses torch.log(1 + exp(-|x|)) instead of log1p: for very negative x in float64 (x <= -37) the value rounds to 0 instead of ~exp(x)',
         '''class Softplus(torch.autograd.Function):
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
        ('saves the output y and computes sigmoid(x) as 1 - exp(-y): catastrophic cancellation for very negative x (relative error ~1e-3 at x = -30, gradient 0 at x = -50)',
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)  # the output is enough: sigmoid(x) = 1 - exp(-softplus(x))
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    "ck_sigmoid": [
        ('output allocated with np.zeros(x.shape) and filled by mask: always float64, so a float32 input gets a float64 output',
         '''class CkSigmoid(ck.autograd.Function):
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
        ('backward returns y * (1 - y) and ignores grad_output: right only when the upstream gradient is 1 (out.sum()), wrong inside a bigger graph',
         '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return y * (1 - y)  # the derivative of sigma
'''),
    ],
    "my_gradcheck": [
        ('keeps the original value as orig = t[idx], a view of the input: after t[idx] -= 2 * eps, t[idx] = orig writes back x - eps, so every checked element is left shifted by -eps',
         '''import itertools


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    checked = [i for i, t in enumerate(inputs) if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, [inputs[i] for i in checked], v, allow_unused=True)
    with torch.no_grad():
        for i, a in zip(checked, analytic):
            t = inputs[i]
            if a is None:
                a = torch.zeros_like(t)
            for idx in itertools.product(*(range(s) for s in t.shape)):
                orig = t[idx]
                t[idx] += eps
                plus = (v * fn(*inputs)).sum().item()
                t[idx] -= 2 * eps
                minus = (v * fn(*inputs)).sum().item()
                t[idx] = orig  # put the original value back
                numeric = (plus - minus) / (2 * eps)
                if abs(a[idx].item() - numeric) > atol + rtol * abs(numeric):
                    print(f"input {i}, element {idx}: analytical {a[idx].item():.6g}, numerical {numeric:.6g}")
                    return False
    return True
'''),
        ('projects with v = ones (compares gradients of fn(...).sum()): a backward that ignores grad_output passes',
         '''import itertools


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    checked = [i for i, t in enumerate(inputs) if t.requires_grad]
    if not checked:
        return True
    # the scalar whose gradient we compare: the sum of fn's output
    analytic = torch.autograd.grad(fn(*inputs).sum(), [inputs[i] for i in checked], allow_unused=True)
    with torch.no_grad():
        for i, a in zip(checked, analytic):
            t = inputs[i]
            if a is None:
                a = torch.zeros_like(t)
            for idx in itertools.product(*(range(s) for s in t.shape)):
                orig = t[idx].item()
                t[idx] = orig + eps
                plus = fn(*inputs).sum().item()
                t[idx] = orig - eps
                minus = fn(*inputs).sum().item()
                t[idx] = orig
                numeric = (plus - minus) / (2 * eps)
                if abs(a[idx].item() - numeric) > atol + rtol * abs(numeric):
                    print(f"input {i}, element {idx}: analytical {a[idx].item():.6g}, numerical {numeric:.6g}")
                    return False
    return True
'''),
        ("analytical side through out.backward(v) and the inputs' .grad: leaves .grad set on the inputs (and adds onto a .grad that was already there)",
         '''import itertools


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
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
    out.backward(v)  # analytical side: the backward fills .grad of every input
    for n, t in enumerate(checked):
        a = t.grad if t.grad is not None else torch.zeros_like(t)
        for idx in itertools.product(*(range(s) for s in t.shape)):
            with torch.no_grad():
                orig = t[idx].item()
                t[idx] = orig + eps
                plus = (v * fn(*inputs)).sum().item()
                t[idx] = orig - eps
                minus = (v * fn(*inputs)).sum().item()
                t[idx] = orig
            numeric = (plus - minus) / (2 * eps)
            if abs(a[idx].item() - numeric) > atol + rtol * abs(numeric):
                print(f"checked input {n}, element {idx}: analytical {a[idx].item():.6g}, numerical {numeric:.6g}")
                return False
    return True
'''),
    ],
}

RIGHT = {
    "sigmoid": [
        ('the plain formula 1 / (1 + exp(-x)) inside the Function (exp overflowing to inf only makes y 0), torch.reciprocal, and backward written y - y*y',
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        # Inside a Function autograd never sees this formula: exp(-x) = inf only makes y = 0,
        # and the backward below uses y, never exp.
        y = torch.reciprocal(1 + torch.exp(-x))
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
        ('saves the output y instead of x and gets sigmoid(x) = -expm1(-y) in backward',
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)  # the output: sigmoid(x) = 1 - exp(-softplus(x))
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # 1 - exp(-y) with expm1, so that a tiny y (very negative x) keeps its digits
        return grad_output * -torch.expm1(-y)
'''),
    ],
    "my_gradcheck": [
        ("never perturbs the caller's tensors: each finite-difference evaluation gets a perturbed copy (detach + a one-hot step), under torch.no_grad()",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    inputs = list(inputs)
    checked = [i for i, t in enumerate(inputs) if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn(out.shape, dtype=out.dtype, device=out.device)
    analytic = torch.autograd.grad(out, [inputs[i] for i in checked], v, allow_unused=True)

    def projected(args):
        with torch.no_grad():
            return (v * fn(*args)).sum().item()

    for i, a in zip(checked, analytic):
        base = inputs[i].detach()
        a = torch.zeros_like(base) if a is None else a.reshape(-1)
        for j in range(base.numel()):
            # the caller's tensors are never touched: each evaluation gets a perturbed copy
            step = torch.zeros(base.numel(), dtype=base.dtype, device=base.device)
            step[j] = eps
            step = step.reshape(base.shape)
            plus = projected(inputs[:i] + [base + step] + inputs[i + 1:])
            minus = projected(inputs[:i] + [base - step] + inputs[i + 1:])
            numeric = (plus - minus) / (2 * eps)
            analytical = a.reshape(-1)[j].item()
            if abs(analytical - numeric) > atol + rtol * abs(numeric):
                print(f"input {i}, flat element {j}: analytical {analytical:.6g}, numerical {numeric:.6g}")
                return False
    return True
'''),
    ],
}
