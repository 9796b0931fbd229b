"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    'node_ops': [
        ('unbroadcast only sums the leading axes broadcasting added, not the size-1 axes it stretched: a (N, 1) or (1, D) input gets a (N, D) gradient', '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad, dtype=np.float64)
    while grad.ndim > len(shape):  # the axes broadcasting put in front
        grad = grad.sum(axis=0)
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
        ("unbroadcast used in + but forgotten in *: a broadcast factor (a (D,) vector, a number) gets a gradient in the output's shape", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad, dtype=np.float64)
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad.reshape(shape)


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
        ("sum's backward returns ones and ignores the upstream gradient: right only when the sum is the final output", '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad, dtype=np.float64)
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad.reshape(shape)


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
            return (np.ones_like(self.data),)  # d sum / d x_i = 1

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
        ("toposort is a breadth-first search from the root, reversed: with a node reached at two depths it can come before one of its parents, and part of a leaf's gradient arrives after the leaf was finished", '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, seen, queue = [], {id(root)}, [root]
    while queue:  # breadth first from the root, then reversed
        node = queue.pop(0)
        order.append(node)
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    order.reverse()
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
                node.grad = np.array(grad, dtype=np.float64)
            else:
                node.grad = node.grad + grad
'''),
        ("seeds the root's gradient with the scalar 1.0 instead of np.ones_like(root.data): a non-scalar root hands wrong-shaped gradients down the graph (leaves get the wrong shape, or a reshape fails)", '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)

    visit(root)
    return order


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.array(1.0)}  # d root / d root = 1
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
                node.grad = np.array(grad, dtype=np.float64)
            else:
                node.grad = node.grad + grad
'''),
        ('does not skip parents that do not require grad: a constant leaf such as K gets a .grad', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
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
                if id(parent) in grads:
                    grads[id(parent)] = grads[id(parent)] + parent_grad
                else:
                    grads[id(parent)] = parent_grad
        else:
            if node.grad is None:
                node.grad = np.array(grad, dtype=np.float64)
            else:
                node.grad = node.grad + grad
'''),
    ],
    'no_grad': [
        ("keeps the saved state in one module-level global: an inner block overwrites the outer block's saved state, so recording stays off after nested blocks", '''_saved_grad_mode = True


class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        global _saved_grad_mode
        _saved_grad_mode = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = _saved_grad_mode
        return False
'''),
        ('__exit__ returns True: an exception raised inside the block is swallowed', '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        self.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return True  # exit handled
'''),
    ],
    'train': [
        ('appends loss.detach(), a 0-d tensor, instead of a Python float', '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.detach())  # keep the value, drop the graph
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
        w1.grad = None
        w2.grad = None
    return losses
'''),
    ],
    'graph_nodes': [
        ('explicit stack that pushes the children in next_functions order (not reversed): a post-order, but children are visited last to first', '''def graph_nodes(t):
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
    'node_ops': [
        ('unbroadcast with a while loop over leading axes and a keepdims sum per size-1 axis; np.where for relu, np.full_like for sum, swapaxes for the transposes', '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    g = np.array(grad, dtype=np.float64)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


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
            return tuple(unbroadcast(grad, p.data.shape) for p in (self, other))

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return (unbroadcast(np.multiply(grad, other.data), np.shape(self.data)),
                    unbroadcast(np.multiply(grad, self.data), np.shape(other.data)))

        return Node.result(self.data * other.data, (self, other), backward_fn, "mul")

    def __matmul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            return np.matmul(grad, other.data.swapaxes(0, 1)), np.matmul(self.data.swapaxes(0, 1), grad)

        return Node.result(self.data @ other.data, (self, other), backward_fn, "matmul")

    def relu(self):
        def backward_fn(grad):
            return (np.where(self.data > 0, grad, 0.0),)

        return Node.result(np.maximum(self.data, 0.0), (self,), backward_fn, "relu")

    def sum(self):
        def backward_fn(grad):
            return (np.full_like(self.data, grad),)

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
        ('toposort with an explicit stack of (node, parents done) pairs, backward pops each gradient from a pending dict as it is used', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, expanded = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if id(node) in expanded:
            continue
        expanded.add(id(node))
        stack.append((node, True))
        for parent in reversed(node.parents):
            if id(parent) not in expanded:
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
        if not node.parents:
            if node.requires_grad:
                node.grad = np.array(grad, dtype=np.float64) if node.grad is None else node.grad + grad
            continue
        for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
            if parent.requires_grad:
                previous = pending.get(id(parent))
                pending[id(parent)] = parent_grad if previous is None else previous + parent_grad
'''),
    ],
    'graph_nodes': [
        ('iterative DFS that keeps an iterator over next_functions per stack frame (the recursion unrolled), appending a node when its iterator is exhausted', '''def graph_nodes(t):
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
        else:  # every child finished: the node itself
            stack.pop()
            order.append(node)
    return order
'''),
    ],
}
