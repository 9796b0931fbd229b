"""Lab 01: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "numpy_graph_grads": [
        ("broadcast z: sums over the rows with keepdims=True, so grad_z has shape (1, D), not (D,)", '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y + z)      # d sum(b) / d b
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.shape == grad_b.shape:
        grad_z = grad_b.copy()
    else:                                  # z of shape (D,) was added to every row
        grad_z = grad_b.sum(axis=0, keepdims=True)
    return grad_x, grad_y, grad_z
'''),
        ("broadcast z: each z[j] counted D times (the row length) instead of N times (the number of rows)", '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y + z)      # d sum(b) / d b
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.shape == grad_b.shape:
        grad_z = grad_b.copy()
    else:                                  # z of shape (D,) was added to every row
        grad_z = np.full(z.shape, float(x.shape[1]))
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("loss reduced over the batch axis only: returns a per-output vector of length D_out, not a float", '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0.0)
    y_pred = h_relu @ w2
    loss = np.sum((y_pred - y) ** 2, axis=0)
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("ReLU backward multiplies by the activation value h_relu instead of the 0/1 mask h > 0", '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0.0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * h_relu
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("copies w1 before the in-place updates but forgets w2: the caller's w2 is modified", '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    w1 = w1.copy()          # keep the caller's weights intact
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("ignores the lr argument: the lecture's learning rate 1e-6 is hard-coded", '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    learning_rate = 1e-6    # the lecture's value
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 = w1 - learning_rate * grad_w1
        w2 = w2 - learning_rate * grad_w2
    return w1, w2, losses
'''),
        ("losses[t] is the loss after update t (gradients computed once before the loop, loss recorded after each step)", '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
    for _ in range(steps):
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses buffer made with torch.zeros(steps, device=x.device): right device, but the default float32 dtype instead of x.dtype", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.zeros(steps, device=x.device)
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
        ("collects loss.item() in a Python list and builds the tensor at the end: copies to the host every step (fails on meta)", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    history = []
    for _ in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        history.append((y_pred - y).pow(2).sum().item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    losses = torch.tensor(history, dtype=x.dtype, device=x.device)
    return w1, w2, losses
'''),
        ("treats .detach() as a copy, then updates in place: the caller's w1 and w2 change (detach shares storage)", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    w1, w2 = w1.detach(), w2.detach()   # work on our own tensors
    losses = torch.empty(steps, dtype=x.dtype, device=x.device)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ("general unbroadcast: upstream ones in the broadcast shape, summed over the axes z lacks", '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    upstream = np.ones(np.broadcast_shapes(x.shape, y.shape, z.shape))
    grad_x = np.multiply(upstream, y)
    grad_y = np.multiply(upstream, x)
    added_axes = upstream.ndim - z.ndim
    if added_axes:
        grad_z = upstream.sum(axis=tuple(range(added_axes)))
    else:
        grad_z = upstream.copy()
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("np.einsum for every product, np.heaviside(h, 0) as the ReLU mask, loss via np.vdot", '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = np.einsum("nd,dh->nh", x, w1)
    active = np.heaviside(h, 0.0)               # 1 where h > 0, 0 where h <= 0
    h_relu = h * active
    residual = np.einsum("nh,ho->no", h_relu, w2) - y
    loss = float(np.vdot(residual, residual))   # sum of squares
    grad_y_pred = 2.0 * residual
    grad_w2 = np.einsum("nh,no->ho", h_relu, grad_y_pred)
    grad_h = np.einsum("no,ho->nh", grad_y_pred, w2) * active
    grad_w1 = np.einsum("nd,nh->dh", x, grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer_torch": [
        ("x.new_zeros for the loss buffer (inherits device and dtype), torch.where for the ReLU and its mask, tuple update", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = x.new_zeros(steps)
    for t in range(steps):
        h = x @ w1
        active = h > 0
        h_relu = torch.where(active, h, torch.zeros_like(h))
        residual = h_relu @ w2 - y
        losses[t] = residual.square().sum()
        grad_y_pred = 2 * residual
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = torch.where(active, grad_y_pred @ w2.T, torch.zeros_like(h))
        grad_w1 = x.T @ grad_h
        w1, w2 = w1 - lr * grad_w1, w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
}
