"""Realistic wrong answers for lab01_graphs: each must lose points in its checks cell."""

MUTANTS = {
    "numpy_graph_grads": [
        ("tells a broadcast z by its size: with one row, z of shape (D,) keeps shape (1, D)",
         '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones_like(x * y + z)
    grad_z = grad_b if z.size == grad_b.size else grad_b.sum(axis=0)
    return grad_b * y, grad_b * x, grad_z
'''),
        ("each input gets its own value instead of the other factor", '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones_like(x * y + z)
    grad_z = grad_b if np.shape(z) == grad_b.shape else grad_b.sum(axis=0)
    return grad_b * x, grad_b * y, grad_z
'''),
        ("does not undo broadcasting: grad_z has the shape of b", '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones_like(x * y + z)
    return grad_b * y, grad_b * x, grad_b
'''),
        ("grad_z as ones of z's shape: forgets that z[j] was used in N rows", '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones_like(x * y + z)
    return grad_b * y, grad_b * x, np.ones_like(z)
'''),
        ("reduces broadcasting with a mean instead of a sum", '''def numpy_graph_grads(x, y, z):
    grad_b = np.ones_like(x * y + z)
    grad_z = grad_b if np.shape(z) == grad_b.shape else grad_b.mean(axis=0)
    return grad_b * y, grad_b * x, grad_z
'''),
        ("returns the scalar 1.0 for the gradients of the add node", '''def numpy_graph_grads(x, y, z):
    grad_c = 1.0
    grad_b = grad_c
    return grad_b * y, grad_b * x, grad_b
'''),
    ],
    "two_layer_grads": [
        ("the loss as a 0-d NumPy array (np.tensordot), not a Python float",
         '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    diff = h_relu @ w2 - y
    loss = np.tensordot(diff, diff)
    grad_y_pred = 2.0 * diff
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_h[h <= 0] = 0
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("forgets the ReLU mask in backward", '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("applies the ReLU in place, so the mask h < 0 later finds nothing to zero", '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h[h < 0] = 0
    h_relu = h
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_h[h < 0] = 0
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("inverted ReLU mask: zeros the gradient where the unit was active", '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_h[h > 0] = 0
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("forgets the factor 2 of the squared error", '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = y_pred - y
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("mean instead of sum in the loss (and in its gradient)", '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.mean((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y) / y.size
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
        ("uses h instead of h_relu for grad_w2", '''def two_layer_grads(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("stops early once the loss is no longer finite: fewer than `steps` losses",
         '''def train_two_layer(x, y, w1, w2, lr, steps):
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
        ("records the loss after the update instead of before it", '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        _, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
        losses.append(two_layer_grads(x, y, w1, w2)[0])
    return w1, w2, losses
'''),
        ("updates the caller's arrays in place", '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("steps uphill: adds the gradient", '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 = w1 + lr * grad_w1
        w2 = w2 + lr * grad_w2
    return w1, w2, losses
'''),
        ("recomputes grad_w2 after w1 has already moved", '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss, grad_w1, _ = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        _, _, grad_w2 = two_layer_grads(x, y, w1, w2)
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ("off by one: runs steps - 1 updates", '''def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(1, steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("stacks the 0-d losses at the end: torch.stack([]) raises for steps=0", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        y_pred = h_relu @ w2
        losses.append((y_pred - y).pow(2).sum())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = (grad_y_pred @ w2.T) * (h > 0).to(x.dtype)
        w1 = w1 - lr * (x.T @ grad_h)
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(losses)
'''),
        ("the losses buffer made on the default device and moved: torch.zeros(...).to(x.device)",
         '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.zeros(steps, dtype=x.dtype).to(x.device)
    for t in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        diff = h_relu @ w2 - y
        losses[t] = diff.pow(2).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.T @ grad_y_pred
        grad_w1 = x.T @ ((grad_y_pred @ w2.T) * (h > 0).to(x.dtype))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ("lr made a tensor with torch.tensor(lr): on the default device, not x's", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    lr = torch.tensor(lr, dtype=x.dtype)
    losses = torch.empty(steps, dtype=x.dtype, device=x.device)
    for t in range(steps):
        h = x @ w1
        h_relu = h.clamp(min=0)
        diff = h_relu @ w2 - y
        losses[t] = diff.pow(2).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.T @ grad_y_pred
        grad_w1 = x.T @ ((grad_y_pred @ w2.T) * (h > 0).to(x.dtype))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ("collects losses with .item(): a host copy every step, fails off the CPU", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = []
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses.append((y_pred - y).pow(2).sum().item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.tensor(losses)
'''),
        ("creates the losses tensor with torch.zeros(steps): on the CPU, in float32", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.zeros(steps)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ('builds the ReLU mask with a hard-wired device="cpu"', '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        mask = torch.ones(h.shape, dtype=x.dtype, device="cpu")
        mask[h < 0] = 0
        grad_h = grad_y_pred.mm(w2.t()) * mask
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
        ("moves the losses to the host with .cpu() every step", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = []
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses.append((y_pred - y).pow(2).sum().cpu())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(losses)
'''),
        ("updates the caller's tensors in place", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(w2.t())
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return w1, w2, losses
'''),
        ("forgets the ReLU mask", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_w1 = x.t().mm(grad_y_pred.mm(w2.t()))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
'''),
    ],
}


# Right answers written differently from the solution: each must keep full marks, so the
# checks do not reward one way of writing the answer (tests/labs/test_check_programs.py).
ALTERNATIVES = {
    "numpy_graph_grads": [
        ("closed form: dc/dx = y, dc/dy = x, dc/dz counts how often z was used", '''def numpy_graph_grads(x, y, z):
    uses = x.shape[0] if np.ndim(z) == 1 else 1
    return y.copy(), x.copy(), np.full(np.shape(z), float(uses))
'''),
    ],
    "two_layer_grads": [
        ("np.where for the ReLU, einsum for the weight gradients", '''def two_layer_grads(x, y, w1, w2):
    h = x.dot(w1)
    active = h > 0
    a = np.where(active, h, 0.0)
    diff = a.dot(w2) - y
    g = 2 * diff
    grad_w2 = np.einsum("nh,no->ho", a, g)
    grad_w1 = np.einsum("ni,nh->ih", x, g.dot(w2.T) * active)
    return (diff ** 2).sum().item(), grad_w1, grad_w2
'''),
    ],
    "train_two_layer": [
        ("copies first, then updates in place", '''def train_two_layer(x, y, w1, w2, lr, steps):
    w1, w2 = w1.copy(), w2.copy()
    losses = []
    for _ in range(steps):
        loss, g1, g2 = two_layer_grads(x, y, w1, w2)
        w1 -= lr * g1
        w2 -= lr * g2
        losses.append(float(loss))
    return w1, w2, losses
'''),
    ],
    "train_two_layer_torch": [
        ("losses kept as 0-d tensors and stacked (an empty tensor for steps=0); torch.relu and "
         "a mask product", '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        h = x @ w1
        a = torch.relu(h)
        diff = a @ w2 - y
        losses.append((diff ** 2).sum())
        g = 2 * diff
        grad_w2 = a.T @ g
        grad_w1 = x.T @ ((g @ w2.T) * (h > 0).to(x.dtype))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, torch.stack(losses) if losses else x.new_empty(0)
'''),
    ],
}
