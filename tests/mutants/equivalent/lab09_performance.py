"""Mechanical mutants of lab09_performance that behave like the solution (see
tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_X_IS_2D = ("x has shape (rows, cols) (the exercise text): dim=1 is its last dimension, as "
            "dim=-1 is")
_GRAPH_NEVER_USED = ("saved_activation_bytes only measures the graph of model(x) and never runs "
                     "backward through it: what the pack hook hands on, and when the output is "
                     "freed, change nothing it returns")

EQUIVALENT = [
    ("bf16_report", '"sum": lambda a, b, x: x.sum(dim=-1),',
     '"sum": lambda a, b, x: x.sum(dim=+1),', _X_IS_2D),
    ("bf16_report", '"softmax": lambda a, b, x: torch.softmax(x, dim=-1)}',
     '"softmax": lambda a, b, x: torch.softmax(x, dim=+1)}', _X_IS_2D),
    ("saved_bytes", "return t", "pass", _GRAPH_NEVER_USED),
    ("saved_bytes", "del out", "pass", _GRAPH_NEVER_USED),
]
