"""Models the course pretrains itself and ships with weights (no download ever).

``digits_cnn(weights=DigitsCNN_Weights.DIGITS_0_4)`` mirrors torchvision's
``resnet18(weights=ResNet18_Weights.IMAGENET1K_V1)``.
"""
from .digits import DigitsPreprocess, load_digit_images, split_indices
from .digits_cnn import DigitsCNN, DigitsCNN_Weights, digits_cnn
from .weights import Weights, WeightsEnum

__all__ = ["DigitsCNN", "DigitsCNN_Weights", "DigitsPreprocess", "Weights", "WeightsEnum",
           "digits_cnn", "load_digit_images", "split_indices"]
