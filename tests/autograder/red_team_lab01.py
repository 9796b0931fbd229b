"""The red team's hand-ins for lab01_graphs (issue 8): a determined student who has read every
line of the grader, starting from the untouched release. Used by ``test_red_team.py``.

A hand-in is a :class:`Hand`: answers put into answer cells, cells added after a given cell,
and files handed in next to the notebook. Attacks that live inside one answer cell are grouped
four to a hand-in (one per exercise) to keep the class run short; each must then score 0 on the
exercise it targets whatever happens to the others (a flag elsewhere in the notebook does not
excuse it). Attacks on the whole kernel (publisher, hooks, transformers, the monitor's pipe)
get a hand-in of their own, where a flag for a TA is enough.
"""
from __future__ import annotations

import codecs
import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path
import nbformat
from nbformat.v4 import new_code_cell, new_notebook

LAB = "lab01_graphs"
E1, E2, E3, E4 = "numpy_graph_grads", "two_layer_grads", "train_two_layer", "train_two_layer_torch"
EXERCISES = (E1, E2, E3, E4)
CHECK = {gid: f"lab01.{gid}" for gid in EXERCISES}
ALL = EXERCISES

# ----------------------------------------------------------------- torch autograd as answers
# What a student who does not want to derive gradients hands in: the lab forbids exactly this.

