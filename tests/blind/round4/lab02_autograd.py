"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    'node_ops': [
        ("unbroadcast sums a stretched size-1 axis without keepdims=True: (4, 3, 5) -> (3, 1) comes back as (3,), wrong whenever the input's shape has a size-1 axis",
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
    while grad.ndim > len(shape):          # axes that broadcasting added in front
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes of size 1 that were stretched
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis)
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
        ("relu's backward uses the mask self.data >= 0: at an input of exactly 0 the gradient passes (the text takes 0, as torch.relu)",
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
    while grad.ndim > len(shape):          # axes that broadcasting added in front
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes of size 1 that were stretched
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
        ("mul's backward unbroadcasts the gradient of self but not that of other: a broadcast right operand (a bias row, a number such as 2.0) gets a gradient of the output's shape",
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
    while grad.ndim > len(shape):          # axes that broadcasting added in front
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):    # axes of size 1 that were stretched
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
            grad_self = unbroadcast(grad * other.data, self.data.shape)
            grad_other = grad * self.data
            return grad_self, grad_other

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
    ],
    'engine': [
        ("backward assigns each parent's gradient (grads[id(p)] = g) instead of adding: a node used twice keeps only the last gradient (b = a + a; c = b + b gives a.grad 1, not 4)",
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
                if parent.requires_grad:
                    grads[id(parent)] = g
        elif node.requires_grad:
            if node.grad is None:
                node.grad = grad.copy()
            else:
                node.grad = node.grad + grad
'''),
        ("a leaf's .grad is overwritten with a copy on every backward instead of accumulated: two backward calls in a row leave one gradient, not the sum",
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
                grads[id(parent)] = grads[id(parent)] + g if id(parent) in grads else g
        elif node.requires_grad:
            node.grad = grad.copy()  # a copy, so later changes to grads cannot reach it
'''),
        ('toposort is a breadth-first search from the root, reversed: a node reached from the root by a short and a long path is placed before a consumer of it, so backward visits it before all of its gradient has arrived',
         '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    # breadth-first from the root: every node once, the root first; reversed, the root is last
    order, seen = [], {id(root)}
    queue = [root]
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
            for parent, g in zip(node.parents, node.backward_fn(grad)):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] = grads[id(parent)] + g
                else:
                    grads[id(parent)] = g
        elif node.requires_grad:
            if node.grad is None:
                node.grad = np.array(grad, copy=True)
            else:
                node.grad = node.grad + grad
'''),
    ],
    'no_grad': [
        ("the previous state is saved in a class attribute (no_grad.saved) shared by all instances: in nested blocks the inner __enter__ overwrites the outer's saved True, and recording stays off after the outer block",
         '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    saved = None   # the state before the block, restored on exit

    def __enter__(self):
        no_grad.saved = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.saved
        return False
'''),
    ],
    'train': [
        ("resets only w1.grad after the update: w2's gradients still accumulate from step to step",
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
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()   # the reset the buggy loop forgot
    return losses
'''),
    ],
    'graph_nodes': [
        ('explicit stack with expanded markers, but children pushed in next_functions order (not reversed): they are visited last-first, so the post-order is that of the mirrored graph',
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order.

    Args:
        t: a tensor with a grad_fn.

    Returns:
        A list of nodes (t.grad_fn, the nodes below it, and AccumulateGrad nodes for leaves),
        each once, every node after all nodes in its next_functions; t.grad_fn is last.
    """
    order, expanded = [], set()
    stack = [(t.grad_fn, False)]
    while stack:
        node, is_expanded = stack.pop()
        if is_expanded:
            order.append(node)
            continue
        if node in expanded:
            continue
        expanded.add(node)
        stack.append((node, True))           # appended once its children are done
        for child, _ in node.next_functions:
            if child is not None and child not in expanded:
                stack.append((child, False))
    return order
'''),
        ('recursive post-order without a visited set: a node reachable along two paths (a tensor used twice) is listed twice',
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order.

    Args:
        t: a tensor with a grad_fn.

    Returns:
        A list of nodes (t.grad_fn, the nodes below it, and AccumulateGrad nodes for leaves),
        each once, every node after all nodes in its next_functions; t.grad_fn is last.
    """
    order = []

    def visit(node):
        for child, _ in node.next_functions:
            if child is not None:
                visit(child)
        order.append(node)   # post-order: after everything it sends gradients to

    visit(t.grad_fn)
    return order
'''),
    ],
}

RIGHT = {
    'node_ops': [
        ("unbroadcast with one sum over a tuple of axes (keepdims, then reshape); relu's backward with np.where; sum's backward with np.full; matmul with np.matmul and swapaxes",
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
    extra = grad.ndim - len(shape)
    # every leading axis, plus each axis where the input had size 1 and the output did not
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
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
                grads.append(unbroadcast(grad, parent.data.shape))
            return tuple(grads)

        return Node.result(self.data + other.data, (self, other), backward_fn, "add")

    def __mul__(self, other):
        other = as_node(other)

        def backward_fn(grad):
            left = np.multiply(grad, other.data)
            right = np.multiply(grad, self.data)
            return unbroadcast(left, self.data.shape), unbroadcast(right, other.data.shape)

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
    'engine': [
        ("iterative toposort with an explicit stack and (node, parents_done) markers; backward pops each node's pending gradient from the dictionary and accumulates with np.add",
         '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, done = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if id(node) in done:
            continue
        done.add(id(node))
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
        upstream = pending.pop(id(node), None)
        if upstream is None:
            continue
        if not node.parents:
            if node.requires_grad:
                node.grad = upstream.copy() if node.grad is None else np.add(node.grad, upstream)
            continue
        for parent, g in zip(node.parents, node.backward_fn(upstream)):
            if parent.requires_grad:
                pending[id(parent)] = np.add(pending[id(parent)], g) if id(parent) in pending else g
'''),
    ],
    'graph_nodes': [
        ('recursion with the node marked as seen on entry; children checked against the set before the call instead of at the top of visit',
         '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order.

    Args:
        t: a tensor with a grad_fn.

    Returns:
        A list of nodes (t.grad_fn, the nodes below it, and AccumulateGrad nodes for leaves),
        each once, every node after all nodes in its next_functions; t.grad_fn is last.
    """
    seen = set()
    order = []

    def visit(node):
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
        order.append(node)

    visit(t.grad_fn)
    return order
'''),
    ],
}
