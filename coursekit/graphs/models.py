"""Small models and functions that lab06's checks export, script and trace.

The functions with data-dependent control flow are the cases a trace gets wrong: a branch on
a tensor's value, a size read as a Python number, a loop whose count comes from the data.
The modules are what a deployment exports: a BatchNorm layer (whose output differs between
training and evaluation mode) and a batch dimension that must stay free.
"""
from __future__ import annotations

import numpy as np
import torch


# --------------------------------------------------------------- functions a trace can freeze

def grow_or_shrink(x):
    """Doubles ``x`` when its sum is positive, else halves it and subtracts one."""
    if x.sum() > 0:
        return x * 2.0
    return x / 2.0 - 1.0


def keep_first_half(x):
    """The first half of the rows, tripled. The trace records ``x.shape[0]`` as a size
    operation, so this one generalizes."""
    half = x.shape[0] // 2
    return x[:half] * 3.0


def scale_by_length(x):
    """``x`` times its number of rows, read with ``len``: a plain int the trace keeps."""
    return x * len(x)


def double_each_row(x):
    """Doubles ``x`` row by row in a Python loop: the trace unrolls it for the example's rows."""
    return torch.stack([row * 2.0 for row in x])


def via_numpy(x):
    """Squares ``x`` through NumPy: the trace cannot see inside, and keeps the result."""
    return torch.from_numpy(x.numpy() ** 2)


def repeat_by_max(x):
    """Adds ``x`` to itself once per unit of its (clamped) maximum: a data-dependent loop."""
    out = x.clone()
    for _ in range(int(x.max().clamp(0, 4))):
        out = out + x
    return out


def smooth_gate(x):
    """A sigmoid gate, no control flow: its trace agrees with it everywhere."""
    return x * torch.sigmoid(x) + 0.5 * x


FUNCTIONS = {f.__name__: f for f in (grow_or_shrink, keep_first_half, scale_by_length,
                                     double_each_row, via_numpy, repeat_by_max, smooth_gate)}


# --------------------------------------------------------------------------------- modules

class BatchNormMLP(torch.nn.Module):
    """Linear, BatchNorm, ReLU, Linear: BatchNorm uses batch statistics in training mode."""

    def __init__(self, features: int, hidden: int, outputs: int):
        super().__init__()
        self.hidden = torch.nn.Linear(features, hidden)
        self.norm = torch.nn.BatchNorm1d(hidden)
        self.out = torch.nn.Linear(hidden, outputs)

    def forward(self, x):
        return self.out(torch.relu(self.norm(self.hidden(x))))


class ResidualMLP(torch.nn.Module):
    """A residual block with LayerNorm and dropout, then a linear head."""

    def __init__(self, features: int, hidden: int, outputs: int):
        super().__init__()
        self.inner = torch.nn.Linear(features, hidden)
        self.back = torch.nn.Linear(hidden, features)
        self.norm = torch.nn.LayerNorm(features)
        self.drop = torch.nn.Dropout(0.5)
        self.head = torch.nn.Linear(features, outputs)

    def forward(self, x):
        h = x + self.drop(self.back(torch.tanh(self.inner(self.norm(x)))))
        return self.head(h)


MODELS = {"batchnorm_mlp": BatchNormMLP, "residual_mlp": ResidualMLP}


def random_model(kind: str, rng: np.random.Generator) -> tuple[torch.nn.Module, int]:
    """A model of ``kind`` with sizes and every parameter and buffer drawn from ``rng``, in
    training mode. Returns the model and its number of input features."""
    features, hidden, outputs = (int(v) for v in rng.integers(2, 9, size=3))
    model = MODELS[kind](features, hidden, outputs)
    state = {}
    for name, value in model.state_dict().items():
        if value.dtype == torch.long:   # BatchNorm's count of batches seen
            state[name] = value
        elif name.endswith("running_var"):
            state[name] = torch.from_numpy(rng.uniform(0.5, 2.0, value.shape).astype(np.float32))
        else:
            state[name] = torch.from_numpy(rng.standard_normal(value.shape).astype(np.float32))
    model.load_state_dict(state)
    return model.train(), features


# --------------------------------------------------------------- trees: graphs shaped by input

def random_tree(rng: np.random.Generator, leaves: int, vocab: int, shape: str = "random"):
    """A binary tree over ``leaves`` word indices drawn from ``range(vocab)``: a leaf is an
    ``int``, an inner node a pair ``(left, right)``, as a parse tree of a sentence.

    ``shape``: ``"random"`` (each node split at a random place), ``"left"`` (``((a, b), c)``: a
    chain read left to right, what a recurrent network computes), ``"right"``, or
    ``"balanced"``.
    """
    words = [int(w) for w in rng.integers(0, vocab, size=leaves)]

    def build(items: list[int]):
        if len(items) == 1:
            return items[0]
        cut = {"left": len(items) - 1, "right": 1, "balanced": len(items) // 2}.get(
            shape, int(rng.integers(1, len(items))) if shape == "random" else None)
        if cut is None:
            raise ValueError(f"unknown shape {shape!r}: random, left, right or balanced")
        return (build(items[:cut]), build(items[cut:]))

    return build(words)


def tree_text(tree) -> str:
    """A tree as text, leaves as their indices: ``((3 1) 4)``."""
    if isinstance(tree, tuple):
        return "(" + " ".join(tree_text(child) for child in tree) + ")"
    return str(tree)


def inner_nodes(tree) -> int:
    """The number of inner nodes (pairs) of a tree: one combining step each."""
    return 1 + inner_nodes(tree[0]) + inner_nodes(tree[1]) if isinstance(tree, tuple) else 0
