"""Red team 13b (issue 24): what the monitor reads of a library module's body when a walk meets
it, a chain of C callables can change and change back before the forbidden call.

The walk stops at a body that an import statement of its own package asked for, made as the
import system makes it (``monitor._imported_for_library``). Each attack below changes what the
body will call while the import runs (a finder made of C callables that imports another
module, a loader instance whose ``create_module`` plants a global, a finder that writes into
the importing body's globals, from ``sys.meta_path`` or ``sys.path_importer_cache``, a
builtin swapped and put back by the chain itself, a module's spec whose ``_initializing``
writes into the body that imports it) and leaves nothing to see
by the time ``torch.autograd.grad`` runs. Each really computes E4's gradients with full marks;
each must be charged. Read when a walk meets the body, none was (red team 13b); the body is
now judged when it starts, and the verdict kept (NOTE [A module body judged when it starts]
in the monitor)."""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER
from test_monitor_same_package import PLUGIN, fraction

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


C_FINDER = E4_ANSWER + """
import functools, importlib, itertools, os, sys, types, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
""" + PLUGIN + """

NAME = "torch.distributed.elastic.rendezvous"
LAZY = "torch._linalg_utils"                # what Tensor.solve imports by an import statement
# The finder: nothing but C callables. print(name, path, target, file=W) calls W.write(text).
W = types.SimpleNamespace(write=len)
sys.meta_path.insert(0, types.SimpleNamespace(find_spec=functools.partial(print, file=W)))


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop(NAME, None)                    # imported at each call
    sys.modules.pop(LAZY, None)                    # so that solve's import statement imports
    laundry_plugin.handler = functools.partial(
        next, map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    W.write = functools.partial(next, map(importlib.import_module, [NAME]))
    try:
        torch.zeros(1).solve(torch.zeros(1))      # torch's own import statement, then raises
    except Exception:
        pass
    finally:
        W.write = len
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_c_finder_under_torchs_import_statement(tmp_path, profile):
    found = run(tmp_path, C_FINDER, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])


# The same with no finder at all: the module torch's import statement names is in sys.modules,
# and the student gave it a __spec__ whose `_initializing` is a property with a C callable as
# its getter (CPython's import reads it, in C, under the import statement, to decide whether
# to wait for the module's lock). That getter imports the torch module the student names.
SPEC_PROPERTY = E4_ANSWER + """
import functools, importlib, itertools, os, sys, warnings
import torch
import torch._linalg_utils
from coursekit.grading import grade

warnings.simplefilter("ignore")
""" + PLUGIN + """

NAME = "torch.distributed.elastic.rendezvous"
LAZY = sys.modules["torch._linalg_utils"]          # Tensor.solve imports it by a statement
REAL_SPEC = LAZY.__spec__


class Spec:
    _initializing = False


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop(NAME, None)                    # imported at each call
    laundry_plugin.handler = functools.partial(
        next, map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    Spec._initializing = property(functools.partial(
        next, map(importlib.import_module, [NAME])))
    LAZY.__spec__ = Spec()
    try:
        torch.zeros(1).solve(torch.zeros(1))      # torch's own import statement, then raises
    except Exception:
        pass
    finally:
        LAZY.__spec__ = REAL_SPEC
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_spec_property_under_torchs_import_statement(tmp_path, profile):
    found = run(tmp_path, SPEC_PROPERTY, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])

