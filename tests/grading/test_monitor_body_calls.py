"""Red team 16: the rule of NOTE [What a judged body calls] (monitor.py): a walk that meets a
library module body judged the library's stops there only when every frame below it was
called by its caller's own code, read from the bytecode (coursekit/grading/call_sites.py).

Every attack triggers torch's own import statement (Tensor.resize: ``from
torch.autograd._functions import Resize``; the body of torch/autograd/_functions/tensor.py
reads ``Function`` of torch.autograd.function, an attribute the student replaced by an object
whose ``__mro_entries__`` is a chain of C callables), as test_monitor_import_limits.py's
BODY_READS do; what differs is what the chain calls. Four got through at first and are
stopped now (each test says how); the false alarms of honest library idioms are kept as
strict expected failures.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER
from test_monitor_module_bodies import assert_honest_lazy_body
from test_monitor_same_package import fraction

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

GRAD = "torch.autograd.grad"
ENGINE = "torch.autograd.engine"
FUNCTIONAL = "torch.autograd.functional"

PRELUDE = E4_ANSWER + """
import codecs, functools, itertools, sys, types, warnings
import torch
import torch.autograd.function
import torch.autograd.functional
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAMES = ("torch.autograd._functions", "torch.autograd._functions.tensor")
FUNCTION_MODULE = sys.modules["torch.autograd.function"]


def through_the_body(x, calls):
    '''Run the iterator ``calls`` from the class statement of the judged body.'''
    for name in NAMES:
        sys.modules.pop(name, None)                 # imported at each call
    chain = functools.partial(max, calls, key=list)
    real = FUNCTION_MODULE.Function
    FUNCTION_MODULE.Function = types.SimpleNamespace(__mro_entries__=chain)
    try:
        x.resize(1)                                 # torch's own import statement
    except Exception:                               # the body fails: no Resize.apply
        pass
    finally:
        FUNCTION_MODULE.Function = real
    for name in NAMES:
        sys.modules.pop(name, None)
"""

# A library dunder (accepted from any instruction) that makes an inlined call of a default
# parameter: codecs.StreamWriter.__getattr__(self, name, getattr=getattr) returns
# getattr(self.stream, name). Called as a plain function with getattr=vjp, it calls
# torch.autograd.functional.vjp(self.stream, name) inlined, by the load LOAD_FAST "getattr";
# vjp's own argument ``func`` is a function of the student's whose name is "getattr", so
# _wraps_the_function_named takes vjp for a decorator's wrapper around "getattr". vjp then
# calls _autograd_grad and torch.autograd.grad by their own names.
DUNDER_DEFAULT_PARAMETER = PRELUDE + """
def laundered(x, y, w1, w2):
    def getattr(a, b):                              # the name the gadget's call loads
        return (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
    got = []
    holder = types.SimpleNamespace(stream=getattr)
    calls = map(got.append, itertools.starmap(codecs.StreamWriter.__getattr__,
                                               [(holder, (w1, w2), torch.autograd.functional.vjp)]))
    through_the_body(x, calls)
    loss, (g1, g2) = got[0]
    return loss.detach(), g1, g2


answer("laundered", grads=laundered)
"""


# Without the body (the student runs the same chain itself): charged three ways.
def test_the_same_chain_run_by_the_student_is_charged(tmp_path):
    found = run(tmp_path, DUNDER_DEFAULT_PARAMETER.replace(
        "    through_the_body(x, calls)\n    loss", "    list(calls)\n    loss"), [E4])
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]
    assert {GRAD, ENGINE, FUNCTIONAL} <= found.charged("laundered"), found.reports


def test_a_dunder_calling_a_default_parameter_named_as_a_local_of_the_callee(tmp_path):
    """Stopped: a dunder counts only for the instruction that runs it (a `__getattr__` for an
    attribute read, not for a call of `__build_class__`), and a wrapper is known by its closure,
    not by its arguments."""
    found = run(tmp_path, DUNDER_DEFAULT_PARAMETER, [E4])
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    charged = found.charged("laundered")
    assert GRAD in charged and ENGINE in charged, (found.reports, found.output[-3000:])


# The same gadget, and torch.autograd.grad itself as what it calls: wrapped by torch's own
# decorator (torch.enable_grad()(grad), whose decorate_context calls func(*args, **kwargs):
# a CALL_FUNCTION_EX of the LOAD_DEREF holding grad, taken for a wrapper's call). The gadget's
# inlined call of decorate_context by the load `getattr` is taken for a decorator's because
# _wraps_the_function_named follows `__wrapped__` out of a function's __dict__: the student
# set torch.autograd.grad.__wrapped__ to a function named "getattr" (and deletes it after).
PLANTED_WRAPPED = PRELUDE + """
def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)

    def getattr():
        pass
    got = []
    wrapper = torch.enable_grad()(torch.autograd.grad)
    holder = types.SimpleNamespace(stream=loss)
    calls = map(got.append, itertools.starmap(codecs.StreamWriter.__getattr__,
                                               [(holder, (a, b), wrapper)]))
    torch.autograd.grad.__wrapped__ = getattr
    try:
        through_the_body(x, calls)
    finally:
        del torch.autograd.grad.__wrapped__
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


