"""Mechanical mutants of lab11_after_training that behave like the solution (see
tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_CONSTANTS = ("{framework}'s operators take NumPy arrays as constants: x @ w1 with x still a "
              "NumPy array builds the same operation on the same values, and no gradient is "
              "asked of x or y")

EQUIVALENT = [
    ("ema", "self.n_averaged += 1", "self.n_averaged += 2",
     "n_averaged is only compared with 0 (has the first update happened?): 2, 4, ... answer "
     "that as 1, 2, ... do"),
    ("frameworks", "x, y = ck.tensor(x), ck.tensor(y)", "pass",
     _CONSTANTS.format(framework="coursekit")),
    ("frameworks", "x, y = tf.constant(x), tf.constant(y)", "pass",
     _CONSTANTS.format(framework="TensorFlow")),
]
