"""Realistic wrong answers for lab02_autograd: each must lose points in its checks cell.

The `node_ops` answer cell is long and mostly given code, so its mutants are written as one
edit of a correct version of the cell (`_NODE_CELL`); `_edit` fails loudly if the text to
replace is missing, so a mutant can never silently equal the solution.
"""


def _edit(base: str, old: str, new: str) -> str:
    assert old in base, f"mutant edit does not apply: {old!r}"
    return base.replace(old, new)


_NODE_CELL = '''_grad_mode = {"enabled": True}


def unbroadcast(grad, shape):
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.reshape(shape)


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
            return (np.broadcast_to(grad, self.data.shape).copy(),)

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
'''

_TOPOSORT = '''def toposort(root):
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
'''

_BACKWARD = '''def backward(root):
    grads = {id(root): np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        grad = grads.pop(id(node), None)
        if grad is None or not node.requires_grad:
            continue
        if not node.parents:
            node.grad = grad.copy() if node.grad is None else node.grad + grad
            continue
        for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
            if parent.requires_grad:
                key = id(parent)
                grads[key] = parent_grad if key not in grads else grads[key] + parent_grad
'''

_ENGINE = _TOPOSORT + "\n\n" + _BACKWARD

_TRAIN = '''def train(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return losses
'''

_GRAPH_NODES = '''def graph_nodes(t):
    order, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        for child, _ in node.next_functions:
            visit(child)
        order.append(node)

    visit(t.grad_fn)
    return order
'''

MUTANTS = {
    "node_ops": [
        ("unbroadcast only sums the leading axes, not the stretched size-1 axes",
         _edit(_NODE_CELL, '''    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.reshape(shape)''', '''    return grad''')),
        ("add passes the gradient through without undoing broadcasting",
         _edit(_NODE_CELL, "return unbroadcast(grad, self.data.shape), unbroadcast(grad, other.data.shape)",
               "return grad, grad")),
        ("mul: each input's gradient uses its own value instead of the other factor's",
         _edit(_NODE_CELL, '''            return (unbroadcast(grad * other.data, self.data.shape),
                    unbroadcast(grad * self.data, other.data.shape))''',
               '''            return (unbroadcast(grad * self.data, self.data.shape),
                    unbroadcast(grad * other.data, other.data.shape))''')),
        ("matmul backward multiplies in the wrong order",
         _edit(_NODE_CELL, "return grad @ other.data.T, self.data.T @ grad",
               "return other.data.T @ grad.T, grad.T @ self.data")),
        ("relu backward forgets the mask",
         _edit(_NODE_CELL, "return (grad * (self.data > 0),)", "return (grad,)")),
        ("relu backward passes the gradient at exactly 0 (x >= 0, as clamp(min=0) does)",
         _edit(_NODE_CELL, "return (grad * (self.data > 0),)", "return (grad * (self.data >= 0),)")),
        ("sum backward returns the upstream scalar instead of spreading it to the input's shape",
         _edit(_NODE_CELL, "return (np.broadcast_to(grad, self.data.shape).copy(),)",
               "return (grad,)")),
    ],
    "engine": [
        ("walks the topological order forwards instead of reversed",
         _edit(_ENGINE, "for node in reversed(toposort(root)):", "for node in toposort(root):")),
        ("overwrites a parent's gradient instead of adding to it",
         _edit(_ENGINE, "grads[key] = parent_grad if key not in grads else grads[key] + parent_grad",
               "grads[key] = parent_grad")),
        ("assigns leaf.grad instead of accumulating across backward calls",
         _edit(_ENGINE, "node.grad = grad.copy() if node.grad is None else node.grad + grad",
               "node.grad = grad.copy()")),
        ("adds into a node's entry in place: the array an op handed to two parents grows in both",
         _edit(_ENGINE, "grads[key] = parent_grad if key not in grads else grads[key] + parent_grad",
               '''if key in grads:
                    grads[key] += parent_grad
                else:
                    grads[key] = parent_grad''')),
        ("a leaf's first gradient stored without a copy: x.grad is y.grad after x + y",
         _edit(_ENGINE, "node.grad = grad.copy() if node.grad is None else node.grad + grad",
               "node.grad = grad if node.grad is None else node.grad + grad")),
        ("puts .grad on every node that requires grad, intermediate ones too",
         _edit(_ENGINE, "        for parent, parent_grad in zip(",
               "        node.grad = grad\n        for parent, parent_grad in zip(")),
        ("toposort without a visited set: shared nodes appear (and are processed) twice",
         _edit(_ENGINE, '''        if id(node) in visited:
            return
        visited.add(id(node))
''', "")),
        ("toposort appends a node before its parents (pre-order)",
         _edit(_ENGINE, '''        visited.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)''', '''        visited.add(id(node))
        order.append(node)
        for parent in node.parents:
            visit(parent)''')),
        ("gives gradients to constants too (ignores requires_grad)",
         _edit(_edit(_ENGINE, "if grad is None or not node.requires_grad:", "if grad is None:"),
               "            if parent.requires_grad:\n                key", "            if True:\n                key")),
        ("stores the first gradient without copying, so in-place accumulation corrupts other leaves",
         _edit(_ENGINE, "node.grad = grad.copy() if node.grad is None else node.grad + grad",
               '''if node.grad is None:
                node.grad = grad
            else:
                node.grad += grad''')),
        ("seeds the root's gradient with the scalar 1.0 instead of np.ones_like(root.data): a root "
         "with several elements hands wrong-shaped gradients down the graph",
         _edit(_ENGINE, "grads = {id(root): np.ones_like(root.data)}", "grads = {id(root): np.array(1.0)}")),
    ],
    "no_grad": [
        ("stores the state to restore in __init__, not __enter__", '''class no_grad:
    def __init__(self):
        self.previous = _grad_mode["enabled"]

    def __enter__(self):
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return False
'''),
        ("__exit__ switches recording on instead of restoring the previous state", '''class no_grad:
    def __enter__(self):
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = True
        return False
'''),
        ("__enter__ forgets to switch recording off", '''class no_grad:
    def __enter__(self):
        self.previous = _grad_mode["enabled"]
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = self.previous
        return False
'''),
        ("a generator context manager without try/finally: an exception leaves recording off", '''from contextlib import contextmanager


@contextmanager
def no_grad():
    previous = _grad_mode["enabled"]
    _grad_mode["enabled"] = False
    yield
    _grad_mode["enabled"] = previous
'''),
        ("keeps the previous state on the class, so nested blocks overwrite it", '''class no_grad:
    previous = True

    def __enter__(self):
        no_grad.previous = _grad_mode["enabled"]
        _grad_mode["enabled"] = False
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _grad_mode["enabled"] = no_grad.previous
        return False
'''),
    ],
    "train": [
        ("never resets the gradients (the lecture's bug)",
         _edit(_TRAIN, "            w1.grad.zero_()\n            w2.grad.zero_()\n", "")),
        ("resets the gradients before using them in the update",
         _edit(_TRAIN, '''            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()''', '''            w1.grad.zero_()
            w2.grad.zero_()
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad''')),
        ("resets only w1's gradient", _edit(_TRAIN, "            w2.grad.zero_()\n", "")),
        ("keeps each loss as a 0-dim tensor (detached), not a Python float",
         _edit(_TRAIN, "losses.append(loss.item())", "losses.append(loss.detach())")),
        ("updates out of place outside no_grad: w1 becomes a new non-leaf tensor", '''def train(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        w1 = w1 - lr * w1.grad
        w2 = w2 - lr * w2.grad
    return losses
'''),
    ],
    "graph_nodes": [
        ("no visited set: a node reachable along two paths is listed twice",
         _edit(_GRAPH_NODES, "if node is None or node in seen:", "if node is None:")),
        ("does not skip the None entries of next_functions",
         _edit(_GRAPH_NODES, "if node is None or node in seen:", "if node in seen:")),
        ("pre-order: appends a node before its children",
         _edit(_GRAPH_NODES, '''        seen.add(node)
        for child, _ in node.next_functions:
            visit(child)
        order.append(node)''', '''        seen.add(node)
        order.append(node)
        for child, _ in node.next_functions:
            visit(child)''')),
        ("leaves out the AccumulateGrad nodes of the leaves",
         _edit(_GRAPH_NODES, "    visit(t.grad_fn)\n    return order",
               "    visit(t.grad_fn)\n    return [n for n in order if type(n).__name__ != \"AccumulateGrad\"]")),
        ("visits the children in reverse order", _edit(_GRAPH_NODES, "for child, _ in node.next_functions:",
                                                        "for child, _ in reversed(node.next_functions):")),
        ("breadth-first from the root, then reversed", '''def graph_nodes(t):
    order, seen, queue = [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        queue.extend(child for child, _ in node.next_functions)
    return order[::-1]
'''),
    ],
}