def test_a_wrapped_attribute_set_on_a_library_function(tmp_path):
    """Stopped: `__wrapped__` is not read (student code can set it on any function); a wrapper is
    known by the functions in its closure."""
    found = run(tmp_path, PLANTED_WRAPPED, [E4])
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    charged = found.charged("laundered")
    assert GRAD in charged and ENGINE in charged, (found.reports, found.output[-3000:])


# A thread the library starts: a thread is the student's when the walk from Thread.start
# finds student code (_thread_started, which judges no `called` frame). tqdm's
# TMonitor.__init__ (a dunder, accepted from any instruction) ends in `self.start()` (by its
# own name): called as a plain function on a threading.Timer of the student's, it re-runs
# Thread.__init__ (the Timer's own function, args and interval stay) and starts it. The walk
# stops at the judged body, so the thread is not the student's; in it, Timer.run calls the
# chain of C callables, and the walk from torch.autograd.grad ends at the thread's root
# with no student code (never meeting a body).
LIBRARY_THREAD = PRELUDE + """
import threading
import tqdm._monitor


def laundered(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    got = []
    work = functools.partial(next, map(got.append, itertools.starmap(
        torch.autograd.grad, [(loss, (a, b))])))
    timer = threading.Timer(0, work)
    timer._test = {}                                # what TMonitor.__init__ reads of self
    timer._atexit_signal = int
    calls = itertools.starmap(tqdm._monitor.TMonitor.__init__, [(timer, None, 10)])
    through_the_body(x, calls)
    timer.join()
    return (loss.detach(), *got[0])


answer("laundered", grads=laundered)
"""


@pytest.mark.parametrize("charge", [
    pytest.param(GRAD, id="the walk charges it: the thread is the student's"),
    pytest.param(ENGINE, id="the engine watch still charges the other thread's engine")])
def test_a_thread_a_library_dunder_starts_under_the_body(tmp_path, charge):
    found = run(tmp_path, LIBRARY_THREAD, [E4])
    assert fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert charge in found.charged("laundered"), (found.reports, found.output[-3000:])


# The same thread for a target that only the walk watches: lab04.sgd forbids torch.optim,
# and no engine watch looks at it. The answer's optimizer is torch.optim.SGD, built and
# stepped in threads that tqdm's TMonitor.__init__ starts under the judged body.
SGD = "lab04.sgd"
OPTIM = "torch.optim"
SGD_IN_A_LIBRARY_THREAD = """
import functools, itertools, sys, threading, types, warnings
import torch
import torch.autograd.function
import tqdm._monitor
from coursekit.grading import grade

warnings.simplefilter("ignore")
NAMES = ("torch.autograd._functions", "torch.autograd._functions.tensor")
FUNCTION_MODULE = sys.modules["torch.autograd.function"]


def through_the_body(calls):
    for name in NAMES:
        sys.modules.pop(name, None)
    chain = functools.partial(max, calls, key=list)
    real = FUNCTION_MODULE.Function
    FUNCTION_MODULE.Function = types.SimpleNamespace(__mro_entries__=chain)
    try:
        torch.zeros(2).resize(1)                    # torch's own import statement
    except Exception:
        pass
    finally:
        FUNCTION_MODULE.Function = real
    for name in NAMES:
        sys.modules.pop(name, None)


def in_a_library_thread(work):
    got = []
    timer = threading.Timer(0, functools.partial(next, map(got.append, itertools.starmap(
        work, [()]))))
    timer._test = {}                                # what TMonitor.__init__ reads of self
    timer._atexit_signal = int
    START(itertools.starmap(tqdm._monitor.TMonitor.__init__, [(timer, None, 10)]))
    timer.join()
    return got[0]


class SGD:
    def __init__(self, params, **hyper):
        inner = in_a_library_thread(functools.partial(torch.optim.SGD, list(params), **hyper))
        self.state = inner.state                    # found first by the check's state walk
        self.inner = inner

    def zero_grad(self):
        in_a_library_thread(self.inner.zero_grad)

    def step(self):
        in_a_library_thread(self.inner.step)


grade("lab04.sgd", SGD)
drive("lab04.sgd", "laundered")
"""


def _sgd_fraction(found, label):
    """test_monitor_same_package.fraction, judged as lab04.sgd."""
    import ast
    from coursekit.grading.verdict import decode_payload, judge
    items = [ast.literal_eval(line)["application/vnd.coursekit.observations+json"]
             for line in found.output.splitlines()
             if line.startswith("{'application/vnd.coursekit.observations+json'")]
    assert [w[0] for w in found.windows] == [label], found.windows   # one drive
    pairs = decode_payload({"observations": [i for i in items if "label" in i]})
    return judge(SGD, 1, pairs, hidden=False).fraction


def test_torch_optim_in_threads_the_student_starts_is_charged(tmp_path):
    found = run(tmp_path, SGD_IN_A_LIBRARY_THREAD.replace("START(", "list("), [SGD])
    assert _sgd_fraction(found, "laundered") == 1.0, found.output[-3000:]
    assert OPTIM in found.charged("laundered"), found.reports


