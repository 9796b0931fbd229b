"""pick_device, synchronize and friends: the CPU path everywhere, CUDA where present."""
from __future__ import annotations

import warnings

import pytest
import torch

from coursekit.hardware import devices
from coursekit.hardware.devices import (ENV_VAR, DeviceFallbackWarning, available_devices, describe_device,
                                        is_usable, pick_device, synchronize)

from .conftest import has_cuda, requires_cuda


def expected_auto() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if torch.backends.mps.is_available():
        return torch.device("mps", 0)
    return torch.device("cpu")


@pytest.fixture(autouse=True)
def no_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_pick_device_returns_best_available_device_without_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pick_device() == expected_auto()


@pytest.mark.skipif(has_cuda(), reason="checks the CPU-only path")
def test_pick_device_is_cpu_on_this_cpu_only_machine() -> None:
    assert pick_device() == torch.device("cpu")
    assert pick_device("auto") == torch.device("cpu")


def test_tensors_made_on_the_picked_device_compare_equal_to_it() -> None:
    device = pick_device()
    assert torch.ones(2, device=device).device == device


def test_env_override_selects_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "cpu")
    assert pick_device() == torch.device("cpu")


def test_env_override_auto_means_automatic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "auto")
    assert pick_device() == expected_auto()


def test_explicit_argument_beats_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "cuda:3")
    assert pick_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(has_cuda(), reason="checks the fallback on a machine without CUDA")
def test_env_asking_for_missing_cuda_falls_back_with_a_warning_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "cuda")
    with pytest.warns(DeviceFallbackWarning, match=r"\$COURSEKIT_DEVICE device 'cuda' is not available"):
        assert pick_device() == torch.device("cpu")


def test_unavailable_device_index_falls_back_with_a_warning() -> None:
    with pytest.warns(DeviceFallbackWarning, match="cuda:99"):
        assert pick_device("cuda:99") == expected_auto()


def test_env_value_that_is_not_a_device_warns_and_uses_automatic_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "gpu")
    with pytest.warns(DeviceFallbackWarning, match="not a device"):
        assert pick_device() == expected_auto()


def test_argument_that_is_not_a_device_raises_value_error_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="expected cpu, cuda"):
        pick_device("gpu")


def test_pick_device_accepts_a_torch_device() -> None:
    assert pick_device(torch.device("cpu")) == torch.device("cpu")


def test_is_usable_never_raises() -> None:
    assert is_usable("cpu") and is_usable(None)
    assert not is_usable("cuda:99")
    assert not is_usable("not-a-device")


def test_synchronize_is_a_no_op_on_cpu_and_never_raises_without_a_gpu() -> None:
    synchronize()
    synchronize("cpu")
    synchronize(torch.device("cpu"))
    if not has_cuda():
        synchronize("cuda")  # nothing to wait for; must not raise


def test_available_devices_starts_with_cpu() -> None:
    found = available_devices()
    assert found[0] == torch.device("cpu")
    assert all(is_usable(d) for d in found)


def test_describe_device_names_the_cpu() -> None:
    assert describe_device("cpu").startswith("cpu (")


def test_device_type_parsing_needs_no_torch_for_strings() -> None:
    assert devices._device_type("cuda:1") == "cuda"
    assert devices._device_type(None) == "cpu"


@pytest.mark.gpu
@requires_cuda
def test_pick_device_prefers_cuda_and_synchronize_waits() -> None:
    device = pick_device()
    assert device.type == "cuda" and device.index is not None
    x = torch.randn(1024, 1024, device=device)
    y = x @ x
    synchronize(device)
    assert torch.isfinite(y).all()
    assert "cuda:" in describe_device(device)
