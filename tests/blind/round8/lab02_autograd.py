"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'node_ops': [
        ('relu\'s backward uses the mask self.data >= 0, passing the gradient at exactly 0; breaks "the derivative of relu at 0 is taken to be 0, as torch.relu does"', '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    while grad.ndim > len(shape):               # leading axes added by broadcasting
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):         # axes stretched from size 1
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def as_node(value):
    """`value` as a Node: nodes pass through; numbers and arrays become constants."""
    return value if isinstance(value, Node) else Node(value)


class Node:
    """A value in a computational graph.

    Attributes:
        data: the value, a float64 NumPy array.
        requires_grad: whether gradients should flow to this node.
        grad: for a leaf that requires grad, the accumulated gradient (None until backward).
        parents: the nodes this one was computed from; () for leaves and unrecorded results.
        backward_fn: maps the gradient of this node to a tuple of gradients, one per parent.
        op: the name of the operation that made the node ("leaf" for leaves).
    """

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
        return as_node(other) + (-self)'''),
        ("sum's backward returns np.broadcast_to(grad, shape): right shape and values, but a read-only zero-stride view rather than an array of its own, so any in-place accumulation into it (or a leaf that keeps it) raises or aliases", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    while grad.ndim > len(shape):               # leading axes added by broadcasting
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):         # axes stretched from size 1
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def as_node(value):
    """`value` as a Node: nodes pass through; numbers and arrays become constants."""
    return value if isinstance(value, Node) else Node(value)


class Node:
    """A value in a computational graph.

    Attributes:
        data: the value, a float64 NumPy array.
        requires_grad: whether gradients should flow to this node.
        grad: for a leaf that requires grad, the accumulated gradient (None until backward).
        parents: the nodes this one was computed from; () for leaves and unrecorded results.
        backward_fn: maps the gradient of this node to a tuple of gradients, one per parent.
        op: the name of the operation that made the node ("leaf" for leaves).
    """

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
            return (np.broadcast_to(grad, self.data.shape),)

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
        return as_node(other) + (-self)'''),
        ('+ unbroadcasts only the second operand ("the bias is always on the right"): 2.0 + node or c + A gives the left parent a gradient of the output\'s shape; breaks "each of its parent\'s shape"', '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    while grad.ndim > len(shape):               # leading axes added by broadcasting
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):         # axes stretched from size 1
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def as_node(value):
    """`value` as a Node: nodes pass through; numbers and arrays become constants."""
    return value if isinstance(value, Node) else Node(value)


class Node:
    """A value in a computational graph.

    Attributes:
        data: the value, a float64 NumPy array.
        requires_grad: whether gradients should flow to this node.
        grad: for a leaf that requires grad, the accumulated gradient (None until backward).
        parents: the nodes this one was computed from; () for leaves and unrecorded results.
        backward_fn: maps the gradient of this node to a tuple of gradients, one per parent.
        op: the name of the operation that made the node ("leaf" for leaves).
    """

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
            return grad, unbroadcast(grad, other.data.shape)

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
        return as_node(other) + (-self)'''),
    ],
    'engine': [
        ('Writes .grad on every node that requires grad, intermediate results included (retain_grad everywhere), not only on leaves; breaks "At a leaf that requires grad, add the gradient into leaf.grad" (grad is documented as a leaf\'s accumulated gradient)', '''def toposort(root):
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
        if node.requires_grad:
            if node.grad is None:
                node.grad = np.array(grad, dtype=np.float64, copy=True)
            else:
                node.grad = node.grad + grad
'''),
        ('Stores the incoming gradient array itself in leaf.grad when it is None (no copy): with + handing one array to both parents, x.grad and y.grad are the same object, so an in-place reset or update of one changes the other; breaks "if it is None, store a copy"', '''def toposort(root):
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
                node.grad = node.grad + grad
'''),
        ('Accumulates into the gradient dictionary in place (grads[id(p)] += g) although the first entry may be the very array + handed to another parent: the sibling\'s gradient is corrupted; breaks "add each returned gradient to the entry of the corresponding parent" for one gradient shared by two parents', '''def toposort(root):
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
                node.grad = np.array(grad, dtype=np.float64, copy=True)
            else:
                node.grad = node.grad + grad
