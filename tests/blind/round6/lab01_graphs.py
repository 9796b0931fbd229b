"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "numpy_graph_grads": [
        ("sums a broadcast z's gradient over axis=1 instead of axis 0: shape (N,) and value D, right only when N == D", '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y)
    grad_a = grad_b
    grad_x = grad_a * y
    grad_y = grad_a * x
    if z.ndim == 1:
        grad_z = grad_b.sum(axis=1)  # z was repeated along the rows
    else:
        grad_z = grad_b.copy()
    return grad_x, grad_y, grad_z
'''),
        ("decides whether z was broadcast by z.shape[0] != N: a (D,) z with N == D is taken as unbroadcast and gets ones instead of N", '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    n = x.shape[0]
    grad_b = np.ones(x.shape)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.shape[0] != n:  # z is a single row added to every row
        grad_z = grad_b.sum(axis=0)
    else:
        grad_z = np.ones_like(z)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("ReLU mask h >= 0: a unit with h exactly 0 passes the gradient, where the text (and torch.relu) takes 0", '''def two_layer_grads(x, y, w1, w2):
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
        ("casts the inputs to float32 \"as torch does\": loss and gradients lose the float64 precision the check asks (relative 1e-10)", '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    x, y, w1, w2 = (np.asarray(a, dtype=np.float32) for a in (x, y, w1, w2))
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = float(np.sum(diff ** 2))
    grad_y_pred = 2 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("takes np.asarray(w1) as its 'own copy' and updates with -=: asarray does not copy, so the caller's arrays are changed", '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    w1, w2 = np.asarray(w1), np.asarray(w2)  # our own arrays
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("records the loss after each update, not before it: losses[t] is the loss before update t + 1", '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for _ in range(steps):
        _, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        new_loss, _, _ = two_layer_grads(x, y, w1, w2)
        losses.append(new_loss)
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses = torch.zeros(steps, device=x.device) without dtype: float32 even for float64 inputs", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
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
        ("w1.detach() as a 'copy' then in-place -=: detach shares storage, so the caller's w1 and w2 are overwritten", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    w1, w2 = w1.detach(), w2.detach()
    losses = torch.zeros(steps, dtype=x.dtype, device=x.device)
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
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("keeps a Python list of loss.item() and builds the tensor at the end: copies to the host at every step, and .item() fails on the meta device", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    history = []
    for _ in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        diff = y_pred - y
        history.append(diff.pow(2).sum().item())
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.tensor(history, dtype=x.dtype, device=x.device)
'''),
        ("updates w2 before back-propagating through it: grad_h is computed with the new w2, so grad_w1 is wrong", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.empty(steps, dtype=x.dtype, device=x.device)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        diff = y_pred - y
        losses[t] = diff.pow(2).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.t().mm(grad_y_pred)
        w2 = w2 - lr * grad_w2
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ("a general unbroadcast: the upstream gradient in the broadcast shape, summed over the leading axes broadcasting added", '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    out_shape = np.broadcast_shapes(x.shape, y.shape, z.shape)
    upstream = np.ones(out_shape)

    def reduce_to(grad, shape):
        extra = grad.ndim - len(shape)
        if extra:
            grad = grad.sum(axis=tuple(range(extra)))
        return grad.reshape(shape)

    grad_x = reduce_to(upstream * y, x.shape)
    grad_y = reduce_to(upstream * x, y.shape)
    grad_z = reduce_to(upstream, z.shape)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("einsum for every product, np.where for the ReLU mask, and the loss as a dot product of the residual with itself", '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = np.einsum("nd,dh->nh", x, w1)
    active = h > 0
    h_relu = np.where(active, h, 0.0)
    residual = np.einsum("nh,ho->no", h_relu, w2) - y
    loss = float(np.vdot(residual, residual))
    grad_y_pred = 2.0 * residual
    grad_w2 = np.einsum("nh,no->ho", h_relu, grad_y_pred)
    grad_h = np.where(active, np.einsum("no,ho->nh", grad_y_pred, w2), 0.0)
    grad_w1 = np.einsum("nd,nh->dh", x, grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer_torch": [
        ("the whole loop under torch.no_grad(), losses from x.new_zeros, torch.where for the mask and torch.sub(..., alpha=lr) for the update", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    with torch.no_grad():
        losses = x.new_zeros(steps)
        for t in range(steps):
            h = x @ w1
            h_relu = torch.where(h > 0, h, torch.zeros_like(h))
            residual = h_relu @ w2 - y
            losses[t] = (residual * residual).sum()
            grad_y_pred = residual * 2
            grad_w2 = h_relu.T @ grad_y_pred
            grad_h = torch.where(h > 0, grad_y_pred @ w2.T, torch.zeros_like(h))
            grad_w1 = x.T @ grad_h
            w1 = torch.sub(w1, grad_w1, alpha=lr)
            w2 = torch.sub(w2, grad_w2, alpha=lr)
    return w1, w2, losses
'''),
    ],
}
