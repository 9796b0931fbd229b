"""Neural-network building blocks with ``torch.nn``'s names and semantics.

``Module`` and ``Parameter`` are the machinery; ``Linear``, the activations, the
containers and the losses are built on it; ``functional`` holds the stateless
functions they call, and ``init`` the initialisation rules.
"""

from coursekit.nn import functional, init
from coursekit.nn.activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from coursekit.nn.container import ModuleList, Sequential
from coursekit.nn.linear import Linear
from coursekit.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
from coursekit.nn.module import IncompatibleKeys, Module
from coursekit.nn.parameter import Parameter

__all__ = [
    "Module",
    "Parameter",
    "IncompatibleKeys",
    "Linear",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "Sequential",
    "ModuleList",
    "MSELoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "functional",
    "init",
]
