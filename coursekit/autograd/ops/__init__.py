"""The built-in ops. Each is a ``Function`` subclass followed by its lowercase function.

| file | ops |
| --- | --- |
| ``arithmetic.py`` | Add, Sub, Mul, Neg, Pow; div, sqrt, rpow from them |
| ``pointwise.py`` | Exp, Log, Abs, Clamp |
| ``activation.py`` | ReLU, Sigmoid, Tanh, Softmax, LogSoftmax |
| ``reduction.py`` | Sum, Mean, Max; min from Max |
| ``linalg.py`` | MatMul |
| ``shape.py`` | Reshape, Permute, BroadcastTo, GetItem, Cat; transpose, squeeze, unsqueeze, flatten, stack |
| ``cast.py`` | ToDtype, Clone |
"""
from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, log_softmax, relu, sigmoid, softmax, tanh
from .arithmetic import Add, Mul, Neg, Pow, Sub, add, div, mul, neg, pow, rpow, sqrt, sub
from .cast import Clone, ToDtype, clone, to_dtype
from .linalg import MatMul, matmul
from .pointwise import Abs, Clamp, Exp, Log, abs, clamp, exp, log
from .reduction import Max, Mean, Sum, max, mean, min, sum
from .shape import (BroadcastTo, Cat, GetItem, Permute, Reshape, broadcast_to, cat, concatenate, expand,
                    flatten, getitem, permute, reshape, squeeze, stack, transpose, unsqueeze, view)

__all__ = [
    "Abs", "Add", "BroadcastTo", "Cat", "Clamp", "Clone", "Exp", "GetItem", "Log", "LogSoftmax",
    "MatMul", "Max", "Mean", "Mul", "Neg", "Permute", "Pow", "ReLU", "Reshape", "Sigmoid", "Softmax",
    "Sub", "Sum", "Tanh", "ToDtype",
    "abs", "add", "broadcast_to", "cat", "clamp", "clone", "concatenate", "div", "exp", "expand",
    "flatten", "getitem", "log", "log_softmax", "matmul", "max", "mean", "min", "mul", "neg",
    "permute", "pow", "relu", "reshape", "rpow", "sigmoid", "softmax", "sqrt", "squeeze", "stack",
    "sub", "sum", "tanh", "to_dtype", "transpose", "unsqueeze", "view",
]