'''),
    ],
    'no_grad': [
        ('Reads the state to restore in __init__ instead of __enter__: right for `with no_grad():`, wrong when the object is created in one mode and entered in another (e.g. made while recording, entered inside another no_grad: leaving it switches recording back on); breaks "Store the current state ... in __enter__"', '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __init__(self):
        self.previous = _grad_mode["enabled"]

    def __enter__(self):
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return False
'''),
    ],
    'train': [
        ("Updates through .data outside torch.no_grad() (w.data -= lr * w.grad.data): same numbers, but it bypasses autograd's checks instead of the in-place update under torch.no_grad() the text asks for", '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        w1.data -= lr * w1.grad.data
        w2.data -= lr * w2.grad.data
        w1.grad = None
        w2.grad = None
    return losses
'''),
        ('Resets the gradients at the top of each step (before backward) instead of after each update: the trajectory is the same, but w1.grad and w2.grad still hold the last gradient when train returns; breaks "reset their gradients after each update"', '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        for w in (w1, w2):            # start every step from clean gradients
            if w.grad is not None:
                w.grad.zero_()
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
    return losses
'''),
    ],
    'graph_nodes': [
        ('Stack walk that appends a node at its first pop and reverses the list at the end: that is reversed pre-order, not post-order (a node shared by two branches can precede a node that sends it gradients); breaks "depth-first post-order ... visit a node\'s children in next_functions order, then append"', '''def graph_nodes(t):
    order, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(child for child, _ in reversed(node.next_functions))
    return order[::-1]
'''),
    ],
}

RIGHT = {
    'node_ops': [
        ("unbroadcast as one sum over all reduced axes followed by reshape(shape), relu's backward via np.where, sum's via np.full", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    extra = grad.ndim - len(shape)
    stretched = tuple(extra + i for i, size in enumerate(shape) if size == 1)
    return grad.sum(axis=tuple(range(extra)) + stretched).reshape(shape)


def as_node(value):
    """`value` as a Node: nodes pass through; numbers and arrays become constants."""
    return value if isinstance(value, Node) else Node(value)


class Node:
    """A value in a computational graph.

    Attributes:
        data: the value, a float64 NumPy array.
        requires_grad: whether gradients should flow to this node.
        grad: for a leaf that requires grad, the accumulated gradient (None until backward).
        parents: the nodes this one was computed from; () for leaves and unrecorded results.
        backward_fn: maps the gradient of this node to a tuple of gradients, one per parent.
        op: the name of the operation that made the node ("leaf" for leaves).
    """

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
            return (np.where(self.data > 0, grad, 0.0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (np.full(self.data.shape, grad, dtype=np.float64),)

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
        return as_node(other) + (-self)'''),
    ],
    'train': [
        ('Update with the in-place add_(grad, alpha=-lr) under torch.no_grad() and reset with w.grad = None (set-to-none) after the update', '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        y_pred = (x @ w1).clamp(min=0) @ w2
        loss = ((y_pred - y) ** 2).sum()
        losses.append(float(loss.detach()))
        loss.backward()
        with torch.no_grad():
            for w in (w1, w2):
                w.add_(w.grad, alpha=-lr)
                w.grad = None          # reset after the update
    return losses
'''),
    ],
    'graph_nodes': [
        ('Explicit stack with (node, expanded) pairs, children pushed in reverse so they are visited in next_functions order, a node appended when popped expanded', '''def graph_nodes(t):
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
        for child, _ in reversed(node.next_functions):
            if child is not None and child not in seen:
                stack.append((child, False))
    return order
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('node_ops', 1): (
        "not a mistake the text defines: each gradient must have its parent's shape; a "
        'read-only broadcast view has it, and the engine adds gradients into new arrays'
    ),
    ('train', 0): _METHOD,
    ('train', 1): (
        "not a mistake: resetting at the start of each step (where optimizer.zero_grad() "
        "usually goes) is as right as after the update, and an accepted alternative does it"
    ),
}
