"""Mechanical mutants of lab03_functions that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_SIGMOID_AT_ZERO = ("at x == 0 both branches of the stable sigmoid give exactly 1/2 "
                    "(1 / (1 + 1) and 1 / (1 + 1)), so which branch takes 0 does not matter")
_RELU_AT_ZERO = ("ReLU has no derivative at 0: 0 (torch.relu) and 1 (the PyTorch tutorial's "
                 "`grad_input[input < 0] = 0`) are both valid subgradients, and the check must not "
                 "mark either down")

_UNUSED = ("same behaviour on the lab's contract, where fn's output depends on every input "
           "that requires grad; an unused input is outside it: a right answer of the "
           "alternatives corpus (.backward() and x.grad) fails there too, so no case asks")

EQUIVALENT = [
    ("sigmoid", 'y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))',
     'y = torch.where(x > 0, 1 / (1 + e), e / (1 + e))', _SIGMOID_AT_ZERO),
    ("softplus", 'return grad_output * torch.where(x >= 0, 1 / (1 + e), e / (1 + e))',
     'return grad_output * torch.where(x > 0, 1 / (1 + e), e / (1 + e))', _SIGMOID_AT_ZERO),
    ("ck_sigmoid", 'y = (np.where(x >= 0, 1, e) / (1 + e)).astype(x.dtype, copy=False)',
     'y = (np.where(x > 0, 1, e) / (1 + e)).astype(x.dtype, copy=False)', _SIGMOID_AT_ZERO),
    ("ck_sigmoid", 'y = (np.where(x >= 0, 1, e) / (1 + e)).astype(x.dtype, copy=False)',
     'y = (np.where(x >= 0, 1, e) / (1 + e)).astype(x.dtype, copy=True)',
     "astype's copy flag only decides whether a fresh array is made; the values, dtype and "
     "shape are the same and nothing else holds the intermediate array"),
    ("my_relu", 'return grad_output * (x > 0)', 'return grad_output * (x >= 0)', _RELU_AT_ZERO),
    ("my_gradcheck", 'if abs(a - numeric) > atol + rtol * abs(numeric):',
     'if abs(a - numeric) >= atol + rtol * abs(numeric):',
     "differs only when the error equals the tolerance exactly in floating point, which no "
     "input can be chosen to produce (numeric comes from the student's random projection)"),
    ("my_gradcheck",
     'print(f"input {i}, element {j}: backward {a:.6g}, finite differences {numeric:.6g}")',
     'pass', "printed text only; the verdict is the same"),
    ("my_gradcheck",
     'analytic = torch.autograd.grad(out, [inputs[i] for i in wrt], v, allow_unused=True)',
     'analytic = torch.autograd.grad(out, [inputs[i] for i in wrt], v, allow_unused=False)',
     _UNUSED),
    ("my_gradcheck", 'grad = torch.zeros_like(inputs[i]) if grad is None else grad', 'pass',
     _UNUSED),
]
