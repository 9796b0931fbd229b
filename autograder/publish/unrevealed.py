"""Stand-ins for reference code that is not revealed yet: shipped into the student bundle as
``coursekit/_unrevealed.py`` (see :mod:`autograder.publish.bundle`).

Each module of an unrevealed lab's ``reveals`` becomes a stub whose names all exist, so
``import coursekit`` and ``from coursekit.data import DataLoader`` still work, but using one
(calling it, subclassing it, reading its attributes) raises :class:`NotRevealedError`, which
says whose answer it is and from when it is in the student build. Each stand-in is a class,
so ``isinstance`` and ``issubclass`` tests against it are simply false.
"""
from __future__ import annotations

from typing import Any, Callable


class NotRevealedError(RuntimeError):
    """The reference code asked for is an answer students have not handed in yet."""


def _message(qualified: str, lab: str, when: str) -> str:
    return (f"{qualified} is part of the reference answer of {lab}, so the student build of "
            f"coursekit does not hold it {when}. Use your own code from the lab for now.")


class _Unrevealed(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotRevealedError(cls._message)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotRevealedError(cls._message)


def stand_in(qualified: str, lab: str, when: str) -> type:
    message = _message(qualified, lab, when)

    def refuse_subclass(cls, **kwargs: Any) -> None:
        raise NotRevealedError(message)

    return _Unrevealed(qualified.rsplit(".", 1)[-1], (), {
        "_message": message, "__init_subclass__": classmethod(refuse_subclass),
        "__module__": qualified.rsplit(".", 1)[0]})


def module_getattr(module: str, lab: str, when: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of a stub module: every public name is a stand-in."""
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return stand_in(f"{module}.{name}", lab, when)
    return __getattr__
