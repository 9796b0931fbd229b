"""Lab 03: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'sigmoid': [
        ('backward multiplies grad_output in place (grad_output.mul_(y * (1 - y))): it overwrites a gradient that autograd may hand to other nodes too (and fails outright when grad_output is an expanded view); breaks "backward returns grad_output * y * (1 - y)" as a new value', '''class Sigmoid(torch.autograd.Function):
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
        return grad_output.mul_(y * (1 - y))


def sigmoid(x):
    return Sigmoid.apply(x)
'''),
    ],
    'my_relu': [
        ('Keeps the mask as a ctx attribute (ctx.mask = x > 0) instead of going through ctx.save_for_backward; breaks "tensors through ctx.save_for_backward(...), other values as attributes" (no saved-tensor hooks, no version check, a reference cycle through ctx)', '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        ctx.mask = x > 0
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        return grad_output * ctx.mask
'''),
        ('Returns grad_output itself when every x is positive ("nothing to mask"): not a new tensor, and bool(positive.all()) reads data, so meta tensors fail; breaks "Return a new tensor from backward"', '''class MyReLU(torch.autograd.Function):
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
        positive = x > 0
        if bool(positive.all()):      # nothing to mask
            return grad_output
        return grad_output * positive
'''),
    ],
    'softplus': [
        ("backward multiplies grad_output in place (grad_output.mul_(torch.sigmoid(x))): right numbers for this node, but it edits a gradient tensor that may be shared with other nodes; the lab's rule that backward must not edit grad_output", '''class Softplus(torch.autograd.Function):
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
        return grad_output.mul_(torch.sigmoid(x))
'''),
        ('Saves the output y and recovers sigmoid(x) as 1 - exp(-y): exact on paper, but the subtraction cancels for very negative x (1e-3 relative error at x = -30, 0 at x = -50); breaks "no precision lost for very negative x"', '''class Softplus(torch.autograd.Function):
    """softplus(x) = log(1 + exp(x)), stable for every x, with derivative sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        """Return log(1 + exp(x)) without overflow; save what backward needs."""
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx = grad_output * sigmoid(x)."""
        (y,) = ctx.saved_tensors
        return grad_output * (1 - torch.exp(-y))
'''),
    ],
    'ck_sigmoid': [
        ('Clips x to [-500, 500] before 1 / (1 + exp(-x)) to silence overflow: for x < -500 (float64) the value and gradient stay at sigma(-500) ~ 7e-218 instead of the much smaller true sigma(x); breaks "forward returns sigma(x)" at |x| up to 1000', '''class CkSigmoid(ck.autograd.Function):
    """sigma(x) on coursekit's Function API; forward and backward compute on NumPy arrays."""

    @staticmethod
    def forward(ctx, x):
        """x is a NumPy array: return sigma(x) as an array of x's dtype; save the output."""
        y = (1 / (1 + np.exp(-np.clip(x, -500, 500)))).astype(x.dtype, copy=False)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output is a NumPy array: return dL/dx = grad_output * y * (1 - y)."""
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''),
        ("backward multiplies grad_output in place and returns it (grad_output *= y * (1 - y)): the caller's upstream gradient array is overwritten; a backward must return a new array, not edit the one it was given", '''class CkSigmoid(ck.autograd.Function):
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
        grad_output *= y * (1 - y)
        return grad_output
'''),
    ],
    'my_gradcheck': [
        ('Gets the analytical side with out.backward(v), reads .grad and then sets .grad = None: a .grad the caller had before the call is wiped out (and the text asks for torch.autograd.grad); breaks "leave the inputs as you found them"', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    out.backward(v)
    analytic = [t.grad.clone() if t.grad is not None else None for t in checked]
    for t in checked:
        t.grad = None
    for i, (t, a) in enumerate(zip(checked, analytic)):
        if a is None:
            a = torch.zeros_like(t)
        flat = t.data.view(-1)
        a = a.reshape(-1)
        for j in range(flat.numel()):
            orig = flat[j].item()
            with torch.no_grad():
                flat[j] = orig + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[j] = orig - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[j] = orig
            n = (plus - minus) / (2 * eps)
            if abs(a[j].item() - n) > atol + rtol * abs(n):
                print(f"input {i}, element {j}: analytical {a[j].item():.6g}, numerical {n:.6g}")
                return False
    return True
'''),
        ('Perturbs through t.data.reshape(-1), which is a copy, not a view, for a non-contiguous input (e.g. a transposed leaf): the finite differences then come out 0 and a right backward is rejected', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    for i, (t, a) in enumerate(zip(checked, analytic)):
        if a is None:
            a = torch.zeros_like(t)
        flat = t.data.reshape(-1)
        a = a.reshape(-1)
        for j in range(flat.numel()):
            orig = flat[j].item()
            with torch.no_grad():
                flat[j] = orig + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[j] = orig - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[j] = orig
            n = (plus - minus) / (2 * eps)
            if abs(a[j].item() - n) > atol + rtol * abs(n):
                print(f"input {i}, element {j}: analytical {a[j].item():.6g}, numerical {n:.6g}")
                return False
    return True
'''),
        ('Collects the verdict in a torch tensor (ok = torch.tensor(True) ... return ok): truthy, but not the bool the signature promises (`result is True` fails)', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    checked = [t for t in inputs if t.requires_grad]
    ok = torch.tensor(True)
    if not checked:
        return True
    out = fn(*inputs)
    v = torch.randn_like(out)
    analytic = torch.autograd.grad(out, checked, v, allow_unused=True)
    for i, (t, a) in enumerate(zip(checked, analytic)):
        if a is None:
            a = torch.zeros_like(t)
        flat = t.data.view(-1)
        a = a.reshape(-1)
        for j in range(flat.numel()):
            orig = flat[j].item()
            with torch.no_grad():
                flat[j] = orig + eps
                plus = (v * fn(*inputs)).sum().item()
                flat[j] = orig - eps
                minus = (v * fn(*inputs)).sum().item()
                flat[j] = orig
            n = (plus - minus) / (2 * eps)
            if abs(a[j].item() - n) > atol + rtol * abs(n):
                print(f"input {i}, element {j}: analytical {a[j].item():.6g}, numerical {n:.6g}")
                ok = torch.tensor(False)
    return ok
'''),
    ],
}

RIGHT = {
    'sigmoid': [
        ('Forward as one torch.where on the numerator over (1 + exp(-|x|)), e.g. where(x >= 0, 1, e) / (1 + e), instead of two where branches', '''class Sigmoid(torch.autograd.Function):
    """sigma(x) = 1 / (1 + exp(-x)) as one graph node; the backward uses the saved output."""

    @staticmethod
    def forward(ctx, x):
        """Return sigma(x) and save the output for backward."""
        e = torch.exp(-torch.abs(x))                 # in (0, 1]: never overflows
        numerator = torch.where(x >= 0, torch.ones_like(e), e)
        y = numerator / (1 + e)
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
    'my_relu': [
        ('Saves the output instead of the input (relu(x) > 0 exactly where x > 0) and builds the new gradient with the out-of-place masked_fill', '''class MyReLU(torch.autograd.Function):
    """relu(x) = max(x, 0) as one graph node."""

    @staticmethod
    def forward(ctx, x):
        """Return max(x, 0) and save what backward needs."""
        y = torch.where(x > 0, x, torch.zeros_like(x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        """Return dL/dx: grad_output where x > 0, else 0 (a new tensor)."""
        y, = ctx.saved_tensors
        return grad_output.masked_fill(y <= 0, 0.0)   # out of place: a new tensor
'''),
    ],
    'my_gradcheck': [
        ('Checks the full Jacobian: one torch.autograd.grad per output element (one-hot grad_output, retain_graph) against a numerical Jacobian built column by column with tensor indexing under torch.no_grad()', '''def my_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """True if fn's backward agrees with central finite differences for every input that requires grad."""
    import itertools

    checked = [(i, t) for i, t in enumerate(inputs) if t.requires_grad]
    if not checked:
        return True
    out = fn(*inputs)
    # analytical Jacobian, one row per output element (before any input is touched)
    rows = []
    for k in range(out.numel()):
        onehot = torch.zeros_like(out).reshape(-1)
        onehot[k] = 1.0
        grads = torch.autograd.grad(out, [t for _, t in checked], onehot.reshape(out.shape),
                                    retain_graph=True, allow_unused=True)
        rows.append([torch.zeros_like(t) if g is None else g for (_, t), g in zip(checked, grads)])
    del out
    ok = True
    with torch.no_grad():
        for c, (i, t) in enumerate(checked):
            for idx in itertools.product(*(range(s) for s in t.shape)):
                original = t[idx].item()
                t[idx] = original + eps
                plus = fn(*inputs).reshape(-1)
                t[idx] = original - eps
                minus = fn(*inputs).reshape(-1)
                t[idx] = original
                numeric = (plus - minus) / (2 * eps)
                for k in range(numeric.numel()):
                    a, n = rows[k][c][idx].item(), numeric[k].item()
                    if abs(a - n) > atol + rtol * abs(n):
                        if ok:
                            print(f"input {i}, element {idx}, output {k}: analytical {a:.6g}, numerical {n:.6g}")
                        ok = False
                if not ok:
                    return False
    return ok
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('my_gradcheck', 0): (
        'not a mistake the checks hold against: the inputs the exercise hands over have no '
        '.grad, and an accepted alternative answer clears .grad around .backward() too'
    ),
    ('my_gradcheck', 1): (
        "not a mistake the text defines: the inputs are 'a list of float64 tensors' and "
        'nothing says they may be non-contiguous (as in round 6)'
    ),
    ('my_gradcheck', 2): (
        'not a mistake the checks hold against: a one-element bool tensor is taken as a '
        'verdict on purpose, since an honest (...).all() returns one'
    ),
}
