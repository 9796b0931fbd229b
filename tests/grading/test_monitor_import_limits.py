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


# Red team 14 (issue 24): a body judged the library's when it starts still reads, while it
# runs, what the verdict did not cover. The five attacks of BODY_READS trigger torch's own import
# statement (Tensor.resize: `from torch.autograd._functions import Resize`, whose body imports
# torch/autograd/_functions/tensor.py by a statement of torch's), with the stock import system,
# no finder, no loader, no thread, the body's globals exactly the import system's: only what
# the body reads of *other* objects is the student's, a chain of C callables that computes the
# gradients (no frame of the student's between the body and torch.autograd.grad) and makes
# the body fail (no Resize.apply). Set inside the answer and put back before it returns.
#
# Each route is charged two ways, both asserted from one run. The walk from torch.autograd.grad
# meets the body, but the frame of grad was not called by the code below the body by its
# name: a C callable called it, the caller frame stands at `__build_class__`, an
# IMPORT_FROM, a call of `next` or `staticmethod` (NOTE [What a judged body calls] in the
# monitor), so the walk goes on to the student. And E4 forbids torch's engine too, which the
# engine watch charges: the engine's Python door is a request of the check's only when the
# walk from it finds no student code, by the same rule.
CHARGES = {"torch.autograd.grad", "torch.autograd.engine"}   # by the walk, by the engine watch

