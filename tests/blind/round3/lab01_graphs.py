"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 3).

The written answer `relu_mask_answer` is graded by hand and has no entries here.
"""

WRONG = {
    "numpy_graph_grads": [
        ("detects the broadcast z by z.shape[0] != x.shape[0]: when z has shape (D,) and D == N it is "
         "taken as not broadcast and grad_z is ones instead of N",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    grad_b = np.ones_like(x)          # c = sum(b)
    grad_a = grad_b                   # b = a + z
    grad_x = grad_a * y               # a = x * y
    grad_y = grad_a * x
    if z.shape[0] != x.shape[0]:      # z was broadcast over the rows
        grad_z = grad_b.sum(axis=0)
    else:
        grad_z = np.ones_like(z)
    return grad_x, grad_y, grad_z
'''),
        ("always sums grad_b over axis 0 for z: right for z of shape (D,), but a z of shape (N, D) gets a "
         "gradient of shape (D,) full of N",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    grad_b = np.ones(x.shape)
    grad_x = grad_b * y
    grad_y = grad_b * x
    # z is added to every row, so its gradient sums over the rows
    grad_z = grad_b.sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("ReLU mask h >= 0: at h exactly 0 the gradient passes instead of being 0 as the text fixes it",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients.

    Args:
        x: inputs, shape (N, D_in).  y: targets, shape (N, D_out).
        w1: first-layer weights, shape (D_in, H).  w2: second-layer weights, shape (H, D_out).

    Returns:
        (loss, grad_w1, grad_w2): the loss sum((y_pred - y)**2) as a float, and the
        gradients of the loss, with the shapes of w1 and w2.
    """
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h >= 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("mean squared error (loss / (N * D_out), and gradients scaled alike) instead of the sum the text "
         "defines",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients.

    Args:
        x: inputs, shape (N, D_in).  y: targets, shape (N, D_out).
        w1: first-layer weights, shape (D_in, H).  w2: second-layer weights, shape (H, D_out).

    Returns:
        (loss, grad_w1, grad_w2): the loss sum((y_pred - y)**2) as a float, and the
        gradients of the loss, with the shapes of w1 and w2.
    """
    h = x.dot(w1)
    h_relu = np.maximum(h, 0.0)
    y_pred = h_relu.dot(w2)
    diff = y_pred - y
    loss = float(np.mean(diff ** 2))
    grad_y_pred = 2.0 * diff / diff.size
    grad_w2 = h_relu.T.dot(grad_y_pred)
    grad_h = grad_y_pred.dot(w2.T)
    grad_h[h < 0] = 0
    grad_w1 = x.T.dot(grad_h)
    return loss, grad_w1, grad_w2
'''),
        ("computes in float32 'as the GPU would': loss and gradients of float64 inputs carry float32 "
         "rounding (about 1e-7 relative) and come back as float32 arrays",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients.

    Args:
        x: inputs, shape (N, D_in).  y: targets, shape (N, D_out).
        w1: first-layer weights, shape (D_in, H).  w2: second-layer weights, shape (H, D_out).

    Returns:
        (loss, grad_w1, grad_w2): the loss sum((y_pred - y)**2) as a float, and the
        gradients of the loss, with the shapes of w1 and w2.
    """
    x, y, w1, w2 = (np.asarray(a, dtype=np.float32) for a in (x, y, w1, w2))
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(((y_pred - y) ** 2).sum())
    grad_y_pred = 2 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("copies w1 before updating in place but not w2: `w2 -= lr * g2` changes the caller's w2",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out).
        w1, w2: initial weights (D_in, H) and (H, D_out); not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights (new arrays) and a list of `steps` floats,
        losses[t] being the loss before update t.
    """
    def grads(w1, w2):
        h = x @ w1
        h_relu = np.maximum(h, 0)
        y_pred = h_relu @ w2
        g_pred = 2 * (y_pred - y)
        g_w2 = h_relu.T @ g_pred
        g_w1 = x.T @ ((g_pred @ w2.T) * (h > 0))
        return float(((y_pred - y) ** 2).sum()), g_w1, g_w2

    w1 = w1.copy()  # leave the caller's weights alone
    losses = []
    for _ in range(steps):
        loss, g1, g2 = grads(w1, w2)
        losses.append(loss)
        w1 -= lr * g1
        w2 -= lr * g2
    return w1, w2, losses
'''),
        ("losses[t] is the loss after update t (recorded after the step), not before it",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out).
        w1, w2: initial weights (D_in, H) and (H, D_out); not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights (new arrays) and a list of `steps` floats,
        losses[t] being the loss before update t.
    """
    def loss_and_grads(w1, w2):
        h = x @ w1
        h_relu = np.maximum(h, 0)
        y_pred = h_relu @ w2
        g_pred = 2 * (y_pred - y)
        g_w2 = h_relu.T @ g_pred
        g_w1 = x.T @ ((g_pred @ w2.T) * (h > 0))
        return float(((y_pred - y) ** 2).sum()), g_w1, g_w2

    losses = []
    for _ in range(steps):
        _, g1, g2 = loss_and_grads(w1, w2)
        w1 = w1 - lr * g1
        w2 = w2 - lr * g2
        losses.append(loss_and_grads(w1, w2)[0])  # how good the step was
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses made with torch.zeros(steps, device=x.device) and no dtype: float32 even for float64 "
         "inputs (the recorded losses are rounded to float32)",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out), tensors on one device.
        w1, w2: initial weights (D_in, H) and (H, D_out) on that device; not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights and a tensor of shape (steps,) on x.device with
        x.dtype, losses[t] being the loss before update t.
    """
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
        ("takes w1.detach() / w2.detach() as 'private copies' and updates them in place: detach shares "
         "storage, so the caller's tensors are changed",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out), tensors on one device.
        w1, w2: initial weights (D_in, H) and (H, D_out) on that device; not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights and a tensor of shape (steps,) on x.device with
        x.dtype, losses[t] being the loss before update t.
    """
    w1, w2 = w1.detach(), w2.detach()  # our own tensors, outside any graph
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        diff = y_pred - y
        losses[t] = (diff * diff).sum()
        grad_y_pred = 2 * diff
        grad_w2 = h_relu.t() @ grad_y_pred
        grad_h = (grad_y_pred @ w2.t()) * (h > 0)
        grad_w1 = x.t() @ grad_h
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("collects each loss with .item() and builds the tensor at the end: the loop copies to the host "
         "every step and .item() raises on the meta device",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out), tensors on one device.
        w1, w2: initial weights (D_in, H) and (H, D_out) on that device; not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights and a tensor of shape (steps,) on x.device with
        x.dtype, losses[t] being the loss before update t.
    """
    history = []
    for _ in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        history.append((y_pred - y).pow(2).sum().item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h = grad_h * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    losses = torch.tensor(history, dtype=x.dtype, device=x.device)
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ("generic unbroadcast helper: broadcasts the upstream gradient to the output shape, then sums "
         "away the leading axes that z lacks",
         '''def _reduce_to(grad, shape):
    """Sum a gradient over the leading axes that broadcasting added, so it has `shape`."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad


