"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "sigmoid": [
        ("stable where-formula, but the tensor of ones for torch.where is made with torch.ones(x.shape, dtype=x.dtype): dtype kept, device pinned to the CPU",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        # stable: exp of a non-positive number only
        e = torch.exp(-torch.abs(x))
        ones = torch.ones(x.shape, dtype=x.dtype)
        y = torch.where(x >= 0, ones, e) / (1 + e)
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
        ("computes in float64 for accuracy and casts back with .float(): a float64 input gets a float32 output",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        # compute in double precision, for accuracy, then hand back a float tensor
        y = (1.0 / (1.0 + torch.exp(-x.double()))).float()
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
        ("forward uses the in-place clamp_ to save memory (mask saved first, backward is right): the caller's x is overwritten with relu(x)",
         '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        mask = x > 0
        ctx.save_for_backward(mask)
        return x.clamp_(min=0)  # in place: no second tensor of x's size

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        (mask,) = ctx.saved_tensors
        return grad_output * mask
'''),
    ],
    "softplus": [
        ("backward computes sigmoid as exp(x) / (1 + exp(x)): inf / inf = NaN for large positive x",
         '''class Softplus(torch.autograd.Function):
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
        e = torch.exp(x)
        return grad_output * e / (1 + e)
'''),
        ("saves the output y and uses sigmoid(x) = 1 - exp(-y): exact in theory, but 1 - exp(-y) cancels to 0 for very negative x (relative accuracy lost)",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))
        ctx.save_for_backward(y)  # like the sigmoid: keep the output
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # exp(y) = 1 + exp(x), so sigmoid(x) = 1 - exp(-y)
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    "ck_sigmoid": [
        ("follows the hint np.exp(-np.abs(x)) but keeps only the x >= 0 branch: gives sigma(|x|) for negative x",
         '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        y = 1.0 / (1.0 + np.exp(-np.abs(x)))  # abs avoids the overflow warnings
        y = y.astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ("converts x to float64 first to be safe: a float32 input gets a float64 output",
         '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        x = np.asarray(x, dtype=np.float64)
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
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
        ("perturbs +eps then -2*eps and never adds eps back: every checked element is left eps lower than it was",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    out = fn(*inputs)
    v = torch.randn_like(out)
    checked = [t for t in inputs if t.requires_grad]
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    for k, (t, a) in enumerate(zip(checked, analytic)):
        if a is None:
            a = torch.zeros_like(t)
        for idx in np.ndindex(*t.shape):
            with torch.no_grad():
                t[idx] += eps
                f_plus = (v * fn(*inputs)).sum().item()
                t[idx] -= 2 * eps
                f_minus = (v * fn(*inputs)).sum().item()
            numerical = (f_plus - f_minus) / (2 * eps)
            if abs(a[idx].item() - numerical) > atol + rtol * abs(numerical):
                print(f"input {k}, element {idx}: backward {a[idx].item():.6g}, numerical {numerical:.6g}")
                return False
    return True
'''),
        ("projects with v = 1 (differentiates out.sum()) instead of a random v: a backward that ignores grad_output passes",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    out = fn(*inputs).sum()
    analytic = torch.autograd.grad(out, checked, allow_unused=True)
    for k, (t, a) in enumerate(zip(checked, analytic)):
        if a is None:
            a = torch.zeros_like(t)
        for idx in np.ndindex(*t.shape):
            with torch.no_grad():
                old = t[idx].item()
                t[idx] = old + eps
                f_plus = fn(*inputs).sum().item()
                t[idx] = old - eps
                f_minus = fn(*inputs).sum().item()
                t[idx] = old
            numerical = (f_plus - f_minus) / (2 * eps)
            if abs(a[idx].item() - numerical) > atol + rtol * abs(numerical):
                print(f"input {k}, element {idx}: backward {a[idx].item():.6g}, numerical {numerical:.6g}")
                return False
    return True
'''),
        ("gets the analytical gradient with out.backward(v) and reads .grad: the inputs are left with a .grad",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    out = fn(*inputs)
    v = torch.randn_like(out)
    out.backward(v)
    for k, t in enumerate(inputs):
        if not t.requires_grad:
            continue
        a = t.grad if t.grad is not None else torch.zeros_like(t)
        a = a.clone()
        for idx in np.ndindex(*t.shape):
            with torch.no_grad():
                t[idx] += eps
                f_plus = (v * fn(*inputs)).sum().item()
                t[idx] -= 2 * eps
                f_minus = (v * fn(*inputs)).sum().item()
                t[idx] += eps
            numerical = (f_plus - f_minus) / (2 * eps)
            if abs(a[idx].item() - numerical) > atol + rtol * abs(numerical):
                print(f"input {k}, element {idx}: backward {a[idx].item():.6g}, numerical {numerical:.6g}")
                return False
    return True
'''),
    ],
}

RIGHT = {
    "sigmoid": [
        ("sigma(x) = exp(-logaddexp(0, -x)) (no where, no abs); backward written as y - y*y",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        # sigma(x) = exp(-log(1 + exp(-x))), with log(1 + exp(-x)) = logaddexp(0, -x): never overflows
        y = torch.exp(-torch.logaddexp(torch.zeros_like(x), -x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        y, = ctx.saved_tensors
        return grad_output * (y - y * y)


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "softplus": [
        ("saves the output y instead of x and gets sigmoid(x) = -expm1(-y) in backward (no cancellation)",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))
        ctx.save_for_backward(y)  # the output is enough: sigmoid(x) = 1 - exp(-y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # 1 - exp(-y) without cancellation for tiny y (very negative x)
        return grad_output * -torch.expm1(-y)
'''),
    ],
    "my_gradcheck": [
        ("never modifies the inputs: perturbs flattened detached clones per element, random v from torch.randn with out's dtype and device",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    inputs = list(inputs)
    wanted = [i for i, t in enumerate(inputs) if t.requires_grad]
    if not wanted:
        return True
    out = fn(*inputs)
    v = torch.randn(out.shape, dtype=out.dtype, device=out.device)
    analytic = torch.autograd.grad(out, [inputs[i] for i in wanted], v, allow_unused=True)

    def projected(args):
        with torch.no_grad():
            return float((v * fn(*args)).sum())

    # the numerical side never touches the caller's tensors: it perturbs detached clones
    for i, grad in zip(wanted, analytic):
        base = inputs[i].detach()
        grad = torch.zeros_like(base) if grad is None else grad
        flat_grad = grad.reshape(-1)
        for j in range(base.numel()):
            shifted = []
            for sign in (1.0, -1.0):
                moved = base.clone().reshape(-1)
                moved[j] += sign * eps
                args = list(inputs)
                args[i] = moved.reshape(base.shape)
                shifted.append(projected(args))
            numerical = (shifted[0] - shifted[1]) / (2 * eps)
            analytical = float(flat_grad[j])
            if abs(analytical - numerical) > atol + rtol * abs(numerical):
                print(f"input {i}, flat element {j}: backward {analytical:.6g}, numerical {numerical:.6g}")
                return False
    return True
'''),
    ],
}
