"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'node_ops': [
        ('unbroadcast sums the size-1 axes without keepdims, so for (4, 3, 5) -> (3, 1) it returns shape (3,) instead of the input\'s shape (the text says "keeping the axis").', '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    ones = tuple(axis for axis, size in enumerate(shape) if size == 1)
    if ones:
        grad = grad.sum(axis=ones)
    return grad


def as_node(value):
    """`value` as a Node: nodes pass through; numbers and arrays become constants."""
    return value if isinstance(value, Node) else Node(value)


class Node:
    """A value in a computational graph."""

    def __init__(self, data, requires_grad=False):
        self.data = np.asarray(data, dtype=np.float64)
        self.requires_grad = requires_grad
        self.grad = None
        self.parents = ()
        self.backward_fn = None
        self.op = "leaf"

    def __repr__(self):
        return f"Node({self.op}, shape={self.data.shape}, requires_grad={self.requires_grad})"

    @staticmethod
    def result(data, parents, backward_fn, op):
        """The node for an op's output; it joins the graph only when recording is on and
        some parent requires grad."""
        out = Node(data)
        out.op = op
        if _grad_mode["enabled"] and any(p.requires_grad for p in parents):
            out.requires_grad = True
            out.parents = tuple(parents)
            out.backward_fn = backward_fn
        return out

    def __add__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape))

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (unbroadcast(grad * other.data, self.data.shape),
                    unbroadcast(grad * self.data, other.data.shape))

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (grad @ other.data.T, self.data.T @ grad)

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (grad * (self.data > 0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (np.ones_like(self.data) * grad,)

        return Node.result(self.data.sum(), (self,), backward_fn, "sum")

    # Built from the ops above; they need no backward of their own.
    def __radd__(self, other):
        return as_node(other) + self

    def __rmul__(self, other):
        return as_node(other) * self

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-as_node(other))

    def __rsub__(self, other):
        return as_node(other) + (-self)
'''),
        ("relu's backward passes the gradient where the input is exactly 0 (mask data >= 0), but the text takes the derivative at 0 to be 0, as torch.relu does.", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def as_node(value):
    """`value` as a Node: nodes pass through; numbers and arrays become constants."""
    return value if isinstance(value, Node) else Node(value)


class Node:
    """A value in a computational graph."""

    def __init__(self, data, requires_grad=False):
        self.data = np.asarray(data, dtype=np.float64)
        self.requires_grad = requires_grad
        self.grad = None
        self.parents = ()
        self.backward_fn = None
        self.op = "leaf"

    def __repr__(self):
        return f"Node({self.op}, shape={self.data.shape}, requires_grad={self.requires_grad})"

    @staticmethod
    def result(data, parents, backward_fn, op):
        """The node for an op's output; it joins the graph only when recording is on and
        some parent requires grad."""
        out = Node(data)
        out.op = op
        if _grad_mode["enabled"] and any(p.requires_grad for p in parents):
            out.requires_grad = True
            out.parents = tuple(parents)
            out.backward_fn = backward_fn
        return out

    def __add__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape))

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (unbroadcast(grad * other.data, self.data.shape),
                    unbroadcast(grad * self.data, other.data.shape))

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (grad @ other.data.T, self.data.T @ grad)

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (grad * (self.data >= 0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (np.ones_like(self.data) * grad,)

        return Node.result(self.data.sum(), (self,), backward_fn, "sum")

    # Built from the ops above; they need no backward of their own.
    def __radd__(self, other):
        return as_node(other) + self

    def __rmul__(self, other):
        return as_node(other) * self

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-as_node(other))

    def __rsub__(self, other):
        return as_node(other) + (-self)
'''),
    ],
    'engine': [
        ('It stores a gradient in .grad of every node that requires grad, intermediate results included, where the text says only leaves get .grad (an intermediate node gets no .grad).', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, visited = [], set()

    def visit(node):
        if id(node) in visited:
            return
        visited.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)

    visit(root)
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        grad = grads.get(id(node))
        if grad is None:
            continue
        if node.requires_grad:
            node.grad = grad.copy() if node.grad is None else node.grad + grad
        if node.parents:
            for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] = grads[id(parent)] + parent_grad
                else:
                    grads[id(parent)] = parent_grad