PRE_PLANTED_GLOBALS = E4_ANSWER + """
import collections, functools, importlib.machinery, importlib.util, itertools, operator
import sys, types
import warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAME = "torch._linalg_utils"                 # what Tensor.solve imports by an import statement
BODY = importlib.util.find_spec(NAME).origin


class Finder:
    grads = None    # the forbidden call, as (function, *arguments)

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == NAME and Finder.grads is not None:
            loader = importlib.machinery.SourceFileLoader(name, BODY)   # the exact type

            def create_module(spec, grads=Finder.grads):
                del loader.create_module            # the loader is the stock one again
                module = types.ModuleType(spec.name)
                # Shadows the builtin for the body's annotations; when the body subscripts it,
                # it takes itself out of the module's globals, then computes the gradients.
                module.tuple = collections.defaultdict(functools.partial(
                    collections.deque, itertools.chain(
                        itertools.starmap(operator.call, [(delattr, module, "tuple")]),
                        itertools.starmap(operator.call, [grads])), 0))
                return module

            loader.create_module = create_module     # an instance attribute
            Finder.grads = None
            return importlib.util.spec_from_file_location(name, BODY, loader=loader)
        return None


sys.meta_path.insert(0, Finder)


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop(NAME, None)                # so that solve's import statement imports
    Finder.grads = (got.extend, map(torch.autograd.grad, [loss], [(a, b)]))
    try:
        torch.zeros(1).solve(torch.zeros(1))  # torch's own import statement, then raises
    except RuntimeError:
        pass
    sys.modules.pop(NAME, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_stock_loader_type_with_an_instance_create_module(tmp_path, profile):
    found = run(tmp_path, PRE_PLANTED_GLOBALS, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])

FINDER_PLANTS_A_GLOBAL = E4_ANSWER + """
import functools, importlib, itertools, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
OUTER, BODY, IMPORTED = ("torch.autograd._functions", "torch.autograd._functions.tensor",
                         "torch._utils")


class Finder:
    planted = None

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == IMPORTED and Finder.planted is not None and BODY in sys.modules:
            sys.modules[BODY].__dict__["staticmethod"] = Finder.planted
            Finder.planted = None
        return None                                   # the stock path finder finds it


