"""Retrain the weights ``DigitsCNN_Weights.DIGITS_0_4`` ships, reproducibly.

    python -m coursekit.models.train_digits_cnn            # prints accuracy and sha256
    python -m coursekit.models.train_digits_cnn --write    # replaces the shipped file

The recipe: scikit-learn's digits 0-4, a fixed 80/20 split (seed 0), Adam (lr 3e-3, weight
decay 1e-4) for 12 epochs of mini-batches of 32 in an order drawn from a seeded generator,
one CPU thread and deterministic algorithms, so the same versions of torch and NumPy on the
same kind of CPU give the same bytes. Another machine gives the same accuracy to within a
few test images (a test checks it).
"""
from __future__ import annotations

import argparse
import hashlib
import io
from contextlib import contextmanager

import torch
from torch import nn

from .digits import DigitsPreprocess, load_digit_images, split_indices
from .digits_cnn import DigitsCNN, DigitsCNN_Weights

CLASSES = (0, 1, 2, 3, 4)
SPLIT_SEED = 0
TEST_FRACTION = 0.2
SEED = 0
EPOCHS = 12
BATCH_SIZE = 32
LR = 3e-3
WEIGHT_DECAY = 1e-4


def pretraining_data():
    """((train images, train labels), (test images, test labels)) as tensors."""
    pixels, labels = load_digit_images(CLASSES)
    train, test = split_indices(len(labels), TEST_FRACTION, SPLIT_SEED)
    images, labels = DigitsPreprocess()(pixels), torch.from_numpy(labels)
    return (images[train], labels[train]), (images[test], labels[test])


@contextmanager
def _reproducible():
    """One thread and deterministic kernels while training; the caller's settings after."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        return (model(images).argmax(dim=1) == labels).float().mean().item()


def train(seed: int = SEED, epochs: int = EPOCHS) -> tuple[DigitsCNN, float]:
    """The pretrained model and its accuracy on the held-out 20% of the digits 0-4."""
    (x_train, y_train), (x_test, y_test) = pretraining_data()
    with _reproducible():
        generator = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)  # the initial weights
        model = DigitsCNN(num_classes=len(CLASSES))
        optimizer = torch.optim.Adam(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
        for _ in range(epochs):
            model.train()
            order = torch.randperm(len(y_train), generator=generator)
            for start in range(0, len(order), BATCH_SIZE):
                batch = order[start:start + BATCH_SIZE]
                loss = nn.functional.cross_entropy(model(x_train[batch]), y_train[batch])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
        return model, accuracy(model, x_test, y_test)


def serialize(model: nn.Module) -> bytes:
    buffer = io.BytesIO()
    torch.save({k: v.detach().clone() for k, v in model.state_dict().items()}, buffer)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true",
                        help="replace the weights file shipped in coursekit/models/")
    args = parser.parse_args(argv)
    model, test_accuracy = train()
    data = serialize(model)
    print(f"test accuracy on the held-out digits 0-4: {test_accuracy:.4f}")
    print(f"parameters: {sum(p.numel() for p in model.parameters())}")
    print(f"sha256: {hashlib.sha256(data).hexdigest()}")
    if args.write:
        DigitsCNN_Weights.DIGITS_0_4.path.write_bytes(data)
        print(f"wrote {DigitsCNN_Weights.DIGITS_0_4.path}; update the meta in digits_cnn.py")


if __name__ == "__main__":
    main()
