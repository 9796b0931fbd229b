"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "numpy_graph_grads": [
        ("grad_z = ones_like(z) whatever z's shape: a z of shape (D,) added to all N rows gets 1 per element instead of N (the broadcast sum is missing)",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    grad_b = np.ones_like(x)        # d sum(b) / d b
    grad_a = grad_b                 # add passes the gradient through
    grad_z = np.ones_like(z)        # ... to both of its inputs
    grad_x = grad_a * y
    grad_y = grad_a * x
    return grad_x, grad_y, grad_z
'''),
        ("detects broadcasting with len(z) != len(x): a (D,) z when N == D is taken for an (N, D) one, and grad_z comes back with shape (N, D)",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    grad_b = np.ones_like(x * y)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if len(z) == len(x):            # one row of z per row of x: no broadcasting
        grad_z = grad_b.copy()
    else:                           # z was added to every row: sum over the rows
        grad_z = grad_b.sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("ReLU mask h >= 0: a unit with h exactly 0 passes the gradient (the text takes the derivative at 0 to be 0, as torch.relu)",
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

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h >= 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("casts every array to float32 first to make the products faster: loss and gradients are only float32-accurate (about 1e-7 relative), not float64",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients.

    Args:
        x: inputs, shape (N, D_in).  y: targets, shape (N, D_out).
        w1: first-layer weights, shape (D_in, H).  w2: second-layer weights, shape (H, D_out).

    Returns:
        (loss, grad_w1, grad_w2): the loss sum((y_pred - y)**2) as a float, and the
        gradients of the loss, with the shapes of w1 and w2.
    """
    # single precision: half the memory traffic, twice the BLAS throughput
    x, y, w1, w2 = (np.asarray(a, dtype=np.float32) for a in (x, y, w1, w2))
    h = x.dot(w1)
    h_relu = np.maximum(h, 0)
    y_pred = h_relu.dot(w2)
    diff = y_pred - y
    loss = float((diff * diff).sum())

    grad_y_pred = 2 * diff
    grad_w2 = h_relu.T.dot(grad_y_pred)
    grad_h = grad_y_pred.dot(w2.T)
    grad_h[h <= 0] = 0
    grad_w1 = x.T.dot(grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("copies w1 before the loop but updates w2 in place with -=: the caller's w2 is modified (and the returned w2 is the caller's array)",
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
    w1 = w1.copy()          # keep the caller's weights intact
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("records the loss after each update (losses[t] is the loss at the weights after step t, not before it)",
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
    _, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
    losses = []
    for _ in range(steps):
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)  # how well the step just taken did
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses made with torch.zeros(steps, device=x.device) and no dtype: a float32 tensor when x is float64 (device right, dtype wrong, losses rounded to float32)",
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
        ("takes w1.detach() / w2.detach() as its own working copies and updates them with -=: detach shares storage, so the caller's tensors are overwritten",
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
    w1, w2 = w1.detach(), w2.detach()   # our own tensors, cut off from the caller's
    losses = torch.empty(steps, dtype=x.dtype, device=x.device)
    for t in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        losses[t] = ((y_pred - y) ** 2).sum()
        grad_y_pred = 2 * (y_pred - y)
        grad_w2 = h_relu.t() @ grad_y_pred
        grad_h = (grad_y_pred @ w2.t()) * (h > 0)
        grad_w1 = x.t() @ grad_h
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("collects loss.item() in a Python list and builds the tensor at the end: right on the CPU, but .item() needs data, so the meta device raises",
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
        ("stacks a list of 0-d loss tensors with torch.stack at the end: right for steps >= 1, but torch.stack([]) raises for steps == 0 instead of returning an empty (0,) tensor",
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
    per_step = []
    for _ in range(steps):
        h = x.mm(w1)
        mask = h > 0
        h_relu = h * mask
        y_pred = h_relu.mm(w2)
        err = y_pred - y
        per_step.append((err * err).sum())   # stays on the device: no .item()
        grad_y_pred = 2.0 * err
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_w1 = x.t().mm(grad_y_pred.mm(w2.t()) * mask)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(per_step)
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ("general unbroadcast: sums the leading axes off the upstream gradient until it has z's rank, gradients built with np.broadcast_to copies",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    b_shape = np.broadcast_shapes(x.shape, y.shape, z.shape)
    grad_b = np.ones(b_shape)                 # sum: every element counts once
    grad_a, grad_z = grad_b, grad_b           # add: passes g to both inputs
    while grad_z.ndim > z.ndim:               # undo the broadcast of z
        grad_z = grad_z.sum(axis=0)
    grad_x = np.array(grad_a * y)             # mul: the other factor
    grad_y = np.array(grad_a * x)
    return grad_x, grad_y, np.array(grad_z)
'''),
    ],
    "two_layer_grads": [
        ("np.where for the ReLU and its mask, einsum for every matrix product",
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
        ("clones the weights once and updates the clones in place with sub_, losses preallocated with new_empty (x's device and dtype), mask cast with .to(h.dtype)",
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
    w1, w2 = w1.clone(), w2.clone()          # fresh storage: the caller's tensors stay as they are
    losses = x.new_empty(steps)              # on x.device, with x.dtype
    step = 0
    while step < steps:
        h = torch.matmul(x, w1)
        mask = (h > 0).to(h.dtype)
        h_relu = h * mask
        diff = torch.matmul(h_relu, w2) - y
        losses[step] = diff.square().sum()
        grad_y_pred = diff * 2
        grad_w2 = torch.matmul(h_relu.transpose(0, 1), grad_y_pred)
        grad_w1 = torch.matmul(x.transpose(0, 1), torch.matmul(grad_y_pred, w2.transpose(0, 1)) * mask)
        w1.sub_(lr * grad_w1)
        w2.sub_(lr * grad_w2)
        step += 1
    return w1, w2, losses
'''),
    ],
}
