"""Containers: ``Sequential`` (a pipeline) and ``ModuleList`` (a registered list)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from coursekit.nn.module import Module, _indent

__all__ = ["Sequential", "ModuleList"]


def _check_module(module: Any, where: str) -> None:
    if isinstance(module, Module):
        return
    if isinstance(module, type) and issubclass(module, Module):
        raise TypeError(f"{where}: got the class {module.__name__}, not a module; write {module.__name__}(...)")
    raise TypeError(f"{where}: expected a Module, got {type(module).__name__}")


class _IndexedModules(Module):
    """Shared list behaviour of Sequential and ModuleList: children named "0", "1", ..."""

    def _index(self, idx: int) -> int:
        if not isinstance(idx, int):
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, not {type(idx).__name__}")
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for {type(self).__name__} of length {n}")
        return idx % n

    def _renumber(self, modules: Iterable[Module]) -> None:
        # Keys stay "0".."n-1" after a deletion or insertion, as in torch, so that
        # state_dict keys keep matching an equivalent freshly built container.
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(modules))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __setitem__(self, idx: int, module: Module) -> None:
        _check_module(module, f"{type(self).__name__}[{idx}] = ...")
        key = list(self._modules)[self._index(idx)]
        self._modules[key] = module

    def __delitem__(self, idx: int | slice) -> None:
        items = list(self._modules.values())
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[self._index(idx)]
        self._renumber(items)

    def append(self, module: Module) -> _IndexedModules:
        """Add ``module`` at the end; returns self."""
        _check_module(module, f"{type(self).__name__}.append")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> _IndexedModules:
        """Append each module of ``modules``; returns self."""
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        _check_module(module, f"{type(self).__name__}.insert")
        items = list(self._modules.values())
        items.insert(index, module)
        self._renumber(items)


class Sequential(_IndexedModules):
    """Modules applied one after another: ``forward(x)`` is ``m_n(...m_2(m_1(x)))``.

    Children are named ``"0"``, ``"1"``, ... (or by the keys of an ``OrderedDict``), so
    ``Sequential(Linear(4, 8), ReLU(), Linear(8, 2))`` has parameters ``0.weight``,
    ``0.bias``, ``2.weight``, ``2.bias``, exactly as the same ``torch.nn.Sequential``.

    Args:
        *args: the modules in order, or a single ``OrderedDict`` name -> module.

    Example:
        >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 2))
        >>> model[0], len(model), model[-1].out_features
    """

    def __init__(self, *args: Module | OrderedDict) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                _check_module(module, f"Sequential: entry {name!r}")
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                _check_module(module, f"Sequential: argument {i}")
                self.add_module(str(i), module)

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            # A slice keeps the original names, as in torch.
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._index(idx)]

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules whose parameters the parent module sees.

    A plain Python list of layers is invisible to ``parameters()`` (and so to the
    optimizer); a ModuleList registers each entry as child ``"0"``, ``"1"``, ...
    It has no ``forward``: the owner decides how to use its entries.

    Args:
        modules: an optional iterable of modules.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Module | ModuleList:
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return list(self._modules.values())[self._index(idx)]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList(list(self) + list(other))

    def __repr__(self) -> str:
        # Runs of identical entries print once, as "(0-11): 12 x Block(...)", like torch.
        if not self._modules:
            return "ModuleList()"
        runs: list[list] = []  # [first index, last index, repr]
        for i, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = []
        for first, last, text in runs:
            label = f"({first}): " if first == last else f"({first}-{last}): {last - first + 1} x "
            lines.append(_indent(label + text, 2))
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"