# Right answers written differently from the solution: each must keep full marks, so the
# checks do not reward one way of writing the answer (tests/labs/test_check_programs.py).
ALTERNATIVES = {
    "node_ops": [
        ("unbroadcast in one sum over a tuple of axes", _edit(_NODE_CELL, '''    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad.reshape(shape)''', '''    grad = np.asarray(grad)
    lead = grad.ndim - len(shape)
    stretched = [lead + i for i, size in enumerate(shape) if size == 1 and grad.shape[lead + i] != 1]
    return grad.sum(axis=tuple(range(lead)) + tuple(stretched)).reshape(shape)''')),
    ],
    "engine": [
        ("iterative depth-first toposort, gradients keyed by node, leaves told by backward_fn", '''def toposort(root):
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, finished = stack.pop()
        if finished:
            order.append(node)
        elif node not in seen:
            seen.add(node)
            stack.append((node, True))
            stack.extend((parent, False) for parent in reversed(node.parents))
    return order


def backward(root):
    grads = {root: np.ones_like(root.data)}
    for node in reversed(toposort(root)):
        if node not in grads or not node.requires_grad:
            continue
        grad = grads.pop(node)
        if node.backward_fn is None:
            node.grad = np.array(grad) if node.grad is None else node.grad + grad
            continue
        for parent, parent_grad in zip(node.parents, node.backward_fn(grad)):
            if parent.requires_grad:
                grads[parent] = grads[parent] + parent_grad if parent in grads else parent_grad
'''),
    ],
    "no_grad": [
        ("dict.update, __enter__ returns None", '''class no_grad:
    def __enter__(self):
        self._saved = _grad_mode["enabled"]
        _grad_mode.update(enabled=False)

    def __exit__(self, *exc_info):
        _grad_mode.update(enabled=self._saved)
'''),
    ],
    "train": [
        ("gradients set to None before each backward, sub_ for the update", '''def train(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        w1.grad = None
        w2.grad = None
        loss = ((torch.relu(x @ w1) @ w2 - y) ** 2).sum()
        loss.backward()
        losses.append(float(loss))
        with torch.no_grad():
            w1.sub_(lr * w1.grad)
            w2.sub_(lr * w2.grad)
    return losses
'''),
    ],
    "graph_nodes": [
        ("iterative, an explicit stack of (node, children done)", '''def graph_nodes(t):
    order, seen, stack = [], set(), [(t.grad_fn, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif node is not None and node not in seen:
            seen.add(node)
            stack.append((node, True))
            stack.extend((child, False) for child, _ in reversed(node.next_functions))
    return order
'''),
    ],
}
