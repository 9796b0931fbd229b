"""The digits CNN coursekit ships pretrained (lab11): its weights load through the
torchvision-shaped API, are what the meta says, and the committed script retrains them."""
from __future__ import annotations

import hashlib

import pytest
import torch

from coursekit.models import DigitsCNN_Weights, digits_cnn
from coursekit.models import train_digits_cnn as recipe

WEIGHTS = DigitsCNN_Weights.DIGITS_0_4


def test_the_shipped_file_is_the_one_the_meta_describes():
    assert hashlib.sha256(WEIGHTS.path.read_bytes()).hexdigest() == WEIGHTS.meta["sha256"]
    model = digits_cnn(weights=WEIGHTS)
    assert sum(p.numel() for p in model.parameters()) == WEIGHTS.meta["num_params"]
    assert model.fc.out_features == len(WEIGHTS.meta["categories"])
    assert DigitsCNN_Weights.DEFAULT is WEIGHTS
    assert DigitsCNN_Weights.verify("DIGITS_0_4") is WEIGHTS is DigitsCNN_Weights.verify(WEIGHTS)
    with pytest.raises(ValueError, match="DIGITS_0_4"):
        DigitsCNN_Weights.verify("IMAGENET1K_V1")
    assert WEIGHTS.meta["recipe"] == recipe.__name__


def test_the_shipped_weights_score_the_accuracy_the_meta_states():
    _, (images, labels) = recipe.pretraining_data()
    accuracy = recipe.accuracy(digits_cnn(weights=WEIGHTS), images, labels)
    assert accuracy == pytest.approx(WEIGHTS.meta["metrics"]["test_accuracy"], abs=1e-4)


def test_the_script_retrains_the_shipped_weights():
    """Same bytes on the machine that made them; elsewhere (another CPU's kernels round
    differently) the same accuracy to within two test images and the same predictions."""
    model, accuracy = recipe.train()
    assert accuracy == pytest.approx(WEIGHTS.meta["metrics"]["test_accuracy"], abs=2 / 180)
    _, (images, _) = recipe.pretraining_data()
    shipped = digits_cnn(weights=WEIGHTS).eval()
    with torch.no_grad():
        agree = (model.eval()(images).argmax(1) == shipped(images).argmax(1)).float().mean()
    assert agree >= 0.97
    if hashlib.sha256(recipe.serialize(model)).hexdigest() != WEIGHTS.meta["sha256"]:
        expected = WEIGHTS.get_state_dict()
        drift = max((model.state_dict()[k].float() - v.float()).abs().max().item()
                    for k, v in expected.items())
        print(f"retrained weights differ from the shipped ones by up to {drift:.2g}")


def test_the_builder_takes_weights_none_or_a_member_as_torchvision_does():
    assert digits_cnn().fc.out_features == 10
    assert digits_cnn(num_classes=3).fc.out_features == 3
    assert digits_cnn(weights=WEIGHTS, num_classes=5).fc.out_features == 5
    with pytest.raises(ValueError, match="replace model.fc"):
        digits_cnn(weights=WEIGHTS, num_classes=10)


def test_the_model_runs_on_any_device():
    model = digits_cnn(weights=WEIGHTS).to("meta")
    out = model(torch.empty(4, 1, 8, 8, device="meta"))
    assert out.shape == (4, 5) and out.device.type == "meta"
    assert WEIGHTS.transforms()(torch.zeros(2, 64)).shape == (2, 1, 8, 8)
