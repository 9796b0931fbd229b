"""``Module``: the base class of every layer and model.

A Module is a tree. Each node keeps three ordered registries, filled by plain
attribute assignment in ``__init__``:

* ``_parameters``: the ``Parameter`` objects the optimizer will train;
* ``_buffers``: Tensors that are state but not trained (e.g. running statistics);
* ``_modules``: child Modules.

Every recursive method (``parameters()``, ``state_dict()``, ``train()``, ...) walks
this tree in registration order, which is why the names and their order come out
exactly as PyTorch's: ``0.weight``, ``0.bias``, ``2.weight`` ...
"""

from __future__ import annotations

import difflib
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from coursekit.autograd import Tensor
from coursekit.nn.parameter import Parameter

__all__ = ["Module", "IncompatibleKeys"]

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])
IncompatibleKeys.__doc__ = """What ``load_state_dict(strict=False)`` could not match: keys the
model has that the state dict lacks, and keys the state dict has that the model lacks."""

_REGISTRIES = ("_parameters", "_buffers", "_modules")


def _typename(value: Any) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _as_array(value: Any) -> np.ndarray | None:
    """NumPy view of a state-dict value: coursekit Tensor, NumPy array or torch tensor."""
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return None


def _indent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module:
    """Base class for layers and models, with ``torch.nn.Module``'s interface.

    Subclass it, call ``super().__init__()`` first, assign parameters and sub-modules
    as attributes, and write ``forward``; call the module itself (``model(x)``), not
    ``forward``.

    Example:
        >>> class TwoLayerNet(Module):
        ...     def __init__(self, d_in, h, d_out):
        ...         super().__init__()
        ...         self.fc1 = Linear(d_in, h)      # registered as child "fc1"
        ...         self.fc2 = Linear(h, d_out)
        ...     def forward(self, x):
        ...         return self.fc2(self.fc1(x).relu())
        >>> [name for name, _ in TwoLayerNet(4, 8, 2).named_parameters()]
        ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']

    Attributes:
        training: True in training mode, False after ``eval()``; layers whose
            behaviour differs (dropout, batch norm) read it.
    """

    training: bool

    def __init__(self) -> None:
        # object.__setattr__ skips our own __setattr__, which needs these registries to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of this module; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------ registration
    def _check_name(self, name: Any, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {_typename(name)}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a ``None`` placeholder, like a missing bias) under ``name``."""
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(coursekit.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a Tensor that is state but not trained; ``persistent=False`` keeps it out of ``state_dict``."""
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (coursekit Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (for names that are not identifiers, e.g. ``"0"``)."""
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        # NOTE [attribute registration]
        # Assigning a Parameter or a Module files it in its registry (and removes any
        # older entry of the same name elsewhere), so `self.fc = Linear(...)` is all a
        # subclass writes. A name already registered as a parameter, buffer or module
        # can be re-assigned only a value of the same kind, or None.
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(coursekit.nn.Parameter or None expected); wrap it: nn.Parameter(tensor)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call; "
                    "call super().__init__() first in your __init__"
                )
            self._forget(name, keep="_modules")
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from the instance dict and every registry but ``keep``."""
        self.__dict__.pop(name, None)
        for registry in _REGISTRIES:
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        if keep != "_buffers":
            self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup fails: the registered names live in the registries.
        d = self.__dict__
        if name in _REGISTRIES or name == "_non_persistent_buffers":
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}': "
                "did its __init__ call super().__init__() first?"
            )
        for registry in _REGISTRIES:
            entries = d.get(registry, {})
            if name in entries:
                return entries[name]
        if name.startswith("__"):
            # Protocol probes (copy, pickle, IPython) ask for dunders that are not there: no hints needed.
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        raise AttributeError(self._missing_attribute_message(name))

    def _missing_attribute_message(self, name: str) -> str:
        d = {r: self.__dict__.get(r, {}) for r in _REGISTRIES} | self.__dict__
        known = [k for r in _REGISTRIES for k in d[r]] + [k for k in d if not k.startswith("_")]
        known += [k for k in dir(type(self)) if not k.startswith("_")]
        message = f"'{type(self).__name__}' object has no attribute '{name}'"
        close = difflib.get_close_matches(name, known, n=1)
        if close:
            message += f". Did you mean '{close[0]}'?"
        parts = [f"{label} {list(d[r])}" for label, r in
                 (("parameters", "_parameters"), ("buffers", "_buffers"), ("submodules", "_modules")) if d[r]]
        if parts:
            message += f" ({type(self).__name__} has " + ", ".join(parts) + ")"
        return message

    def __delattr__(self, name: str) -> None:
        for registry in _REGISTRIES:
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = set(super().__dir__())
        for registry in _REGISTRIES:
            keys.update(self.__dict__.get(registry, {}))
        return sorted(k for k in keys if not k[0].isdigit())

    # --------------------------------------------------------------- the tree
    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Yield ``(dotted name, module)`` for this module (name ``""``) and every descendant, pre-order.

        A module reachable twice (shared weights) is yielded once unless
        ``remove_duplicate=False``.
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            child_prefix = f"{prefix}.{name}" if prefix else name
            yield from child.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Yield this module and every descendant, pre-order."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yield ``(name, child)`` for the direct children, each once."""
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """Yield the direct children."""
        for _, child in self.named_children():
            yield child

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None:
                    continue
                if remove_duplicate:
                    # Identity, not equality: a Tensor's == is element-wise.
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(dotted name, parameter)``, in registration order, each parameter once.

        Args:
            prefix: prepended to every name.
            recurse: include the parameters of descendants, not only this module's own.
            remove_duplicate: yield a shared (tied) parameter only under its first name.
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yield the parameters (what an optimizer is built from): ``SGD(model.parameters(), lr=0.1)``."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """Yield ``(dotted name, buffer)``, in registration order."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Yield the buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target: str) -> Module:
        """The descendant at a dotted path, e.g. ``model.get_submodule("encoder.0")``."""
        module = self
        if target == "":
            return module
        walked = []
        for part in target.split("."):
            child = module._modules.get(part)
            if not isinstance(child, Module):
                where = type(module).__name__ + (f" at '{'.'.join(walked)}'" if walked else "")
                raise AttributeError(f"{where} has no submodule '{part}' (it has {list(module._modules)})")
            module = child
            walked.append(part)
        return module

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every descendant and then on this module (post-order); returns self.

        Typical use is custom initialisation: ``model.apply(init_weights)``.
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {_typename(mode)}")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (``train(False)``); returns self. It does not turn off gradients: use ``no_grad``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Switch gradient tracking of every parameter (``False`` freezes the module); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradient of every parameter: drop it (default) or fill it with zeros.

        Gradients accumulate across backward calls; see ``Optimizer.zero_grad``.
        """
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.data[...] = 0

    # ------------------------------------------------------------------ dtype
    def _apply_to_arrays(self, convert: Callable[[np.ndarray], np.ndarray]) -> Module:
        for module in self.modules():
            for p in module._parameters.values():
                if p is None:
                    continue
                p.data = convert(p.data)
                if p.grad is not None:
                    p.grad.data = convert(p.grad.data)
            for buf in module._buffers.values():
                if buf is not None:
                    buf.data = convert(buf.data)
        return self

    def to(self, dtype: Any) -> Module:
        """Convert floating-point parameters and buffers to ``dtype`` in place; returns self.

        The Parameter objects stay the same (only their arrays change), but an optimizer
        built before the call keeps state of the old dtype: convert first, then build it.
        """
        dtype = np.dtype(dtype)
        if not np.issubdtype(dtype, np.floating):
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
        return self._apply_to_arrays(
            lambda a: a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a
        )

    def double(self) -> Module:
        """Convert floating-point parameters and buffers to float64; returns self."""
        return self.to(np.float64)

    def float(self) -> Module:
        """Convert floating-point parameters and buffers to float32; returns self."""
        return self.to(np.float32)

    # -------------------------------------------------------------- state dict
    def state_dict(
        self, destination: dict[str, Any] | None = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """An ordered dict ``dotted name -> Tensor`` of every parameter and persistent buffer.

        Keys follow PyTorch's naming (own parameters, own buffers, then each child under
        ``child_name.``), so a torch model of the same architecture loads it, and the other
        way round. Values are detached Tensors that share memory with the module (as in
        torch); copy them if training should not change a saved state.
        """
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def _state_entries(self) -> OrderedDict[str, Tensor]:
        return self.state_dict(keep_vars=True)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers, in place.

        Values may be coursekit Tensors, NumPy arrays or torch tensors; they are cast to
        each parameter's dtype. Copying in place keeps the Parameter objects, so an
        optimizer built over them stays valid.

        Args:
            state_dict: a mapping as returned by :meth:`state_dict` (or torch's).
            strict: if True, keys must match exactly: missing or unexpected keys raise.

        Returns:
            ``IncompatibleKeys(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: naming every missing and unexpected key (with ``strict``) and
                every shape mismatch ("0.weight: expected shape (10, 100), got (100, 10)"),
                before anything is copied.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {_typename(state_dict)}.")
        own = self._state_entries()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors: list[str] = []
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")

        copies = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            source = _as_array(state_dict[key])
            if source is None:
                errors.append(
                    f'{key}: expected a coursekit Tensor, NumPy array or torch tensor, '
                    f"got {_typename(state_dict[key])}"
                )
                continue
            if tuple(source.shape) != tuple(target.shape):
                msg = f"{key}: expected shape {tuple(target.shape)}, got {tuple(source.shape)}"
                if source.ndim == 2 and tuple(source.shape) == tuple(target.shape)[::-1]:
                    msg += " (transposed? Linear stores weight as (out_features, in_features), as torch does)"
                errors.append(msg)
                continue
            copies.append((target, source))

        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
            )
        for target, source in copies:
            # In place, cast to the target's dtype; a copy in case source aliases target.
            target.data[...] = np.array(source, dtype=target.data.dtype, copy=True)
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_indent(repr(child), 2)}" for name, child in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{type(self).__name__}({body})"
