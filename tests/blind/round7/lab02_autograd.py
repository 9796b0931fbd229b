"""Lab 02: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "node_ops": [
        ('sum() backward returns ones of the input\'s shape and ignores the upstream gradient: right when the sum is the loss (grad = 1), wrong as soon as the sum feeds another op; breaks "backward_fn(grad) receives the gradient of the op\'s output"', '''_grad_mode = {"enabled": True}


def unbroadcast(grad, shape):
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return np.asarray(grad).reshape(shape)


def as_node(value):
    return value if isinstance(value, Node) else Node(value)


class Node:
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
            return (np.ones_like(self.data),)  # d(sum)/dx_i = 1

        return Node.result(self.data.sum(), (self,), backward_fn, "sum")

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
        ('unbroadcast does the two reductions in the wrong order: it sums the size-1 axes of `shape` first, by their index in `shape`, before removing the leading axes, so when broadcasting added leading axes the index points at the wrong axis of grad, e.g. (4, 3, 5) -> (3, 1) gives shape (1, 5); right whenever no leading axes were added', '''_grad_mode = {"enabled": True}


def unbroadcast(grad, shape):
    grad = np.asarray(grad)
    for axis, size in enumerate(shape):          # stretched axes: sum, keep the axis
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    while grad.ndim > len(shape):                # axes broadcasting added in front
        grad = grad.sum(axis=0)
    return grad


def as_node(value):
    return value if isinstance(value, Node) else Node(value)


class Node:
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
        ('toposort is a breadth-first search from the root, reversed: with dedup at first visit a node reached early along a short path is placed before a parent that is only reached along a longer path, so the order is not "each after all of its parents" and backward sends an incomplete gradient on', '''from collections import deque


def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    seen = {id(root)}
    queue = deque([root])
    visited = []
    while queue:                       # breadth first: by distance from the root
        node = queue.popleft()
        visited.append(node)
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    return visited[::-1]               # farthest first, root last


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        g = grads.get(id(node))
        if g is None:
            continue
        if node.parents:
            for parent, pg in zip(node.parents, node.backward_fn(g)):
                if parent.requires_grad:
                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg
        elif node.requires_grad:
            node.grad = np.array(g, dtype=np.float64) if node.grad is None else node.grad + g
'''),
        ('accumulates with an in-place += into the dictionary entry, which may be the very array a backward_fn also handed to another parent (add passes grad unchanged to both inputs): adding to one parent silently adds to the other, e.g. B in ((A + B) + A).sum() gets 2 instead of 1', '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    order, seen = [], set()

    def visit(node):
        if id(node) not in seen:
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
        if id(node) not in grads:
            continue
        g = grads[id(node)]
        if node.parents:
            for parent, pg in zip(node.parents, node.backward_fn(g)):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] += pg       # add, don't assign
                else:
                    grads[id(parent)] = pg
        elif node.requires_grad:
            if node.grad is None:
                node.grad = g.copy()
            else:
                node.grad += g
'''),
        ('stores the gradient array itself in leaf.grad (no copy) and adds later gradients in place: two leaves that received the same array (A + B) share one .grad, so a second backward call adds twice into it; breaks "if it is None, store a copy"', '''def toposort(root):
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
        g = grads.get(id(node))
        if g is None:
            continue
        if node.parents:
            for parent, pg in zip(node.parents, node.backward_fn(g)):
                if parent.requires_grad:
                    grads[id(parent)] = grads[id(parent)] + pg if id(parent) in grads else pg
        elif node.requires_grad:
            if node.grad is None:
                node.grad = g
            else:
                node.grad += g          # accumulate, as PyTorch does
'''),
    ],
    "no_grad": [
        ('keeps the saved state on the class (no_grad.previous) instead of the instance: a nested block overwrites the outer block\'s saved True with False, so after the outer block recording stays off; breaks "so that nested blocks work"', '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    previous = True

    def __enter__(self):
        no_grad.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.previous
        return False
'''),
        ('__exit__ restores the stored state but returns True ("exited fine"), which tells Python the exception was handled: an error inside the block is silently swallowed; the text asks to return False so it propagates', '''class no_grad:
    """Context manager: operations inside `with no_grad():` record no graph."""

    def __enter__(self):
        self.was_enabled = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.was_enabled
        return True
'''),
    ],
    "train": [
        ("appends the loss tensor itself (losses.append(loss)) instead of loss.item(): the list holds 0-d tensors that still require grad and keep every step's graph alive, not the Python floats the text asks for", '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss)
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
        ('explicit stack that marks a node as seen when it is pushed, not when it is expanded: a node pushed early as a child of the root is skipped when a deeper node reaches it, so that deeper node is appended before it — not a post-order when a tensor is reused', '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order = []
    seen = {t.grad_fn}
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        stack.append((node, True))
        for child, _ in reversed(node.next_functions):
            if child is not None and child not in seen:
                seen.add(child)               # never push a node twice
                stack.append((child, False))
    return order
'''),
        ('explicit stack that pushes the children in next_functions order instead of reversed, so they are popped and visited last-first: still every node after its children and root last, but not the depth-first order the text defines (children visited in next_functions order)', '''def graph_nodes(t):
    """The backward nodes of the graph that produced `t`, in depth-first post-order."""
    order, seen = [], set()
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif node not in seen:
            seen.add(node)
            stack.append((node, True))
            for child, _ in node.next_functions:
                if child is not None:
                    stack.append((child, False))
    return order
'''),
    ],
}

RIGHT = {
    "engine": [
        ("toposort by Kahn's algorithm (count each node's distinct parents, release a node when all are placed) instead of a recursive DFS; backward accumulates with np.add into fresh arrays and copies into leaf.grad", '''def toposort(root):
    """Every node reachable from `root` through .parents, each once, each after all of its
    parents (so `root` is last)."""
    # 1. every reachable node, once
    nodes, stack, seen = [], [root], {id(root)}
    while stack:
        node = stack.pop()
        nodes.append(node)
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    # 2. Kahn: a node is ready once all of its (distinct) parents are placed
    waiting = {}
    children = {id(node): [] for node in nodes}
    for node in nodes:
        distinct = {id(parent) for parent in node.parents}
        waiting[id(node)] = len(distinct)
        for pid in distinct:
            children[pid].append(node)
    ready = [node for node in nodes if waiting[id(node)] == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for child in children[id(node)]:
            waiting[id(child)] -= 1
            if waiting[id(child)] == 0:
                ready.append(child)
    return order      # every other node is an ancestor of root, so root comes last


def backward(root):
    """Reverse mode from `root`: add d(sum of root)/d(leaf) into `.grad` of every leaf that
    requires grad."""
    grads = {id(root): np.ones_like(root.data)}
    for node in toposort(root)[::-1]:
        if id(node) not in grads:
            continue
        upstream = grads.pop(id(node))
        if node.parents:
            for parent, local in zip(node.parents, node.backward_fn(upstream)):
                if parent.requires_grad:
                    grads[id(parent)] = np.add(grads.get(id(parent), 0.0), local)
        elif node.requires_grad:
            incoming = np.array(upstream, dtype=np.float64)      # always a fresh array
            node.grad = incoming if node.grad is None else np.add(node.grad, incoming)
'''),
    ],
    "train": [
        ('loops over the two parameters with the in-place .sub_() and resets with p.grad = None (the alternative reset the text names), and takes the float with float(loss.detach()) before backward', '''def train(x, y, w1, w2, lr, steps):
    """Gradient descent with autograd on the two-layer net; updates w1 and w2 in place.

    Args:
        x, y: inputs (N, D_in) and targets (N, D_out).
        w1, w2: leaf tensors (D_in, H) and (H, D_out) with requires_grad=True.
        lr: learning rate.  steps: number of updates.

    Returns:
        A list of `steps` floats: the loss before each update.
    """
    params = (w1, w2)
    losses = []
    for _ in range(steps):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(float(loss.detach()))
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                p.grad = None          # reset: the next backward starts from nothing
    return losses
'''),
    ],
    "graph_nodes": [
        ('the explicit-stack walk the text describes, with (node, expanded) pairs and children pushed in reverse, instead of recursion; the seen-check happens at pop time so it equals the recursive post-order', '''def graph_nodes(t):
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
            order.append(node)              # all of its children are done
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        children = [child for child, _ in node.next_functions if child is not None]
        for child in reversed(children):    # popped in next_functions order
            stack.append((child, False))
    return order
'''),
    ],
}
