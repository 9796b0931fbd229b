"""scikit-learn's bundled handwritten digits as image tensors (nothing is downloaded).

1,797 grey images of 8x8 pixels with values 0..16, about 180 per digit. The course pretrains
on the digits 0-4 and transfers to the digits 5-9.
"""
from __future__ import annotations

import numpy as np


class DigitsPreprocess:
    """Raw digit pixels (0..16; shape (N, 64) or (N, 8, 8)) to a float32 tensor (N, 1, 8, 8)
    in [0, 1]: the preprocessing the digits CNN's weights expect."""

    def __call__(self, pixels):
        import torch

        images = torch.as_tensor(np.asarray(pixels), dtype=torch.float32) / 16.0
        return images.reshape(-1, 1, 8, 8)

    def __repr__(self) -> str:
        return "DigitsPreprocess(pixels / 16, shape (N, 1, 8, 8))"


def load_digit_images(classes):
    """The images of the given digits and their labels renumbered 0..len(classes)-1.

    Returns:
        (raw pixels as an int array (N, 64) with values 0..16, labels as an int64 array (N,)),
        in scikit-learn's order.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    classes = list(classes)
    keep = np.isin(digits.target, classes)
    relabel = {digit: index for index, digit in enumerate(classes)}
    labels = np.array([relabel[t] for t in digits.target[keep]], dtype=np.int64)
    return digits.data[keep].astype(np.int64), labels


def split_indices(n: int, test_fraction: float, seed: int):
    """A fixed random split of ``range(n)``: (train indices, test indices)."""
    order = np.random.default_rng(seed).permutation(n)
    n_test = int(round(n * test_fraction))
    return np.sort(order[n_test:]), np.sort(order[:n_test])
