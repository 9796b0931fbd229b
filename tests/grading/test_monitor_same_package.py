"""Red team 13 (issue 24): a library module's body launders nothing through how its import was
asked for or how its module was found.

The walk up the stack stops at a library module's body when its own package imports it. The
red team found that rule trusting too much: a torch function handed a name (torch.load's
unpickler, ``_import_dotted_name``, ``tree_map(importlib.import_module, ...)``) counted as
torch asking; the spec a finder of the student's answers (its loader, its origin, its
``submodule_search_locations``) was taken as the import system's; and a torch body calls
whatever builtin the student swapped. Each attack below really computes E4's gradients with
``torch.autograd.grad`` and keeps full marks; each must be charged (``monitor.
_imported_for_library``: an import statement of the package's own code, the module as the
import system makes it; the builtins as installed when the body starts, NOTE [A module body
judged when it starts] in the monitor)."""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER


def fraction(found, label):
    """The grader's score for the drive ``label``: its observations (the harness prints
    each published item) judged against the reference on the harness's seed (1)."""
    import ast
    from coursekit.grading.verdict import decode_payload, judge
    items = []
    for line in found.output.splitlines():
        if not line.startswith("{'application/vnd.coursekit.observations+json'"):
            continue
        item = ast.literal_eval(line)["application/vnd.coursekit.observations+json"]
        items.append(item)
    assert [w[0] for w in found.windows] == [label], found.windows   # one drive
    pairs = decode_payload({"observations": [i for i in items if "label" in i]})
    return judge(E4, 1, pairs, hidden=False).fraction


pytestmark = pytest.mark.slow
# The rule under attack (monitor._imported_for_library) is Python code that both profiles
# call alike: the first attack runs under both, the others under the compiled one only.
torch = pytest.importorskip("torch")

# A C callable that runs torch.autograd.grad when called with any positional arguments
# (max's key is called on each argument in turn: list(calls) runs the chain).
CHAIN = '''
import builtins, functools, itertools
import torch


def chain(loss, a, b, got):
    calls = map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))]))
    return functools.partial(max, calls, key=list)
'''