def test_torch_optim_in_threads_a_library_dunder_starts_under_the_body(tmp_path):
    """Stopped: the walk from Thread.start goes through module bodies (a thread's own stack
    never meets the body again), and the dunder is not run for the caller's instruction."""
    found = run(tmp_path, SGD_IN_A_LIBRARY_THREAD.replace("START(", "through_the_body("), [SGD])
    assert _sgd_fraction(found, "laundered") == 1.0, found.output[-3000:]   # full marks
    assert OPTIM in found.charged("laundered"), (found.reports, found.output[-3000:])


# ------------------------------------------------------------------------ honest idioms
# The ways library code calls what it calls, in the body of a module its package imports
# lazily during a check (as test_monitor_module_bodies.py's LIBRARY_IDIOMS): an honest answer
# that makes the package import it should keep full marks with nothing charged.

HONEST_IDIOMS = {
    "an aliased import": '''
from torch.autograd import grad as _grad

_t = torch.ones(2, requires_grad=True)
_g, = _grad((_t * 3).sum(), _t)
''',
    "a function kept in a dict": '''
_OPS = {"grad": torch.autograd.grad}

_t = torch.ones(2, requires_grad=True)
_g, = _OPS["grad"]((_t * 3).sum(), _t)
''',
    "functools.partial": '''
import functools

_grad_of = functools.partial(torch.autograd.grad, allow_unused=True)
_t = torch.ones(2, requires_grad=True)
_g, = _grad_of((_t * 3).sum(), _t)
''',
    "map over a helper": '''
def _one(scale):
    t = torch.ones(2, requires_grad=True)
    return torch.autograd.grad((t * scale).sum(), t)[0]


_g = list(map(_one, [3]))[0]
''',
    "a decorator whose wrapper passes the arguments by name": '''
def doubled(fn):
    def inner(scale):
        return fn(scale * 2)
    return inner


@doubled
def grads(scale):
    t = torch.ones(2, requires_grad=True)
    return torch.autograd.grad((t * scale).sum(), t)


_g, = grads(3)
''',
    "an nn.Module called": '''
class Net(torch.nn.Module):
    def forward(self, t):
        return torch.autograd.grad((t * 3).sum(), t)[0]


_g = Net()(torch.ones(2, requires_grad=True))
''',
    "getattr of a module": '''
_t = torch.ones(2, requires_grad=True)
_g, = getattr(torch.autograd, "grad")((_t * 3).sum(), _t)
''',
    "a lambda": '''
_grad_of = lambda t: torch.autograd.grad((t * 3).sum(), t)[0]
_g = _grad_of(torch.ones(2, requires_grad=True))
''',
    "a classmethod, a contextmanager, lru_cache": '''
import contextlib, functools


class K:
    @classmethod
    def make(cls):
        t = torch.ones(2, requires_grad=True)
        return torch.autograd.grad((t * 3).sum(), t)[0]


@contextlib.contextmanager
def grads_around():
    t = torch.ones(2, requires_grad=True)
    yield torch.autograd.grad((t * 3).sum(), t)[0]


@functools.lru_cache(maxsize=None)
def cached():
    t = torch.ones(2, requires_grad=True)
    return torch.autograd.grad((t * 3).sum(), t)[0]


with grads_around() as _g0:
    pass
_g = K.make() + cached() + _g0
''',
}


def _false_alarm(why):
    return pytest.mark.xfail(strict=True, reason="FALSE ALARM (red team 16): " + why)


# A function defined in the body itself is accepted when the body calls it itself (a lambda
# called by the name it was given), not from C (map's helper). What the body calls that was
# defined elsewhere, by a name other than its own, is not.
FALSE_ALARMS = {
    "an aliased import": "grad loaded as `_grad`: inlined, by a name not its own",
    "a function kept in a dict": "the callable is pushed by BINARY_SUBSCR: a load of no name",
    "functools.partial": "grad called from C by the partial: the body's CALL loads `_grad_of`",
    "a decorator whose wrapper passes the arguments by name":
        "inner calls fn(scale * 2) inlined by the load `fn`; only CALL_FUNCTION_EX of a "
        "LOAD_DEREF is taken for a wrapper calling what it closed over",
    "an nn.Module called": "Module._wrapped_call_impl (no dunder name) runs from C "
                           "(slot_tp_call), and _call_impl calls forward_call(*args, **kwargs), "
                           "a LOAD_FAST",
    "getattr of a module": "the callable is what a CALL (getattr) returned: a load of no name",
    "map over a helper": "a function of the body's module called from C (map): by design, as a "
                         "chain of C callables planted for the body could call it too",
}


@pytest.mark.parametrize("idiom", [
    pytest.param(name, marks=_false_alarm(FALSE_ALARMS[name])) if name in FALSE_ALARMS else name
    for name in HONEST_IDIOMS])
def test_what_a_lazily_imported_library_body_calls_honestly(tmp_path, idiom):
    assert_honest_lazy_body(tmp_path, HONEST_IDIOMS[idiom])
