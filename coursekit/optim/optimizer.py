"""The optimizer base class: parameter groups, per-parameter state, and checkpoints.

An optimizer owns *references* to parameters, never copies. ``step()`` reads
``p.grad`` and writes the new value into ``p.data`` in place, so the model that
holds the same ``Parameter`` objects sees the update without any hand-over.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

import numpy as np

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Sentinel for a hyper-parameter that has no default (torch: ``optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _tensor_type() -> type:
    # Imported on first use: the optimizers only need `.data` and `.grad`, and this keeps
    # `coursekit.optim` importable without pulling the whole engine in at import time.
    from coursekit.autograd import Tensor

    return Tensor


def _node_name(node: Any) -> str:
    name = getattr(node, "name", None)
    return name() if callable(name) else type(node).__name__


def _to_numpy(value: Any) -> np.ndarray:
    """A NumPy copy of a coursekit Tensor, NumPy array or torch tensor."""
    if hasattr(value, "detach") and hasattr(value, "cpu") and type(value).__module__.startswith("torch"):
        return value.detach().cpu().numpy().copy()
    data = getattr(value, "data", value)
    return np.array(data, copy=True)


def _is_array_like_state(value: Any) -> bool:
    return isinstance(value, (np.ndarray, _tensor_type())) or type(value).__module__.startswith("torch")


class _ParamState(MutableMapping):
    """Per-parameter state, keyed by the parameter *object* (identity, not value).

    NOTE [state keyed by identity]
    torch keys ``optimizer.state`` by the tensor itself, which works because torch
    tensors hash by ``id``. A coursekit Tensor may define an element-wise ``__eq__``
    (which makes it unhashable), so this mapping keys by ``id(p)`` and keeps ``p``
    alive next to its state. Reading a missing key creates an empty dict, like the
    ``defaultdict(dict)`` torch uses.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, dict]] = {}

    def __getitem__(self, param: Any) -> dict:
        entry = self._items.get(id(param))
        if entry is None:
            entry = (param, {})
            self._items[id(param)] = entry
        return entry[1]

    def __setitem__(self, param: Any, value: dict) -> None:
        self._items[id(param)] = (param, value)

    def __delitem__(self, param: Any) -> None:
        del self._items[id(param)]

    def __contains__(self, param: object) -> bool:
        return id(param) in self._items

    def __iter__(self) -> Iterator[Any]:
        return (p for p, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        rows = ", ".join(f"<param {tuple(p.shape)}>: {sorted(s)}" for p, s in self._items.values())
        return "{" + rows + "}"


class Optimizer:
    """Base class of every optimizer, with torch.optim.Optimizer's interface.

    Args:
        params: an iterable of parameters, of ``(name, parameter)`` pairs (as
            ``module.named_parameters()`` yields), or of dicts, each a *parameter
            group* ``{"params": [...], "lr": ..., ...}`` whose options override
            ``defaults`` for the parameters it holds.
        defaults: the options (hyper-parameters) a group gets when it does not set them.

    Attributes:
        param_groups: list of dicts; ``group["params"]`` is the list of parameters and
            every other key is an option of that group (change ``group["lr"]`` to
            schedule the learning rate).
        state: per-parameter state (momentum buffers, moment estimates, step counts),
            indexed by the parameter object: ``optimizer.state[p]``.

    Subclasses implement :meth:`step`; the update is written into ``p.data`` in place
    and parameters whose ``grad`` is ``None`` are skipped (they took no part in the
    last backward, so they have nothing to learn from it).
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: _ParamState = _ParamState()
        self.param_groups: list[dict[str, Any]] = []

        if isinstance(params, _tensor_type()):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {type(params).__name__}; pass model.parameters() or [tensor]"
            )
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (e.g. unfreezing a layer mid-training).

        Options the group leaves out take the optimizer's defaults. A parameter may
        belong to one group only.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        if "params" not in group:
            raise ValueError("param_group must have a 'params' entry")
        params = group["params"]
        tensor_type = _tensor_type()
        if isinstance(params, tensor_type):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            # A set's order changes from run to run, and state_dict() stores parameters by position.
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)

        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            group["param_names"] = names
        group["params"] = tensors

        for i, p in enumerate(tensors):
            if not isinstance(p, tensor_type):
                raise TypeError(
                    "optimizer can only optimize Tensors, but param "
                    f"{i} of the group is {type(p).__module__}.{type(p).__name__}"
                )
            if not p.is_leaf:
                # The result of an op is recomputed on every forward: updating it would change nothing.
                raise ValueError(
                    f"can't optimize a non-leaf Tensor (param {i} comes from {_node_name(p.grad_fn)}); "
                    "optimize the leaf it was computed from"
                )

        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            group.setdefault(name, default)

        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        for other in self.param_groups:
            if ("param_names" in other) != ("param_names" in group):
                which = "with names" if "param_names" in group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
            if not set(ids).isdisjoint(id(p) for p in other["params"]):
                raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(group)

    # -------------------------------------------------------------- gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every parameter before the next backward.

        Backward *accumulates* into ``p.grad``, so without this call each step would
        use the sum of all gradients so far. ``set_to_none=True`` (the default, as in
        torch) drops the gradient Tensor: cheaper, and a parameter that gets no
        gradient next time is then skipped by ``step()`` rather than updated with 0
        (which still moves it under momentum or weight decay). ``False`` fills the
        existing gradient with zeros instead.
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.data[...] = 0

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    @staticmethod
    def _evaluate(closure: Callable[[], Any] | None) -> Any:
        """Run a closure that recomputes the loss (with gradients on, as torch does)."""
        if closure is None:
            return None
        from coursekit import enable_grad

        with enable_grad():
            return closure()

    def _state_tensor(self, array: np.ndarray) -> Any:
        """Wrap a state buffer as a coursekit Tensor, so ``optimizer.state`` reads as in torch."""
        from coursekit import tensor

        return tensor(array)

    # ------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """A checkpoint of options and state, with parameters replaced by their position.

        Returns ``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``,
        the layout torch uses, so a checkpoint does not hold the parameters themselves;
        :meth:`load_state_dict` on an optimizer built over the same parameters in the same
        order puts everything back. State Tensors are copied (torch hands out references),
        so continuing to train does not change a checkpoint already taken.
        """
        index_of: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, p_state in self.state._items.values():
            if id(p) not in index_of:
                continue
            state[index_of[id(p)]] = {k: self._copy_state_value(v) for k, v in p_state.items()}
        return {"state": state, "param_groups": copy.deepcopy(groups)}

    def _copy_state_value(self, value: Any) -> Any:
        if isinstance(value, _tensor_type()):
            return self._state_tensor(np.array(value.data, copy=True))
        return copy.deepcopy(value)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore options and state from :meth:`state_dict`'s output.

        State values may be coursekit Tensors, NumPy arrays or torch tensors; floating
        point buffers are cast to their parameter's dtype (``step`` keeps its own).
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                "loaded state dict has a different number of parameter groups: "
                f"expected {len(self.param_groups)}, got {len(saved_groups)}"
            )
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of "
                    f"optimizer's group: group {i} expected {len(group['params'])} params, "
                    f"got {len(saved['params'])}"
                )
        param_of = {
            saved_index: p
            for group, saved in zip(self.param_groups, saved_groups)
            for saved_index, p in zip(saved["params"], group["params"])
        }

        new_state = _ParamState()
        for index, p_state in state_dict["state"].items():
            index = int(index)
            if index not in param_of:
                continue  # torch ignores state for indices no group refers to
            p = param_of[index]
            new_state[p] = {key: self._cast_state_value(p, key, v) for key, v in p_state.items()}

        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            restored = {k: copy.deepcopy(v) for k, v in saved.items() if k != "params"}
            restored["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                restored["param_names"] = group["param_names"]
            new_groups.append(restored)

        self.state = new_state
        self.param_groups = new_groups

    def _cast_state_value(self, param: Any, key: str, value: Any) -> Any:
        if key == "step":
            # Stored as a number here; torch keeps it in a 0-d float tensor.
            return int(_to_numpy(value).item()) if _is_array_like_state(value) else value
        if _is_array_like_state(value):
            array = _to_numpy(value)
            if np.issubdtype(array.dtype, np.floating):
                array = array.astype(param.data.dtype, copy=False)
            return self._state_tensor(array)
        return copy.deepcopy(value)

    # ------------------------------------------------------------------ repr
    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
