"""Mechanical mutants of lab02_autograd that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

EQUIVALENT = [
    ("node_ops", 'return (grad * (self.data > 0),)', 'return (grad * (self.data >= 0),)',
     "ReLU has no derivative at 0: 0 and 1 are both valid subgradients, and the check must "
     "not mark either down"),
    ("node_ops", 'if size == 1 and grad.shape[axis] != 1:',
     'if size == 1 and grad.shape[axis] != 0:',
     "also sums axes that already have size 1, with keepdims: that sum is the identity"),
    ("node_ops", 'grad = np.asarray(grad)', 'pass',
     "every gradient the engine and the ops hand to unbroadcast is already an ndarray"),
    ("no_grad", 'return self', 'pass',
     "`with no_grad():` never binds the result (torch.no_grad().__enter__ returns None too)"),
    ("no_grad", 'return False', 'pass',
     "returning None from __exit__ is falsy like False: the exception still propagates"),
]
