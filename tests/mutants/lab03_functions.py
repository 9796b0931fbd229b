"""Realistic wrong answers for lab03_functions; each must lose points (see solutions/README.md)."""

_SIGMOID_HELPER = '''

def sigmoid(x):
    return Sigmoid.apply(x)
'''

MUTANTS = {
    "sigmoid": [
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
    ],
}
