"""Choosing a device, and waiting for it.

``pick_device()`` is what every lab calls: it gives the fastest device this machine has
(CUDA, then Apple's MPS, then the CPU), and a CPU-only machine simply gets the CPU. The
environment variable ``COURSEKIT_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``mps``) overrides the
choice for a whole session, e.g. to check a lab on the CPU on a GPU machine.

NOTE [asynchronous devices]
    CUDA and MPS kernels are queued and run later; the Python call returns at once. Timing
    a GPU op without ``synchronize(device)`` measures the launch, not the work.
"""
from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import torch

ENV_VAR = "COURSEKIT_DEVICE"
_AUTO = ("", "auto")

DeviceLike = Union[str, "torch.device", None]


class DeviceFallbackWarning(UserWarning):
    """A requested device is not usable here, so another one was picked."""


def _device_type(device: DeviceLike) -> str:
    """``"cpu"``, ``"cuda"``... without importing torch when the answer is plain."""
    if device is None:
        return "cpu"
    if isinstance(device, str):
        return device.split(":", 1)[0].strip().lower()
    return str(getattr(device, "type", "cpu"))


def is_usable(device: DeviceLike) -> bool:
    """Whether tensors can be put on ``device`` on this machine. Never raises."""
    try:
        import torch

        dev = torch.device(device) if device is not None else torch.device("cpu")
        if dev.type == "cpu":
            return True
        if dev.type == "cuda":
            return torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count()
        if dev.type == "mps":
            return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
        backend = getattr(torch, dev.type, None)  # xpu and friends
        return bool(backend is not None and backend.is_available())
    except Exception:  # noqa: BLE001 - a device check must not raise
        return False


def available_devices() -> list["torch.device"]:
    """Every device torch can use here: ``cpu``, then ``cuda:0``..., then ``mps:0``."""
    import torch

    found = [torch.device("cpu")]
    if is_usable("cuda"):
        found += [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    if is_usable("mps"):
        found.append(torch.device("mps", 0))
    return found


def _indexed(dev: "torch.device") -> "torch.device":
    """``cuda`` -> ``cuda:<current>``, ``mps`` -> ``mps:0``: the form ``tensor.device`` has,
    so that ``x.device == pick_device()`` compares as a student expects."""
    import torch

    if dev.index is not None or dev.type == "cpu":
        return dev
    if dev.type == "cuda":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device(dev.type, 0)


def _auto() -> "torch.device":
    import torch

    for candidate in ("cuda", "mps"):
        if is_usable(candidate):
            return _indexed(torch.device(candidate))
    return torch.device("cpu")


def pick_device(prefer: DeviceLike = None) -> "torch.device":
    """The device to compute on.

    Order: ``prefer`` if given, else ``$COURSEKIT_DEVICE`` if set, else the best available
    (``cuda`` > ``mps`` > ``cpu``). A requested device that is not usable here gives a
    ``DeviceFallbackWarning`` and the best available device instead; a CPU-only machine never
    gets an exception.

    Args:
        prefer: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, a ``torch.device``, or
            ``None`` / ``"auto"`` for the automatic choice.

    Raises:
        ValueError: ``prefer`` is not a device name at all (e.g. ``"gpu"``).
    """
    import torch

    source = "argument"
    request: Any = prefer
    if request is None or (isinstance(request, str) and request.strip().lower() in _AUTO):
        request, source = os.environ.get(ENV_VAR, ""), ENV_VAR
        if request.strip().lower() in _AUTO:
            return _auto()
    try:
        wanted = torch.device(request.strip() if isinstance(request, str) else request)
    except (RuntimeError, TypeError, ValueError) as exc:
        message = (f"{source} {request!r} is not a device: expected cpu, cuda, cuda:<index>, "
                   f"mps or auto ({exc})")
        if source == ENV_VAR:
            warnings.warn(f"{message}; using automatic choice", DeviceFallbackWarning, stacklevel=2)
            return _auto()
        raise ValueError(message) from None
    if is_usable(wanted):
        return _indexed(wanted)
    fallback = _auto()
    where = f"${ENV_VAR}" if source == ENV_VAR else "requested"
    warnings.warn(f"{where} device {str(wanted)!r} is not available on this machine; using "
                  f"{str(fallback)!r}", DeviceFallbackWarning, stacklevel=2)
    return fallback


def synchronize(device: DeviceLike = None) -> None:
    """Wait until all work queued on ``device`` has finished (no-op on the CPU)."""
    kind = _device_type(device)
    if kind == "cpu":
        return
    import torch

    if kind == "cuda":
        if torch.cuda.is_available():
            torch.cuda.synchronize(device)
    elif kind == "mps":
        if is_usable("mps"):
            torch.mps.synchronize()
    else:
        backend = getattr(torch, kind, None)
        if backend is not None and hasattr(backend, "synchronize") and backend.is_available():
            backend.synchronize()


def describe_device(device: DeviceLike = None) -> str:
    """A one-line description, e.g. ``"cuda:0 (NVIDIA H100 80GB HBM3, 79.2 GiB)"``."""
    import torch

    dev = _indexed(torch.device(device) if device is not None else pick_device())
    try:
        if dev.type == "cuda" and is_usable(dev):
            props = torch.cuda.get_device_properties(dev)
            return f"{dev} ({props.name}, {props.total_memory / 1024**3:.1f} GiB)"
        if dev.type == "cpu":
            from .host import cpu_info

            cpu = cpu_info()
            return f"cpu ({cpu.model or 'unknown CPU'}, {cpu.compute_cores} cores)"
    except Exception:  # noqa: BLE001 - description is best effort
        pass
    return str(dev)
