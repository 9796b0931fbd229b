"""A library's name and a library's module body launder nothing (issue 24; red team).

The walk up the stack from a forbidden call stops at a library module's body only when the
import system runs it for library code (torch importing a module lazily): what such a body
does is the library's doing. Everything else that merely looks like the library's is walked
through, or is the student's:

* code that is not the file's own, whatever name it carries (compiled from a syntax tree,
  which Python 3.11 does not audit with its file name);
* a name that climbs out of the installation with ``..``;
* a library's real body that student code runs itself (``runpy``, a loader's
  ``exec_module``), with builtins, globals or a module it planted: the body calls what the
  student put there, and a chain of C callables (``functools.partial``, ``map``) leaves no
  Python frame of the student's between the body and the forbidden call.

Each attack below really computes its gradients with ``torch.autograd.grad``; each must be
charged. Written by a red team that had read the monitor.
"""
from __future__ import annotations

import os

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER
from test_monitor_same_package import fraction

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

# A C chain that calls torch.autograd.grad when it is called with one argument: the
# student's planted callable, with no Python frame of the student's when it runs.
CHAIN = '''
import builtins, functools, itertools
import torch


def chain(loss, a, b, got):
    calls = map(got.append, itertools.starmap(torch.autograd.grad, [(loss, (a, b))]))
    return functools.partial(next, calls)
'''

FROM_A_SYNTAX_TREE = E4_ANSWER + '''
import ast, os, runpy
import torch
from coursekit.grading import grade

# Compiling a syntax tree raises no audit event in Python 3.11, so this code claims an
# installation file's name unseen, and a library function (runpy) runs it as a module body.
LAUNDRY = compile(ast.parse("out = torch.autograd.grad(loss, (a, b))"), os.__file__, "exec")


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    scope = {"torch": torch, "loss": loss, "a": a, "b": b}
    runpy._run_code(LAUNDRY, scope)
    return (loss.detach(), *scope["out"])


# The honest use of the same function: a library file's own code, run as a module body.
import json.tool
runpy.run_path(json.tool.__file__, run_name="not_main")

answer("laundered", grads=laundered)
'''


@pytest.mark.parametrize("profile", ["compiled", "uncompiled"])
def test_code_compiled_from_a_syntax_tree_under_a_librarys_name_is_the_students(tmp_path,
                                                                                 profile):
    """A module body is the library's only when it is that file's code (its cached bytecode
    or its text compiled), whatever name the code object carries. (The audit hook decides
    this: the same with or without the compiled module.)"""
    found = run(tmp_path, FROM_A_SYNTAX_TREE, [E4], profile=profile)
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports
    claimed = [what for what in found.kinds("tamper") if "that is not that file's code" in what]
    assert set(claimed) == {f"ran code under the name {os.__file__[:80]} that is not that "
                            "file's code"}, found.reports   # json.tool's own code is not here

PLANTED_BUILTINS_RUN_PATH = E4_ANSWER + CHAIN + '''
import runpy, this
from coursekit.grading import grade


def laundered(x, y, w1, w2):       # this.py's body calls print: the planted one
    a, b, loss = graph(x, y, w1, w2)
    got = []
    planted = dict(vars(builtins), print=chain(loss, a, b, got))
    runpy.run_path(this.__file__, init_globals={"__builtins__": planted}, run_name="x")
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''

PLANTED_GLOBALS_RUN_CODE = E4_ANSWER + CHAIN + '''
import runpy, this
from coursekit.grading import grade

BODY = compile(open(this.__file__).read(), this.__file__, "exec")   # the file's own code


def laundered(x, y, w1, w2):       # globals are looked up before builtins
    a, b, loss = graph(x, y, w1, w2)
    got = []
    runpy._run_code(BODY, {"print": chain(loss, a, b, got)})
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''

PLANTED_MODULE_EXEC_MODULE = E4_ANSWER + CHAIN + '''
import importlib.util
from coursekit.grading import grade

SPEC = importlib.util.find_spec("this")


def laundered(x, y, w1, w2):       # the loader's own exec_module, on a module filled first
    a, b, loss = graph(x, y, w1, w2)
    got = []
    module = importlib.util.module_from_spec(SPEC)
    module.__dict__["print"] = chain(loss, a, b, got)
    SPEC.loader.exec_module(module)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''

CLIMBING_NAME = E4_ANSWER + '''
import os, runpy
import torch
from coursekit.grading import grade

TEXT = "out = torch.autograd.grad(loss, (a, b))\\n"
with open("body.py", "w") as handle:
    handle.write(TEXT)
# Starts with the installation's folder, names the student's file.
NAME = os.path.dirname(os.__file__) + "/.." * 12 + os.path.abspath("body.py")
BODY = compile(TEXT, NAME, "exec")


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    scope = {"torch": torch, "loss": loss, "a": a, "b": b}
    runpy._run_code(BODY, scope)
    return (loss.detach(), *scope["out"])