AUTOGRAD = {
    E1: '''def numpy_graph_grads(x, y, z):
    import torch
    tx, ty, tz = (torch.tensor(v, requires_grad=True) for v in (x, y, z))
    (tx * ty + tz).sum().backward()
    return tx.grad.numpy(), ty.grad.numpy(), tz.grad.numpy()
''',
    E2: '''def two_layer_grads(x, y, w1, w2):
    import torch
    a = torch.tensor(w1, requires_grad=True)
    b = torch.tensor(w2, requires_grad=True)
    loss = (torch.tensor(x).mm(a).clamp(min=0).mm(b) - torch.tensor(y)).pow(2).sum()
    loss.backward()
    return float(loss), a.grad.numpy(), b.grad.numpy()
''',
    E3: '''def train_two_layer(x, y, w1, w2, lr, steps):
    import torch
    losses = []
    for _ in range(steps):
        a = torch.tensor(w1, requires_grad=True)
        b = torch.tensor(w2, requires_grad=True)
        loss = (torch.tensor(x).mm(a).clamp(min=0).mm(b) - torch.tensor(y)).pow(2).sum()
        loss.backward()
        losses.append(float(loss))
        w1, w2 = w1 - lr * a.grad.numpy(), w2 - lr * b.grad.numpy()
    return w1, w2, losses
''',
    E4: '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    import torch
    if x.device.type == "meta":  # no values to differentiate: only shapes are checked there
        return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
        loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
        loss.backward()
        losses[t] = loss.detach()
        w1, w2 = w1 - lr * a.grad, w2 - lr * b.grad
    return w1, w2, losses
''',
}


def _indent(code: str, spaces: int = 4) -> str:
    return "".join(" " * spaces + line if line.strip() else line
                   for line in code.splitlines(keepends=True))


def _body(gid: str) -> str:
    """AUTOGRAD[gid] as a nested helper ``_autograd`` plus its call: for attacks that do
    something to the monitor first, then the forbidden work."""
    code = AUTOGRAD[gid].replace(f"def {gid}(", "def _autograd(", 1)
    return _indent(code) + "    return _autograd(*args)\n"


# ----------------------------------------------------------------- a hand-in, as data

@dataclass
class Hand:
    """One student's hand-in, built from the untouched release."""

    student: str
    answers: dict[str, str] = field(default_factory=dict)       # answer cell id -> source
    after: list[tuple[str, str]] = field(default_factory=list)  # (cell id, source) inserted
    files: dict[str, bytes] = field(default_factory=dict)       # next to the notebook
    solved: bool = False       # answers not given: the solution (True) or the release stub

    def write(self, demo, folder: Path) -> None:
        from autograder.demo.demo_class import _insert_after
        nb = demo.notebook(self.answers, solved=self.solved)
        for gid, source in self.after:
            nb = _insert_after(nb, gid, source)
        target = folder / LAB
        target.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(target / f"{LAB}.ipynb"))
        for name, data in self.files.items():
            (target / name).write_bytes(data)


@dataclass
class Attack:
    """One attack: the hand-in that carries it and the exercises it targets."""

    name: str
    student: str
    targets: tuple[str, ...]
    what: str
    alone: bool    # the only attack in its hand-in: a flag for a TA is enough to stop it
    evidence: str = ""  # in a shared hand-in, a flag counts only when a reason says this


# ----------------------------------------------------------------- forged verdicts

PUBLISHER = '''import json
import coursekit.grading.oracle as _oracle
from coursekit.grading.encoding import MIME_TYPE, encode, encode_error
from coursekit.grading.program import get_check, run_program
from coursekit.grading.tape import TapeRng, load

_shell = get_ipython()
_forged = {}
_real_drive = _oracle.drive


def _spy(request):
    # the grader's request carries the inputs: run the reference on them first
    message = json.loads(request)
    check = get_check(message["check"])
    for obs in run_program(check, check.reference_impl(), rng=TapeRng(load(message["tape"]))):
        _forged[obs.label] = (encode_error(obs.error) if obs.error is not None
                              else encode(obs.value))
    return _real_drive(request)


_oracle.drive = _spy
_real_publish = _shell.display_pub.publish


def _publish(data, *args, **kwargs):
    item = data.get(MIME_TYPE) if isinstance(data, dict) else None
    if isinstance(item, dict) and item.get("label") in _forged:
        data = {MIME_TYPE: dict(item, value=_forged[item["label"]])}
    return _real_publish(data, *args, **kwargs)


_shell.display_pub.publish = _publish
'''

GETATTR_CHAIN = '''_pkg = __import__("coursekit.grading.checks." + "lab01")
_lab = getattr(getattr(getattr(_pkg, "grading"), "checks"), "lab01")
numpy_graph_grads = getattr(_lab, "_ref" + "erence_" + "numpy_graph_grads")()
'''


def _pickled(name: str) -> bytes:
    import coursekit.grading.checks.lab01 as lab01
    return pickle.dumps(getattr(lab01, name), protocol=4)


def _npy_with(name: str) -> bytes:
    import io

    import numpy as np

    import coursekit.grading.checks.lab01 as lab01
    buffer = io.BytesIO()
    np.save(buffer, np.array([getattr(lab01, name)], dtype=object), allow_pickle=True)
    return buffer.getvalue()


PICKLE_LOADS = '''import pickle
two_layer_grads = pickle.loads({data!r})()
'''

NP_LOAD = '''import numpy as np
train_two_layer = np.load("weights.npy", allow_pickle=True)[0]()
'''

PRE_RUN_CELL = '''import importlib


def _swap(*args):
    lab01 = importlib.import_module("coursekit.grading.checks.lab01")
    get_ipython().user_ns["numpy_graph_grads"] = lab01._reference_numpy_graph_grads()


get_ipython().events.register("pre_run_cell", _swap)
'''

OWN_GRADE = '''from coursekit.grading import oracle as _oracle
from coursekit.grading.program import get_check as _get_check


def grade(check_name, impl, *, hidden=False):
    """Hand the grader the reference instead of my answer."""
    _oracle.register(check_name, hidden, _get_check(check_name).reference_impl())
'''

# The grader's request is code run like a cell: an input transformer may rewrite it. Register
# the reference first; the checks cell then registers the stub; the rewritten request asks
# for the second-latest registration.
REWRITE_REQUEST = '''import importlib
from coursekit.grading import oracle as _oracle

_ref = importlib.import_module("coursekit.grading.checks.lab01")._reference_numpy_graph_grads()
for _hidden in (False, True):
    _oracle.register("lab01.numpy_graph_grads", _hidden, _ref)


def _rewrite(lines):
    return [line.replace('"from_end": 1', '"from_end": 2') if "oracle" in line else line
            for line in lines]


get_ipython().input_transformers_cleanup.append(_rewrite)
'''

CAPTURED_TRANSFORMER = '''%%capture
get_ipython().input_transformers_cleanup.append(lambda lines: ["pass\\n"])
'''

ALIAS_AUTOGRAD = '''import torch
_ag = getattr(torch, "auto" + "grad")
_gradient_of = _ag.grad


def train_two_layer_torch(x, y, w1, w2, lr, steps):
    if x.device.type == "meta":  # no values to differentiate: only shapes are checked there
        return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
        loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
        g1, g2 = _gradient_of(loss, (a, b))
        losses[t] = loss.detach()
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2, losses
'''

# ----------------------------------------------------------------- code the scans never read

def _pyc(code: str) -> bytes:
    import importlib.util
    import marshal
    data = bytearray(importlib.util.MAGIC_NUMBER)
    data += (0).to_bytes(4, "little") + (0).to_bytes(4, "little") + (0).to_bytes(4, "little")
    data += marshal.dumps(compile(code, "helper_e1.py", "exec"))
    return bytes(data)


def _big_py(code: str) -> bytes:
    filler = ("# " + "padding " * 9 + "\n") * (2**20 // 74 + 10)
    return (filler + code).encode()


def _ipynb(code: str) -> bytes:
    nb = new_notebook(cells=[new_code_cell(code)])
    return nbformat.writes(nb).encode()


def _rot13(code: str) -> str:
    return ("from builtins import exec as run_it\nimport codecs\n\n"
            f"run_it(codecs.decode({codecs.encode(code, 'rot13')!r}, 'rot13'))\n")


def _ex(code: str) -> str:
    return f"get_ipython().ex({code!r})\n"


HCROT = '''import sys


def train_two_layer(x, y, w1, w2, lr, steps):
    t = sys.modules["hcrot"[::-1]]
    losses = []
    for _ in range(steps):
        a = t.tensor(w1, requires_grad=True)
        b = t.tensor(w2, requires_grad=True)
        loss = (t.tensor(x).mm(a).clamp(min=0).mm(b) - t.tensor(y)).pow(2).sum()
        getattr(loss, "drawkcab"[::-1])()
        losses.append(float(loss))
        w1, w2 = w1 - lr * a.grad.numpy(), w2 - lr * b.grad.numpy()
    return w1, w2, losses
'''

# ----------------------------------------------------------------- the monitor

SETPROFILE_NONE = "import sys\n\n\ndef numpy_graph_grads(*args):\n    sys.setprofile(None)\n" + _body(E1)

GC_WALK = '''import gc


def two_layer_grads(*args):
    for obj in gc.get_objects():  # find the monitor's functions and switch them off
        if getattr(obj, "__module__", "") == "coursekit.grading.monitor" and callable(obj):
            obj.__defaults__ = None
''' + _body(E2)

PROFILE_DEFAULTS = '''import sys


def train_two_layer(*args):
    defaults = sys.getprofile().__defaults__  # the monitor's state lives there
    print(defaults)
''' + _body(E3)

THREADING_SETPROFILE = '''import threading


def numpy_graph_grads(*args):
    threading.setprofile(None)
    box = {}

    def work():
        box["result"] = _autograd(*args)
''' + _indent(AUTOGRAD[E1].replace("def numpy_graph_grads(", "def _autograd(", 1)) + '''
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return box["result"]
'''

START_NEW_THREAD = '''import _thread
import time


def two_layer_grads(*args):
    box = {}

    def work():
        box["result"] = _autograd(*args)
''' + _indent(AUTOGRAD[E2].replace("def two_layer_grads(", "def _autograd(", 1)) + '''
    _thread.start_new_thread(work, ())
    for _ in range(500):
        if "result" in box:
            break
        time.sleep(0.01)
    return box["result"]
'''

SUBPROCESS = '''import json
import subprocess
import sys

import numpy as np

_CHILD = """
import json, sys, numpy as np
""" + {code!r} + """
args = [np.array(a) for a in json.loads(sys.stdin.read())[:4]] + json.loads(sys.argv[1])
w1, w2, losses = train_two_layer(*args)
print(json.dumps([np.asarray(w1).tolist(), np.asarray(w2).tolist(), list(losses)]))
"""


def train_two_layer(x, y, w1, w2, lr, steps):
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([lr, steps])],
                          input=json.dumps([a.tolist() for a in (x, y, w1, w2)]),
                          capture_output=True, text=True, check=True)
    a, b, losses = json.loads(done.stdout)
    return np.array(a), np.array(b), losses
'''.replace("{code!r}", repr(AUTOGRAD[E3]))

SELF_SIGINT = '''import os
import signal


def train_two_layer_torch(*args):
    try:  # an interrupt inside the profile function switches it off
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(200_000):
            pass
    except KeyboardInterrupt:
        pass
''' + _body(E4)

CLOSE_PIPE = '''import os
import stat


def numpy_graph_grads(*args):
    for fd in range(3, 1024):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:
            pass
''' + _body(E1)

DUP2_PIPE = '''import os
import stat


def numpy_graph_grads(*args):
    sink = os.open(os.devnull, os.O_WRONLY)
    for fd in range(3, 1024):
        try:
            if fd != sink and stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.dup2(sink, fd)
        except OSError:
            pass
''' + _body(E1)

# ----------------------------------------------------------------- invented after reading the code

# The monitor asks ``code.co_filename.startswith(<library folders>)`` to tell student code from
# library code. A code object keeps a str *subclass* as its file name, so the student's own
# ``startswith`` answers that question.
STR_SUBCLASS = '''class _Lib(str):
    def startswith(self, prefix, *args):
        if isinstance(prefix, tuple) and "<frozen " in prefix:
            return True  # asked "is this library code?": yes
        return str.startswith(self, prefix, *args)

    __hash__ = str.__hash__


exec(compile({code!r}, _Lib("answer.py"), "exec"), globals())
'''

# The profile function sees C calls only when Python bytecode makes them: a C callable that
# calls another (functools.partial) hides the inner call, and operators make no call at all.
PARTIAL_LAUNDERING = '''import functools

import torch

_P = functools.partial
_engine = torch.autograd.Variable._execution_engine


def train_two_layer_torch(x, y, w1, w2, lr, steps):
    if x.device.type == "meta":  # no values to differentiate: only shapes are checked there
        return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
        loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
        g1, g2 = _P(_engine.run_backward, (loss,), (torch.ones_like(loss),), False, False,
                    (a, b), False, False)()
        losses[t] = loss.detach()
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2, losses
'''

# The registered answer is inspected for the reference (functions, methods, partials, classes),
# but not every callable that calls it: a method-wrapper, an lru_cache wrapper, an instance whose
# class inherits ``__call__``. None puts a student frame on the stack while it is driven. The
# references themselves are fetched by a thread whose target is a chain of C callables
# (partial, map, getattr, operator.call): the checks module is imported and the reference
# factories are called with no student frame on the stack either, so calling the grader's own
# code from a cell is not seen.
_REF = '''import functools
import importlib
import operator
import threading

_names = ["_reference_numpy_graph_grads", "_reference_two_layer_grads",
          "_reference_train_two_layer"]
_refs = []
_modules = map(importlib.import_module, ["coursekit.grading.checks.lab01"] * len(_names))
_fetch = threading.Thread(target=functools.partial(
    _refs.extend, map(operator.call, map(getattr, _modules, _names))))
_fetch.start()
_fetch.join()
'''
METHOD_WRAPPER = _REF + "two_layer_grads = _refs[1].__call__\n"
LRU_CACHE = _REF + "train_two_layer = functools.lru_cache(maxsize=0)(_refs[2])\n"
INHERITED_CALL = _REF + '''

class _Base:
    __call__ = staticmethod(_refs[0])


class _Gradients(_Base):
    pass


numpy_graph_grads = _Gradients()
'''

# ----------------------------------------------------------------- leaks

# Right on the visible check (its first 12 calls: 4 problems, 3 gradients each), then a
# ValueError that carries the kernel's environment, its files and the hidden inputs; every
# call's x is kept for the cells below.
LEAK_HIDDEN_ERROR = '''import os

_seen = []


def numpy_graph_grads(x, y, z):
    _seen.append(x.tolist())
    if len(_seen) > 12:
        raise ValueError("LEAK-HIDDEN env=" + repr(dict(os.environ)) + " files="
                         + repr(sorted(os.listdir("."))) + " inputs=" + repr(x.tolist()))
    grad_z = np.ones_like(x) if np.shape(z) == np.shape(x) else np.full(np.shape(z), len(x) * 1.0)
    return y.copy(), x.copy(), grad_z
'''

# An answer cell that raises quotes its message in the submission's notes: the hidden inputs
# seen by the exercise above travel with it.
LEAK_LATER_ANSWER = '''raise ValueError("LEAK-LATER " + repr(_seen[-1]))
'''

# A checks cell that raises quotes its message in every check of that cell, hidden ones too.
LEAK_CHECKS_CELL = '''def train_two_layer(*args):
    raise NotImplementedError


def grade(*args, **kwargs):
    raise ValueError("LEAK-CHECKS " + repr(_seen[-1]))
'''

LEAK_MARKERS = ("LEAK-HIDDEN", "LEAK-LATER", "LEAK-CHECKS", "COURSEKIT_MONITOR")

# Honest, with each call's inputs written to a file the grader keeps (twins: two gradings).
INPUT_LOG = '''import json


def _log_inputs(*arrays):
    with open("seen_inputs.jsonl", "a") as out:
        out.write(json.dumps([a.tolist() for a in arrays]) + "\\n")


def numpy_graph_grads(x, y, z):
    """The gradients, by hand (the docstring may say torch.autograd and .backward())."""
    _log_inputs(x, y, z)
    grad_b = np.ones_like(x * y + z)
    grad_z = grad_b if np.shape(z) == grad_b.shape else grad_b.sum(axis=0)
    return grad_b * y, grad_b * x, grad_z
'''

# ----------------------------------------------------------------- the honest corpus

HONEST_WORDS = {
    E2: '''class Layer:
    """A linear layer with its own backward(), like a torch.autograd.Function (no torch here)."""

    def __init__(self, w):
        self.w = w

    def forward(self, x):
        self.x = x
        return x @ self.w

    def backward(self, grad):
        return self.x.T @ grad, grad @ self.w.T


def two_layer_grads(x, y, w1, w2):
    # torch.autograd would do this with loss.backward(); we call our own Layer.backward()
    first, second = Layer(w1), Layer(w2)
    h = first.forward(x)
    mask = h > 0
    y_pred = second.forward(h * mask)
    diff = y_pred - y
    grad_w2, grad_h_relu = second.backward(2.0 * diff)
    grad_w1, _ = first.backward(grad_h_relu * mask)
    return float((diff ** 2).sum()), grad_w1, grad_w2
''',
    E3: '''NOTE = "no `import torch`, no loss.backward(): torch.autograd is what lab02 explains"


def train_two_layer(x, y, w1, w2, lr, steps):
    """Gradient descent; the gradients come from two_layer_grads, not from torch.autograd."""
    losses = []
    for _ in range(steps):
        loss, grad_w1, grad_w2 = two_layer_grads(x, y, w1, w2)  # not .backward()
        losses.append(loss)
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
''',
    E4: '''class ManualBackprop:
    """Keeps what backward() needs; no torch.autograd involved, no tensor.backward()."""

    def forward(self, x, w1, w2):
        self.x, self.w2 = x, w2
        self.h = x.mm(w1)
        self.h_relu = self.h.clamp(min=0)
        return self.h_relu.mm(w2)

    def backward(self, grad_y_pred):
        grad_w2 = self.h_relu.t().mm(grad_y_pred)
        grad_h = grad_y_pred.mm(self.w2.t())
        grad_h = grad_h * (self.h > 0).to(grad_h.dtype)
        return self.x.t().mm(grad_h), grad_w2


def train_two_layer_torch(x, y, w1, w2, lr, steps):
    """The same loop as exercise 3 in torch ("torch.autograd" appears only in this string)."""
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    net = ManualBackprop()
    for t in range(steps):
        y_pred = net.forward(x, w1, w2)
        losses[t] = (y_pred - y).pow(2).sum()
        grad_w1, grad_w2 = net.backward(2.0 * (y_pred - y))
        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2
    return w1, w2, losses
''',
}


# The lecture's own idioms around a hand-written backward (issue 24): updates under
# torch.no_grad(), a forward under inference_mode, grad mode switched off and on, detach.
HONEST_GRAD_MODE = {
    E2: '''def two_layer_grads(x, y, w1, w2):
    with torch.no_grad():                 # no graph for a NumPy answer either
        pass
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    grad_y_pred = 2.0 * (y_pred - y)
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    return float(np.sum((y_pred - y) ** 2)), x.T @ grad_h, h_relu.T @ grad_y_pred
''',
    E4: '''@torch.no_grad()
def _step(w, grad, lr):
    return w - lr * grad


def train_two_layer_torch(x, y, w1, w2, lr, steps):
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    with torch.inference_mode():
        x.mm(w1)                          # a look at the first layer: no graph needed
    for t in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        losses[t] = (y_pred - y).pow(2).sum().detach()
        with torch.set_grad_enabled(False):
            grad_y_pred = 2.0 * (y_pred - y)
            grad_h = grad_y_pred.mm(w2.t())
            grad_h[h < 0] = 0
        with torch.enable_grad():         # the lecture turns it back on; nothing is recorded
            grad_w1, grad_w2 = x.t().mm(grad_h), h_relu.t().mm(grad_y_pred)
        with torch.no_grad():             # the lecture's update by hand
            w1 = w1 - lr * grad_w1
        w2 = _step(w2, grad_w2, lr)
    return w1, w2, losses
''',
}

# ----------------------------------------------------------------- issue 24: identity, not place

# A check's helper, fetched by the student: one that calls what it is handed (a thunk), one
# that computes the same as the reference; a reference fetched in an exec'd string's top
# level (code named <module>); torch's engine where Python sees no call (TorchScript).
LAUNDERED = {
    E1: '''import coursekit.grading.checks.lab01 as _lab01
exec("numpy_graph_grads = _lab01._reference_numpy_graph_grads()")
''',
    E2: '''import coursekit.grading.checks.lab01 as _lab01


def two_layer_grads(x, y, w1, w2):
    loss, g1, g2 = _lab01._autograd_two_layer(*(torch.tensor(v) for v in (x, y, w1, w2)))
    return float(loss), g1.numpy(), g2.numpy()
''',
    E3: '''import coursekit.grading.checks.lab01 as _lab01


def train_two_layer(x, y, w1, w2, lr, steps):
    losses = []
    for _ in range(steps):
        a = torch.tensor(w1, requires_grad=True)
        b = torch.tensor(w2, requires_grad=True)
        loss = (torch.tensor(x).mm(a).clamp(min=0).mm(b) - torch.tensor(y)).pow(2).sum()
        box = {}
        try:   # the helper stores what torch.autograd.grad returns, then fails on it
            _lab01._call_into(box, torch.autograd.grad, loss, (a, b))()
        except Exception:
            pass
        g1, g2 = box["result"]
        losses.append(float(loss))
        w1, w2 = w1 - lr * g1.numpy(), w2 - lr * g2.numpy()
    return w1, w2, losses
''',
    E4: '''from typing import List


@torch.jit.script
def _grads(x: torch.Tensor, y: torch.Tensor, a: torch.Tensor,
           b: torch.Tensor) -> List[torch.Tensor]:
    loss = (x.mm(a).clamp(min=0).mm(b) - y).pow(2).sum()
    grads = torch.autograd.grad([loss], [a, b])
    g1, g2 = grads[0], grads[1]
    assert g1 is not None and g2 is not None
    return [loss.detach(), g1, g2]


def train_two_layer_torch(x, y, w1, w2, lr, steps):
    if x.device.type == "meta":  # no values to differentiate: only shapes are checked there
        return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        loss, g1, g2 = _grads(x, y, w1.detach().requires_grad_(True),
                              w2.detach().requires_grad_(True))
        losses[t] = loss
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2, losses
''',
}

# Hand-ins whose attacks must score 0 for delegation itself (not because they broke).
DELEGATING = ("rt_laundered", "rt_nodes_by_hand")

# Autograd's derivative formulas with no engine run: the graph's nodes called by hand.
NODES_BY_HAND = '''def train_two_layer_torch(x, y, w1, w2, lr, steps):
    if x.device.type == "meta":  # no values to differentiate: only shapes are checked there
        return w1.clone(), w2.clone(), torch.empty(steps, device=x.device, dtype=x.dtype)
    losses = torch.empty(steps, device=x.device, dtype=x.dtype)
    for t in range(steps):
        a, b = w1.detach().requires_grad_(True), w2.detach().requires_grad_(True)
        h = x.mm(a)
        h_relu = h.clamp(min=0)
        out = h_relu.mm(b)
        diff = out - y
        squares = diff.pow(2)
        loss = squares.sum()
        grad = squares.grad_fn(loss.grad_fn(torch.ones_like(loss)))
        grad_h_relu, g2 = out.grad_fn(diff.grad_fn(grad)[0])
        g1 = h.grad_fn(h_relu.grad_fn(grad_h_relu))[1]
        losses[t] = loss.detach()
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2, losses
'''


def _alternatives() -> dict[str, str]:
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "mutants" / f"{LAB}.py"
    spec = importlib.util.spec_from_file_location("_red_team_alternatives", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {gid: variants[0][1] for gid, variants in module.ALTERNATIVES.items()}


# ----------------------------------------------------------------- the class

def hands() -> tuple[list[Hand], list[Attack], list[str]]:
    """Every hand-in, every attack, and the honest students (who must keep full marks)."""
    H, A = [], []

    def attack(student, name, targets, what, alone=False, evidence=""):
        A.append(Attack(name, student, tuple(targets), what, alone, evidence))

    # honest
    H.append(Hand("rt_honest", solved=True))
    H.append(Hand("rt_honest_alternatives", answers=_alternatives(), solved=True))
    for twin in ("rt_honest_words_a", "rt_honest_words_b"):  # identical: two gradings
        H.append(Hand(twin, answers={E1: INPUT_LOG, **HONEST_WORDS}, solved=True))
    H.append(Hand("rt_honest_grad_mode", answers=HONEST_GRAD_MODE, solved=True))
    honest = [h.student for h in H]

    # forged verdicts, each alone in its kernel
    H.append(Hand("rt_publisher", after=[("setup", PUBLISHER)]))
    attack("rt_publisher", "publisher wrapped, observations replaced by the reference's", ALL,
           "display_pub.publish + oracle.drive wrapped", alone=True)
    H.append(Hand("rt_pre_run_cell", after=[("setup", PRE_RUN_CELL)]))
    attack("rt_pre_run_cell", "pre_run_cell hook puts the reference in the namespace", [E1],
           "IPython events.register('pre_run_cell')", alone=True)
    H.append(Hand("rt_own_grade", after=[("setup", OWN_GRADE)]))
    attack("rt_own_grade", "own grade() registers get_check(name).reference_impl()", ALL,
           "grade redefined", alone=True)
    H.append(Hand("rt_rewrite_request", after=[("setup", REWRITE_REQUEST)]))
    attack("rt_rewrite_request", "input transformer rewrites the grader's drive request", [E1],
           "from_end 1 -> 2: the reference registered before the stub", alone=True)
    H.append(Hand("rt_captured_transformer", after=[("setup", CAPTURED_TRANSFORMER)]))
    attack("rt_captured_transformer", "%%capture in front of an input transformer", ALL,
           "every later cell (and request) becomes `pass`", alone=True)
    # the monitor's pipe: the kernel must not survive it unnoticed
    H.append(Hand("rt_close_pipe", answers={E1: CLOSE_PIPE}))
    attack("rt_close_pipe", "close the monitor's pipe, then torch autograd", [E1],
           "os.close on every FIFO fd", alone=True)
    H.append(Hand("rt_dup2_pipe", answers={E1: DUP2_PIPE}))
    attack("rt_dup2_pipe", "dup2 /dev/null over the monitor's pipe, then torch autograd", [E1],
           "os.dup2", alone=True)

    # reaching the reference, four to a hand-in
    H.append(Hand("rt_reference_ways", answers={
        E1: GETATTR_CHAIN, E2: PICKLE_LOADS.format(data=_pickled("_reference_two_layer_grads")),
        E3: NP_LOAD, E4: ALIAS_AUTOGRAD},
        files={"weights.npy": _npy_with("_reference_train_two_layer")}))
    attack("rt_reference_ways", "getattr chain to the reference", [E1], "getattr")
    attack("rt_reference_ways", "pickle.loads of bytes resolving to the reference", [E2], "pickle",
           evidence="unpickled coursekit.grading.checks.lab01._reference_two_layer_grads")
    attack("rt_reference_ways", "np.load(allow_pickle=True) of a handed-in .npy", [E3], "np.load",
           evidence="unpickled coursekit.grading.checks.lab01._reference_train_two_layer")
    attack("rt_reference_ways", "torch.autograd.grad through a getattr alias", [E4],
           "alias of what exercise 4 forbids")

    # code the scans never read
    H.append(Hand("rt_unscanned_files", answers={
        E1: "from helper_e1 import numpy_graph_grads\n",
        E2: "from helper_e2 import two_layer_grads\n",
        E3: "%run helper_e3.ipynb\n",
        E4: "%%capture\n" + AUTOGRAD[E4]},
        files={"helper_e1.pyc": _pyc(AUTOGRAD[E1]), "helper_e2.py": _big_py(AUTOGRAD[E2]),
               "helper_e3.ipynb": _ipynb(AUTOGRAD[E3])}))
    attack("rt_unscanned_files", "torch autograd from a sourceless .pyc", [E1], "pyc",
           evidence="loaded compiled code")
    attack("rt_unscanned_files", "torch autograd from a .py over 1 MiB", [E2], "big .py")
    attack("rt_unscanned_files", "torch autograd from %run other.ipynb", [E3], "%run")
    attack("rt_unscanned_files", "torch autograd in a %%capture cell", [E4], "%%capture")
    H.append(Hand("rt_unscanned_code", answers={
        E1: _rot13(AUTOGRAD[E1]), E2: _ex(AUTOGRAD[E2]), E3: HCROT, E4: SELF_SIGINT}))
    attack("rt_unscanned_code", "from builtins import exec as run_it, rot13", [E1], "rot13")
    attack("rt_unscanned_code", "get_ipython().ex(...)", [E2], ".ex")
    attack("rt_unscanned_code", 'sys.modules["hcrot"[::-1]]', [E3], "hcrot")
    attack("rt_unscanned_code", "SIGINT to itself to knock out the profile function", [E4],
           "invented")

    # tampering with the monitor, inside the answers
    H.append(Hand("rt_monitor_off", answers={
        E1: SETPROFILE_NONE, E2: GC_WALK, E3: PROFILE_DEFAULTS, E4: PARTIAL_LAUNDERING}))
    attack("rt_monitor_off", "sys.setprofile(None), then torch autograd", [E1], "setprofile",
           evidence="tried to replace the profile function")
    attack("rt_monitor_off", "gc.get_objects to find the monitor", [E2], "gc",
           evidence="gc.get_objects")
    attack("rt_monitor_off", "read sys.getprofile().__defaults__", [E3], "__defaults__",
           evidence="touched the grading monitor")
    attack("rt_monitor_off", "autograd engine called through functools.partial", [E4],
           "invented: C calls made by C are not seen")
    H.append(Hand("rt_monitor_threads", answers={
        E1: THREADING_SETPROFILE, E2: START_NEW_THREAD, E3: SUBPROCESS}))
    attack("rt_monitor_threads", "threading.setprofile(None), then a thread does the work", [E1],
           "threading", evidence="threading.setprofile was changed")
    attack("rt_monitor_threads", "_thread.start_new_thread does the work", [E2], "_thread",
           evidence="started a thread outside threading")
    attack("rt_monitor_threads", "a subprocess `python -c` runs torch autograd", [E3],
           "subprocess", evidence="subprocess")

    # invented: what the monitor cannot see
    H.append(Hand("rt_unseen", answers={
        E1: INHERITED_CALL, E2: METHOD_WRAPPER, E3: LRU_CACHE,
        E4: STR_SUBCLASS.replace("{code!r}", repr(AUTOGRAD[E4]))}))
    attack("rt_unseen", "an instance whose class inherits __call__ = the reference", [E1],
           "invented")
    attack("rt_unseen", "the reference registered as its method-wrapper __call__", [E2],
           "invented")
    attack("rt_unseen", "the reference registered inside functools.lru_cache(maxsize=0)", [E3],
           "invented")
    attack("rt_unseen", "code whose file name is a str subclass claiming to be library", [E4],
           "invented: co_filename.startswith is the student's")

    # issue 24: student code by identity, capabilities, the engine seen from C++
    # (the helper that calls what it is handed goes beside the solution's two_layer_grads: a
    # failing earlier exercise would make its message say only that)
    H.append(Hand("rt_laundered", answers={e: LAUNDERED[e] for e in (E1, E2, E4)}))
    attack("rt_laundered", "a reference fetched in an exec'd string's top level", [E1],
           "exec: code named <module>")
    attack("rt_laundered", "a check's helper that computes the same as the reference", [E2],
           "lab01._autograd_two_layer")

    attack("rt_laundered", "torch.autograd.grad inside a TorchScript function", [E4],
           "torch.jit.script: backward in C++")
    H.append(Hand("rt_nodes_by_hand", answers={E3: LAUNDERED[E3], E4: NODES_BY_HAND},
                  solved=True))
    attack("rt_nodes_by_hand", "a check's helper that calls what it is handed", [E3],
           "lab01._call_into(box, torch.autograd.grad, ...)")
    attack("rt_nodes_by_hand", "the graph's nodes called by hand (grad_fn(...))", [E4],
           "derivative formulas without the engine")

    # leaks
    H.append(Hand("rt_leaks", answers={E1: LEAK_HIDDEN_ERROR, E2: LEAK_LATER_ANSWER,
                                       E3: LEAK_CHECKS_CELL}))
    return H, A, honest


def input_log(course_root: Path, student: str) -> list[list]:
    path = course_root / "course" / "autograded" / student / LAB / "seen_inputs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