sys.meta_path.insert(0, Finder)


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    utils = sys.modules[IMPORTED]
    for name in (OUTER, BODY, IMPORTED):             # imported again at each call
        sys.modules.pop(name, None)
    Finder.planted = functools.partial(
        next, map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    try:
        importlib.import_module(OUTER)               # its body imports BODY by a statement
    except Exception:
        pass
    finally:
        Finder.planted = None
        sys.modules[IMPORTED] = torch._utils = utils  # torch's own copy back
        for name in (OUTER, BODY):
            sys.modules.pop(name, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_finder_that_plants_a_global_of_the_importing_body(tmp_path, profile):
    found = run(tmp_path, FINDER_PLANTS_A_GLOBAL, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])


# The same finder, not on sys.meta_path but in sys.path_importer_cache, as the finder of
# torch's folder (the stock PathFinder asks it for every module of torch's); it hands the
# real folder finder's spec back.
FINDER_IN_THE_PATH_CACHE = E4_ANSWER + """
import functools, importlib, itertools, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
OUTER, BODY, IMPORTED = ("torch.autograd._functions", "torch.autograd._functions.tensor",
                         "torch._utils")
FOLDER = torch.__path__[0]


class Finder:
    planted = None
    real = sys.path_importer_cache[FOLDER]

    @staticmethod
    def find_spec(name, target=None):
        if name == IMPORTED and Finder.planted is not None and BODY in sys.modules:
            sys.modules[BODY].__dict__["staticmethod"] = Finder.planted
            Finder.planted = None
        return Finder.real.find_spec(name, target)


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    utils = sys.modules[IMPORTED]
    for name in (OUTER, BODY, IMPORTED):             # imported again at each call
        sys.modules.pop(name, None)
    Finder.planted = functools.partial(
        next, map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    sys.path_importer_cache[FOLDER] = Finder
    try:
        importlib.import_module(OUTER)               # its body imports BODY by a statement
    except Exception:
        pass
    finally:
        sys.path_importer_cache[FOLDER] = Finder.real
        Finder.planted = None
        sys.modules[IMPORTED] = torch._utils = utils  # torch's own copy back
        for name in (OUTER, BODY):
            sys.modules.pop(name, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_finder_in_the_path_importer_cache_that_plants_a_global(tmp_path, profile):
    found = run(tmp_path, FINDER_IN_THE_PATH_CACHE, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])


# The same with no code of the student's running during the import at all: the finder is made
# of C callables (print writing to an object whose write steps an endless lazy map that looks
# the module up in sys.modules when it runs), and what it plants, `staticmethod`, is C
# callables too (deleting itself from the globals, then computing the gradients).
C_FINDER_PLANTS_A_GLOBAL = E4_ANSWER + """
import collections, functools, importlib, itertools, operator, sys, types, warnings
from itertools import repeat
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
OUTER, BODY, IMPORTED = ("torch.autograd._functions", "torch.autograd._functions.tensor",
                         "torch._utils")
W = types.SimpleNamespace(write=len)
sys.meta_path.insert(0, types.SimpleNamespace(find_spec=functools.partial(print, file=W)))


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    utils = sys.modules[IMPORTED]
    for name in (OUTER, BODY, IMPORTED):             # imported again at each call
        sys.modules.pop(name, None)
    globals_of_body = map(getattr, map(sys.modules.get, repeat(BODY)), repeat("__dict__"),
                          repeat({}))                # {} until the body's module exists
    steps = itertools.chain(
        map(operator.delitem, map(getattr, map(sys.modules.get, [BODY]), ["__dict__"]),
            ["staticmethod"]),
        map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    planted = functools.partial(max, steps, key=list)   # list(steps), then list(function)
    W.write = functools.partial(next, map(operator.setitem, globals_of_body,
                                          repeat("staticmethod"), repeat(planted)))
    try:
        importlib.import_module(OUTER)               # its body imports BODY by a statement
    except Exception:
        pass
    finally:
        W.write = len
        sys.modules[IMPORTED] = torch._utils = utils  # torch's own copy back
        for name in (OUTER, BODY):
            sys.modules.pop(name, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_c_finder_that_plants_a_global_of_the_importing_body(tmp_path, profile):
    found = run(tmp_path, C_FINDER_PLANTS_A_GLOBAL, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])

RESTORED_BUILTIN = E4_ANSWER + """
import builtins, functools, itertools, operator, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAMES = ("torch.autograd._functions", "torch.autograd._functions.tensor")
REAL = builtins.staticmethod


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    for name in NAMES:
        sys.modules.pop(name, None)                 # imported at each call
    # First put the real staticmethod back, then compute the gradients.
    steps = itertools.chain(
        itertools.starmap(operator.call, [(setattr, builtins, "staticmethod", REAL)]),
        map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    builtins.staticmethod = functools.partial(max, steps, key=list)
    try:
        x.resize(1)                                 # torch imports its module
    except TypeError:                               # max's key=list on the decorated function:
        pass                                        # the body fails, no Resize.apply
    finally:
        builtins.staticmethod = REAL
    for name in NAMES:
        sys.modules.pop(name, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_swapped_builtin_put_back_before_the_call(tmp_path, profile):
    found = run(tmp_path, RESTORED_BUILTIN, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])


# Judged when it starts, a body must stay the library's while it runs: no finder at all here.
# The module the body imports by a statement is in sys.modules with a spec of the student's
# whose `_initializing` is a property of C callables (CPython reads it, in C, under the import
# statement): it plants `staticmethod` in the importing body's globals and puts the real spec
# back. Found while closing the attacks above.
SPEC_PROPERTY_PLANTS_A_GLOBAL = E4_ANSWER + """
import functools, importlib, itertools, operator, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
OUTER, BODY, IMPORTED = ("torch.autograd._functions", "torch.autograd._functions.tensor",
                         "torch._utils")
UTILS = sys.modules[IMPORTED]
REAL_SPEC = UTILS.__spec__


class Spec:
    _initializing = False


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    for name in (OUTER, BODY):                       # imported again at each call
        sys.modules.pop(name, None)
    globals_of_body = map(getattr, map(sys.modules.get, [BODY]), ["__dict__"])  # when it runs
    steps = itertools.chain(
        map(operator.delitem, map(getattr, map(sys.modules.get, [BODY]), ["__dict__"]),
            ["staticmethod"]),
        map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    planted = functools.partial(max, steps, key=list)   # list(steps), then list(function)
    plant = itertools.chain(
        map(operator.setitem, globals_of_body, ["staticmethod"], [planted]),
        itertools.starmap(setattr, [(UTILS, "__spec__", REAL_SPEC)]))
    # The getter raises (list of the spec): CPython then takes the module as initialized.
    Spec._initializing = property(functools.partial(max, plant, key=list))
    UTILS.__spec__ = Spec()
    try:
        importlib.import_module(OUTER)               # its body imports BODY by a statement
    except Exception:
        pass
    finally:
        UTILS.__spec__ = REAL_SPEC
        for name in (OUTER, BODY):
            sys.modules.pop(name, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_spec_property_that_plants_a_global_of_the_importing_body(tmp_path, profile):
    found = run(tmp_path, SPEC_PROPERTY_PLANTS_A_GLOBAL, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])
