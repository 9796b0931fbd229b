"""A small CNN for 8x8 digits, and the weights coursekit trained for it on the digits 0-4.

Built like a torchvision classifier: convolutional blocks, then a linear classifier called
``fc`` on their flattened output, which transfer learning replaces::

    model = digits_cnn(weights=DigitsCNN_Weights.DIGITS_0_4)   # pretrained, 5 classes
    model.fc = torch.nn.Linear(model.fc.in_features, 5)        # a new head for a new task

The weights file ships with coursekit; ``python -m coursekit.models.train_digits_cnn``
retrains it (see that script for the recipe).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .digits import DigitsPreprocess
from .weights import Weights, WeightsEnum


class DigitsCNN(nn.Module):
    """conv-BN-ReLU (16 x 8x8) -> conv-BN-ReLU-maxpool (32 x 4x4) -> 512 features -> ``fc``."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False),
                                    nn.BatchNorm2d(16), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1, bias=False),
                                    nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(32 * 4 * 4, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The 512 features the classifier ``fc`` reads."""
        return self.block2(self.block1(x)).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


class DigitsCNN_Weights(WeightsEnum):  # torchvision's naming (ResNet18_Weights)
    DIGITS_0_4 = Weights(
        file="digits_cnn_0_4.pt",
        transforms=DigitsPreprocess,
        meta={
            "categories": ["0", "1", "2", "3", "4"],
            "num_params": 7_413,
            "recipe": "coursekit.models.train_digits_cnn",
            "metrics": {"test_accuracy": 0.9944},
            "sha256": "3271aea4f05f2c5637efefdacef1057d0fd0470d3973f2a9b28f05a2ba8daebd",
            "_docs": "Trained by coursekit on scikit-learn's digits 0-4 (80% of them; the "
                     "accuracy is on the other 20%).",
        },
    )
    DEFAULT = DIGITS_0_4


def digits_cnn(*, weights: DigitsCNN_Weights | None = None, num_classes: int | None = None,
               **kwargs: Any) -> DigitsCNN:
    """A :class:`DigitsCNN`, randomly initialised (``weights=None``) or pretrained.

    Args:
        weights: ``None`` or a member of :class:`DigitsCNN_Weights`.
        num_classes: outputs of ``fc``; with weights it must match their categories.
    """
    weights = DigitsCNN_Weights.verify(weights)
    if weights is not None:
        categories = len(weights.meta["categories"])
        if num_classes not in (None, categories):
            raise ValueError(f"the weights {weights!r} have {categories} classes, not "
                             f"num_classes={num_classes}: load them, then replace model.fc")
        num_classes = categories
    model = DigitsCNN(num_classes=10 if num_classes is None else num_classes, **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict())
    return model
