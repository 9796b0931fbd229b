"""Mechanical mutants of lab04_modules that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_KIND_CHANGE = ("same behaviour on the lab's contract: these lines only matter when a name "
                "changes kind (a parameter's name re-assigned a module or a plain value), which "
                "the reference Module, like torch's, refuses with TypeError and the lab leaves "
                "undefined, so no case can ask it without marking the solution down")

EQUIVALENT = [
    ("module", 'self._modules.pop(name, None)', 'pass', _KIND_CHANGE),
    ("module", 'self.__dict__.pop(name, None)', 'pass', _KIND_CHANGE),
    ("module", 'self._parameters.pop(name, None)', 'pass', _KIND_CHANGE),
    ("sgd", 'if self.momentum != 0:', 'if self.momentum != -1:',
     "momentum is never negative (torch.optim.SGD rejects it); for every momentum >= 0 that "
     "is not 0 both take the momentum branch, and at 0 the momentum branch gives "
     "buf = grad, the same update"),
]
