"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "node_ops": [
        ("unbroadcast sums the size-1 axes without keepdims: (4, 3, 5) -> (3, 1) comes back as (3,)",
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    stretched = tuple(axis for axis, size in enumerate(shape) if size == 1)
    if stretched:
        grad = grad.sum(axis=stretched)
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
            return (unbroadcast(grad * other.data, self.data.shape),
                    unbroadcast(grad * self.data, other.data.shape))

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
        ("unbroadcast used in + but forgotten in *: a broadcast factor (a bias of shape (D,), or 2.0) gets a gradient of the output's shape",
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


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
        ("relu backward passes the gradient where x >= 0, i.e. 1 at exactly 0 (the text asks for 0, as torch.relu)",
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


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
            return unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape)

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
            return grad @ other.data.T, self.data.T @ grad

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
    "engine": [
        ("backward assigns each parent's gradient instead of adding it: a node used twice keeps only the last gradient",
         '''def toposort(root):
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
                if parent.requires_grad:
                    grads[id(parent)] = parent_grad
        elif node.requires_grad:
            if node.grad is None:
                node.grad = grad.copy()
            else:
                node.grad = node.grad + grad
'''),
        ("accumulates with += into the arrays it was handed and stores the gradient itself (no copy) in leaf.grad: gradients that alias one array (add passes the same grad to both parents) corrupt each other",
         '''def toposort(root):
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
        if id(node) not in grads:
            continue
        grad = grads[id(node)]
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
        ("toposort is a breadth-first search from the root, reversed: not a valid order when a node is reached along paths of different lengths",
         '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    # breadth-first from the root, then reversed so the root comes last
    order, seen, queue = [], {id(root)}, [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    return order[::-1]


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
                if parent.requires_grad:
                    grads[id(parent)] = grads.get(id(parent), 0) + parent_grad
        elif node.requires_grad:
            if node.grad is None:
                node.grad = np.array(grad, copy=True)
            else:
                node.grad = node.grad + grad
'''),
    ],
    "no_grad": [
        ("the previous mode is stored on the class, not on the instance: an inner nested block overwrites it and the outer block restores False",
         '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    previous = True

    def __enter__(self):
        no_grad.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.previous
        return False
'''),
    ],
    "train": [
        ("updates out of place under no_grad (w1 = w1 - lr * w1.grad) and re-enables grad: the loss curve is right but the caller's w1, w2 are never updated in place",
         '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 = w1 - lr * w1.grad
            w2 = w2 - lr * w2.grad
        # fresh leaves: their .grad starts at None, so nothing can accumulate
        w1.requires_grad_()
        w2.requires_grad_()
    return losses
'''),
    ],
    "graph_nodes": [
        ("pre-order DFS with an explicit stack, then reversed: t.grad_fn is last but the order is not depth-first post-order in next_functions order",
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order, seen = [], set()
    stack = [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        for child, _ in reversed(node.next_functions):
            stack.append(child)
    # a node was listed before its children; reverse so t.grad_fn comes last
    return order[::-1]
'''),
        ("recursion without a visited set: a node reached along two paths (a tensor used twice) is listed twice",
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    nodes = []

    def visit(node):
        for child, _ in node.next_functions:
            if child is not None:
                visit(child)
        nodes.append(node)

    visit(t.grad_fn)
    return nodes
'''),
    ],
}

RIGHT = {
    "node_ops": [
        ("unbroadcast collects all axes and sums once then reshapes; matmul backward with np.einsum; relu with np.where; sum with np.full",
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`."""
    grad = np.asarray(grad, dtype=np.float64)
    lead = grad.ndim - len(shape)
    axes = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and grad.shape[lead + i] != 1:
            axes.append(lead + i)
    if axes:
        grad = np.sum(grad, axis=tuple(axes))
    return np.reshape(grad, shape)


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
            return tuple(unbroadcast(grad, p.data.shape) for p in (self, other))

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            grad_self = np.multiply(grad, other.data)
            grad_other = np.multiply(grad, self.data)
            return unbroadcast(grad_self, self.data.shape), unbroadcast(grad_other, other.data.shape)

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            grad_self = np.einsum("ik,jk->ij", grad, other.data)    # grad @ B^T
            grad_other = np.einsum("ki,kj->ij", self.data, grad)   # A^T @ grad
            return grad_self, grad_other

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (np.where(self.data > 0, grad, 0.0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (np.full(self.data.shape, float(grad)),)

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
        ("iterative post-order toposort with (node, expanded) pairs on a stack; backward pops each gradient from a pending dict",
         '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    # iterative post-order: (node, expanded?) pairs on an explicit stack
    order, done = [], set()
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            done.add(id(node))
            order.append(node)
            continue
        stack.append((node, True))
        for parent in reversed(node.parents):
            if id(parent) not in done:
                stack.append((parent, False))
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    pending = {id(root): np.ones_like(root.data)}
    for node in toposort(root)[::-1]:
        grad = pending.pop(id(node), None)
        if grad is None:
            continue
        if node.parents:
            parent_grads = node.backward_fn(grad)
            for parent, parent_grad in zip(node.parents, parent_grads):
                if not parent.requires_grad:
                    continue
                key = id(parent)
                pending[key] = parent_grad if key not in pending else pending[key] + parent_grad
        elif node.requires_grad:
            node.grad = np.array(grad, dtype=np.float64) if node.grad is None else node.grad + grad
'''),
    ],
    "graph_nodes": [
        ("iterative DFS that keeps an iterator of children per stack frame (exactly the recursion's post-order, no recursion limit)",
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    root = t.grad_fn
    order, seen = [], {root}
    # each stack entry: a node and an iterator over the children still to visit
    stack = [(root, iter(node for node, _ in root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, iter(c for c, _ in child.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    return order
'''),
    ],
}
