"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "numpy_graph_grads": [
        ("grad_z is np.ones_like(z) in every case: right for z of shape (N, D), but a broadcast z "
         "of shape (D,) needs N (the sum over rows), not 1",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones_like(x * y)
    grad_a = grad_b
    grad_x = grad_a * y
    grad_y = grad_a * x
    grad_z = np.ones_like(z)  # z is added once, so its gradient is one
    return grad_x, grad_y, grad_z
'''),
        ("for a broadcast z the sum over rows keeps the axis (keepdims=True): grad_z has shape "
         "(1, D) instead of z's (D,)",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    grad_b = np.ones(x.shape)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.shape == x.shape:
        grad_z = grad_b.copy()
    else:
        grad_z = grad_b.sum(axis=0, keepdims=True)
    return grad_x, grad_y, grad_z
'''),
    ],
    "two_layer_grads": [
        ("grad_w2 uses the pre-activation h instead of h_relu (h.T @ grad_y_pred)",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("the loss is the mean squared error (np.mean) rather than the sum the docstring asks for; "
         "the gradients are those of the sum",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.mean((y_pred - y) ** 2))

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu.copy()
    grad_h[h < 0] = 0
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("ReLU's backward applied to the gradient instead of masking by the forward input: "
         "grad_h = max(grad_h_relu, 0)",
         '''def two_layer_grads(x, y, w1, w2):
    """Squared-error loss of relu(x @ w1) @ w2 against y, and its gradients."""
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    diff = y_pred - y
    loss = float((diff ** 2).sum())

    grad_y_pred = 2 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = np.maximum(grad_h_relu, 0)  # backward of relu
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("appends the loss of the final weights after the loop as well, so losses has steps + 1 "
         "entries",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    final_loss, _, _ = two_layer_grads(x, y, w1, w2)
    losses.append(final_loss)  # so the curve shows where training ended
    return w1, w2, losses
'''),
        ("updates in place (w1 -= lr * g), which changes the caller's arrays",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    losses = []
    for step in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("the losses tensor is created on x.device but without dtype=x.dtype, so it is float32 "
         "for float64 inputs",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
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
        ("updates with in-place sub_ on the tensors passed in, so the caller's w1 and w2 change",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        losses[t] = ((y_pred - y) ** 2).sum()

        grad_y_pred = 2 * (y_pred - y)
        grad_w2 = h_relu.t() @ grad_y_pred
        grad_h_relu = grad_y_pred @ w2.t()
        grad_h = grad_h_relu * (h > 0)
        grad_w1 = x.t() @ grad_h

        w1.sub_(lr * grad_w1)
        w2.sub_(lr * grad_w2)
    return w1, w2, losses
'''),
        ("collects each loss with .item() inside the loop and builds the tensor at the end: right "
         "values and dtype on the CPU, but copies to the host each step (fails on meta)",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    loss_values = []
    for _ in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss_values.append((y_pred - y).pow(2).sum().item())

        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h = grad_h * (h > 0)
        grad_w1 = x.t().mm(grad_h)

        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    losses = torch.tensor(loss_values, dtype=x.dtype, device=x.device)
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    "numpy_graph_grads": [
        ("generic unbroadcast: the output shape from np.broadcast, then summing leading axes and "
         "size-1 axes until grad_z has z's shape",
         '''def numpy_graph_grads(x, y, z):
    """Gradients of c = sum(x * y + z) with respect to x, y and z."""
    out_shape = np.broadcast(x, z).shape
    grad_b = np.ones(out_shape)          # d sum(b) / d b
    grad_a = grad_b                      # the add passes it through
    grad_x = grad_a * y                  # the mul swaps the factors
    grad_y = grad_a * x
    grad_z = grad_b
    while grad_z.ndim > np.ndim(z):      # axes that broadcasting added in front
        grad_z = grad_z.sum(axis=0)
    for axis, size in enumerate(np.shape(z)):
        if size == 1 and grad_z.shape[axis] != 1:
            grad_z = grad_z.sum(axis=axis, keepdims=True)
    return grad_x, grad_y, grad_z.reshape(np.shape(z))
'''),
    ],
    "train_two_layer": [
        ("copies the weights once up front, then updates the private copies in place",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer network with the gradients of two_layer_grads."""
    w1 = np.array(w1, copy=True)
    w2 = np.array(w2, copy=True)
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(float(loss))
        w1 -= lr * grad_w1               # our own copy: the caller's array is untouched
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses from x.new_empty, the ReLU mask with torch.where, gradients via @ and .T "
         "instead of .mm and .t()",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """Exercise 3's gradient descent with torch tensors, on whatever device x is on."""
    losses = x.new_empty(steps)          # same device and dtype as x
    for t in range(steps):
        h = x @ w1
        h_relu = torch.where(h > 0, h, torch.zeros_like(h))
        residual = h_relu @ w2 - y
        losses[t] = (residual * residual).sum()

        grad_y_pred = 2 * residual
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = torch.where(h > 0, grad_y_pred @ w2.T, torch.zeros_like(h))
        grad_w1 = x.T @ grad_h

        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
}
