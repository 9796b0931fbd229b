"""Pretrained weights as torchvision describes them: an enum of ``Weights`` entries.

torchvision names every set of pretrained weights with an enum member
(``ResNet18_Weights.IMAGENET1K_V1``) that carries where the weights come from, the preprocessing
they expect and facts about them (classes, parameter count, accuracy, the recipe that trained
them). A model builder takes ``weights=None`` (random initialisation) or such a member.

coursekit keeps that shape but never downloads: each entry names a file shipped inside this
package, which ``get_state_dict()`` loads with ``torch.load(..., weights_only=True)``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable


@dataclass(frozen=True)
class Weights:
    """One set of pretrained weights.

    Attributes:
        file: the weights file, relative to this package's folder.
        transforms: builds the preprocessing the weights expect (call it, then apply it).
        meta: facts about the weights: ``categories``, ``num_params``, ``recipe`` (the script
            that retrains them), ``sha256`` (of the file) and ``metrics``.
    """

    file: str
    transforms: Callable[..., Any]
    meta: dict[str, Any] = field(default_factory=dict)


class WeightsEnum(Enum):
    """Base class of an enum of :class:`Weights` (as ``torchvision.models.WeightsEnum``)."""

    @classmethod
    def verify(cls, weights: Any) -> "WeightsEnum | None":
        """``None``, a member, or a member's name (``"DIGITS_0_4"``) as the member."""
        if weights is None or isinstance(weights, cls):
            return weights
        if isinstance(weights, str):
            name = weights.removeprefix(cls.__name__ + ".")
            if name in cls.__members__:
                return cls[name]
        raise ValueError(f"weights must be None or one of {list(cls.__members__)} of "
                         f"{cls.__name__}, got {weights!r}")

    @property
    def path(self) -> Path:
        return Path(__file__).resolve().parent / self.value.file

    @property
    def transforms(self) -> Callable[..., Any]:
        return self.value.transforms

    @property
    def meta(self) -> dict[str, Any]:
        return self.value.meta

    def get_state_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The state dict, read from the file shipped with coursekit (checked by its hash)."""
        import torch

        data = self.path.read_bytes()
        expected = self.meta.get("sha256")
        if expected is not None and hashlib.sha256(data).hexdigest() != expected:
            raise RuntimeError(f"{self.path} does not match the sha256 recorded for "
                               f"{self}: reinstall coursekit, or retrain with "
                               f"`python -m {self.meta.get('recipe', '<recipe>')}`")
        return torch.load(self.path, weights_only=True, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"
