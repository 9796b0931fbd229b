"""Lab 02: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "node_ops": [
        ("unbroadcast removes extra axes from the right (sums axis -1) instead of the leading axes", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad, dtype=np.float64)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=-1)
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
            return unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape)

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return unbroadcast(grad * other.data, self.data.shape), unbroadcast(grad * self.data, other.data.shape)

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return grad @ other.data.T, self.data.T @ grad

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (grad * (self.data > 0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (grad * np.ones_like(self.data),)

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
        ("unbroadcast used in + but forgotten in *: a broadcast factor gets a gradient of the output's shape", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad, dtype=np.float64)
    while grad.ndim > len(shape):          # leading axes added by broadcasting
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes of size 1 that were stretched
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
            return unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape)

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return grad * other.data, grad * self.data

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return grad @ other.data.T, self.data.T @ grad

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (grad * (self.data > 0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (grad * np.ones_like(self.data),)

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
        ("sum's backward ignores the upstream gradient and returns ones (right only when sum is the root)", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad, dtype=np.float64)
    while grad.ndim > len(shape):          # leading axes added by broadcasting
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes of size 1 that were stretched
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
            return unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape)

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return unbroadcast(grad * other.data, self.data.shape), unbroadcast(grad * self.data, other.data.shape)

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return grad @ other.data.T, self.data.T @ grad

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (grad * (self.data > 0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (np.ones_like(self.data),)

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
    "engine": [
        ("toposort without a visited set: a reused node is listed (and back-propagated) once per path", '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order = []

    def visit(node):
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
                node.grad = grad.copy()
            else:
                node.grad = node.grad + grad
'''),
        ("leaf .grad assigned, not added: a second backward call overwrites instead of accumulating", '''def toposort(root):
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
            node.grad = grad.copy()
'''),
        ("accumulates with in-place += and stores leaf gradients without copying: arrays shared between parents are corrupted", '''def toposort(root):
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
                    grads[id(parent)] += parent_grad
                else:
                    grads[id(parent)] = parent_grad
        elif node.requires_grad:
            if node.grad is None:
                node.grad = grad
            else:
                node.grad += grad
'''),
    ],
    "no_grad": [
        ("saved state kept on the class, not the instance: a nested block overwrites it, and recording stays off after the outer block", '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    saved = True

    def __enter__(self):
        no_grad.saved = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.saved
        return False
'''),
        ("__exit__ returns True: an exception raised inside the block is swallowed", '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        self.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return True
'''),
    ],
    "train": [
        ("losses are 0-dim tensors (loss.detach()) instead of Python floats", '''def train(x, y, w1, w2, lr, steps):
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
    "graph_nodes": [
        ("explicit stack with children pushed in next_functions order, so they are visited last-first", '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order, seen = [], set()
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
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
    "engine": [
        ("iterative toposort with a stack of parent iterators; gradients popped from the dict as each node is finished", '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, seen = [], {id(root)}
    stack = [(root, iter(root.parents))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append((parent, iter(parent.parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    pending = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        grad = pending.pop(id(node), None)
        if grad is None:
            continue
        if node.parents:
            for parent, contribution in zip(node.parents, node.backward_fn(grad)):
                if parent.requires_grad:
                    key = id(parent)
                    pending[key] = contribution if key not in pending else np.add(pending[key], contribution)
        elif node.requires_grad:
            node.grad = np.array(grad, dtype=np.float64) if node.grad is None else np.add(node.grad, grad)
'''),
    ],
    "train": [
        ("loop over the parameters, sub_ under torch.no_grad(), reset by setting .grad = None, float(loss.detach())", '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    params = (w1, w2)
    losses = []
    for _ in range(steps):
        y_pred = torch.relu(x @ w1) @ w2
        loss = ((y_pred - y) ** 2).sum()
        losses.append(float(loss.detach()))
        loss.backward()
        with torch.no_grad():
            for w in params:
                w.sub_(lr * w.grad)
                w.grad = None
    return losses
'''),
    ],
    "graph_nodes": [
        ("iterative DFS with a stack of next_functions iterators (exactly the recursive post-order)", '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    root = t.grad_fn
    order, seen = [], {root}
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child, _ in children:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    return order
'''),
    ],
}
