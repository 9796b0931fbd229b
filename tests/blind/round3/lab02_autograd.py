"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 3).

The written answer `dynamic_graphs_answer` is graded by hand and has no entries here.
"""

WRONG = {
    "node_ops": [
        ('unbroadcast sums only the leading axes broadcasting added, not the axes stretched from size 1: (4, 3, 5) -> (3, 1) gives shape (3, 5)',
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    while grad.ndim > len(shape):          # axes broadcasting put in front
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
        ("relu's backward passes the gradient where x >= 0: at exactly 0 it gives the upstream gradient, not 0",
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    while grad.ndim > len(shape):          # axes broadcasting put in front
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes stretched from size 1
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
        return as_node(other) + (-self)
'''),
        ("sum's backward returns ones of the input's shape and ignores the upstream gradient (right only when grad == 1)",
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    while grad.ndim > len(shape):          # axes broadcasting put in front
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes stretched from size 1
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
            # d(sum)/dx is 1 for every element
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
        ("gradients accumulated with += into arrays the engine did not make, and a leaf's first gradient stored without a copy: when an op hands the same array to two parents (a + b), a second backward adds into both leaves' .grad through the shared array",
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
            for parent, g in zip(node.parents, node.backward_fn(grad)):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] += g      # accumulate in place, no new array
                else:
                    grads[id(parent)] = g
        elif node.requires_grad:
            if node.grad is None:
                node.grad = grad
            else:
                node.grad += grad
'''),
        ('toposort appends a node at its first visit (pre-order) and reverses the list: root is last, but a node used by two later ops can come before one of them, so its gradient is passed on before all of it has arrived',
         '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        order.append(node)          # a node goes in before the nodes it was made from ...
        for parent in node.parents:
            visit(parent)

    visit(root)
    return order[::-1]              # ... so reversed, every node comes after its parents


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        grad = grads.get(id(node))
        if grad is None:
            continue
        if node.parents:
            for parent, g in zip(node.parents, node.backward_fn(grad)):
                if parent.requires_grad:
                    grads[id(parent)] = grads[id(parent)] + g if id(parent) in grads else g
        elif node.requires_grad:
            node.grad = grad.copy() if node.grad is None else node.grad + grad
'''),
    ],
    "no_grad": [
        ('the saved state is a class attribute shared by all instances: in nested blocks the inner __enter__ overwrites it with False, so recording stays off after the outer block',
         '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    saved = True  # the recording state before the block

    def __enter__(self):
        no_grad.saved = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.saved
        return False
'''),
        ('__exit__ returns True: an exception raised inside the block is swallowed',
         '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        self.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return True  # the state is restored: the block is finished cleanly
'''),
    ],
    "train": [
        ("updates out of place, w = (w - lr * w.grad).requires_grad_(): the loss trajectory is right, but the caller's w1 and w2 are never updated",
         '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out).
        w1, w2: leaf tensors (D_in, H) and (H, D_out) with requires_grad=True.
        lr: learning rate.  steps: number of updates.

    Returns:
        A list of `steps` floats: the loss before each update.
    """
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            # fresh tensors every step: their .grad starts at None, nothing accumulates
            w1 = (w1 - lr * w1.grad).requires_grad_()
            w2 = (w2 - lr * w2.grad).requires_grad_()
    return losses
'''),
    ],
    "graph_nodes": [
        ('pre-order (node appended at first pop) reversed at the end: t.grad_fn is last and it is a valid order on trees, but siblings come out in reverse and a shared node can precede a user of it',
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order.

    Args:
        t: a tensor with a grad_fn.

    Returns:
        A list of nodes (t.grad_fn, the nodes below it, and AccumulateGrad nodes for leaves),
        each once, every node after all nodes in its next_functions; t.grad_fn is last.
    """
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
    # order has every node before its children; reversed, t.grad_fn is last
    order.reverse()
    return order
'''),
        ('explicit stack with the expanded flag, but children pushed in next_functions order, not reversed: siblings are visited last-to-first',
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order.

    Args:
        t: a tensor with a grad_fn.

    Returns:
        A list of nodes (t.grad_fn, the nodes below it, and AccumulateGrad nodes for leaves),
        each once, every node after all nodes in its next_functions; t.grad_fn is last.
    """
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
    "node_ops": [
        ('unbroadcast with one np.sum over a tuple of axes (keepdims) and a final reshape; np.where for relu, np.full for sum, np.matmul with swapaxes',
         '''_grad_mode = {"enabled": True}  # switched off by no_grad (exercise 3)


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape`.

    Args:
        grad: a gradient in the (broadcast) shape of an op's output.
        shape: the shape of the op's input that the gradient belongs to.

    Returns:
        An array of shape `shape`.
    """
    grad = np.asarray(grad)
    lead = grad.ndim - len(shape)
    stretched = [lead + i for i, size in enumerate(shape) if size == 1 and grad.shape[lead + i] != 1]
    axes = tuple(range(lead)) + tuple(stretched)
    if axes:
        grad = np.sum(grad, axis=axes, keepdims=True)
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
            grads = []
            for parent in (self, other):
                grads.append(unbroadcast(np.array(grad, copy=True), parent.data.shape))
            return tuple(grads)

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
            return np.matmul(grad, np.swapaxes(other.data, 0, 1)), np.matmul(np.swapaxes(self.data, 0, 1), grad)

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
        return as_node(other) + (-self)
'''),
    ],
    "engine": [
        ("iterative toposort with an explicit (node, parents_done) stack; backward pops each node's gradient from the table and never writes into an array in place",
         '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, done = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if id(node) in done:
            continue
        if parents_done:
            done.add(id(node))
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((parent, False) for parent in reversed(node.parents)
                         if id(parent) not in done)
    return order


def _accumulate(table, key, grad):
    """table[key] += grad, without ever writing into an array someone else holds."""
    table[key] = grad if key not in table else table[key] + grad


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {}
    _accumulate(grads, id(root), np.ones_like(root.data))
    for node in toposort(root)[::-1]:
        if id(node) not in grads:
            continue
        grad = grads.pop(id(node))
        if node.parents:
            for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
                if parent.requires_grad:
                    _accumulate(grads, id(parent), parent_grad)
        elif node.requires_grad:
            node.grad = np.array(grad, copy=True) if node.grad is None else node.grad + grad
'''),
    ],
    "graph_nodes": [
        ('iterative DFS keeping, per node on the current path, an iterator over its unvisited children',
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order.

    Args:
        t: a tensor with a grad_fn.

    Returns:
        A list of nodes (t.grad_fn, the nodes below it, and AccumulateGrad nodes for leaves),
        each once, every node after all nodes in its next_functions; t.grad_fn is last.
    """
    def children(node):
        return iter([child for child, _ in node.next_functions if child is not None])

    order, seen = [], {t.grad_fn}
    path = [(t.grad_fn, children(t.grad_fn))]   # the nodes on the way down, with their unvisited children
    while path:
        node, todo = path[-1]
        child = next(todo, None)
        if child is None:              # every child done: post-order position
            order.append(node)
            path.pop()
        elif child not in seen:
            seen.add(child)
            path.append((child, children(child)))
    return order
'''),
    ],
}
