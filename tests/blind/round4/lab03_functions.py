"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "sigmoid": [
        ("forward written as exp(x) / (1 + exp(x)) to keep exp(-x) from overflowing for negative x: for large positive x (>= 89 in float32, >= 710 in float64) it is inf / inf = NaN",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        # e^x / (1 + e^x): no exp(-x), so no overflow for very negative x
        ex = torch.exp(x)
        y = ex / (1 + ex)
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
        ("backward reuses the saved output's memory, y.mul_(1 - y): the first gradient is right, but the tensor the caller got from forward now holds y * (1 - y), and a second backward through a retained graph fails",
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
        y.mul_(1 - y)          # y * (1 - y) without allocating another tensor
        return grad_output * y


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "my_relu": [
        ("backward 'copies' grad_output by assignment (grad = grad_output) and zeroes the masked entries in place: the caller's grad_output, possibly shared with other nodes, is overwritten",
         '''class MyReLU(torch.autograd.Function):
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
        grad_input = grad_output
        grad_input[x < 0] = 0
        return grad_input
'''),
        ("backward's zeros for torch.where made with torch.zeros(grad_output.shape): values right on the CPU (where promotes the dtype), but a CPU tensor mixed with meta tensors raises",
         '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.save_for_backward(x > 0)
        return torch.where(x > 0, x, torch.zeros_like(x))

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        (positive,) = ctx.saved_tensors
        return torch.where(positive, grad_output, torch.zeros(grad_output.shape))
'''),
    ],
    "softplus": [
        ("saves the output y and gets sigmoid(x) as 1 - exp(-y) (since exp(-softplus(x)) = 1 - sigmoid(x)): cancellation loses all relative precision for very negative x (gradient 0 at x = -50 instead of 2e-22)",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)   # like Sigmoid: save the output
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # exp(-y) = 1 / (1 + e^x) = 1 - sigmoid(x)
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    "ck_sigmoid": [
        ("output allocated with np.empty(x.shape) and filled by masks: always float64, so a float32 input gets a float64 output",
         '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
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
        ("backward returns y * (1 - y) and never multiplies by grad_output: right only when the upstream gradient is all ones (sigmoid(x).sum())",
         '''class CkSigmoid(ck.autograd.Function):
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
        return y * (1 - y)  # d sigma / dx
'''),
    ],
    "my_gradcheck": [
        ("compares with torch.allclose(analytical, numerical, atol, rtol) passing the tolerances positionally: allclose's third and fourth parameters are rtol, atol, so the two tolerances are swapped",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    checked = [x for x in inputs if x.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytical = torch.autograd.grad(out, checked, v, allow_unused=True)
    for k, (x, a) in enumerate(zip(checked, analytical)):
        if a is None:
            a = torch.zeros_like(x)
        numerical = torch.zeros_like(x)
        with torch.no_grad():
            flat, num_flat = x.view(-1), numerical.view(-1)
            for i in range(flat.numel()):
                old = flat[i].item()
                flat[i] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[i] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[i] = old
                num_flat[i] = (plus - minus) / (2 * eps)
        if not torch.allclose(a, numerical, atol, rtol):
            print(f"input {k}: analytical and numerical gradients differ")
            return False
    return True
'''),
        ("the return True sits inside the loop over inputs: only the first input that requires grad is compared, a wrong gradient for any later input is accepted",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    out = fn(*inputs)
    v = torch.randn_like(out)
    for k, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        (a,) = torch.autograd.grad(fn(*inputs), x, v, allow_unused=True)
        if a is None:
            a = torch.zeros_like(x)
        with torch.no_grad():
            flat, a_flat = x.view(-1), a.reshape(-1)
            for i in range(flat.numel()):
                old = flat[i].item()
                flat[i] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[i] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[i] = old
                n = (plus - minus) / (2 * eps)
                if abs(a_flat[i].item() - n) > atol + rtol * abs(n):
                    print(f"input {k}, element {i}: analytical {a_flat[i].item()}, numerical {n}")
                    return False
        return True
    return True
'''),
        ("gets the analytical gradient with out.backward(v) and reads x.grad: right verdict, but every checked input is left with a .grad (and a second call would add to it)",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    out = fn(*inputs)
    v = torch.randn_like(out)
    out.backward(v)
    ok = True
    for k, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        a = x.grad if x.grad is not None else torch.zeros_like(x)
        with torch.no_grad():
            flat, a_flat = x.view(-1), a.reshape(-1)
            for i in range(flat.numel()):
                old = flat[i].item()
                flat[i] = old + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[i] = old - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[i] = old
                n = (plus - minus) / (2 * eps)
                if abs(a_flat[i].item() - n) > atol + rtol * abs(n):
                    print(f"input {k}, element {i}: analytical {a_flat[i].item()}, numerical {n}")
                    ok = False
    return ok
'''),
    ],
}

RIGHT = {
    "sigmoid": [
        ("one division with the numerator picked by torch.where (1 for x >= 0, exp(-|x|) below): stable without computing two branches; backward as y.mul(1 - y).mul_(grad_output) on a fresh tensor",
         '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        e = torch.exp(-torch.abs(x))                      # in (0, 1]: never overflows
        numerator = torch.where(x >= 0, torch.ones_like(e), e)
        y = numerator / (1 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return y.mul(1 - y).mul_(grad_output)   # mul makes a new tensor; mul_ works on that one


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    "softplus": [
        ("saves the output y instead of x and recovers sigmoid(x) = 1 - exp(-y) as -expm1(-y), which keeps full relative precision for very negative x",
         '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = torch.relu(x) + torch.log1p(torch.exp(-torch.abs(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        # exp(-softplus(x)) = 1 - sigmoid(x), so sigmoid(x) = -expm1(-y), without cancellation
        return grad_output * -torch.expm1(-y)
'''),
    ],
    "my_gradcheck": [
        ("perturbs through x.detach() (shared storage, no autograd bookkeeping) with np.ndindex over every element; analytical side from one torch.autograd.grad call with a random projection; evaluation under torch.no_grad()",
         '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad.

    Args:
        fn: callable taking the tensors of `inputs`, returning one tensor.
        inputs: list of float64 tensors; those with requires_grad=True are checked.
        eps: finite-difference step.
        atol, rtol: an analytical value a passes if |a - n| <= atol + rtol * |n|.
    """
    positions = [i for i, t in enumerate(inputs) if t.requires_grad]
    if not positions:
        return True
    out = fn(*inputs)
    v = torch.randn(out.shape, dtype=out.dtype, device=out.device)
    grads = torch.autograd.grad(out, [inputs[i] for i in positions], grad_outputs=v,
                                allow_unused=True)

    def projected():
        with torch.no_grad():
            return float((v * fn(*inputs)).sum())

    for pos, analytical in zip(positions, grads):
        raw = inputs[pos].detach()          # same memory as the input
        if analytical is None:
            analytical = torch.zeros_like(raw)
        for idx in np.ndindex(*raw.shape):
            saved = raw[idx].item()
            raw[idx] = saved + eps
            f_plus = projected()
            raw[idx] = saved - eps
            f_minus = projected()
            raw[idx] = saved
            numerical = (f_plus - f_minus) / (2 * eps)
            a = analytical[idx].item()
            if not abs(a - numerical) <= atol + rtol * abs(numerical):
                print(f"input {pos}, element {idx}: backward {a:.6g}, finite differences {numerical:.6g}")
                return False
    return True
'''),
    ],
}
