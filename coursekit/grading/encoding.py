"""Safe transport of observations from the student's kernel to the grader.

The kernel runs student code, so anything it sends is untrusted. Observations travel as plain
JSON (arrays as base64 with dtype and shape), never as pickle: unpickling student data in the
grader would let a submission run code there. Anything that is not plain data (an object that
claims to equal everything, a generator, a model) is sent as a description of its type, which
never compares equal to an expected value.
"""
from __future__ import annotations

import base64
import math
import sys
from typing import Any

import numpy as np

from coursekit.caps import MAX_ARRAY_ELEMENTS

MIME_TYPE = "application/vnd.coursekit.observations+json"

_NUMERIC_KINDS = "biufc"


def encode(value: Any) -> Any:
    """Turn a value a program observed into JSON-compatible data (see module docstring)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and type(value) in (int, float):
        if isinstance(value, float) and not math.isfinite(value):
            return {"float": repr(value)}
        return value
    if isinstance(value, BaseException):
        return encode_error(value)
    if isinstance(value, np.generic):
        return encode(np.asarray(value)) if value.dtype.kind in _NUMERIC_KINDS else _opaque(value)
    if isinstance(value, np.ndarray):
        return _encode_array(value)
    framework_array = _framework_array(value)
    if framework_array is not None:
        return framework_array
    if type(value) in (list, tuple):
        return {"seq": type(value).__name__, "items": [encode(v) for v in value]}
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {"dict": {k: encode(v) for k, v in value.items()}}
    return _opaque(value)


def encode_error(error: BaseException) -> dict:
    """An exception as data: its class names (for `isinstance`-like comparison) and message."""
    names = [cls.__name__ for cls in type(error).__mro__ if cls not in (object, BaseException)]
    return {"error": names, "message": str(error)[:2000]}


def decode(data: Any) -> Any:
    """Inverse of :func:`encode`. Errors and opaque objects stay as marker objects."""
    if not isinstance(data, dict):
        return data
    if "array" in data:
        raw = base64.b64decode(data["array"])
        dtype = np.dtype(data["dtype"])
        if dtype.kind not in _NUMERIC_KINDS:
            return Opaque(f"array of dtype {dtype}")
        shape = tuple(int(s) for s in data["shape"])
        if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(raw):
            return Opaque("corrupt array")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if "float" in data:
        return float(data["float"])
    if "seq" in data:
        items = [decode(v) for v in data["items"]]
        return tuple(items) if data["seq"] == "tuple" else items
    if "dict" in data:
        return {str(k): decode(v) for k, v in data["dict"].items()}
    if "error" in data:
        return RaisedError(list(data["error"]), str(data.get("message", "")))
    if "meta_tensor" in data:
        return MetaTensor(tuple(data["meta_tensor"]), str(data["dtype"]), str(data["device"]))
    return Opaque(str(data.get("opaque", "unknown object")))


class RaisedError:
    """Marks an observation where the code raised instead of returning."""

    def __init__(self, names: list[str], message: str):
        self.names, self.message = names, message

    # Equal when the same error was raised with the same message, so that two observations
    # of one run can be compared (a check is deterministic on its seed).
    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RaisedError)
                and (self.names, self.message) == (other.names, other.message))

    def __hash__(self) -> int:
        return hash((tuple(self.names), self.message))

    @property
    def type_name(self) -> str:
        return self.names[0] if self.names else "Exception"

    def __repr__(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


class Opaque:
    """A value that was not plain data; it never equals an expected value."""

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


class MetaTensor:
    """A torch tensor without data (the ``meta`` device): only shape, dtype and device travel."""

    def __init__(self, shape: tuple, dtype: str, device: str):
        self.shape, self.dtype, self.device = shape, dtype, device

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetaTensor) and (self.shape, self.dtype, self.device) == (
            other.shape, other.dtype, other.device)

    def __repr__(self) -> str:
        return f"tensor(..., device='{self.device}', size={self.shape}, dtype={self.dtype})"


def _encode_array(array: np.ndarray) -> dict:
    if array.dtype.kind not in _NUMERIC_KINDS:
        return _opaque(array, f"array of dtype {array.dtype}")
    if array.size > MAX_ARRAY_ELEMENTS:
        return _opaque(array, f"array of {array.size} elements (over {MAX_ARRAY_ELEMENTS})")
    contiguous = np.ascontiguousarray(array)
    return {"array": base64.b64encode(contiguous.tobytes()).decode("ascii"),
            "dtype": contiguous.dtype.str, "shape": list(contiguous.shape)}


def _framework_array(value: Any) -> dict | None:
    """Arrays from coursekit, torch, TensorFlow or JAX, without importing any of them."""
    coursekit_tensor = sys.modules.get("coursekit.autograd.tensor")
    if coursekit_tensor is not None and isinstance(value, getattr(coursekit_tensor, "Tensor", ())):
        return _encode_array(np.asarray(value.data))
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type == "meta":
            return {"meta_tensor": list(value.shape), "dtype": str(value.dtype),
                    "device": str(value.device)}
        return _encode_array(value.detach().to("cpu").resolve_conj().numpy())
    jax = sys.modules.get("jax")
    if (jax is not None and isinstance(value, jax.Array)
            and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key)):
        # A typed PRNG key has no NumPy form; its key data is the value it stands for.
        return _encode_array(np.asarray(jax.random.key_data(value)))
    # tf.Variable and Keras 3's Variable (model.weights) are not tf.Tensor subclasses.
    for module_name, type_name in (("tensorflow", "Tensor"), ("tensorflow", "Variable"),
                                   ("keras", "Variable"), ("jax", "Array")):
        module = sys.modules.get(module_name)
        cls = getattr(module, type_name, None) if module is not None else None
        if cls is not None and isinstance(value, cls):
            try:
                return _encode_array(np.asarray(value))
            except Exception:  # noqa: BLE001 — a symbolic tensor of a graph holds no value
                return _opaque(value, f"a symbolic {module_name} {type_name} (a node of a "
                                      f"graph, not a value: run it, or return .numpy())")
    return None


def _opaque(value: Any, description: str | None = None) -> dict:
    return {"opaque": description or f"object of type {type(value).__qualname__}"}
