"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "numpy_graph_grads": [
        ('sums the broadcast axis with keepdims=True, so for z of shape (D,) grad_z has shape (1, D): the values are right but "each gradient must have the shape of its input" is broken', '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    grad_c = 1.0
    grad_b = grad_c * np.ones_like(x)      # sum: every element counts once
    grad_a = grad_b                        # add: passes the gradient on
    grad_x = grad_a * y                    # mul: the other factor
    grad_y = grad_a * x
    if z.ndim == 1:
        grad_z = grad_b.sum(axis=0, keepdims=True)   # broadcast over the rows: sum them
    else:
        grad_z = grad_b
    return grad_x, grad_y, grad_z
'''),
        ('detects broadcasting by comparing len(z) with len(x): for a square problem (N == D) a z of shape (D,) has the same length as x, so it gets ones instead of N — the square case the text warns about', '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if len(z) == len(x):          # same number of rows: z was not broadcast
        grad_z = np.ones_like(z)
    else:                         # z of shape (D,) was added to each of the N rows
        grad_z = grad_b.sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ('the lecture\'s idiom grad_h[h < 0] = 0 lets the gradient through where h is exactly 0 (clamp semantics), while the text takes the ReLU derivative at 0 to be 0, as torch.relu does', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x.dot(w1)
    h_relu = np.maximum(h, 0)
    y_pred = h_relu.dot(w2)
    loss = float(np.square(y_pred - y).sum())

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T.dot(grad_y_pred)
    grad_h_relu = grad_y_pred.dot(w2.T)
    grad_h = grad_h_relu.copy()
    grad_h[h < 0] = 0
    grad_w1 = x.T.dot(grad_h)
    return loss, grad_w1, grad_w2
'''),
        ('ReLU done in place on h (h_relu = h; h_relu[h_relu < 0] = 0) aliases the two arrays, so the later mask h < 0 finds nothing to block and the gradient flows through inactive units', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = h
    h_relu[h_relu < 0] = 0          # relu without allocating another (N, H) array
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = float((diff ** 2).sum())

    grad_y_pred = 2 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_h[h < 0] = 0               # blocked where the unit was inactive
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ('the loss is np.tensordot(diff, diff), a 0-d ndarray and not the Python float the text asks for (it prints like a number and compares equal, but isinstance(loss, float) is False)', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    mask = h > 0
    h_relu = h * mask
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = np.tensordot(diff, diff)      # sum over both axes of diff * diff

    grad_y_pred = 2.0 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * mask
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ('"copies" the weights with w1[:] (a copy for Python lists, but a view for NumPy arrays) and then updates in place with -=, so the caller\'s arrays are changed after all', '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    w1, w2 = w1[:], w2[:]          # work on copies, leave the caller's weights alone
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ('computes the first gradients before the loop and the loss after each update, so losses[t] is the loss after step t, not before it (the initial loss is missing, one extra at the end)', '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    _, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
    for _ in range(steps):
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)   # one call per step
        losses.append(loss)
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ('losses made with torch.zeros(steps, device=x.device) and no dtype: on the right device but always float32, so float64 inputs give float32 losses (breaks "with x.dtype")', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.zeros(steps, device=x.device)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()

        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h_relu = grad_y_pred.mm(w2.t())
        grad_h = grad_h_relu.clone()
        grad_h[h <= 0] = 0
        grad_w1 = x.t().mm(grad_h)

        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ('collects the per-step loss tensors in a list and returns torch.stack(list): device and dtype are right, but with steps=0 torch.stack([]) raises instead of returning an empty losses tensor', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = []
    for _ in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        diff = y_pred - y
        losses.append((diff * diff).sum())      # stays on the device, no .item()

        grad_y_pred = 2 * diff
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = (grad_y_pred @ w2.T) * (h > 0)
        grad_w1 = x.T @ grad_h
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(losses)
'''),
        ('w1.detach() / w2.detach() taken for a "private copy", then updated in place: detach shares storage with the argument, so the caller\'s tensors are overwritten (breaks "leave the tensors passed in unchanged")', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    w1, w2 = w1.detach(), w2.detach()     # our own weights, cut from any graph
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()

        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)

        w1.sub_(lr * grad_w1)
        w2.sub_(lr * grad_w2)
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ('undoes the broadcast generically: reshapes the upstream gradient to (-1, *z.shape) and sums the leading axis, one code path for both shapes of z, with no explicit if', '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z.

    Args:
        x, y: float arrays of shape (N, D).
        z: a float array of shape (N, D), or of shape (D,) added to every row.

    Returns:
        (grad_x, grad_y, grad_z): arrays with the shapes of x, y and z.
    """
    b = x * y + z                     # forward, only for the shape of the sum's input
    grad_b = np.ones_like(b)          # d sum(b) / d b
    grad_x = grad_b * y               # through a = x * y
    grad_y = grad_b * x
    # z is (N, D) or (D,): view the gradient as a stack of z-shaped slices and add them up
    grad_z = grad_b.reshape((-1,) + z.shape).sum(axis=0)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ('writes every product with np.einsum and the ReLU backward with np.where on the saved mask, rather than @, .T and a multiply by (h > 0)', '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients.

    Args:
        x: inputs, shape (N, D_in).  y: targets, shape (N, D_out).
        w1: first-layer weights, shape (D_in, H).  w2: second-layer weights, shape (H, D_out).

    Returns:
        (loss, grad_w1, grad_w2): the loss sum((y_pred - y)**2) as a float, and the
        gradients of the loss, with the shapes of w1 and w2.
    """
    h = np.einsum("nd,dh->nh", x, w1)
    active = h > 0                                   # relu'(0) = 0, as torch.relu
    h_relu = np.where(active, h, 0.0)
    y_pred = np.einsum("nh,ho->no", h_relu, w2)
    residual = y_pred - y
    loss = float(np.einsum("no,no->", residual, residual))

    grad_y_pred = 2.0 * residual                     # (N, D_out)
    grad_w2 = np.einsum("nh,no->ho", h_relu, grad_y_pred)
    grad_h_relu = np.einsum("no,ho->nh", grad_y_pred, w2)
    grad_h = np.where(active, grad_h_relu, 0.0)
    grad_w1 = np.einsum("nd,nh->dh", x, grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer_torch": [
        ('allocates the losses with x.new_zeros (inherits device and dtype), runs the loop under torch.no_grad() and writes the ReLU backward as torch.where, with out-of-place updates', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out), tensors on one device.
        w1, w2: initial weights (D_in, H) and (H, D_out) on that device; not modified.
        lr: learning rate.  steps: number of updates.

    Returns:
        (w1, w2, losses): the final weights and a tensor of shape (steps,) on x.device with
        x.dtype, losses[t] being the loss before update t.
    """
    losses = x.new_zeros(steps)            # x's device and dtype
    with torch.no_grad():                  # manual gradients: nothing to record
        for step in range(steps):
            h = x @ w1
            h_relu = torch.where(h > 0, h, torch.zeros_like(h))
            residual = h_relu @ w2 - y
            losses[step] = (residual * residual).sum()

            grad_y_pred = 2 * residual
            grad_w2 = h_relu.T @ grad_y_pred
            grad_h = torch.where(h > 0, grad_y_pred @ w2.T, torch.zeros_like(h))
            grad_w1 = x.T @ grad_h

            w1, w2 = w1 - lr * grad_w1, w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
}
