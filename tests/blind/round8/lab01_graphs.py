"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'numpy_graph_grads': [
        ('Returns y itself as grad_x and x itself as grad_y (the gradient is "the other factor"): right values, but the gradients alias the caller\'s inputs, so updating or accumulating into a gradient in place silently changes x or y; a gradient should be a fresh array', '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    # c = sum(x * y + z): the upstream gradient is all ones, so each factor's
    # gradient is just the other factor, and z's is a count of its uses
    if z.shape == x.shape:
        grad_z = np.ones_like(z)
    else:
        grad_z = np.full_like(z, x.shape[0])
    return y, x, grad_z
'''),
        ('Decides whether z was broadcast by comparing sizes (z.size == x.size means "same shape"): for N == 1 a z of shape (D,) gets a (1, D) gradient; breaks "each gradient must have the shape of its input"', '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y + z)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.size == x.size:          # z was as big as x * y: it was not broadcast
        grad_z = grad_b
    else:                         # z of shape (D,) was added to each of the N rows
        grad_z = grad_b.sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
        ('Averages the broadcast gradient over the rows (mean(axis=0)) instead of summing it: z of shape (D,) gets ones instead of N; breaks "the backward pass sums over the broadcast axes"', '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y + z)          # c = sum(b): every element counts once
    grad_a = grad_b                           # add passes the gradient on unchanged
    grad_x = grad_a * y                       # mul: the other factor
    grad_y = grad_a * x
    grad_z = grad_b
    while grad_z.ndim > z.ndim:               # broadcast over rows: sum them
        grad_z = grad_z.mean(axis=0)
    return grad_x, grad_y, grad_z
'''),
    ],
    'two_layer_grads': [
        ('ReLU mask h >= 0 lets the gradient through at exactly h == 0; breaks "at exactly 0 we take 0, as torch.relu does"', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = float(np.sum(diff ** 2))
    grad_y_pred = 2.0 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h >= 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ('Returns the loss as np.sum(...), a NumPy scalar: fine for float64 (np.float64 subclasses float) but a float32 problem gives an np.float32, not the Python float the text promises', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = np.sum(diff ** 2)           # a scalar already
    grad_y_pred = 2.0 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    'train_two_layer': [
        ('Stops early when the loss is no longer finite ("no point stepping with NaN"): a diverging run returns fewer than `steps` losses and stale weights; breaks len(losses) == steps', '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        if not np.isfinite(loss):   # diverged: stop before the weights become NaN
            break
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ('Returns losses as a NumPy array instead of a list of Python floats; breaks "a list of `steps` floats"', '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, np.array(losses)
'''),
    ],
    'train_two_layer_torch': [
        ('The losses buffer is created on the CPU and then moved (torch.zeros(steps, dtype=x.dtype).to(x.device)): right device in the end, but it allocates on the host and copies; breaks "all tensors you create must be on the inputs\' device" / "never a bare torch.zeros(n)"', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.zeros(steps, dtype=x.dtype).to(x.device)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        diff = y_pred - y
        losses[t] = diff.pow(2).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ('Turns lr into torch.tensor(lr, dtype=x.dtype) once, a tensor created on the CPU (it only works on other devices because a 0-dim CPU tensor acts like a number); breaks "all tensors you create must be on the inputs\' device"', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    lr = torch.tensor(lr, dtype=x.dtype)   # one tensor for the learning rate
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        diff = y_pred - y
        losses[t] = diff.pow(2).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ('losses buffer made with torch.zeros(steps, device=x.device) in the default float32: float64 runs return float32 losses; breaks "losses ... on x.device with x.dtype"', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.zeros(steps, device=x.device)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        diff = y_pred - y
        losses[t] = diff.pow(2).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    'two_layer_grads': [
        ('ReLU mask via np.heaviside(h, 0.0) (value 0 at the kink) and the loss via np.vdot of the flattened residual, instead of (h > 0) and np.sum', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = np.dot(x, w1)
    active = np.heaviside(h, 0.0)           # 1 where h > 0, 0 where h <= 0 (0 at the kink)
    h_relu = h * active
    residual = np.dot(h_relu, w2) - y
    loss = float(np.vdot(residual, residual))
    grad_y_pred = 2.0 * residual
    grad_w2 = np.dot(h_relu.T, grad_y_pred)
    grad_w1 = np.dot(x.T, np.dot(grad_y_pred, w2.T) * active)
    return loss, grad_w1, grad_w2
'''),
    ],
    'train_two_layer': [
        ("Copies the weights once up front and then updates the copies in place (w1 -= ...), which leaves the caller's arrays unchanged and always returns new arrays, even for steps == 0", '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    w1, w2 = np.array(w1, copy=True), np.array(w2, copy=True)   # ours from here on
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(float(loss))
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
    ],
    'train_two_layer_torch': [
        ('Clones the weights once, updates them in place with sub_ under torch.no_grad(), and makes the loss buffer with x.new_empty', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    w1, w2 = w1.clone(), w2.clone()          # the caller's tensors stay as they are
    losses = x.new_empty(steps)              # x's device and dtype
    with torch.no_grad():
        for t in range(steps):
            h = x @ w1
            mask = h > 0
            h_relu = h * mask
            residual = h_relu @ w2 - y
            losses[t] = (residual * residual).sum()
            grad_y_pred = residual * 2
            grad_w2 = h_relu.T @ grad_y_pred
            grad_w1 = x.T @ ((grad_y_pred @ w2.T) * mask)
            w1.sub_(grad_w1, alpha=lr)
            w2.sub_(grad_w2, alpha=lr)
    return w1, w2, losses
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
    ('numpy_graph_grads', 0): (
        "not a mistake the text defines: it promises gradients of the inputs' shapes, not "
        "arrays of their own; y is the right value and shape for x's gradient"
    ),
    ('train_two_layer', 1): (
        'not a mistake the text defines: losses[t] and len(losses) == steps hold for an '
        'array too; no list is asked for'
    ),
    ('two_layer_grads', 1): (
        'not a mistake the text defines: the exercise is checked in float64, where '
        "NumPy's float64 is a Python float; float32 inputs are outside it"
    ),
}