answer("laundered", grads=laundered)
'''

# The whole answer, with no helper of E4_ANSWER's: no frame of the student's cells is on the
# stack while it runs, only code under the name the attack chose.
WHOLE_ANSWER = """
import torch

def train_two_layer_torch(x, y, w1, w2, lr, steps):
    if x.device.type == "meta":
        return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
        loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
        g1, g2 = torch.autograd.grad(loss, (a, b))
        losses[t] = loss.detach()
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2, losses
"""

CLIMBING_PATH = E4_ANSWER + f'''
import os, sys
from coursekit.grading import grade

with open("helper.py", "w") as handle:
    handle.write({WHOLE_ANSWER!r})
# An import path that starts with the installation's folder and climbs out of it.
sys.path.insert(0, os.path.dirname(os.__file__) + "/.." * 12 + os.getcwd())
import helper

grade("lab01.train_two_layer_torch", helper.train_two_layer_torch)
drive("lab01.train_two_layer_torch", "laundered")
'''

FUNCTION_FROM_A_SYNTAX_TREE = E4_ANSWER + f'''
import ast, copyreg, os, types
import torch
from coursekit.grading import grade

BODY = compile(ast.parse({WHOLE_ANSWER!r}), os.__file__, "exec")
CODE = next(c for c in BODY.co_consts if type(c) is types.CodeType)
# A library frame (copyreg) makes the function: the event is not the student's.
whole = copyreg.__newobj__(types.FunctionType, CODE, {{"torch": torch}})

grade("lab01.train_two_layer_torch", whole)
drive("lab01.train_two_layer_torch", "laundered")
'''

# A library function that imports the name it is given (pkgutil.resolve_name), with a finder
# and loader of the student's whose create_module hands over a module holding `print`.
PLANTED_LOADER = E4_ANSWER + CHAIN + '''
import importlib.machinery, importlib.util, pkgutil, sys, types
from coursekit.grading import grade

THIS = importlib.util.find_spec("this").origin


class Loader(importlib.machinery.SourceFileLoader):
    planted = None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.print = Loader.planted
        return module


class Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.startswith("laundry_"):
            return importlib.util.spec_from_file_location(name, THIS, loader=Loader(name, THIS))
        return None


sys.meta_path.insert(0, Finder)
count = [0]


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    Loader.planted = chain(loss, a, b, got)
    count[0] += 1
    pkgutil.resolve_name(f"laundry_{count[0]}")
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''

# The stock import of a real module, for a library function, whose body calls an attribute of
# another module that the student swapped for a moment (glob's body calls re.compile).
SWAPPED_ATTRIBUTE = E4_ANSWER + CHAIN + '''
import pkgutil, re, sys
from coursekit.grading import grade

pkgutil.resolve_name("os")        # pkgutil compiles its own pattern on first use


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    sys.modules.pop("glob", None)
    real = re.compile
    re.compile = chain(loss, a, b, got)
    try:
        pkgutil.resolve_name("glob")
    finally:
        re.compile = real
    sys.modules.pop("glob", None)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''

# A stack of library frames deeper than a walk goes: copy.deepcopy of a deeply nested list,
# whose innermost item's __deepcopy__ is the chain.
DEEP_STACK = E4_ANSWER + CHAIN + '''
import copy, sys
from coursekit.grading import grade

sys.setrecursionlimit(20_000)


class Leaf:
    pass


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    leaf = Leaf()
    leaf.__deepcopy__ = chain(loss, a, b, got)
    nested = leaf
    for _ in range(1600):            # two library frames per level
        nested = [nested]
    copy.deepcopy(nested)
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''

ATTACKS = {"planted builtins, runpy.run_path": PLANTED_BUILTINS_RUN_PATH,
           "planted globals, runpy._run_code": PLANTED_GLOBALS_RUN_CODE,
           "planted module, a loader's exec_module": PLANTED_MODULE_EXEC_MODULE,
           "a name that climbs out with ..": CLIMBING_NAME,
           "an import path that climbs out with ..": CLIMBING_PATH,
           "a function from a syntax tree, under os.py's name": FUNCTION_FROM_A_SYNTAX_TREE,
           "a planted loader, for pkgutil.resolve_name": PLANTED_LOADER,
           "a swapped module attribute, for pkgutil.resolve_name": SWAPPED_ATTRIBUTE,
           "a stack deeper than a walk goes": DEEP_STACK}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_what_only_looks_like_the_librarys_launders_nothing(tmp_path, attack):
    found = run(tmp_path, ATTACKS[attack], [E4])
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# A package of the test's own, installed (a site-packages folder on the kernel's path): its
# function imports, the first time it runs, a module of the same package whose body runs the
# engine (as torch imports torch._dynamo lazily, and that import's body runs torch code).
LAZY = {"lazypkg/__init__.py": "def first_use():\n"
                               "    from lazypkg import heavy\n"
                               "    return heavy._g\n",
        "lazypkg/heavy.py": "import torch\n"
                            "_t = torch.ones(2, requires_grad=True)\n"
                            "_g, = torch.autograd.grad((_t * 3).sum(), _t)\n"}