# A finder of the student's answers a name it chose with a real torch file (whose class body
# calls the builtin name `property`) and a loader whose create_module plants `property`. The
# import is asked for by torch's own code (set_default_tensor_type -> _import_dotted_name ->
# __import__), so requester and body are both "torch".
TORCH_IMPORTS_A_NAME = E4_ANSWER + CHAIN + '''
import importlib.machinery, importlib.util, sys, types, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
BODY = importlib.util.find_spec("torch.utils.backcompat").origin   # a torch file


class Loader(importlib.machinery.SourceFileLoader):
    planted = None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.property = Loader.planted
        return module


class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.startswith("laundry_"):
            return importlib.util.spec_from_file_location(name, BODY, loader=Loader(name, BODY))
        return None


sys.meta_path.insert(0, Finder)
count = [0]


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    Loader.planted = chain(loss, a, b, got)
    count[0] += 1
    try:
        torch.set_default_tensor_type(f"laundry_{count[0]}")
    except TypeError:
        pass
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''


@pytest.mark.parametrize("profile", ["compiled", "python"])
def test_torch_importing_a_name_the_student_gave(tmp_path, profile):
    found = run(tmp_path, TORCH_IMPORTS_A_NAME, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# The import system's own loader (exactly SourceFileLoader) on the real file: only the spec is
# the student's finder's, with an origin (the body's __file__) of a str subclass whose rfind is
# the chain. torch/_utils_internal.py's body calls os.path.dirname(__file__).
STOCK_LOADER_PLANTED_ORIGIN = E4_ANSWER + CHAIN.replace("max, calls, key=list", "next, calls") + """
import importlib.machinery, importlib.util, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
BODY = importlib.util.find_spec("torch._utils_internal").origin


class Origin(str):
    rfind = None     # a C callable: not a descriptor, called with rfind's own arguments


class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.startswith("laundry_"):
            spec = importlib.util.spec_from_file_location(
                name, Origin(BODY), loader=importlib.machinery.SourceFileLoader(name, BODY))
            spec.cached = BODY + "c"   # no path arithmetic on the origin before the body
            return spec
        return None


sys.meta_path.insert(0, Finder)
count = [0]


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    Origin.rfind = chain(loss, a, b, got)
    count[0] += 1
    try:
        torch.set_default_tensor_type(f"laundry_{count[0]}")
    except TypeError:
        pass
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_stock_loader_with_the_students_spec(tmp_path, profile):
    found = run(tmp_path, STOCK_LOADER_PLANTED_ORIGIN, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# Everything real but the spec: the module's own name, its own file, the import system's own
# loader, asked for by torch's own code (torch.load's legacy reader unpickles its magic number
# with pickle.load, which imports the module a GLOBAL opcode names). Only the origin, the
# body's __file__, is a str subclass of the student's finder; cpp_extension's body calls
# os.path.abspath(__file__), whose isabs calls __file__.startswith.
REAL_NAME_STOCK_LOADER = E4_ANSWER + CHAIN.replace("max, calls, key=list", "next, calls") + """
import importlib.machinery, importlib.util, io, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAME = "torch.utils.cpp_extension"
BODY = importlib.util.find_spec(NAME).origin      # found, not imported
assert NAME not in sys.modules


class Origin(str):
    startswith = str.startswith   # then a C callable: no descriptor, called with its arguments


class Finder:
    armed, planted = False, None

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == NAME and Finder.armed:
            Finder.armed = False
            Origin.startswith = str.startswith
            spec = importlib.util.spec_from_file_location(
                name, Origin(BODY), loader=importlib.machinery.SourceFileLoader(name, BODY))
            spec.cached = BODY + "c"   # no path arithmetic on the origin before the body
            Origin.startswith = Finder.planted   # armed once the spec is made
            return spec
        return None


sys.meta_path.insert(0, Finder)
LEGACY = ("c" + NAME + "\\n_HERE\\n.").encode()   # a pickle: GLOBAL torch.utils.cpp_extension _HERE


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop(NAME, None)                    # imported at each call
    Finder.planted = chain(loss, a, b, got)
    Finder.armed = True
    try:
        torch.load(io.BytesIO(LEGACY), weights_only=False)
    except RuntimeError:                            # "Invalid magic number"
        pass
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_torch_loading_a_real_torch_module_with_the_students_spec(tmp_path, profile):
    found = run(tmp_path, REAL_NAME_STOCK_LOADER, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# A distribution in the student's folder (on sys.path, as a notebook's folder is) whose
# entry point in the group "torchrun.handlers" is laundry_plugin.handler.
PLUGIN = """
os.makedirs("laundry-1.0.dist-info", exist_ok=True)
with open("laundry-1.0.dist-info/METADATA", "w") as handle:
    handle.write("Metadata-Version: 2.1\\nName: laundry\\nVersion: 1.0\\n")
with open("laundry-1.0.dist-info/entry_points.txt", "w") as handle:
    handle.write("[torchrun.handlers]\\nlaundry = laundry_plugin:handler\\n")
with open("laundry_plugin.py", "w") as handle:
    handle.write("handler = None\\n")
sys.path.insert(0, os.getcwd())
import laundry_plugin
"""


# No finder or loader of the student's, nothing shadowed: a torch module imported by torch's
# own code under its real name, whose body discovers plugins (entry points of the group
# "torchrun.handlers") and calls each one's object: a distribution's metadata in the student's
# folder (on sys.path, as a notebook's folder is) names an attribute of the student's module,
# which holds the chain when the body calls it.
ENTRY_POINT_PLUGIN = E4_ANSWER + CHAIN.replace("max, calls, key=list", "next, calls") + """
import io, os, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
""" + PLUGIN + """

NAME = "torch.distributed.elastic.rendezvous"
LEGACY = ("c" + NAME + "\\nRendezvousHandler\\n.").encode()   # a pickle naming the module


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop(NAME, None)                    # imported at each call, by torch.load
    laundry_plugin.handler = chain(loss, a, b, got)
    try:
        torch.load(io.BytesIO(LEGACY), weights_only=False)
    except RuntimeError:                            # "Invalid magic number"
        pass
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


# Any torch function that calls what it is handed is a requester of torch's too: the import is
# asked for by its frame (importlib.import_module is the import system's own code).
BY_TREE_MAP = ENTRY_POINT_PLUGIN.replace(
    "torch.load(io.BytesIO(LEGACY), weights_only=False)",
    "torch.utils._pytree.tree_map(importlib.import_module, [NAME])").replace(
    "import io, os, sys, warnings", "import importlib, io, os, sys, warnings")


@pytest.mark.parametrize("profile", ["compiled"])
@pytest.mark.parametrize("requester", ["torch.load", "tree_map"])
def test_a_torch_module_body_that_calls_the_students_plugin(tmp_path, profile, requester):
    found = run(tmp_path, ENTRY_POINT_PLUGIN if requester == "torch.load" else BY_TREE_MAP,
                [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# torch's own import statement (Tensor.resize: `from torch.autograd._functions import Resize`,
# a name that is a constant of torch's code), the real name, the real file, the import
# system's own loader: only the spec's submodule_search_locations (the package's __path__)
# is the student's finder's, a list whose __iter__ is a C callable. The body's own relative
# import (`from .tensor import *`) makes the path finder iterate it.
TORCH_IMPORT_STATEMENT = E4_ANSWER + """
import functools, importlib.machinery, importlib.util, itertools, os, sys, warnings
import torch
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAME = "torch.autograd._functions"
BODY = importlib.util.find_spec(NAME).origin
assert NAME not in sys.modules


class Path(list):
    pass


class Finder:
    armed = False

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == NAME and Finder.armed:
            Finder.armed = False
            spec = importlib.util.spec_from_file_location(
                name, BODY, loader=importlib.machinery.SourceFileLoader(name, BODY),
                submodule_search_locations=Path([os.path.dirname(BODY)]))
            Path.__iter__ = Finder.planted   # armed once the spec is made
            return spec
        return None


sys.meta_path.insert(0, Finder)


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop(NAME, None)                     # imported at each call
    calls = map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))]))
    Finder.planted = functools.partial(iter, calls)
    Finder.armed = True
    try:
        x.resize(1)                                 # torch imports its module
    except ImportError:                             # torch.autograd._functions.tensor: not found
        pass
    del Path.__iter__
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_torchs_own_import_statement_with_the_students_spec(tmp_path, profile):
    found = run(tmp_path, TORCH_IMPORT_STATEMENT, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# Nothing of the student's in the import at all: torch's own import statement, real names,
# stock finders and loaders. The body runs with the real builtins *dict* (the identity the
# monitor checks), whose `staticmethod` the student swapped for the moment: the class bodies
# of torch/autograd/_functions/tensor.py look it up (`@staticmethod`).
SWAPPED_BUILTIN = E4_ANSWER + CHAIN + """
import builtins, sys, warnings
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
    builtins.staticmethod = chain(loss, a, b, got)
    try:
        x.resize(1)                                 # torch imports its module
    except TypeError:                               # the body fails once the chain has run:
        pass                                        # no Resize.apply
    finally:
        builtins.staticmethod = REAL
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("profile", ["compiled"])
def test_a_swapped_builtin_in_the_real_builtins_dict(tmp_path, profile):
    found = run(tmp_path, SWAPPED_BUILTIN, [E4], profile=profile)
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports
