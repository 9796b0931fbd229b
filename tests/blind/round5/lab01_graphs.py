"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 5)."""

WRONG = {
    "numpy_graph_grads": [
        ("detects a broadcast z by comparing z.shape[0] with N: when N == D a (D,) z is taken as (N, D) and gets the full (N, D) gradient",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y + z)
    grad_a = grad_b
    grad_x = grad_a * y
    grad_y = grad_a * x
    if z.shape[0] == x.shape[0]:   # z has a row per example
        grad_z = grad_b
    else:                          # z was added to every row
        grad_z = grad_b.sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
        ("a broadcast z's gradient averaged over the rows (mean(axis=0)) instead of summed: ones instead of N",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones(np.broadcast(x * y, z).shape)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.ndim == 1:
        grad_z = grad_b.mean(axis=0)
    else:
        grad_z = grad_b
    return grad_x, grad_y, grad_z
'''),
        ("mul rule with the factors mixed up for x: grad_x = grad_a * x (its own value) instead of the other factor y",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_a = np.ones_like(x)
    grad_x = grad_a * x
    grad_y = grad_a * x
    grad_z = np.ones_like(x)
    if z.shape != x.shape:
        grad_z = grad_z.sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("ReLU mask h >= 0: a unit with h exactly 0 passes the gradient instead of blocking it",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h >= 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("casts the inputs to float32 for speed: loss and gradients lose precision far beyond a relative 1e-10",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    x, y, w1, w2 = (np.asarray(a, dtype=np.float32) for a in (x, y, w1, w2))
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = float(np.sum(diff * diff))
    grad_y_pred = 2 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("updates in place (w1 -= lr * g) on the arrays it was given: the caller's w1 and w2 are overwritten",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("records the loss after each update instead of before it: losses is shifted by one step",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for _ in range(steps):
        _, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        loss, _, _ = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses preallocated with torch.zeros(steps, dtype=x.dtype): dtype right but the tensor is on the CPU, not on x.device",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.zeros(steps, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ("collects each loss with .item() and builds the tensor at the end: copies to the host at every step, and fails on the meta device",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = []
    for _ in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        losses.append((y_pred - y).pow(2).sum().item())
        grad_y_pred = 2 * (y_pred - y)
        grad_w2 = h_relu.T @ grad_y_pred
        grad_w1 = x.T @ ((grad_y_pred @ w2.T) * (h > 0))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.tensor(losses, dtype=x.dtype, device=x.device)
'''),
        ("stacks the per-step loss tensors with torch.stack(losses): with steps=0 the list is empty and torch.stack raises",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = []
    for _ in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        losses.append((y_pred - y).pow(2).sum())
        grad_y_pred = 2 * (y_pred - y)
        grad_w2 = h_relu.T @ grad_y_pred
        grad_w1 = x.T @ ((grad_y_pred @ w2.T) * (h > 0))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(losses)
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ("gradients expanded with np.broadcast_to and the broadcast axes summed by a general unbroadcast helper",
         '''def _sum_to_shape(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    out_shape = np.broadcast_shapes(x.shape, y.shape, z.shape)
    grad_b = np.broadcast_to(np.ones(()), out_shape)   # d sum / d b
    grad_a = grad_b                                    # add passes it through
    grad_z = _sum_to_shape(np.array(grad_b), z.shape)
    grad_x = grad_a * y
    grad_y = grad_a * x
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("np.where for the ReLU and its backward, einsum for the weight gradients",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    active = h > 0
    h_relu = np.where(active, h, 0.0)
    y_pred = h_relu @ w2
    residual = y_pred - y
    loss = float(np.einsum("ij,ij->", residual, residual))
    grad_y_pred = 2.0 * residual
    grad_w2 = np.einsum("nh,no->ho", h_relu, grad_y_pred)
    grad_h = np.where(active, grad_y_pred @ w2.T, 0.0)
    grad_w1 = np.einsum("nd,nh->dh", x, grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer_torch": [
        ("losses preallocated with x.new_empty, the step under torch.no_grad(), weights cloned first and updated in place on the clones",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    with torch.no_grad():
        w1, w2 = w1.clone(), w2.clone()     # the caller's tensors stay untouched
        losses = x.new_empty(steps)         # x's device and dtype
        for t in range(steps):
            h = x.mm(w1)
            h_relu = h.clamp(min=0)
            diff = h_relu.mm(w2) - y
            losses[t] = (diff * diff).sum()
            grad_y_pred = 2 * diff
            grad_w2 = h_relu.t().mm(grad_y_pred)
            grad_h = grad_y_pred.mm(w2.t()).masked_fill(h <= 0, 0)
            grad_w1 = x.t().mm(grad_h)
            w1.sub_(lr * grad_w1)
            w2.sub_(lr * grad_w2)
    return w1, w2, losses
'''),
    ],
}