def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    out_shape = np.broadcast_shapes(x.shape, y.shape, z.shape)
    grad_c = np.ones((), dtype=np.result_type(x, y, z))
    grad_b = np.broadcast_to(grad_c, out_shape)   # sum node
    grad_a = grad_b                                # add node, first input
    grad_z = _reduce_to(grad_b, z.shape).copy()    # add node, second input
    grad_x = grad_a * y                            # mul node
    grad_y = grad_a * x
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("np.einsum for every product and np.where for the ReLU's backward",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients.

    Args:
        x: inputs, shape (N, D_in).  y: targets, shape (N, D_out).
        w1: first-layer weights, shape (D_in, H).  w2: second-layer weights, shape (H, D_out).

    Returns:
        (loss, grad_w1, grad_w2): the loss sum((y_pred - y)**2) as a float, and the
        gradients of the loss, with the shapes of w1 and w2.
    """
    h = np.einsum("nd,dh->nh", x, w1)
    active = h > 0
    h_relu = np.where(active, h, 0.0)
    y_pred = np.einsum("nh,ho->no", h_relu, w2)
    residual = y_pred - y
    loss = float(np.einsum("no,no->", residual, residual))
    grad_y_pred = 2.0 * residual
    grad_w2 = np.einsum("nh,no->ho", h_relu, grad_y_pred)
    grad_h = np.where(active, np.einsum("no,ho->nh", grad_y_pred, w2), 0.0)
    grad_w1 = np.einsum("nd,nh->dh", x, grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer_torch": [
        ("losses pre-allocated with x.new_empty, ReLU backward through torch.where against zeros_like, "
         "updates out of place under torch.no_grad()",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out), tensors on one device.
        w1, w2: initial weights (D_in, H) and (H, D_out) on that device; not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights and a tensor of shape (steps,) on x.device with
        x.dtype, losses[t] being the loss before update t.
    """
    losses = x.new_empty(steps)   # x's device and dtype
    with torch.no_grad():
        for step in range(steps):
            h = torch.matmul(x, w1)
            h_relu = torch.where(h > 0, h, torch.zeros_like(h))
            y_pred = torch.matmul(h_relu, w2)
            residual = y_pred - y
            losses[step] = torch.sum(residual ** 2)
            grad_y_pred = residual * 2
            grad_w2 = torch.matmul(h_relu.transpose(0, 1), grad_y_pred)
            grad_h_relu = torch.matmul(grad_y_pred, w2.transpose(0, 1))
            grad_h = torch.where(h > 0, grad_h_relu, torch.zeros_like(grad_h_relu))
            grad_w1 = torch.matmul(x.transpose(0, 1), grad_h)
            w1 = w1 - lr * grad_w1
            w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
}
