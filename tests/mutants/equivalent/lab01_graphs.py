"""Mechanical mutants of lab01_graphs that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_FORWARD_UNUSED = ("only the gradients are returned, and those of c = sum(x * y + z) do not "
                   "depend on the values of a or b (b is read for its shape only)")
_RELU_AT_ZERO = ("ReLU has no derivative at h == 0: 0 and 1 are both valid subgradients "
                 "(torch's clamp passes the gradient at the boundary, torch.relu does not), "
                 "and the check must not mark either down")

EQUIVALENT = [
    ("numpy_graph_grads", 'b = a + z', 'b = a - z', _FORWARD_UNUSED),
    ("numpy_graph_grads", 'a = x * y', 'a = x / y', _FORWARD_UNUSED),
    ("numpy_graph_grads", 'a = x * y', 'a = x + y', _FORWARD_UNUSED),
    ("numpy_graph_grads",
     'grad_b = grad_c * np.ones_like(b)  # sum: each element of b counts once',
     'grad_b = grad_c / np.ones_like(b)  # sum: each element of b counts once',
     "dividing by ones is multiplying by ones"),
    ("two_layer_grads",
     'grad_h = grad_h_relu * (h > 0)  # the ReLU lets the gradient through where h > 0',
     'grad_h = grad_h_relu * (h >= 0)  # the ReLU lets the gradient through where h > 0',
     _RELU_AT_ZERO),
    ("train_two_layer_torch", 'grad_h[h < 0] = 0', 'grad_h[h <= 0] = 0', _RELU_AT_ZERO),
]
