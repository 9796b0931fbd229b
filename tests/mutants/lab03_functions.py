"""Realistic wrong answers for lab03_functions; each must lose points (see solutions/README.md)."""

_SIGMOID_HELPER = '''

def sigmoid(x):
    return Sigmoid.apply(x)
'''

MUTANTS = {
    "sigmoid": [
        ("clamps the input to [-30, 30] against overflow: sigma(-100) becomes sigma(-30)", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x.clamp(-30, 30)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
''' + _SIGMOID_HELPER),
        ("backward computed from the input x instead of the output y", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x * (1 - x)
''' + _SIGMOID_HELPER),
        ("saves the input x and recomputes sigma(x) in backward: right gradient, not the lesson", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        e = torch.exp(-x.abs())
        return torch.where(x >= 0, 1 / (1 + e), e / (1 + e))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return grad_output * y * (1 - y)
''' + _SIGMOID_HELPER),
        ("backward re-derives exp(-x) / (1 + exp(-x))**2: NaN for large negative x", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + torch.exp(-x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x)
        return grad_output * e / (1 + e) ** 2
''' + _SIGMOID_HELPER),
        ("forgets to multiply by grad_output", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return y * (1 - y)
''' + _SIGMOID_HELPER),
        ("builds a mask on a fixed device (breaks on GPUs and meta)", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        positive = torch.tensor(x.detach().cpu().numpy() >= 0)
        e = torch.exp(-x.abs())
        y = torch.where(positive, 1 / (1 + e), e / (1 + e))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
''' + _SIGMOID_HELPER),
        ("a plain Python function of primitives, with the autograd backward", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def apply(x):
        return 1 / (1 + torch.exp(-x))
''' + _SIGMOID_HELPER),
        ("forward always returns float32", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = (1 / (1 + torch.exp(-x))).float()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return (grad_output * y * (1 - y)).to(grad_output.dtype)
''' + _SIGMOID_HELPER),
    ],
    "my_relu": [
        ("keeps the mask as a ctx attribute instead of ctx.save_for_backward", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mask = x > 0
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.mask.to(grad_output.dtype)
'''),
        ("backward passes grad_output through without the mask", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
'''),
        ("zeroes grad_output in place and returns it", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_output[x < 0] = 0
        return grad_output
'''),
        ("mask taken from grad_output instead of x", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (grad_output > 0)
'''),
        ("mask built as a CPU float tensor", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mask = torch.tensor((x > 0).tolist(), dtype=x.dtype)
        return x * ctx.mask

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.mask
'''),
        ("returns the mask instead of the masked gradient", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return (x > 0).to(grad_output.dtype)
'''),
    ],
    "softplus": [
        ("backward multiplies grad_output in place and returns it", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        return grad_output.mul_(torch.where(x >= 0, 1 / (1 + e), e / (1 + e)))
'''),
        ("backward from the saved output, sigmoid(x) = 1 - exp(-y): rounds to 0 for x << 0",
         '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * (1 - torch.exp(-y))
'''),
        ("literal log(1 + exp(x)) forward: inf for large x", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        return grad_output * torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
'''),
        ("backward exp(x) / (1 + exp(x)): NaN for large x", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.exp(x) / (1 + torch.exp(x))
'''),
        ("backward differentiates the stable formula piece by piece (1 at x = 0)", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        step = (x >= 0).to(x.dtype)
        return grad_output * (step - torch.sign(x) * e / (1 + e))
'''),
        ("backward forgets grad_output", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        return torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
'''),
        ("log instead of log1p in the stable form (loses tiny values)", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + torch.log(1 + torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        return grad_output * torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
'''),
    ],
    "ck_sigmoid": [
        ("backward multiplies grad_output in place and returns it: the caller's array changes",
         '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        e = np.exp(-np.abs(x))
        y = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        grad_output *= y * (1 - y)
        return grad_output
'''),
        ("clips x to [-500, 500] against overflow: sigma(x) for x < -500 stays sigma(-500)",
         '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + np.exp(-np.clip(x, -500, 500)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ("backward writes into the saved output (y *= 1 - y): the forward's result changes", '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + np.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        y *= 1 - y
        return grad_output * y
'''),
        ("backward from the input x", '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + np.exp(-x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x * (1 - x)
'''),
        ("forgets grad_output", '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + np.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return y * (1 - y)
'''),
        ("computes in float64 whatever the input dtype", '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + np.exp(-x.astype(np.float64)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ("re-derives the gradient from exp: NaN for large negative x", '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + np.exp(-x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        e = np.exp(-x)
        return grad_output * e / (1 + e) ** 2
'''),
    ],
    "my_gradcheck": [
        ("one-sided differences (f(x + eps) - f(x)) / eps: off by eps * f''/2", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [t for t in inputs if t.requires_grad]
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, wrt, v)
    with torch.no_grad():
        base = float((v * fn(*inputs)).sum())
        for x, grad in zip(wrt, analytic):
            flat = x.view(-1)
            for j in range(flat.numel()):
                original = flat[j].item()
                flat[j] = original + eps
                plus = float((v * fn(*inputs)).sum())
                flat[j] = original
                numeric = (plus - base) / eps
                if abs(grad.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
                    return False
    return True
'''),
        ("compares the gradient of out.sum() (grad_output of ones)", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [t for t in inputs if t.requires_grad]
    analytic = torch.autograd.grad(fn(*inputs).sum(), wrt)
    for x, grad in zip(wrt, analytic):
        flat = x.data.view(-1)
        for j in range(flat.numel()):
            original = flat[j].item()
            flat[j] = original + eps
            plus = float(fn(*inputs).sum())
            flat[j] = original - eps
            minus = float(fn(*inputs).sum())
            flat[j] = original
            numeric = (plus - minus) / (2 * eps)
            if abs(grad.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
                return False
    return True
'''),
        ("checks only the first input", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    x = inputs[0]
    out = fn(*inputs)
    v = torch.randn_like(out)
    (grad,) = torch.autograd.grad(out, x, v)
    flat = x.data.view(-1)
    for j in range(flat.numel()):
        original = flat[j].item()
        flat[j] = original + eps
        plus = float((v * fn(*inputs)).sum())
        flat[j] = original - eps
        minus = float((v * fn(*inputs)).sum())
        flat[j] = original
        numeric = (plus - minus) / (2 * eps)
        if abs(grad.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
            return False
    return True
'''),
        ("uses .backward() and never clears .grad (gradients accumulate across calls)", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [t for t in inputs if t.requires_grad]
    out = fn(*inputs)
    v = torch.randn_like(out)
    (v * out).sum().backward()
    for x in wrt:
        flat = x.data.view(-1)
        for j in range(flat.numel()):
            original = flat[j].item()
            flat[j] = original + eps
            plus = float((v * fn(*inputs)).sum())
            flat[j] = original - eps
            minus = float((v * fn(*inputs)).sum())
            flat[j] = original
            numeric = (plus - minus) / (2 * eps)
            if abs(x.grad.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
                return False
    return True
'''),
        ("forgets to restore the perturbed element", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [t for t in inputs if t.requires_grad]
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, wrt, v)
    for x, grad in zip(wrt, analytic):
        flat = x.data.view(-1)
        for j in range(flat.numel()):
            flat[j] += eps
            plus = float((v * fn(*inputs)).sum())
            flat[j] -= 2 * eps
            minus = float((v * fn(*inputs)).sum())
            numeric = (plus - minus) / (2 * eps)
            if abs(grad.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
                return False
    return True
'''),
        ("compares the summed gradient only, not element by element", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [t for t in inputs if t.requires_grad]
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, wrt, v)
    for x, grad in zip(wrt, analytic):
        flat = x.data.view(-1)
        numeric_total = 0.0
        for j in range(flat.numel()):
            original = flat[j].item()
            flat[j] = original + eps
            plus = float((v * fn(*inputs)).sum())
            flat[j] = original - eps
            minus = float((v * fn(*inputs)).sum())
            flat[j] = original
            numeric_total += (plus - minus) / (2 * eps)
        if abs(grad.sum().item() - numeric_total) > atol + rtol * abs(numeric_total):
            return False
    return True
'''),
        ("differentiates every input, even those without requires_grad", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, list(inputs), v)
    for x, grad in zip(inputs, analytic):
        flat = x.data.view(-1)
        for j in range(flat.numel()):
            original = flat[j].item()
            flat[j] = original + eps
            plus = float((v * fn(*inputs)).sum())
            flat[j] = original - eps
            minus = float((v * fn(*inputs)).sum())
            flat[j] = original
            numeric = (plus - minus) / (2 * eps)
            if abs(grad.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
                return False
    return True
'''),
        ("out.backward() for the analytical side, leaving the gradients in the inputs' .grad", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [x for x in inputs if x.requires_grad]
    for x in wrt:
        x.grad = None
    out = fn(*inputs)
    v = torch.randn_like(out)
    (out * v).sum().backward()
    analytic = [x.grad.clone() for x in wrt]
    for x, a in zip(wrt, analytic):
        for j in range(x.numel()):
            with torch.no_grad():
                old = x.view(-1)[j].item()
                x.view(-1)[j] = old + eps
                plus = (fn(*inputs) * v).sum().item()
                x.view(-1)[j] = old - eps
                minus = (fn(*inputs) * v).sum().item()
                x.view(-1)[j] = old
            n = (plus - minus) / (2 * eps)
            if abs(a.view(-1)[j].item() - n) > atol + rtol * abs(n):
                return False
    return True
'''),
        ("checks requires_grad_() copies of every input, so an input without requires_grad is "
         "checked instead of skipped (a backward returning None for it is rejected)", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    xs = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*xs)
    v = torch.randn_like(out)
    grads = torch.autograd.grad(out, xs, v, allow_unused=True)
    with torch.no_grad():
        for x, g in zip(xs, grads):
            g = torch.zeros_like(x) if g is None else g
            flat = x.view(-1)
            for j in range(flat.numel()):
                flat[j] += eps
                plus = (v * fn(*xs)).sum().item()
                flat[j] -= 2 * eps
                minus = (v * fn(*xs)).sum().item()
                flat[j] += eps
                n = (plus - minus) / (2 * eps)
                if abs(g.view(-1)[j].item() - n) > atol + rtol * abs(n):
                    return False
    return True
'''),
    ],
}


# Right answers written differently from the solution: each must keep full marks, so the
# checks do not reward one way of writing the answer (used by tests/labs/test_lab03_functions_lab04_modules.py).
ALTERNATIVES = {
    "sigmoid": [
        ("the lecture's version: 1 / (1 + exp(-x)), backward from the saved output", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1.0 / (1.0 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        y, = ctx.saved_tensors
        grad_x = grad_y * y * (1.0 - y)
        return grad_x


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
        ("both branches computed, torch.where picks", '''class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.where(x >= 0, 1 / (1 + torch.exp(-x)), torch.exp(x) / (1 + torch.exp(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * (y - y * y)
'''),
    ],
    "my_relu": [
        ("the lecture's version: clone, then zero where x < 0", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        x, = ctx.saved_tensors
        grad_input = grad_y.clone()
        grad_input[x < 0] = 0
        return grad_input
'''),
        ("mask from the saved output, torch.where", '''class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.relu(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return torch.where(y > 0, grad_output, torch.zeros_like(grad_output))
'''),
    ],
    "softplus": [
        ("two-branch forward, torch.sigmoid in backward", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x + torch.log1p(torch.exp(-x)), torch.log1p(torch.exp(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
'''),
        ("maximum with zeros_like, saves sigmoid(x) in forward", '''class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        e = torch.exp(-x.abs())
        ctx.save_for_backward(torch.where(x >= 0, 1 / (1 + e), e / (1 + e)))
        return torch.maximum(x, torch.zeros_like(x)) + torch.log1p(e)

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s
'''),
    ],
    "ck_sigmoid": [
        ("the lecture's formula on NumPy (overflow warnings, right values)", '''class CkSigmoid(ck.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1.0 / (1.0 + np.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return grad_y * y * (1.0 - y)
'''),
    ],
    "my_gradcheck": [
        ("full Jacobian, one one-hot grad_output per output element; raises on mismatch", '''class GradcheckFailed(Exception):
    pass


def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    out = fn(*inputs)
    wrt = [i for i, x in enumerate(inputs) if x.requires_grad]
    rows = []  # all analytical rows first: perturbing x in place would invalidate the graph
    for k in range(out.numel()):
        v = torch.zeros_like(out).view(-1)
        v[k] = 1.0
        grads = torch.autograd.grad(out, [inputs[i] for i in wrt], v.view_as(out), retain_graph=True,
                                    allow_unused=True)
        rows.append([torch.zeros_like(inputs[i]) if g is None else g for i, g in zip(wrt, grads)])
    for position, i in enumerate(wrt):
        x = inputs[i]
        for k in range(out.numel()):
            analytic = rows[k][position]
            for j in range(x.numel()):
                with torch.no_grad():
                    x.view(-1)[j] += eps
                    plus = fn(*inputs).reshape(-1)[k].item()
                    x.view(-1)[j] -= 2 * eps
                    minus = fn(*inputs).reshape(-1)[k].item()
                    x.view(-1)[j] += eps
                numeric = (plus - minus) / (2 * eps)
                if abs(analytic.view(-1)[j].item() - numeric) > atol + rtol * abs(numeric):
                    raise GradcheckFailed(f"input {i}, element {j}, output {k}")
    return True
'''),
        (".backward() with a random v, gradients cleared before and after", '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    wrt = [x for x in inputs if x.requires_grad]
    for x in wrt:
        x.grad = None
    out = fn(*inputs)
    v = torch.randn_like(out)
    (out * v).sum().backward()
    analytic = [x.grad.clone() for x in wrt]
    for x in wrt:
        x.grad = None
    ok = True
    for x, a in zip(wrt, analytic):
        for j in range(x.numel()):
            with torch.no_grad():
                old = x.view(-1)[j].item()
                x.view(-1)[j] = old + eps
                plus = (fn(*inputs) * v).sum().item()
                x.view(-1)[j] = old - eps
                minus = (fn(*inputs) * v).sum().item()
                x.view(-1)[j] = old
            n = (plus - minus) / (2 * eps)
            ok = ok and abs(a.view(-1)[j].item() - n) <= atol + rtol * abs(n)
    return ok
'''),
    ],
}