BODY_READS = E4_ANSWER + """
import functools, itertools, sys, types, warnings
import torch
import torch.autograd.function
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAMES = ("torch.autograd._functions", "torch.autograd._functions.tensor")
FUNCTION_MODULE = sys.modules["torch.autograd.function"]


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    for name in NAMES:
        sys.modules.pop(name, None)                 # imported at each call
    calls = map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))]))
    chain = functools.partial(max, calls, key=list)   # any one argument: list(calls) runs
    undo = plant(chain, calls)
    try:
        x.resize(1)                                 # torch's own import statement
    except Exception:                               # the body fails: no Resize.apply
        pass
    finally:
        undo()
    for name in NAMES:
        sys.modules.pop(name, None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""

# The body's `from torch.autograd.function import Function` reads an attribute of another
# module: the student put there an object whose __mro_entries__ (looked up on the instance,
# called by the class statement `class Type(Function)`) is the chain.
OTHER_MODULES_ATTRIBUTE = BODY_READS.replace("answer(\"laundered\"", '''
def plant(chain, calls):
    real = FUNCTION_MODULE.Function
    FUNCTION_MODULE.Function = types.SimpleNamespace(__mro_entries__=chain)
    return functools.partial(setattr, FUNCTION_MODULE, "Function", real)


answer("laundered"''')

# The same name read through a module's __getattr__: the student takes Function out of
# torch.autograd.function's globals and gives that module a __getattr__ that is the chain.
MODULE_GETATTR = BODY_READS.replace("answer(\"laundered\"", '''
def plant(chain, calls):
    names = vars(FUNCTION_MODULE)
    real = names.pop("Function")
    names["__getattr__"] = chain

    def undo():
        names.pop("__getattr__", None)
        names["Function"] = real
    return undo


answer("laundered"''')

# The module that statement reads, replaced in sys.modules beforehand: a plain ModuleType
# with the real module's own ModuleSpec (what _modules_read_plainly checks), whose Function
# is the object of the first attack.
PLANTED_SYS_MODULES_ENTRY = BODY_READS.replace("answer(\"laundered\"", '''
def plant(chain, calls):
    fake = types.ModuleType(FUNCTION_MODULE.__name__)
    fake.__spec__ = FUNCTION_MODULE.__spec__
    fake.Function = types.SimpleNamespace(__mro_entries__=chain)
    sys.modules[FUNCTION_MODULE.__name__] = fake
    return functools.partial(sys.modules.__setitem__, FUNCTION_MODULE.__name__,
                             FUNCTION_MODULE)


answer("laundered"''')

# Nothing the body reads itself is touched: the class statement runs torch's metaclass
# (FunctionMeta.__init__, torch/autograd/function.py), which calls
# next(AUTOGRAD_FUNCTION_COUNTER), a global of that other library module. The student made it
# the chain's iterator: the first class gets the gradients computed, the second StopIteration.
OTHER_MODULES_GLOBAL = BODY_READS.replace("answer(\"laundered\"", '''
def plant(chain, calls):
    real = FUNCTION_MODULE.AUTOGRAD_FUNCTION_COUNTER
    FUNCTION_MODULE.AUTOGRAD_FUNCTION_COUNTER = calls
    return functools.partial(setattr, FUNCTION_MODULE, "AUTOGRAD_FUNCTION_COUNTER", real)


answer("laundered"''')

# A class attribute: FunctionMeta.__init__ makes `type(name + "Backward",
# (BackwardCFunction,), ...)`, whose type.__new__ calls BackwardCFunction's __init_subclass__
# with no arguments; the student set it (type.__setattr__: an audit event the monitor lets
# pass) to next on the chain's iterator.
CLASS_ATTRIBUTE = BODY_READS.replace("answer(\"laundered\"", '''
def plant(chain, calls):
    cls = FUNCTION_MODULE.BackwardCFunction
    cls.__init_subclass__ = functools.partial(next, calls)
    return functools.partial(delattr, cls, "__init_subclass__")


answer("laundered"''')


@pytest.mark.parametrize("profile", ["compiled"])
@pytest.mark.parametrize("attack", [
    pytest.param(OTHER_MODULES_ATTRIBUTE, id="other-modules-attribute"),
    pytest.param(MODULE_GETATTR, id="module-getattr"),
    pytest.param(PLANTED_SYS_MODULES_ENTRY, id="planted-sys-modules-entry"),
    pytest.param(OTHER_MODULES_GLOBAL, id="other-modules-global"),
    pytest.param(CLASS_ATTRIBUTE, id="class-attribute"),
])
def test_what_a_judged_body_reads_of_other_objects(tmp_path, profile, attack):
    found = run(tmp_path, attack, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert CHARGES <= found.charged("laundered"), (found.reports, found.output[-3000:])


# Files the student wrote, read by a judged body: the student's own import statement of a
# torch module (not the library's asking) whose body imports
# torch.distributed.elastic.rendezvous by a statement of torch's. That body starts judged the
# library's (stock import system: the student's folder on sys.path gets the stock FileFinder)
# and calls _register_out_of_tree_handlers(), which calls the object of every entry point of
# the group "torchrun.handlers" that importlib.metadata finds: the distribution's files in the
# student's folder name laundry_plugin.handler, the chain. No finder, no loader, nothing of
# the body's or of torch's changed: only files.
PLUGIN_FILES = E4_ANSWER + """
import functools, itertools, os, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
""" + PLUGIN + """
ASKER = "torch.distributed.elastic.agent.server.api"   # imports the rendezvous package
NAME = "torch.distributed.elastic.rendezvous"


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    for name in (ASKER, NAME):
        sys.modules.pop(name, None)                 # imported at each call
    laundry_plugin.handler = functools.partial(
        next, map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))])))
    import torch.distributed.elastic.agent.server.api as asker   # the student's statement
    laundry_plugin.handler = None
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_judged_body_that_calls_a_plugin_the_students_files_name(tmp_path, profile):
    found = run(tmp_path, PLUGIN_FILES, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert CHARGES <= found.charged("laundered"), (found.reports, found.output[-3000:])


# importlib.reload of torch's module, whose globals the student wrote `staticmethod` into
# beforehand: the import system runs the body again, but not for an import statement (no
# _find_and_load), into globals that hold more than the import system puts there. Charged.
RELOAD = E4_ANSWER + """
import functools, importlib, itertools, sys, warnings
import torch
import torch.autograd._functions.tensor as body
from coursekit.grading import grade

warnings.simplefilter("ignore")


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    calls = map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))]))
    vars(body)["staticmethod"] = functools.partial(max, calls, key=list)
    try:
        importlib.reload(body)                      # the class bodies call `staticmethod`
    except TypeError:
        pass
    finally:
        vars(body).pop("staticmethod", None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_reload_of_a_torch_module_with_a_planted_global(tmp_path, profile):
    found = run(tmp_path, RELOAD, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), (found.reports,
                                                                 found.output[-3000:])


# The reverse: an honest answer (gradients by hand) in a kernel where the rule judges no body
# the library's with student code above: the student imported six (as matplotlib, scipy or
# tqdm do: it appends its own finder to sys.meta_path, so the import system is no longer as
# installed, for the rest of the kernel). torch's own lazy import under the answer
# (Tensor.solve's statement) is then walked through to the student: nothing is charged, but
# only because that body calls nothing E4 forbids (no lazily imported torch body found that
# does; in the grading kernel torch._dynamo, whose import calls torch.nn code, is preloaded).
HONEST_UNJUDGED = E4_ANSWER + """
import sys, threading, warnings
import six                                         # sys.meta_path: six's finder appended
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
LAZY = "torch._linalg_utils"
stop = threading.Event()


def logger():
    stop.wait(20)


THREAD


def honest(x, y, w1, w2):
    sys.modules.pop(LAZY, None)                    # so that solve's import statement imports
    try:
        torch.zeros(1).solve(torch.zeros(1))      # torch's own import statement, then raises
    except RuntimeError:
        pass
    return by_hand(x, y, w1, w2)


answer("honest", grads=honest)
stop.set()
"""
# The same honest answer with a thread of the student's still running (a logger waiting on
# an event) keeps full marks too: the engine watch sees every thread's nodes (torch's
# profile_all_threads), so a thread that is merely alive is no reason to charge (it was, while
# the watch followed only the driving thread).
@pytest.mark.parametrize("profile", ["compiled"])
@pytest.mark.parametrize("thread", [
    pytest.param("", id="six-imported"),
    pytest.param("threading.Thread(target=logger, daemon=True).start()",
                 id="six-imported-and-a-thread-alive"),
])
def test_an_honest_answer_with_no_body_judged_the_librarys(tmp_path, profile, thread):
    found = run(tmp_path, HONEST_UNJUDGED.replace("THREAD", thread), [E4], profile=profile)
    assert fraction(found, "honest") == 1.0, found.output[-3000:]   # full marks
    assert found.charged("honest") == set(), (found.reports, found.output[-3000:])


# A thread started before the check, made of C callables only (the monitor knows a thread of
# the student's by the student functions its target is made of: this one has none, so
# neither "no thread of the student's is alive" nor the engine watch counts it). It waits,
# sleeping between looks, until the body of torch/autograd/_functions/tensor.py has bound its
# first names (the body judged the library's as it started, its globals exactly the import
# system's), and then plants `staticmethod` in its globals: the body's own `import torch._utils`
# (taken out of sys.modules) reads a file, letting the thread run. The class bodies then call
# the chain. A race: the answer imports again until the thread has won it (the package's
# body, torch.autograd._functions, imports BODY by its statement; no Resize.apply).
C_THREAD = E4_ANSWER + """
import collections, functools, importlib, itertools, operator, sys, threading, time, warnings
import torch
import torch._utils
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAMES = ("torch.autograd._functions", "torch.autograd._functions.tensor")
UTILS = sys.modules["torch._utils"]
for name in NAMES:
    sys.modules.pop(name, None)
PLANTED = [None]                                  # the chain, set by the answer


def globals_when_started(repeat=itertools.repeat):
    looks = map(operator.itemgetter(0), zip(repeat(NAMES[1]), map(time.sleep, repeat(0))))
    names = map(getattr, map(sys.modules.get, looks), repeat("__dict__"), repeat({}))
    return filter(operator.methodcaller("__contains__", "reduce"), names)


plant = map(operator.setitem, globals_when_started(),
            itertools.repeat("staticmethod"), map(operator.getitem, itertools.repeat(PLANTED),
                                                  itertools.repeat(0)))
threading.Thread(target=functools.partial(collections.deque, plant, 0), daemon=True).start()


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    for attempt in range(100):                      # until the thread wins the race
        for name in (*NAMES, "torch._utils"):
            sys.modules.pop(name, None)             # imported now, reading files
        calls = map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))]))
        PLANTED[0] = functools.partial(max, calls, key=list)
        try:
            importlib.import_module(NAMES[0])       # its body imports BODY by a statement
        except Exception:                           # the planted staticmethod fails it
            pass
        finally:
            sys.modules["torch._utils"] = torch._utils = UTILS
            for name in NAMES:
                sys.modules.pop(name, None)
        if got:
            break
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_c_thread_that_plants_a_global_once_the_body_runs(tmp_path, profile):
    found = run(tmp_path, C_THREAD, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert CHARGES <= found.charged("laundered"), (found.reports, found.output[-3000:])