'''),
        ('At a leaf whose .grad is None it stores the incoming array itself, not a copy, and later adds in place, so two leaves fed by one `+` share one array (the text: "store a copy"; each leaf gets an array of its own).', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, visited = [], set()

    def visit(node):
        if id(node) in visited:
            return
        visited.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)

    visit(root)
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        grad = grads.get(id(node))
        if grad is None:
            continue
        if node.parents:
            for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] = grads[id(parent)] + parent_grad
                else:
                    grads[id(parent)] = parent_grad
        elif node.requires_grad:
            if node.grad is None:
                node.grad = grad
            else:
                node.grad += grad
'''),
        ('At a leaf it assigns the gradient instead of adding it to an existing .grad, so two backward calls in a row do not add up as the text (and PyTorch) require.', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, visited = [], set()

    def visit(node):
        if id(node) in visited:
            return
        visited.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)

    visit(root)
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        grad = grads.get(id(node))
        if grad is None:
            continue
        if node.parents:
            for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] = grads[id(parent)] + parent_grad
                else:
                    grads[id(parent)] = parent_grad
        elif node.requires_grad:
            node.grad = np.array(grad, dtype=np.float64, copy=True)
'''),
    ],
    'no_grad': [
        ('__exit__ returns True, which swallows any exception raised inside the block; the text says to return False (or nothing) so the exception propagates.', '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        self.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return True
'''),
        ("The saved state is kept on the class, not the instance, so an inner block overwrites the outer one's saved state and recording stays off after nested blocks (the text: restore the stored state so nesting works).", '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        no_grad.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.previous
        return False
'''),
    ],
    'train': [
        ('It appends the loss tensor (detached) instead of a Python float, breaking "losses[t] is the loss before update t, as a Python float".', '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.detach())
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return losses
'''),
    ],
    'graph_nodes': [
        ('With an explicit stack it appends a node at its first pop (pre-order), so t.grad_fn comes first rather than last, the wrong order the text warns about.', '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order, seen = [], set()
    stack = [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        children = [child for child, _ in node.next_functions if child is not None]
        stack.extend(reversed(children))
    return order
'''),
        ('The stack version pushes the children in next_functions order instead of reversed, so the last child is visited first: still a valid topological order, but not the depth-first post-order in next_functions order that the text asks for.', '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order, seen = [], set()
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                stack.append((child, False))
    return order
'''),
    ],
}

RIGHT = {
    'engine': [
        ('toposort is an iterative DFS with an explicit stack and (node, expanded) pairs; backward accumulates with np.add into fresh arrays and copies with np.copy at leaves.', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, done, entered = [], set(), set()
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            if id(node) not in done:
                done.add(id(node))
                order.append(node)
            continue
        if id(node) in entered:
            continue
        entered.add(id(node))
        stack.append((node, True))
        for parent in reversed(node.parents):
            if id(parent) not in entered:
                stack.append((parent, False))
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    pending = {id(root): np.ones_like(root.data)}
    for node in toposort(root)[::-1]:
        if id(node) not in pending:
            continue
        grad = pending.pop(id(node))
        if node.backward_fn is not None and node.parents:
            parent_grads = node.backward_fn(grad)
            for k, parent in enumerate(node.parents):
                if parent.requires_grad:
                    previous = pending.get(id(parent))
                    pending[id(parent)] = parent_grads[k] if previous is None else np.add(previous, parent_grads[k])
        elif node.requires_grad:
            node.grad = np.copy(grad) if node.grad is None else np.add(node.grad, grad)
'''),
    ],
    'no_grad': [
        ('Keeps a per-instance stack of saved states, so the same instance can even be entered again while open; restores exactly what was stored and returns None.', '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __init__(self):
        self._saved = []

    def __enter__(self):
        self._saved.append(_grad_mode["enabled"])
        _grad_mode["enabled"] = False

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self._saved.pop()
'''),
    ],
    'graph_nodes': [
        ('Uses the explicit stack with (node, expanded) pairs described in the text instead of recursion, children pushed in reverse.', '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order, entered, appended = [], set(), set()
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if node is None:
            continue
        if expanded:
            if node not in appended:
                appended.add(node)
                order.append(node)
            continue
        if node in entered:
            continue
        entered.add(node)
        stack.append((node, True))
        for child, _ in reversed(node.next_functions):
            if child is not None and child not in entered:
                stack.append((child, False))
    return order
'''),
    ],
}
