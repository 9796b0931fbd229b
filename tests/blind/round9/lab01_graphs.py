"""Lab 01: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'numpy_graph_grads': [
        ('For a broadcast z of shape (D,) it averages the upstream gradient over the rows instead of summing, breaking "the backward pass sums over the broadcast axes" (z[j] took part in N sums).', '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones_like(x * y)
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.shape == grad_b.shape:
        grad_z = grad_b.copy()
    else:
        grad_z = grad_b.mean(axis=0)
    return grad_x, grad_y, grad_z
'''),
        ('It decides that z was broadcast by its number of elements (z.size == D), so for a single-row problem (N == 1) a z of shape (1, D) gets a gradient of shape (D,), not the shape of z.', '''def numpy_graph_grads(x, y, z):
    N, D = x.shape
    grad_b = np.ones((N, D))
    grad_x = grad_b * y
    grad_y = grad_b * x
    if z.size == D:
        grad_z = grad_b.sum(axis=0)
    else:
        grad_z = grad_b
    return grad_x, grad_y, grad_z
'''),
    ],
    'two_layer_grads': [
        ('The ReLU mask is h >= 0, so the gradient passes at exactly h == 0, where the text says to take 0 as torch.relu does.', '''def two_layer_grads(x, y, w1, w2):
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
        ('It computes in float32 for speed (as the lecture network does), losing the float64 precision the text says is needed (relative 1e-10; "float32 arithmetic is not enough").', '''def two_layer_grads(x, y, w1, w2):
    x, y, w1, w2 = (a.astype(np.float32) for a in (x, y, w1, w2))
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.square(y_pred - y).sum())
    grad_y_pred = 2 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    'train_two_layer': [
        ('It updates with `w1 -= lr * g`, modifying the arrays the caller passed in place, which the text explicitly forbids (leave the arrays passed in unchanged).', '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ('It stops early once the loss is no longer finite, so a diverging run records fewer than `steps` losses, contradicting len(losses) == steps.', '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        if not np.isfinite(loss):
            break
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ('It records the loss after each update instead of before it, so losses[t] is the loss after step t (the initial loss is missing), breaking the stated order.', '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    _, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
    for _ in range(steps):
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
    return w1, w2, losses
'''),
    ],
    'train_two_layer_torch': [
        ('The losses tensor is made with device=x.device but without dtype, so it is float32 for float64 inputs; the text asks for x.dtype.', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
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
        ('It collects the per-step losses in a list and torch.stack-s them, which raises for steps=0 instead of returning an empty losses tensor.', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        losses.append(((y_pred - y) ** 2).sum())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t() @ grad_y_pred
        grad_h = (grad_y_pred @ w2.t()) * (h > 0)
        grad_w1 = x.t() @ grad_h
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(losses)
'''),
        ('It turns lr into a tensor with torch.tensor(lr).to(x.device), which the text says is made on the default device first and fails under `with torch.device("meta"):`.', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    lr_t = torch.tensor(lr, dtype=x.dtype).to(x.device)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        diff = y_pred - y
        losses[t] = (diff * diff).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t()) * (h > 0)
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr_t * grad_w1
        w2 = w2 - lr_t * grad_w2
    return w1, w2, losses
'''),
    ],
}

RIGHT = {
    'numpy_graph_grads': [
        ('Undoes broadcasting generically: sums the upstream gradient over the leading axes broadcasting added, so it works for any z that broadcasts, including N == 1.', '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones(np.broadcast_shapes(x.shape, z.shape))
    grad_a = grad_b
    grad_x = grad_a * y
    grad_y = grad_a * x
    extra = grad_b.ndim - z.ndim
    grad_z = grad_b.sum(axis=tuple(range(extra))) if extra else grad_b.copy()
    return grad_x, grad_y, grad_z.reshape(z.shape)
'''),
    ],
    'two_layer_grads': [
        ('Uses np.einsum for the products and np.where for the ReLU mask (0 at h == 0), and np.vdot for the loss.', '''def two_layer_grads(x, y, w1, w2):
    h = np.einsum("nd,dh->nh", x, w1)
    h_relu = np.where(h > 0, h, 0.0)
    y_pred = np.einsum("nh,ho->no", h_relu, w2)
    diff = y_pred - y
    loss = float(np.vdot(diff, diff))
    grad_y_pred = 2.0 * diff
    grad_w2 = np.einsum("nh,no->ho", h_relu, grad_y_pred)
    grad_h = np.where(h > 0, np.einsum("no,ho->nh", grad_y_pred, w2), 0.0)
    grad_w1 = np.einsum("nd,nh->dh", x, grad_h)
    return loss, grad_w1, grad_w2
'''),
    ],
    'train_two_layer': [
        ('Copies the weights once up front and then updates the copies in place, which leaves the arrays the caller passed untouched and returns new arrays.', '''def train_two_layer(x, y, w1, w2, lr, steps):
    w1, w2 = w1.copy(), w2.copy()
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(float(loss))
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
    ],
}