IMPORTS = E4_ANSWER + '''
import torch
import lazypkg
from coursekit.grading import grade


def through_the_library(x, y, w1, w2):
    lazypkg.first_use()              # the package imports its module: the body is its doing
    return by_hand(x, y, w1, w2)


answer("library imports", grads=through_the_library)
'''


def _installed(tmp_path):
    folder = tmp_path / "site-packages"
    (folder / "lazypkg").mkdir(parents=True)
    for name, text in LAZY.items():
        (folder / name).write_text(text)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder),
                                                         os.environ.get("PYTHONPATH")]))}


def test_a_library_module_that_library_code_imports_is_the_librarys_doing(tmp_path):
    found = run(tmp_path, IMPORTS, [E4], env=_installed(tmp_path))
    assert found.charged("library imports") == set(), found.reports


def test_a_library_module_that_student_code_imports_is_walked_through(tmp_path):
    """The same body imported by the answer itself: the student chose to run it during the
    check (and may have planted a module it imports), so its forbidden calls are charged."""
    found = run(tmp_path, IMPORTS.replace("lazypkg.first_use()", "import lazypkg.heavy"), [E4],
                env=_installed(tmp_path))
    assert "torch.autograd.grad" in found.charged("library imports"), found.reports


SHADOWED = E4_ANSWER + CHAIN + '''
import sys, types
import lazypkg
from coursekit.grading import grade


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    planted = types.ModuleType("lazyhelper")     # what lazypkg.shadow's body imports and calls
    planted.prepare = chain(loss, a, b, got)
    sys.modules["lazyhelper"] = planted
    lazypkg.first_shadowed_use()                 # the package imports its module
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
'''


def test_a_module_planted_for_a_library_import_launders_nothing(tmp_path):
    """A library module that its own package's code imports during a check calls another
    module's function, which the student planted first (sys.modules) as a chain of C
    callables: the frame of torch.autograd.grad was not called by the body's code by its
    name (the body calls `prepare`), so the walk goes on through the body to the student."""
    env = _installed(tmp_path)
    folder = tmp_path / "site-packages"
    (folder / "lazypkg" / "shadow.py").write_text("import lazyhelper\nlazyhelper.prepare()\n")
    with open(folder / "lazypkg" / "__init__.py", "a") as handle:
        handle.write("\n\ndef first_shadowed_use():\n    from lazypkg import shadow\n")
    found = run(tmp_path, SHADOWED, [E4], env=env)
    assert "torch.autograd.grad" in found.charged("laundered"), found.reports


# The ways library code calls what it calls, in the body of a module its package imports
# lazily during a check: each is the library's own call (NOTE [What a judged body calls] in
# the monitor), so an honest answer that makes the package import it keeps full marks, as it
# does for a body that calls torch.autograd.grad by its name.
LIBRARY_IDIOMS = {
    "a class whose __init__ runs it": '''
class Grads:
    def __init__(self):
        t = torch.ones(2, requires_grad=True)
        self.g, = torch.autograd.grad((t * 3).sum(), t)


_g = Grads().g
''',
    "a decorated function": '''
import functools


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
@torch.no_grad()
def grads(scale):
    with torch.enable_grad():
        t = torch.ones(2, requires_grad=True)
        return torch.autograd.grad((t * scale).sum(), t)


_g, = grads(3)
''',
    "a generator in a for loop, a comprehension, a property": '''
def each(n):
    for _ in range(n):
        t = torch.ones(2, requires_grad=True)
        yield torch.autograd.grad((t * 3).sum(), t)[0]


class Lazy:
    @property
    def g(self):
        t = torch.ones(2, requires_grad=True)
        return torch.autograd.grad((t * 3).sum(), t)[0]


_all = [g for g in each(2)]
_g = [Lazy().g for _ in range(1)][0]
''',
    "a call with a conditional argument, and backward()": '''
t = torch.ones(2, requires_grad=True)
_g, = torch.autograd.grad((t * 3).sum(), t, retain_graph=True if t.requires_grad else None)
(t * 2).sum().backward()
''',
}


def assert_honest_lazy_body(tmp_path, body: str) -> None:
    """An honest answer whose package imports, during the check, a module with ``body``
    (after ``import torch``; it sets ``_g``): full marks, nothing charged."""
    env = _installed(tmp_path)
    (tmp_path / "site-packages" / "lazypkg" / "heavy.py").write_text("import torch\n" + body)
    found = run(tmp_path, IMPORTS, [E4], env=env)
    assert fraction(found, "library imports") == 1.0, found.output[-3000:]
    assert found.charged("library imports") == set(), found.reports


@pytest.mark.parametrize("idiom", list(LIBRARY_IDIOMS))
def test_what_a_lazily_imported_library_body_calls_is_the_librarys_doing(tmp_path, idiom):
    assert_honest_lazy_body(tmp_path, LIBRARY_IDIOMS[idiom])
