"""The grading monitor: what really runs in a grading kernel, reported to the grader.

Installed by :mod:`coursekit.grading.kernel` before ipykernel starts, so before any student
code. It reports facts, one JSON line each with a CLOCK_MONOTONIC timestamp, into a pipe the
grader opened; the grader charges a report to the check it was driving at that moment (if that
check forbids it) or lists it for a TA. Nothing here decides a grade.

NOTE [Who wrote a code object]
Student code is known by identity: the code objects that ``exec``/``eval`` (the student's
cells, ``%run``, imported files of the student's own), ``types.FunctionType`` and
``__code__`` assignment bring to life, with the code nested in them, are recorded when the
audit hook sees them (``exec``, ``function.__new__``, ``object.__setattr__``). The import
system's own loading of an installation file is the one exception; the audit hook refuses
any other code that claims an installation file's name (``compile``, ``code.__new__``,
``marshal``), and code compiled from a syntax tree (which raises no event in Python 3.11)
that is run as a module body counts as the library's only when it equals that file's code
(:func:`_is_file_code`). Any code object that runs and is neither also counts as the student's (dynamo's
rewritten bytecode, say): failing closed. Nothing is trusted for where it lives or what it is
called: the checks' own folder is grading code, which student code may call only through
the public API (``grade``), through what a check hands it (:func:`.program.handed`, and the
closures a check program makes while it runs), and never a reference.

Three rules judge what runs (see :func:`_on_call`):

* a **forbidden target** (a check's ``forbid=``: :mod:`.targets`) called with student code
  anywhere on the stack above it, up to the grader's request (``oracle.drive``) or a library
  module's body that the import system runs for library code (:func:`_imported_for_library`),
  is reported.
  A thread that student code started counts as student code at its root. Torch's grad-mode
  context managers are never targets: they are the lecture's idiom;
* **grading code** called from student code (the nearest non-library frame above it) is
  reported as ``coursekit.grading``, unless it is open to student code (above); a reference
  is reported whoever runs it (references never run in a grading kernel);
* **torch's autograd engine**, for checks that forbid it, is watched from C++ while the check
  is driven (:mod:`.engine`): nodes the check's own program did not ask for are reported.

What the registered answer *is* counts too: the reference, an alias of a forbidden class,
grading code behind a wrapper (:func:`answer_patterns`).

NOTE [Cost]
The profile function runs for every call of every thread, so it decides almost everything
from one dictionary lookup: the module a frame runs in (its globals) is QUIET (no target, no
grading code, no student code: return), WATCHED (holds targets or grading code: look at the
code object) or STUDENT (student code runs there: look at its C calls). Reading a frame's
code is an audited event in Python 3.11, so it is read only on those slower paths, and what
was learnt about a code object is kept by identity. Those first lookups are also written in C
(``fast_profile.c``, built with the package where a compiler is at hand): CPython calls that C
function for every event, and it calls the Python profile function only for the events it
does not return from at once, which decides them again in full. A new thread starts with the
Python one, until its first audited event. What remains is CPython's own: while any profile
function is set, Python 3.11 runs every instruction unspecialized and makes a frame object for
every call (measured by ``tests/benchmarks/bench_monitor_mechanisms.py``).

A check is charged once per forbidden pattern, however often its drive calls the target, so
the C fast paths also pass over a call of targets all reported (written to the pipe, not
held back by REPORT_S) since the grader's current drive started (``covered``; each drive is
numbered by ``oracle.drive``'s call and audit event). A lab that forbids a whole framework in
one check (lab08's ``jax``) would otherwise judge every call of that framework in every
check. Between drives a covered call is not reported again: no check is driven then.

NOTE [Sealed state]
The monitor's state lives in default arguments of its functions and in a ``_State`` object
(of a C type, so that no code of the student's can be set on its class) reached only
through them; Python lets code read those only through audited accesses, which
are refused for the monitor's functions, and a traceback frame of the monitor is never handed
to student code (``tb_frame`` reads with student code on the stack). Everything the installed
functions call is captured at install (C functions, or this module's helpers bound to a
private copy of its globals and builtins), so code the student replaces later never runs
inside the monitor. What CPython itself holds of the monitor and hands out
(``sys.getprofile()``, ``threading._profile_hook``) is a guard object with no attributes:
a function's ``__globals__`` is read without an audited event, and would lead to the private
globals.

No student code may run on top of the monitor's frames, whose locals are its state and
whose ``f_globals`` its private globals (neither read is audited):

* the guard pauses the garbage collector while the monitor's Python code runs, since a
  collection there would call a student object's ``__del__`` (Python 3.11 collects when an
  object is allocated); what the monitor lets go of (a namespace, a frame) is handed to
  ``s.keep``, and freed after its code has returned;
* the guard refuses a call that CPython did not make (``sys.getprofile()(fake_frame, ...)``:
  the thread is not "tracing");
* what the monitor reads of an object it was handed is read through C descriptors and exact
  types (``_ours_text``), never a method of the student's (``__eq__``, a metaclass's
  property);
* signals are delivered elsewhere (NOTE [Signals]).

A monitor in the same process cannot survive everything (see the threat model in the README): each way around it is refused,
reported, or kills the kernel (a replaced pipe).

NOTE [Signals]
CPython calls a Python signal handler between two instructions of whatever runs, and hands
it that frame: inside the profile function or the audit hook, that is one of the monitor's,
and the handler would run unprofiled. So every Python handler is wrapped (compiled module:
``Delivery``), at install and after each call of ``_signal.signal``'s C code, from any copy
of the module. A wrapped handler runs only outside the monitor's code; a signal that lands in
it is tripped again when the outermost call into that code has returned. Left open, in the
README's known limits: a handler set where no call is seen (``functools.partial`` around
``signal.signal``) runs unwrapped, and so does the first delivery of a handler in the
microseconds before it is wrapped; without the compiled module nothing is wrapped.
"""
from __future__ import annotations

import _json
import _signal
import _thread
import dis
import functools
import gc
import importlib.machinery as _machinery
import marshal
import os
import sys
import threading
import time
import types

FIFO_ENV = "COURSEKIT_MONITOR_FIFO"
TARGETS_ENV = "COURSEKIT_MONITOR_TARGETS"
LIBRARY_ENV = "COURSEKIT_MONITOR_LIBRARY"  # more folders of grading code: a course's checks
PROFILE_ENV = "COURSEKIT_MONITOR_PROFILE"  # "python": no compiled fast paths (tests compare both)
GRADING_TARGET = "coursekit.grading"   # grading code called by student code
ENGINE_TARGET = "torch.autograd.engine"  # torch's autograd engine, watched from C++
DRIVE_EVENT = "coursekit.grading.drive"  # the audit event oracle.drive starts with
EXIT_CHANNEL_TAMPERED = 86

# The same forbidden call from the same student file is reported at most once per REPORT_S:
# a training loop must not flood the pipe. The grader leaves a gap longer than this before
# and after every check it drives, so the first such call inside a check is always reported.
REPORT_S = 0.005
_INFO_LIMIT = 400   # informational lines per kernel: the TA's log, not a flood
_STARTS = str.startswith  # never a str subclass's own startswith
# Deeper than Python's default recursion limit: a walk that reaches it without finding whose
# code is above fails closed (TOO_DEEP counts as the student's), since a student can make a
# deep stack of library frames on purpose (a nested structure handed to copy.deepcopy).
_MAX_DEPTH = 3000
TOO_DEEP = "(a stack deeper than the monitor walks)"

# Kinds of code (NOTE [Who wrote a code object]).
STUDENT, LIBRARY, GRADING, OPEN, REFERENCE = "student", "library", "grading", "open", "reference"
# Kinds of module globals, as bits (NOTE [Cost]).
QUIET, WATCHED, CELLS = 0, 1, 2
# Code the monitor knows by identity and acts on when it is called.
RUN_PROGRAM, DRIVE, ENGINE_ENTRY = "run_program", "drive", "engine_entry"
HANDED, CHECK = "handed", "check"   # a checks module imported after install says what it is
_CO_NEWLOCALS = 0x0002   # inspect.CO_NEWLOCALS: a function's code (a class body has none)

# Audit events refused when student code makes them.
_REFUSED_FROM_STUDENT = (
    "ctypes.", "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "pty.spawn",
    "os.fork", "os.forkpty", "_thread.start_new_thread", "function.__new__",
    # A trace function and an audit hook run where CPython profiles nothing (and a hook is
    # handed the monitor's own frames): no code of the student's may run there.
    "sys.settrace", "sys.addaudithook",
)
# Refused events that read or hook the interpreter: judged by the frame that raised them,
# and by the student code above it when that frame did not call the function by its name.
_INSPECTING = ("gc.get_objects", "gc.get_referrers", "gc.get_referents",
               "sys._current_frames", "sys.settrace", "sys.addaudithook")
# Of those, the ones that install a function: what runs is the argument, which a call by the
# function's own name does not tell (``trace.Trace.runfunc`` sets ``self.globaltrace``, an
# attribute the student sets: red team 19). Judged by the student code above, always.
_HANDS_A_FUNCTION = ("sys.settrace", "sys.addaudithook")
# Events judged by who asked for them (the first frame above that is not the standard
# library's or the shell's), not by the frame that raised them.
_BY_ORIGIN = ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
              "pty.spawn", "os.fork", "os.forkpty", "ctypes.")
_FORK_EXEC = getattr(sys.modules.get("_posixsubprocess") or __import__("_posixsubprocess"),
                     "fork_exec", None)
# What the installed functions call, taken now: C functions, which student code cannot make
# run Python code of its own (a module attribute it replaces later is never looked up).
_GETFRAME, _GETPROFILE, _SETPROFILE = sys._getframe, sys.getprofile, sys.setprofile
_NOW, _NOW_NS, _INTERRUPT_MAIN = time.monotonic, time.time_ns, _thread.interrupt_main
_START_THREAD, _LOCK, _LOCKED = _thread.start_new_thread, _thread.LockType, \
    _thread.LockType.locked
_THREAD_ID = _thread.get_ident
_LOADS = marshal.loads
# Where the import system caches a module's bytecode (``importlib.util.cache_from_source``,
# which is Python code student code could change; this is computed once, here).
_PYC_SUFFIX = (f".{sys.implementation.cache_tag}"
               + (f".opt-{sys.flags.optimize}" if sys.flags.optimize else "") + ".pyc")
_SIGNAL_SET, _SIGNAL_GET = _signal.signal, _signal.getsignal
_THREADING_DICT = vars(threading)
_BOOTSTRAP = threading.Thread._bootstrap.__code__
_BOOTSTRAP_INNER = threading.Thread._bootstrap_inner.__code__
_TB_FRAME = types.TracebackType.__dict__["tb_frame"].__get__


def install_from_env() -> bool:
    """Install the monitor if the grader asked for it (``COURSEKIT_MONITOR_FIFO``)."""
    import json
    path = os.environ.get(FIFO_ENV)
    if not path:
        return False
    install(path, json.loads(os.environ.get(TARGETS_ENV, "[]")))
    return True


# ----------------------------------------------------------------------- where code lives

def _folders(roots) -> tuple[str, ...]:
    return tuple(sorted({path.rstrip("/") + "/" for root in roots if root
                         for path in (os.path.abspath(root), os.path.realpath(root))}))


def _library_prefixes() -> tuple[str, ...]:
    """Folders of the installation: the Python installation, the environment's packages and
    the coursekit package (grading code included: it is not the student's), and a course's
    own checks (``COURSEKIT_MONITOR_LIBRARY``). An editable install's checkout is not
    included as a whole: it may hold student-like files."""
    import coursekit
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.abspath(coursekit.__file__))}
    roots |= {p for p in sys.path if p and "site-packages" in p}
    roots |= set(os.environ.get(LIBRARY_ENV, "").split(os.pathsep))
    return _folders(roots) + ("<frozen ",)


def _grading_prefixes() -> tuple[str, ...]:
    """Folders of grading code: this package and a course's own checks."""
    return _folders({os.path.dirname(os.path.abspath(__file__)),
                     *os.environ.get(LIBRARY_ENV, "").split(os.pathsep)})


# ----------------------------------------------------------------------- the matcher

def compile_targets(targets: list[dict]) -> dict:
    """Target specs (:mod:`.targets`) as the tables :func:`match_code` and
    :func:`match_builtin` read. Specs marked ``exempt`` are never targets, whatever pattern
    covers them (grad-mode context managers)."""
    py, exempt_py, c_owned, c_modules, exempt_c = [], [], [], [], []
    engine_checks: set[str] = set()
    for spec in targets:
        pattern = spec.get("pattern", "")
        for prefix in spec.get("files", ()):
            row = (prefix, spec.get("qual", ""), spec.get("name", ""))
            (exempt_py.append(row) if spec.get("exempt") else py.append((pattern,) + row))
        for name in spec.get("c_names", ()):
            owners = tuple(spec.get("c_owners", ("",)))
            (exempt_c.append((name, owners)) if spec.get("exempt")
             else c_owned.append((pattern, name, owners)))
        c_modules += [(pattern, m, spec.get("name", "")) for m in spec.get("c_modules", ())]
        if spec.get("engine"):
            engine_checks |= set(spec.get("checks", ()))
    return {"py": tuple(py), "exempt_py": tuple(exempt_py), "c_owned": tuple(c_owned),
            "c_modules": tuple(c_modules), "exempt_c": tuple(exempt_c),
            "files": tuple(sorted({row[1] for row in py})) or ("\0",),
            "c_names": frozenset(row[1] for row in c_owned),
            "engine_checks": frozenset(engine_checks)}


def match_code(code, matcher: dict) -> tuple[str, ...]:
    """The patterns Python code ``code`` is a target of (none for exempt code)."""
    filename, qualname, name = code.co_filename, code.co_qualname, code.co_name
    for prefix, qual, exact in matcher["exempt_py"]:
        if _STARTS(filename, prefix) and _STARTS(qualname, qual) and (not exact
                                                                       or name == exact):
            return ()
    found = []
    for pattern, prefix, qual, exact in matcher["py"]:
        if (_STARTS(filename, prefix) and _STARTS(qualname, qual)
                and (not exact or name == exact) and pattern not in found):
            found.append(pattern)
    return tuple(found)


def match_builtin(function, matcher: dict) -> tuple[str, ...]:
    """The patterns a C function is a target of (none for exempt ones)."""
    name = function.__name__
    if type(name) is not str:
        return ()
    module = _owner(function)
    for exempt, owners in matcher["exempt_c"]:
        if name == exempt and _STARTS(module, owners):
            return ()
    found = []
    for pattern, target, owners in matcher["c_owned"]:
        if name == target and _STARTS(module, owners) and pattern not in found:
            found.append(pattern)
    for pattern, prefix, target in matcher["c_modules"]:
        if _STARTS(module, prefix) and (not target or name == target) and pattern not in found:
            found.append(pattern)
    return tuple(found)


# ----------------------------------------------------------------------- code identity

_CODE = type(_folders.__code__)
_FUNCTION = type(_folders)
_METHOD = type(_folders.__get__(0))
_BUILTIN = type(len)
_METHOD_WRAPPER = type((0).__add__)
_PARTIAL = functools.partial
_MODULE_OF_TYPE = type.__dict__["__module__"].__get__
_MRO_OF_TYPE = type.__dict__["__mro__"].__get__
_DICT_OF_TYPE = type.__dict__["__dict__"].__get__
_CODE_OF = _FUNCTION.__dict__["__code__"].__get__
_CLOSURE_OF = _FUNCTION.__dict__["__closure__"].__get__
_CELL_CONTENTS = types.CellType.__dict__["cell_contents"].__get__
_NAME_OF_TYPE = type.__dict__["__name__"].__get__
_GLOBALS_OF = _FUNCTION.__dict__["__globals__"].__get__
_FUNC_OF_METHOD = _METHOD.__dict__["__func__"].__get__
_SELF_OF_WRAPPER = _METHOD_WRAPPER.__dict__["__self__"].__get__
_STATIC_FUNC = staticmethod.__dict__["__func__"].__get__
_CLASS_FUNC = classmethod.__dict__["__func__"].__get__
_PARTIAL_FUNC = functools.partial.__dict__["func"].__get__
_PROPERTY_PARTS = tuple(property.__dict__[n].__get__ for n in ("fget", "fset", "fdel"))
_GETSET = type(_FUNCTION.__dict__["__code__"])
# The import system's own types (``importlib.machinery``'s, frozen into the interpreter).
_MODULE_SPEC = _machinery.ModuleSpec
_FILE_FINDER = _machinery.FileFinder
_MODULE_DICT = types.ModuleType.__dict__["__dict__"].__get__
_SPEC_DICT = _machinery.ModuleSpec.__dict__["__dict__"].__get__
_STOCK_LOADERS = (_machinery.SourceFileLoader, _machinery.SourcelessFileLoader,
                  _machinery.ExtensionFileLoader)


def nested_codes(code, _type=type, _code=_CODE) -> list:
    """``code`` and every code object nested in it (functions, classes, comprehensions
    defined in it, also inside tuples of constants), read without running anything."""
    found, todo, seen = [], [code], set()
    while todo and len(found) < 100_000:
        item = todo.pop()
        kind = _type(item)
        if kind is _code:
            if id(item) in seen:
                continue
            seen.add(id(item))
            found.append(item)
            todo.extend(item.co_consts)
        elif kind is tuple or kind is frozenset:
            todo.extend(item)
    return found


def grading_identity(registry: dict, handed, modules) -> tuple[dict, dict]:
    """``(open, references)``: code objects of grading code, by identity. Open to student
    code: the public API, what checks hand it (``handed``) and the code nested in grading
    functions (a check program's closures, made while it runs, and the methods of classes it
    defines in them); references: the code of every registered check's reference, nested
    code included. (A checks module imported after install is learnt as it is imported:
    :func:`_learn_module`, :func:`_on_handed`, :func:`_on_check`.)"""
    import importlib
    grade = importlib.import_module(__package__ + ".grade").grade   # the package shadows it
    oracle = importlib.import_module(__package__ + ".oracle")
    open_: dict = {}
    for function in (grade, oracle.drive):
        open_[id(_CODE_OF(function))] = _CODE_OF(function)
    for code in _handed_codes(handed):
        open_[id(code)] = code
    for module in modules:
        for function in _defined_in(module):
            for code in nested_codes(_CODE_OF(function))[1:]:
                open_[id(code)] = code
    references: dict = {}
    for check in list(registry.values()):
        for code in _reference_codes(check.reference):
            references[id(code)] = code
    return open_, references


def _handed_codes(handed) -> list:
    """The code of what checks hand to student code, nested code included."""
    return [code for function in _functions_of(list(handed)) if type(function) is _FUNCTION
            for code in nested_codes(_CODE_OF(function))]


def _reference_codes(reference) -> list:
    """The code of a check's reference, nested code included."""
    return nested_codes(_CODE_OF(reference)) if type(reference) is _FUNCTION else []


def _nested_in_functions(body, _type=type, _code=_CODE) -> list:
    """The code nested in the functions a module body defines and in the methods of the
    classes it defines: what :func:`grading_identity` opens of a module it is given, read
    from the body's code alone (nothing of the module's has run yet)."""
    found, bodies = [], [body]
    while bodies:
        for const in bodies.pop().co_consts:
            if _type(const) is not _code:
                continue
            if const.co_flags & _CO_NEWLOCALS:
                found += nested_codes(const)[1:]
            else:
                bodies.append(const)   # a class body: its methods are functions too
    return found


def _defined_in(module) -> list:
    """The functions a module defines at its top level (also behind a wrapper such as
    ``functools.lru_cache``), and the methods of its classes."""
    namespace = vars(module)
    found = []
    for value in list(namespace.values()):
        if isinstance(value, type) and value.__module__ != module.__name__:
            continue   # an imported class: its code is not this module's
        if type(value) is type(module):
            continue
        found += _functions_of(value, depth=50)
    return [f for f in found if type(f) is _FUNCTION and _GLOBALS_OF(f) is namespace]


# ----------------------------------------------------------------------- what an answer is

def answer_patterns(impl, matcher: dict, grading: tuple = ()) -> set[str]:
    """The dotted patterns an answer *is* made of (see :func:`_functions_of`): a forbidden
    target itself (method-name patterns are about calls), or grading code that is not open to
    student code (``grading``: the grading folders and the open and reference code sets)."""
    found = set()
    for function in _functions_of(impl):
        if type(function) is _FUNCTION:
            code = _CODE_OF(function)
            patterns = match_code(code, matcher)
            if grading and _named_under(code.co_filename, grading[0]) and (
                    id(code) not in grading[1] or id(code) in grading[2]):
                patterns += (GRADING_TARGET,)
        else:
            patterns = match_builtin(function, matcher)
        found |= {p for p in patterns if p[0] != "."}
    return found


def _functions_of(impl, classes=True, depth=2000, _type=type, _dict=dict, _tuple=tuple,
                  _list=list, _str=str, _issubclass=issubclass) -> list:
    """The functions an answer is made of, read without running any of the student's code:
    a function or builtin; a class's effective methods (the first definition along its MRO,
    so an inherited method counts and an overridden one does not); an instance's class, and
    its own attributes; the values of a dict, list or tuple; the function of a bound method,
    a partial, a static or class method, a property; what a method-wrapper or a wrapper
    (``__wrapped__``, an lru_cache) stands for."""
    found: list = []
    todo = [impl]
    seen = 0
    while todo and seen < depth:
        seen += 1
        value = todo.pop()
        kind = _type(value)
        if kind is _FUNCTION or kind is _BUILTIN:
            found.append(value)
        elif kind is _dict:
            todo.extend(_dict.values(value))
        elif kind is _tuple or kind is _list:
            todo.extend(value)
        elif kind is _METHOD:
            todo.append(_FUNC_OF_METHOD(value))
        elif kind is _METHOD_WRAPPER:
            todo.append(_SELF_OF_WRAPPER(value))
        elif kind is staticmethod:
            todo.append(_STATIC_FUNC(value))
        elif kind is classmethod:
            todo.append(_CLASS_FUNC(value))
        elif kind is property:
            todo.extend(part(value) for part in _PROPERTY_PARTS)
        elif kind is _PARTIAL:
            todo.append(_PARTIAL_FUNC(value))
        elif _issubclass(kind, _type):
            if classes:
                todo.extend(_effective_methods(value))
        elif _type(kind) is not _type or _ours_text(_MODULE_OF_TYPE(kind)) != "builtins":
            # An instance: its class's methods (``__call__`` among them) and its own
            # attributes (a wrapper keeps what it wraps there: ``__wrapped__``, ``func``).
            todo.extend(_effective_methods(kind))
            todo.extend(_instance_dict(value).values())
    return found


def _effective_methods(cls, _type=type, _str=str) -> list:
    effective: dict = {}
    for klass in _MRO_OF_TYPE(cls):
        if klass is object:
            continue
        for name, member in _DICT_OF_TYPE(klass).items():
            if _type(name) is _str and name not in effective:
                effective[name] = member
    return [m for m in effective.values() if _type(m) is _FUNCTION or _type(m) is staticmethod
            or _type(m) is classmethod or _type(m) is property or _type(m) is _BUILTIN]


def _instance_dict(value, _type=type) -> dict:
    """``value.__dict__`` through the C descriptor its class was given, never a property of
    the student's: {} when there is none."""
    for klass in _MRO_OF_TYPE(_type(value)):
        member = _DICT_OF_TYPE(klass).get("__dict__")
        if member is not None:
            if _type(member) is _GETSET:
                try:
                    found = member.__get__(value)
                except Exception:  # noqa: BLE001 — a descriptor that raises has no dict to read
                    return {}
                return found if _type(found) is dict else {}
            return {}
    return {}


# ----------------------------------------------------------------------- the installed monitor

# What the installed monitor knows (NOTE [Sealed state]), in an instance of a C type: the
# attributes of a class of this module's can be changed, unaudited, and a __getattribute__ of
# the student's set there would run inside the monitor with the state as ``self`` (red team
# 19); a C type's cannot, nor can an instance of it be given another class.
_State = types.SimpleNamespace
_STATE_FIELDS = (
    "answer_grading",
    "c_infos",
    "c_keep",
    "c_seen",
    "call_sites",
    "covered",
    "current_drive",
    "drive_code",
    "driver",
    "engine",
    "engine_refs",
    "entry",
    "fifo",
    "grading",
    "import_system",
    "info",
    "infos",
    "install_code",
    "is_set",
    "keep",
    "last_open",
    "library",
    "library_bodies",
    "matcher",
    "module_bodies",
    "modules",
    "new_drive",
    "open",
    "ours",
    "own_codes",
    "pattern_sets",
    "private",
    "profile",
    "references",
    "report",
    "resume",
    "specials",
    "stock_imports",
    "student",
    "student_globals",
    "student_threads",
    "walked",
    "write",
)


def install(fifo_path: str, targets: list[dict]) -> None:
    """Open the report pipe, learn what is the grading code's and the targets', then install
    the profile function and the audit hook."""
    fd = os.open(fifo_path, os.O_WRONLY)
    from . import call_sites, engine, oracle, program
    private: dict = {}
    seal = functools.partial(_seal, private=private)
    s = _State(**dict.fromkeys(_STATE_FIELDS))
    s.fifo, s.private, s.install_code = fifo_path, private, install.__code__
    s.write = seal(_write, fd=fd, identity=(os.fstat(fd).st_dev, os.fstat(fd).st_ino))
    s.report = seal(_report, s=s, last={})
    s.matcher = compile_targets(targets)
    s.library = _library_prefixes()
    s.grading = _grading_prefixes()
    s.student, s.infos, s.modules, s.student_globals, s.walked = {}, {}, {}, set(), {}
    s.module_bodies, s.c_infos, s.c_keep, s.c_seen = {}, {}, [], {}
    s.covered, s.pattern_sets = {}, {}
    modules = [m for m in list(sys.modules.values())
               if type(getattr(m, "__file__", None)) is str and _STARTS(m.__file__, s.grading)]
    s.open, s.references = grading_identity(program._REGISTRY, program.handed_objects(),
                                            modules)
    s.answer_grading = (s.grading, s.open, s.references)
    s.drive_code = _CODE_OF(oracle.drive)
    s.specials = {id(_CODE_OF(program.run_program)): RUN_PROGRAM,
                  id(_CODE_OF(oracle.drive)): DRIVE, id(_CODE_OF(program.handed)): HANDED,
                  id(_CODE_OF(program.check)): CHECK}
    s.engine_refs = engine.capture() if s.matcher["engine_checks"] else None
    if s.engine_refs is not None:
        entry = sys.modules["torch.autograd.graph"]._engine_run_backward
        s.specials[id(_CODE_OF(entry))] = ENGINE_ENTRY
        s.engine_refs["watch"] = {n: seal(getattr(engine, n)) for n in
                                  ("start", "stop", "unasked", "dual_level_open")}
    s.engine, s.student_threads = None, {}
    s.driver = _THREAD_ID()   # installed before ipykernel, on the thread that will run cells
    s.new_drive = s.current_drive = None
    switch = _keep_record_function_on(s, seal)
    s.import_system = _import_system(s.library)
    s.stock_imports, s.library_bodies = _stock_imports(), {}
    s.call_sites = {"parsed": {}, "parse": seal(call_sites.parse), "site": seal(call_sites.site)}
    fast = _compiled()
    # What the monitor lets go of is freed after its code has returned (NOTE [Sealed state]);
    # without the compiled module, at once (``id`` does nothing with it: README known limits).
    s.keep = fast.keep if fast is not None else id
    s.info, s.last_open = [0], {}
    on_call = seal(_on_call, s=s)
    on_c_call = seal(_on_c_call, s=s)
    on_return = seal(_on_return, s=s)
    # The code of every function of the monitor, in any module it sealed a function of.
    s.own_codes = frozenset(id(_CODE_OF(f)) for g in private.values()
                            for f in g.values() if type(f) is _FUNCTION)
    signals_set = _watch_signals(s, fast)
    s.profile = profile = seal(_profile, modules=s.modules, on_call=on_call,
                               on_c_call=on_c_call, on_return=on_return, returns=s.walked,
                               c_seen=s.c_seen, infos=s.infos, signals_set=signals_set)
    hook = seal(_hook, s=s, handlers={event: seal(handler)
                                      for event, handler in _HANDLERS.items()})
    guard = _guard(fast)
    # What CPython calls itself: the garbage collector paused (NOTE [Sealed state]).
    s.entry = guard(profile)
    # The monitor's own functions and its state: reading or changing them, or their frames,
    # is refused.
    s.ours = frozenset(id(f) for f in (profile, hook, on_call, on_c_call, on_return, s.write,
                                       s.report, s.entry, switch, s) if f is not None)
    _quiet_own(s)
    s.resume, s.is_set = _set_profile(s, seal, fast)
    # A new thread starts with the Python profile function; the audit hook sets the C one at
    # the thread's first audited event.
    threading.setprofile(s.entry)
    sys.addaudithook(guard(hook))
    s.write("ready", f"{len(targets)} targets")


def _keep_record_function_on(s, seal):
    """Torch's switch of RecordFunction for a thread (``_enable_record_function``), through
    which no profiler sees the engine's nodes, replaced where torch keeps it by a sealed
    function that reports the call and switches nothing (red team 15: switched off through
    a C wrapper, and on again before the check ended). Nothing of torch's calls it; returns
    the replacement, or None without the engine watch."""
    if s.engine_refs is None:
        return None
    import torch
    original = torch._C._autograd._enable_record_function
    switch = seal(_record_function_switched, s=s)
    for module in (torch._C._autograd, torch.autograd):
        if vars(module).get("_enable_record_function") is original:
            setattr(module, "_enable_record_function", switch)
    return switch


def _record_function_switched(enable, *, s):
    s.write("tamper", "switched torch's RecordFunction, which the engine watch reads")


def _import_system(library: tuple[str, ...]) -> tuple:
    """``(codes, find_and_load, builtins, roots, loaders)``: the code objects of the import
    system (by identity: importlib's frozen modules and ``importlib.import_module``), the
    code of ``_find_and_load`` (where every import starts), the real builtins, the entries of
    the import path that are the installation's, longest first (:func:`_package_of`), and
    the import system's own loaders of files."""
    import builtins
    import importlib
    import importlib.machinery
    bootstrap = importlib._bootstrap
    codes = {}
    for module in (bootstrap, importlib._bootstrap_external):
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if type(value) is type else []
            for member in [value, *members]:
                member = getattr(member, "__func__", member)   # a static or class method
                if type(member) is _FUNCTION:
                    for code in nested_codes(_CODE_OF(member)):
                        codes[id(code)] = code
    for code in nested_codes(_CODE_OF(importlib.import_module)):
        codes[id(code)] = code
    roots = tuple(sorted((root for root in _folders(sys.path) if _named_under(root, library)),
                         key=len, reverse=True))
    loaders = (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader)
    return codes, _CODE_OF(bootstrap._find_and_load), vars(builtins), roots, loaders


def _stock_imports() -> tuple:
    """The import system as installed, for :func:`_import_system_is_stock`: ``(straight,
    frames_removed, finders, hooks, cache, fixed, builtins, module_kinds)``. ``straight``:
    by identity, the code of the frames between an ``import`` statement and the body it runs
    (``_find_and_load`` down to ``exec``); ``frames_removed``: the code of the frame that
    runs a body (``_call_with_frames_removed``); ``finders`` and ``hooks``: the entries of
    ``sys.meta_path`` and ``sys.path_hooks``; ``cache``: ``sys.path_importer_cache``'s
    entries; ``fixed``: ``(live mapping, copy)`` of what must not change at all (importlib's
    two modules, their classes and the installed finders' and hooks' classes and
    instances, and the classes of what ``sys.modules`` held); ``builtins``: a copy of the
    builtins; ``module_kinds``: those classes, by id (:func:`_modules_read_plainly`)."""
    import builtins
    import importlib
    bootstrap, external = importlib._bootstrap, importlib._bootstrap_external
    straight = [bootstrap._find_and_load, bootstrap._find_and_load_unlocked,
                bootstrap._load_unlocked, bootstrap._gcd_import, bootstrap._handle_fromlist,
                bootstrap._call_with_frames_removed, external._LoaderBasics.exec_module]
    owners = [value for module in (bootstrap, external) for value in vars(module).values()
              if type(value) is type]
    installed = [*sys.meta_path, *sys.path_hooks,
                 *(finder for finder in sys.path_importer_cache.values()
                   if finder is not None and type(finder) is not external.FileFinder)]
    module_kinds = {id(type(module)): type(module) for module in list(sys.modules.values())
                    if type(module) is not types.ModuleType}
    owners += module_kinds.values()
    for each in installed:
        each = getattr(each, "__self__", each)   # a bound method's class or object
        owners.append(each if type(each) is type else type(each))
    fixed = [(vars(module), dict(vars(module))) for module in (bootstrap, external)]
    for cls in {id(c): c for owner in owners for c in _MRO_OF_TYPE(owner)
                if c is not object}.values():
        fixed.append((_DICT_OF_TYPE(cls), dict(_DICT_OF_TYPE(cls))))
    for each in installed:
        each = getattr(each, "__self__", each)
        if type(each) is not type and _instance_dict(each):
            fixed.append((_instance_dict(each), dict(_instance_dict(each))))
    return ({id(_CODE_OF(f)): _CODE_OF(f) for f in straight},
            _CODE_OF(bootstrap._call_with_frames_removed), tuple(sys.meta_path),
            tuple(sys.path_hooks), dict(sys.path_importer_cache), tuple(fixed),
            dict(vars(builtins)), module_kinds)


def _compiled():
    """The monitor's fast paths in C (``fast_profile.c``), or None where coursekit was built
    without a compiler."""
    try:
        from . import _fast_profile
    except ImportError:
        return None
    return _fast_profile


def _set_profile(s, seal, fast):
    """Set the profile function, with its fast paths in C where they were built
    (``fast_profile.c``; NOTE [Cost]). Return what sets it again, and what says whether it is
    still this thread's: ``sys.getprofile()`` answers the object a profile function was set
    with, which a copy of the compiled module (its own state) can be set with too."""
    if fast is None:   # built without a compiler: the same decisions, in Python alone
        sys.setprofile(s.entry)
        return functools.partial(_SETPROFILE, s.entry), seal(_profile_is_set, profile=s.entry)
    compiled = os.environ.get(PROFILE_ENV) != "python"
    if not compiled:
        sys.setprofile(s.entry)
    # Installed even when not used: once per process, so student code cannot install it.
    fast.install(s.modules, s.c_seen, s.walked, s.infos, s.covered,
                 (LIBRARY, GRADING, OPEN, REFERENCE), _FORK_EXEC, _START_THREAD, s.entry,
                 compiled)
    if compiled:   # what the C fast paths know of drives (NOTE [Cost])
        s.new_drive, s.current_drive = fast.new_drive, fast.current_drive
    return (fast.resume if compiled else functools.partial(_SETPROFILE, s.entry)), fast.is_set


def _watch_signals(s, fast):
    """Have every Python signal handler, now and whenever one is set, delivered as NOTE
    [Signals] says; return what the Python profile function calls after a C function named
    ``signal`` has returned (the compiled one sees _signal.signal's C code itself). Needs the
    compiled module: without it, None (the README's known limits)."""
    if fast is None:
        return None
    fast.watch_signals(_SIGNAL_SET, _SIGNAL_GET, s.own_codes)
    _signal.getsignal = fast.getsignal   # signal.getsignal calls it: the handler as it was set
    return fast.wrap_handlers


def _guard(fast):
    """What wraps a function of the monitor that CPython calls (the audit hook, a Python
    profile function) so that it runs with the garbage collector paused (NOTE [Sealed
    state]): compiled where it was built, else in Python. What it makes is what student code
    can be handed (``sys.getprofile()``, ``threading._profile_hook``), so it leads nowhere:
    the compiled one has no attributes, and the Python one has globals of its own, empty
    (``__globals__`` is read without an audited event), and is one of ``s.ours``."""
    if fast is None:
        return lambda function: _bare(_gc_paused, wrapped=function)
    return fast.guard


def _bare(function, **state):
    """A copy of one of the monitor's functions that student code may be handed (the
    Python guard, where nothing is compiled): globals of its own, empty, so that neither
    ``__globals__`` nor ``f_globals`` (read without an audited event) leads to the monitor's
    private globals. Such a function looks up no global name; ``state`` is its
    keyword-only defaults."""
    copy = _FUNCTION(_CODE_OF(function), {"__builtins__": {}}, function.__name__,
                     function.__defaults__)
    copy.__kwdefaults__ = {**(function.__kwdefaults__ or {}), **state}
    return copy


def _gc_paused(*args, wrapped, _enabled=gc.isenabled, _disable=gc.disable,
               _enable=gc.enable):
    """``wrapped(*args)`` with the garbage collector paused (NOTE [Sealed state]). Python
    3.11 collects when an object is allocated, and nothing is allocated before the pause."""
    collecting = _enabled()
    _disable()
    try:
        return wrapped(*args)
    finally:
        if collecting:
            _enable()


def _profile_is_set(*, profile, _getprofile=_GETPROFILE) -> bool:
    return _getprofile() is profile


def _seal(function, *, private: dict, **state):
    """``function`` bound to a private copy of its module's globals and builtins, with
    ``state`` as its keyword-only defaults (NOTE [Sealed state]): student code can replace
    names in a module or in ``builtins`` later, and the monitor does not see it. Every
    function of that module is copied into the private globals alike, so that what the
    copy calls by name is private too. (``private`` maps a module's globals to its copy.)"""
    module = _GLOBALS_OF(function)
    copy = private.get(id(module))
    if copy is None:
        import builtins
        copy = dict(module)
        copy["__builtins__"] = dict(vars(builtins))
        for name, value in list(copy.items()):
            if type(value) is _FUNCTION and _GLOBALS_OF(value) is module:
                twin = _FUNCTION(_CODE_OF(value), copy, value.__name__, value.__defaults__,
                                 value.__closure__)
                twin.__kwdefaults__ = dict(value.__kwdefaults__ or {})
                copy[name] = twin
        private[id(module)] = copy
    twin = copy[function.__name__]
    if not state:
        return twin
    # State goes where the function takes it: keyword-only defaults, or positional defaults
    # (cheaper to call: the profile function's and the audit hook's).
    code = _CODE_OF(twin)
    positional = code.co_varnames[:code.co_argcount]
    defaults = twin.__defaults__ or ()
    named = positional[len(positional) - len(defaults):]
    defaults = tuple(state.pop(name) if name in state else value
                     for name, value in zip(named, defaults))
    bound = _FUNCTION(code, copy, twin.__name__, defaults)
    bound.__kwdefaults__ = {**(twin.__kwdefaults__ or {}), **state}
    return bound


def _quiet_own(s) -> None:
    """The monitor's own code runs with private globals: quiet for the profile function."""
    for copy in s.private.values():
        s.modules[id(copy)] = (copy, QUIET)


# ----------------------------------------------------------------------- reports

def _write(kind, what, *, fd, identity, _fstat=os.fstat, _write=os.write, _exit=os._exit,
           _now=_NOW, _pid=os.getpid, _quote=_json.encode_basestring_ascii,
           _float=float.__repr__, _int=int.__repr__, _str=str):
    """One report line; a pipe that is no longer the grader's ends the kernel. (No json
    module here: student code could replace its encoder.)"""
    try:
        stat = _fstat(fd)
        if (stat.st_dev, stat.st_ino) != identity:
            _exit(EXIT_CHANNEL_TAMPERED)
        line = ('{"t": ' + _float(_now()) + ', "kind": ' + _quote(_str.__str__(kind))
                + ', "what": ' + _quote(_str.__str__(what)[:300]) + ', "pid": ' + _int(_pid())
                + "}\n")
        _write(fd, line.encode())
    except OSError:
        _exit(EXIT_CHANNEL_TAMPERED)


def _report(what, *, s, last, _now=_NOW, _every=REPORT_S):
    """A call into a target: at most once per REPORT_S for the same line (a training loop
    must not flood the pipe). Whether the line was written now."""
    now = _now()
    if now - last.get(what, -1.0) >= _every:
        if len(last) > 20_000:
            last.clear()
        last[what] = now
        s.write("call", what)
        return True
    return False


# ----------------------------------------------------------------------- the profile function

def _profile(frame, event, arg, modules=None, on_call=None, on_c_call=None, on_return=None,
             returns=None, c_seen=None, fork_exec=_FORK_EXEC, start_thread=_START_THREAD,
             infos=None, signals_set=None, _id=id):
    """Called for every call and return of every thread (NOTE [Cost]): the fast paths are
    one or two dictionary lookups; everything else is a sealed handler. (Its state is in
    positional defaults: keyword-only ones cost a lookup each, at every call.)"""
    if event == "c_return":
        if (signals_set is not None and arg.__class__ is _BUILTIN
                and arg.__name__ == "signal"):   # NOTE [Signals]
            signals_set()
        return
    if event == "c_call":
        seen = c_seen.get(_id(arg))   # a C function known to be no target, nor special
        if seen is arg:
            return
        if arg is fork_exec or arg is start_thread:
            return on_c_call(frame, arg)
        globals_ = frame.f_globals
        known = modules.get(_id(globals_))
        if known is not None and known[0] is globals_ and not known[1] & 2:
            return
        return on_c_call(frame, arg)
    if event == "call":
        globals_ = frame.f_globals
        known = modules.get(_id(globals_))
        if known is not None and known[0] is globals_:
            if not known[1] & 1:
                return
            if _nothing_to_do(frame, infos, returns):
                return
        return on_call(frame)
    if event == "return" and _id(frame) in returns:
        return on_return(frame)


def _nothing_to_do(frame, infos, walked, _library=LIBRARY, _grading=GRADING, _open=OPEN,
                   _reference=REFERENCE, _id=id, _type=type, _tuple=tuple, _str=str) -> bool:
    """A call in a watched module whose module is known, that :func:`_on_call` would only
    learn again, from what the monitor knows already: library code that is no target;
    library code that is a target, called by a frame whose walk found no student code above
    it; grading code called by grading code (or by nothing). Never for code that is special
    or not known. (The same rule is in ``fast_profile.c``: ``nothing_to_do``, which also
    passes over targets reported in the current drive: NOTE [Cost].)"""
    code = frame.f_code
    info = infos.get(_id(code))
    if info is None or info[0] is not code or info[3] is not None:
        return False
    kind = info[1]
    if kind is _library:
        if _type(info[2]) is _tuple and not info[2]:
            return True
        back = frame.f_back
        known = walked.get(_id(back))
        return (known is not None and known[0] is back and _type(known[1]) is _str
                and not known[1])
    if kind is _grading:
        back = frame.f_back
        if back is None:
            return True
        caller = back.f_code
        known = infos.get(_id(caller))
        return (known is not None and known[0] is caller
                and (known[1] is _grading or known[1] is _open or known[1] is _reference))
    return False


def _code_info(code, *, s, _id=id, _type=type, _str=str):
    """What the monitor knows of ``code``: ``(code, kind, patterns, special)``, by identity."""
    known = s.infos.get(_id(code))
    if known is not None and known[0] is code:
        return known
    filename = code.co_filename
    special = s.specials.get(_id(code))
    if _id(code) in s.own_codes:
        info = (code, LIBRARY, (), None)
    elif _id(code) in s.student or not _named_under(filename, s.library):
        info = (code, STUDENT, (), special)
    elif _named_under(filename, s.grading):
        kind = (REFERENCE if _id(code) in s.references else OPEN if _id(code) in s.open
                else GRADING)
        info = (code, kind, (), special)
    else:
        patterns = match_code(code, s.matcher)
        # One tuple per set of patterns: the C fast paths know a covered set by identity.
        patterns = s.pattern_sets.setdefault(patterns, patterns)
        info = (code, LIBRARY, patterns, special)
    if len(s.infos) > 200_000:
        s.keep(dict(s.infos))
        s.infos.clear()
    s.infos[_id(code)] = info
    return info


def _module_kind(frame, info, *, s, _id=id):
    """Learn the kind of the module ``frame`` runs in, from the first code seen there."""
    globals_ = frame.f_globals
    code = info[0]
    kind = CELLS if info[1] is STUDENT or _id(globals_) in s.student_globals else QUIET
    if info[1] is STUDENT:
        s.student_globals.add(_id(globals_))
    if info[1] is not STUDENT and (_STARTS(code.co_filename, s.matcher["files"])
                                   or _STARTS(code.co_filename, s.grading) or info[3]) or info[1] is STUDENT and info[3]:
        kind |= WATCHED
    known = s.modules.get(_id(globals_))
    if known is not None and known[0] is globals_:
        kind |= known[1]
    if len(s.modules) > 50_000:
        s.keep(dict(s.modules))
        s.modules.clear()
    s.modules[_id(globals_)] = (globals_, kind)


def _on_call(frame, *, s, _base=BaseException, _interrupt=KeyboardInterrupt, _id=id):
    """A Python call in a watched (or new) module: the three rules of the module docstring."""
    try:
        info = _code_info(frame.f_code, s=s)
        _module_kind(frame, info, s=s)
        kind, patterns, special = info[1], info[2], info[3]
        if special is not None:
            _SPECIAL_CALLS[special](frame, s)
        if patterns:
            drive = s.current_drive() if s.current_drive is not None else None
            where = _student_above(frame.f_back, s, called=frame)
            if where:
                written = [s.report(pattern + " from " + where) for pattern in patterns]
                if drive is not None and all(written):
                    # Reported in this drive: its check is charged each of them, so calls of
                    # these targets need not be judged again until the next drive (NOTE
                    # [Cost]). Written now, after the drive started: inside its window.
                    s.covered[_id(patterns)] = (patterns, drive)
        elif kind is GRADING:
            where = _nearest_author(frame.f_back, s)
            if where:
                s.report(GRADING_TARGET + " from " + where + " (" + _named(info[0]) + ")")
        elif kind is REFERENCE:
            s.report(GRADING_TARGET + " from (any caller) (" + _named(info[0]) + ")")
    except _base as error:
        _pass_interrupt(error)


def _on_c_call(frame, arg, *, s, _base=BaseException, _FORK=_FORK_EXEC,
               _start=_START_THREAD, _id=id):
    """A C call made from a module where student code runs, or a call of the two C functions
    that start what the audit hook does not see (a program by multiprocessing's spawn, a
    thread)."""
    try:
        if arg is _FORK:
            # multiprocessing's spawn and forkserver start a new interpreter with no audit
            # event, and no monitor in it: not refused, but never unnoticed when student code
            # asked for it (judged as the audit hook judges new programs).
            origin = _origin(frame)
            if origin is None or _code_info(origin.f_code, s=s)[1] is STUDENT:
                s.write("tamper", "started a program the monitor cannot follow "
                                  "(multiprocessing spawn or forkserver)")
            return
        if arg is _start:
            _thread_started(frame, _code_info(frame.f_code, s=s), s)
            return
        globals_ = frame.f_globals
        known = s.modules.get(_id(globals_))
        if known is None or known[0] is not globals_:
            info = _code_info(frame.f_code, s=s)
            _module_kind(frame, info, s=s)
            if info[1] is not STUDENT:
                return
        # A C function counts when student code calls it itself; one that a library calls
        # is reached through the library's Python code, which the call rule watches.
        patterns = _builtin_patterns(arg, s)
        if patterns and _code_info(frame.f_code, s=s)[1] is STUDENT:
            where = _student_above(frame, s)
            for pattern in patterns:
                s.report(pattern + " from " + where)
    except _base as error:
        _pass_interrupt(error)


def _builtin_patterns(function, s, _id=id, _type=type, _module=types.ModuleType):
    """:func:`match_builtin`, kept per function (per module and name for a module's
    functions, per class and name for bound methods, which are made anew at every lookup)."""
    name = function.__name__
    owner = getattr(function, "__self__", None)
    if name not in s.matcher["c_names"] and not s.matcher["c_modules"]:
        if _type(owner) is _module or owner is None:
            s.c_seen[_id(function)] = function
        return ()
    key = (_id(owner) if _type(owner) is _module or owner is None else _id(_type(owner)), name)
    known = s.c_infos.get(key)
    if known is not None:
        return known
    found = match_builtin(function, s.matcher)
    if len(s.c_infos) > 50_000:
        s.keep((dict(s.c_infos), dict(s.c_seen)))
        s.c_infos.clear()
        s.c_seen.clear()
    if _type(owner) is _module or owner is None:
        s.c_keep.append(owner)   # the key's id stays this object's
        if not found:            # a module's function is one object: the fast path knows it
            s.c_seen[_id(function)] = function
    else:
        s.c_keep.append(_type(owner))
    s.c_infos[key] = found
    return found


def _on_return(frame, *, s, _id=id, _base=BaseException):
    """A frame returns (or a generator yields): what was remembered about it goes."""
    try:
        known = s.walked.pop(_id(frame), None)
        if known is not None and known[0] is frame and known[2] is not None:
            known[2](frame, s)
    except _base as error:
        _pass_interrupt(error)


def _pass_interrupt(error, _type=type, _interrupt=KeyboardInterrupt, _main=_INTERRUPT_MAIN):
    """An interrupt that arrived inside the monitor is raised again in the main thread as
    soon as the monitor returns (never from here: see NOTE [Sealed state])."""
    if _type(error) is _interrupt:
        _main()


def _named(code, _str=str) -> str:
    """Grading code as a TA reads it: its module file and qualified name."""
    return (_str.__str__(code.co_filename).rsplit("/", 2)[-1] + ":"
            + _str.__str__(code.co_qualname))


def _thread_started(frame, info, s):
    """``_thread.start_new_thread``: from student code itself, reported (a thread outside
    ``threading`` gets no profile function); through ``threading``, the thread is marked as
    the student's when student code asked for it, and the profile function for new threads
    is put back if it was changed."""
    if info[1] is STUDENT:
        s.write("tamper", "started a thread outside threading")
        return
    if _THREADING_DICT.get("_profile_hook") is not s.entry:
        _THREADING_DICT["_profile_hook"] = s.entry
        s.write("tamper", "threading.setprofile was changed before a thread started")
    if _THREADING_DICT.get("_trace_hook") is not None:
        # threading.settrace: the new thread would set it, from threading's own code.
        _THREADING_DICT["_trace_hook"] = None
        s.write("tamper", "threading.settrace was set before a thread started")
    owner = frame.f_locals.get("self")
    # Walked through module bodies: what a thread runs is never judged against a body again
    # (its stack starts afresh), so one started below a body counts by what is below the
    # body (red team 16: a library's dunder method, called by a chain of C callables, that
    # starts a thread).
    if owner is not None and _student_above(frame, s, bodies=False):
        s.student_threads[id(owner)] = owner
        if s.engine is not None and not s.engine_refs["all_threads"]:
            s.engine["problems"].append("started a thread, where the engine watch cannot follow")


# ----------------------------------------------------------------------- walks up the stack

def _student_above(frame, s, called=None, bodies=True, _id=id, _str=str) -> str:
    """The file of the student code on the stack from ``frame`` up to the grader's request
    ("" when there is none). A thread that student code started is the student's at its
    root. ``called``: the frame whose call is judged (``frame`` is its caller), if any;
    ``bodies``: whether a library module's body can end the walk at all.
    Answers are kept per running frame (a walk deep inside a library would otherwise
    be repeated for every call) and dropped when the frame returns or yields; not those of a
    walk that met a library module's body (NOTE [What a judged body calls])."""
    passed = []
    where = None
    depth = 0
    met_body = False
    while frame is not None and depth < _MAX_DEPTH:
        known = s.walked.get(_id(frame))
        if known is not None and known[0] is frame and known[1] is not None:
            where = known[1]
            break
        info = _code_info(frame.f_code, s=s)
        if info[3] is DRIVE:
            where = ""   # the grader's request: what runs below it is the grader's
            break
        if bodies and _id(info[0]) in s.module_bodies and _imported_for_library(frame, s):
            # A library module's body that the import system runs for library code: what
            # runs below it is the module's doing, if the module's own code called it.
            met_body = True
            if _called_by_their_callers(called, passed, frame, s):
                where = ""
                break
        if info[1] is STUDENT:
            where = _str.__str__(info[0].co_filename)
            break
        passed.append(frame)
        if frame.f_back is None:
            where = _thread_root(frame, s)
            break
        frame = frame.f_back
        depth += 1
    if where is None:
        where = TOO_DEEP if frame is not None else ""
    if met_body or not bodies:
        return where   # an answer for these frames alone (NOTE [What a judged body calls])
    if len(s.walked) > 50_000:
        _forget_walks(s)
    for each in passed:
        known = s.walked.get(_id(each))
        action = known[2] if known is not None and known[0] is each else None
        s.walked[_id(each)] = (each, where, action)
    return where


def _imported_for_library(body, s, _type=type, _str=str, _dict=dict, _get=dict.get) -> bool:
    """Whether the module body running in frame ``body`` is an import that library code
    asked for (torch importing a module lazily), so that what the body does is the
    library's own doing:

    * run by the import system (``_find_and_load`` above it, through the import system's
      frames only), with the real builtins and a plain name;
    * the module the import system would make for that file: the name its path gives, its
      file (``__file__``) and package path (``__path__``) of plain types and in the
      installation, loaded by the import system's own loader (a finder of the student's
      may answer a real file with its own loader, origin or path: red team 13);
    * asked for by an ``import`` statement in a frame that is not the student's, of the same
      package (torch code importing a module of torch's): the name is then a constant of
      the library's code. A library function that imports a name it is handed
      (``importlib.import_module``, ``pkgutil.resolve_name``, an unpickler, torch's
      ``set_default_tensor_type``) imports what the student names.

    The same body run another way (``runpy``, a loader's ``exec_module`` called directly,
    an ``import`` in student code) is walked through like any library frame: the student
    may have planted what it calls (its builtins, its globals, a module it imports, an
    attribute of a module it calls). What is read here when a walk meets the body, a chain
    of C callables can change while the import runs and put back before the forbidden call
    (red team 13b): the body must also have been judged the library's when it started
    (NOTE [A module body judged when it starts]), a verdict kept until a later import finds
    the import system changed."""
    codes, find_and_load, builtins, _, _ = s.import_system
    names = body.f_globals
    judged = s.library_bodies.get(id(names))
    if (judged is None or judged[0] is not names or judged[1] is not body.f_code
            or body.f_builtins is not builtins or _type(names) is not _dict
            or _type(_get(names, "__name__")) is not _str
            or not _made_by_the_import_system(names, body.f_code.co_filename, s)):
        return False
    frame, found, depth = body.f_back, False, 0
    while frame is not None and depth < 100:
        code = frame.f_code
        if codes.get(id(code)) is not code:
            break
        found = found or code is find_and_load
        frame, depth = frame.f_back, depth + 1
    return (found and frame is not None and _code_info(frame.f_code, s=s)[1] is not STUDENT
            and frame.f_code.co_code[frame.f_lasti] == _IMPORT_NAME
            and _package_of(frame.f_code.co_filename, s) == _package_of(body.f_code.co_filename,
                                                                          s) != "")


_IMPORT_NAME = dis.opmap["IMPORT_NAME"]
_LOAD_CONST = dis.opmap["LOAD_CONST"]
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
# What the import system puts in a module's globals before its body runs (``exec`` adds
# ``__builtins__``); anything else was planted by a finder's or a loader's code.
_MODULE_ATTRIBUTES = frozenset(("__name__", "__doc__", "__package__", "__loader__", "__spec__",
                                "__file__", "__cached__", "__path__", "__builtins__"))
_LOADER_ATTRIBUTES = frozenset(("name", "path"))
_FILE_FINDER_ATTRIBUTES = frozenset(("path", "_loaders", "_path_mtime", "_path_cache",
                                     "_relaxed_path_cache"))
# ipykernel sets builtins.input to its own bound method at every cell it runs: not compared
# with the builtins as installed (no library module's body calls it).
_SHELL_BUILTINS = frozenset(("input",))


# NOTE [A module body judged when it starts]
# A library module's body is the library's doing only as the import system runs it for an
# ``import`` statement of its own package (:func:`_imported_for_library`). That is judged when
# the ``exec`` audit event says the body starts, before any of it runs, and the verdict is
# kept for that run (``s.library_bodies``: the module's globals and the body's code): what a
# chain of C callables changes afterwards, and puts back before a forbidden call, cannot turn
# a "no" into a "yes". The body starts as the library's only when
#
# * its globals are what the import system put there, nothing more (a loader's
#   ``create_module`` or a finder could have planted a name the body calls), with the real
#   builtins as installed;
# * the frames above it are the import system's straight path from an ``import`` statement
#   to ``exec`` (no finder's, spec's or loader's code, from which a chain of C callables
#   could import), the statement names this module (or its package, or this module in its
#   from-list), and is in library code of the same package;
# * the import system is as installed (:func:`_import_system_is_stock`): the same finders,
#   path hooks, importlib's classes and functions, no finder or loader of the student's;
# * what an ``import`` statement reads of a module already imported runs no code (a spec's
#   ``_initializing``, read in C, could be a property of C callables);
# * no thread running student code is alive (it could write into the globals meanwhile).
#
# A later import (an ``import`` or ``exec`` event) that finds the import system changed (a
# finder of the student's inserted while a body runs) drops every verdict: a body running
# then may have been written into. Where no student code is above, a verdict changes
# nothing (a walk through the body finds no student code either): the body is the library's
# without the costlier checks (the import system, every module's spec: a few milliseconds).

def _judge_body(code, caller, s) -> None:
    """Judge the library module body ``code`` as ``exec`` starts it (NOTE [A module body
    judged when it starts]); ``caller`` is the frame that called ``exec``."""
    while caller is not None and id(caller.f_code) in s.own_codes:   # the Python guard
        caller = caller.f_back
    args = caller.f_locals.get("args") if (
        caller is not None and caller.f_code is s.stock_imports[1]) else None
    if type(args) is not tuple or len(args) != 2 or args[0] is not code or type(
            args[1]) is not dict:
        # Not the import system running it: a verdict on its code from an earlier run goes.
        for key, judged in list(s.library_bodies.items()):
            if judged[1] is code:
                s.keep(s.library_bodies.pop(key))
        return
    names = args[1]
    above = _student_above(caller, s)
    if above and not _import_system_is_stock(s):
        _forget_library_bodies(s)   # a body running now may have been written into
        return
    requester = _requester(caller.f_back, names, code.co_filename, s)
    if requester is not None and _as_the_import_system_makes_it(names, code, s) and (
            not above or not _student_thread_running(s) and _modules_read_plainly(s)):
        if len(s.library_bodies) > 10_000:
            _forget_library_bodies(s)
        s.library_bodies[id(names)] = (names, code)
    else:
        s.keep(s.library_bodies.pop(id(names), None))


def _forget_library_bodies(s) -> None:
    s.keep(dict(s.library_bodies))
    s.library_bodies.clear()


# NOTE [What a judged body calls]
# A body judged the library's as it starts (NOTE above) still reads, as it runs, objects
# outside its globals that student code may have set before: another module's attribute or
# ``__getattr__``, a ``sys.modules`` entry, a class attribute the class statement calls
# (``__init_subclass__``, a metaclass's global), an entry point. Set to a chain of C
# callables (``functools.partial``, ``map``, ``itertools.starmap``), such an object calls a
# forbidden function with no frame of the student's between it and the body (red team 14).
# What tells the two apart is how the frames below the body were called: library code calls
# a function by its name (``torch.autograd.grad(...)`` loads ``grad``), and CPython 3.11 runs
# a Python function called so in the same loop, leaving the caller inside the call's cache;
# a chain of C callables calls it from C, and its caller frame stands at whatever
# instruction started the chain (``__build_class__``, an ``IMPORT_FROM``, a call of ``next``).
# So a walk stops at such a body only when every frame between the judged call and the body
# was called by its caller's own code (:func:`_called_by_its_caller`, read from the bytecode
# by :mod:`.call_sites`):
#
# * inlined, by a load of its own name (a global, an attribute, a method, a local), or of
#   the name of the function it wraps (a decorator's wrapper: ``functools.wraps``), or by a
#   load this cannot read (a conditional expression among the call's arguments);
# * or through C where the caller's code says what runs: a function nested in the caller's
#   code (a class body, a comprehension), a dunder method (``type.__call__`` runs
#   ``__init__``, an operator its method), a property read by its name, a generator resumed
#   by a ``for`` loop, or a decorator's wrapper calling the function it closed over.
#
# Otherwise the walk goes on through the body, to the student code waiting below it (failing
# closed): an honest answer loses nothing unless a module that library code imports lazily,
# during a check, calls what the check forbids through a C callable of its own. Answers of
# such walks are not kept, since they hold only for the frames below them that were judged.
# Not covered: a closure cell of a library wrapper that the student set to a forbidden
# function, and a planted Python function of the library's called by a library call of the
# same name.

def _called_by_their_callers(called, passed, body, s) -> bool:
    """Whether each of ``called`` (if any), then the frames ``passed`` on the way up, was
    called by the next one's own code, the last by ``body`` (NOTE [What a judged body
    calls])."""
    chain = ([called] if called is not None else []) + passed + [body]
    for index in range(len(chain) - 1):
        if not _called_by_its_caller(chain[index], chain[index + 1], s):
            return False
    return True


def _wraps_the_function_named(frame, name, s, _type=type, _str=str) -> bool:
    """Whether ``frame`` runs a decorator's wrapper around a function called ``name``: a
    function in its closure (its free variables, which the caller does not choose as it
    chooses arguments), or in the closure of a wrapper there, read without running any code
    of an object's (``__wrapped__`` is not read: student code can set it on any function).
    A wrapper that closes over any function of the student's is not the library's own: a
    library decorator handed the student's function (torch's ``context_decorator`` takes a
    context factory) would otherwise pass for a wrapper of whatever name it has (red team
    17)."""
    code = frame.f_code
    names = frame.f_locals
    if _type(names) is not dict:
        return False
    found = [names.get(free) for free in code.co_freevars]
    named = False
    for _ in range(8):
        inner = []
        for value in found:
            if _type(value) is not _FUNCTION:
                continue
            if _code_info(_CODE_OF(value), s=s)[1] is STUDENT:
                return False
            named = named or _str.__str__(_CODE_OF(value).co_name) == name
            for cell in _CLOSURE_OF(value) or ():
                try:
                    inner.append(_CELL_CONTENTS(cell))
                except ValueError:   # an empty cell
                    pass
        found = inner
    # Closures nested deeper than read: not known to hold none of the student's.
    return named and not any(_type(value) is _FUNCTION for value in found)


_NESTING_FLAGS = 0x20 | 0x80 | 0x200   # a generator, a coroutine, an async generator
_NEW_LOCALS = 0x02                      # a function's code (a module's or a class's has none)
_CONSUMERS = frozenset(("next", "list", "tuple", "sorted", "set", "dict", "sum", "any", "all",
                        "enumerate", "zip", "min", "max", "join"))
# Dunder methods that CPython runs for an instruction of the caller's, by instruction (a
# ``CALL`` and a class statement are judged apart, in :func:`_dunder_called_for`).
_DUNDERS_OF = types.MappingProxyType({   # read-only: the sealed copy shares it
    "BINARY_OP": ("__add__", "__and__", "__floordiv__", "__iadd__", "__iand__", "__ifloordiv__", "__ilshift__", "__imatmul__", "__imod__", "__imul__", "__ior__", "__ipow__", "__irshift__", "__isub__", "__itruediv__", "__ixor__", "__lshift__", "__matmul__", "__mod__", "__mul__", "__or__", "__pow__", "__radd__", "__rand__", "__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__", "__rmul__", "__ror__", "__rpow__", "__rrshift__", "__rshift__", "__rsub__", "__rtruediv__", "__rxor__", "__sub__", "__truediv__", "__xor__"),
    "COMPARE_OP": ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"),
    "CONTAINS_OP": ("__contains__",),
    "BINARY_SUBSCR": ("__getitem__", "__class_getitem__", "__missing__"),
    "STORE_SUBSCR": ("__setitem__",), "DELETE_SUBSCR": ("__delitem__",),
    "UNARY_NEGATIVE": ("__neg__",), "UNARY_POSITIVE": ("__pos__",),
    "UNARY_INVERT": ("__invert__",), "UNARY_NOT": ("__bool__", "__len__"),
    "GET_ITER": ("__iter__",), "FOR_ITER": ("__next__",), "BEFORE_WITH": ("__enter__",),
    "LOAD_ATTR": ("__getattr__", "__getattribute__", "__get__"),
    "LOAD_METHOD": ("__getattr__", "__getattribute__", "__get__"),
    "STORE_ATTR": ("__setattr__", "__set__", "__set_name__"),
    "DELETE_ATTR": ("__delattr__", "__delete__"),
    "POP_JUMP_FORWARD_IF_TRUE": ("__bool__", "__len__"),
    "POP_JUMP_FORWARD_IF_FALSE": ("__bool__", "__len__"),
    "FORMAT_VALUE": ("__format__", "__str__", "__repr__"),
})
_CLASS_STATEMENT = ("__init__", "__new__", "__prepare__", "__init_subclass__", "__set_name__",
                    "__mro_entries__")


def _called_by_its_caller(frame, caller, s, _type=type, _str=str, _id=id,
                          _get=dict.get) -> bool:
    """Whether ``caller``'s own code called ``frame``'s code (NOTE [What a judged body
    calls])."""
    code, above = frame.f_code, caller.f_code
    instruction, inlined, load = _site(caller, s)
    for constant in above.co_consts:
        # Nested in the caller's code. A function's nested code is made anew at each call,
        # out of reach; a module body's functions live on in its globals, where a chain of C
        # callables can reach them, so from there only what the body calls itself counts.
        if constant is code and (above.co_flags & _NEW_LOCALS or inlined or load is not None
                                 and load[0] in ("LOAD_BUILD_CLASS", "MAKE_FUNCTION")
                                 or code.co_flags & _NESTING_FLAGS):
            return True
    name = _str.__str__(code.co_name)
    if load is not None and load[1] == name:
        return True   # called by its own name (or a property read by its name)
    if inlined:
        # A Python function called by the caller's own call: by that name, unless it is the
        # wrapper a decorator made of the function of that name (read from its closure), or
        # the name is unknown (a conditional expression among the arguments).
        return load is None or _wraps_the_function_named(frame, load[1], s)
    if name[:2] == "__" == name[-2:]:
        return _dunder_called_for(frame, name, instruction, load)
    if code.co_flags & _NESTING_FLAGS:
        return instruction in ("FOR_ITER", "SEND") or (
            instruction == "CALL" and load is not None and load[1] in _CONSUMERS)
    if instruction == "CALL_FUNCTION_EX" and load is not None and load[0] == "LOAD_DEREF":
        names = caller.f_locals                # a decorator's wrapper: fn(*args, **kwargs)
        value = _get(names, load[1]) if _type(names) is dict else None
        return _type(value) is _FUNCTION and _CODE_OF(value) is code
    return False


def _site(frame, s, _id=id):
    """:func:`.call_sites.site` of ``frame`` where it stands now, its code parsed once."""
    above = frame.f_code
    sites = s.call_sites
    known = sites["parsed"].get(_id(above))
    if known is None or known[0] is not above:
        if len(sites["parsed"]) > 10_000:
            s.keep(dict(sites["parsed"]))
            sites["parsed"].clear()
        known = (above, sites["parse"](above))
        sites["parsed"][_id(above)] = known
    return sites["site"](above, frame.f_lasti, known[1])


def _dunder_called_for(frame, name, instruction, load, _type=type, _str=str,
                       _get=dict.get) -> bool:
    """Whether CPython ran the dunder method ``name`` (``frame``) for the caller's
    instruction: an operator's, a subscript's, an attribute's, a ``with``'s or a ``for``'s
    method; ``__init__``/``__new__`` for a call of a class of that name (in the method's
    class's MRO); a class statement's protocol, on a class. A dunder method called as a plain
    function by a chain of C callables stands at none of these (red team 16)."""
    if name in _DUNDERS_OF.get(instruction, ()):
        return True
    if instruction == "IMPORT_FROM" and name == "__getattr__":   # a module's own __getattr__
        names = frame.f_globals
        own = _get(names, "__getattr__") if _type(names) is dict else None
        return _type(own) is _FUNCTION and _CODE_OF(own) is frame.f_code
    if instruction != "CALL" or load is None or name not in _CLASS_STATEMENT:
        return False
    names = frame.f_locals
    first = _get(names, frame.f_code.co_varnames[0]) if _type(names) is dict and \
        frame.f_code.co_argcount else None
    if load[0] == "LOAD_BUILD_CLASS":
        return name in ("__set_name__", "__mro_entries__") or _is_class(first)
    if name not in ("__init__", "__new__"):
        return False
    cls = first if name == "__new__" else _type(first)
    return _is_class(cls) and any(_str.__str__(_NAME_OF_TYPE(each)) == load[1]
                                  for each in _MRO_OF_TYPE(cls))


def _is_class(value, _type=type) -> bool:
    """Whether ``value`` is a class, read from its type's MRO (no ``__class__`` of its own)."""
    return type in _MRO_OF_TYPE(_type(value))


def _as_the_import_system_makes_it(names, code, s, _type=type, _str=str,
                                   _get=dict.get) -> bool:
    """Whether a module's globals, as its body starts, hold what the import system puts
    there and nothing else, with the real builtins, a stock spec and a stock loader that
    has no attributes of its own but its name and path."""
    for key in names:
        if _type(key) is not _str or key not in _MODULE_ATTRIBUTES:
            return False
    if (_type(_get(names, "__name__")) is not _str
            or _get(names, "__builtins__") is not s.import_system[2]
            or _type(_get(names, "__spec__")) is not _MODULE_SPEC
            or not _made_by_the_import_system(names, code.co_filename, s)):
        return False
    for key in _instance_dict(_get(names, "__loader__")):
        if _type(key) is not _str or key not in _LOADER_ATTRIBUTES:
            return False
    return True


def _import_system_is_stock(s, _type=type, _len=len, _list=list, _dict=dict,
                            _str=str) -> bool:
    """Whether the import system is as installed: ``sys.meta_path`` and ``sys.path_hooks``
    hold only entries they held then; ``sys.path_importer_cache`` holds the finders it held
    then, or the stock path hook's plain ``FileFinder`` for its stock loaders; importlib's
    modules and classes and the installed finders are unchanged (but for their counts); so
    are the builtins, but for the shell's (``_SHELL_BUILTINS``; one taken away is never
    called)."""
    _, _, finders, hooks, cache, fixed, builtins, _ = s.stock_imports
    meta_path, path_hooks, importers = sys.meta_path, sys.path_hooks, sys.path_importer_cache
    if _type(meta_path) is not _list or _type(path_hooks) is not _list or _type(
            importers) is not _dict:
        return False
    for entries, installed in ((meta_path, finders), (path_hooks, hooks)):
        for entry in _list.copy(entries):
            if not any(entry is each for each in installed):
                return False
    for key, finder in _dict.copy(importers).items():
        if _type(key) is not _str or not (
                finder is None or finder is _dict.get(cache, key, cache)
                or _is_stock_file_finder(finder)):
            return False
    for live, then in fixed:
        if _len(live) != _len(then):
            return False
        for key, value in then.items():
            # A number is a count the import system keeps (``_NamespacePath._epoch``).
            if live.get(key, then) is not value and _type(value) is not int:
                return False
    now = s.import_system[2]
    for key, value in builtins.items():
        if now.get(key, value) is not value and key not in _SHELL_BUILTINS:
            return False
    return True


def _is_stock_file_finder(finder, _type=type, _str=str, _tuple=tuple, _list=list,
                          _len=len) -> bool:
    """Whether ``finder`` is what the stock path hook makes: a plain ``FileFinder`` with no
    attributes but its own, whose loaders are the import system's own."""
    if _type(finder) is not _FILE_FINDER:
        return False
    attributes = _instance_dict(finder)
    for key in attributes:
        if _type(key) is not _str or key not in _FILE_FINDER_ATTRIBUTES:
            return False
    loaders = attributes.get("_loaders")
    if _type(loaders) is not _list:
        return False
    for each in _list.copy(loaders):
        if _type(each) is not _tuple or _len(each) != 2 or not any(
                each[1] is loader for loader in _STOCK_LOADERS):   # (suffix, loader)
            return False
    return True


def _modules_read_plainly(s, _type=type, _module=types.ModuleType, _dict=dict,
                          _bool=bool) -> bool:
    """Whether what an ``import`` statement reads of a module already imported runs no code:
    its ``__spec__`` (read in C), from the module's own ``__dict__`` (no class above
    ModuleType that says how its attributes are read, but those that held a module at
    install), a plain ModuleSpec or None, whose ``_initializing`` (read in C too) is a plain
    bool. A spec of the student's could run a chain of C callables under a statement of the
    body judged the library's, writing into its globals (NOTE [A module body judged when it
    starts])."""
    installed = s.stock_imports[7]
    for module in _dict.copy(sys.modules).values():
        kind = _type(module)
        if kind is _module:
            spec = _MODULE_DICT(module).get("__spec__")
        elif installed.get(id(kind)) is kind:   # its class unchanged (_import_system_is_stock)
            spec = _spec_of_installed(module, kind)
        else:
            for cls in _MRO_OF_TYPE(kind):
                attributes = _DICT_OF_TYPE(cls)
                if cls is not object and cls is not _module and (
                        "__getattribute__" in attributes or "__spec__" in attributes):
                    return False
            spec = _instance_dict(module).get("__spec__")
        if spec is None:
            continue
        if _type(spec) is not _MODULE_SPEC or _type(
                _SPEC_DICT(spec).get("_initializing", False)) is not _bool:
            return False
    return True


def _spec_of_installed(module, kind):
    """The ``__spec__`` that a module of a class that held a module at install has: a class
    in ``sys.modules`` (``typing.io``) finds it along its own bases, anything else in its
    ``__dict__``."""
    if not any(cls is type for cls in _MRO_OF_TYPE(kind)):
        return _instance_dict(module).get("__spec__")
    for cls in _MRO_OF_TYPE(module):
        attributes = _DICT_OF_TYPE(cls)
        if "__spec__" in attributes:
            return attributes["__spec__"]
    return None


def _student_thread_running(s) -> bool:
    return any(_is_alive(owner) and _runs_student_code(owner, s)
               for owner in list(s.student_threads.values()))


def _requester(frame, names, filename, s, _type=type, _str=str):
    """The frame of the ``import`` statement that asked for the module of globals ``names``
    and file ``filename``, when the import system's frames from ``frame`` up (``exec``'s
    caller's caller) are its straight path from that statement, in library code of the
    same package, that names the module (NOTE [A module body judged when it starts]); else
    None."""
    straight = s.stock_imports[0]
    find_and_load = s.import_system[1]
    asked = []   # the names _find_and_load was asked for, nearest first
    depth = 0
    while frame is not None and depth < 100 and straight.get(id(frame.f_code)) is frame.f_code:
        if frame.f_code is find_and_load:
            asked.append(frame.f_locals.get("name"))
        frame, depth = frame.f_back, depth + 1
    if frame is None or not asked or s.import_system[0].get(id(frame.f_code)) is frame.f_code:
        return None   # another door of the import system (a finder's call, import_module)
    name = names.get("__name__")
    for each in (name, *asked):
        if _type(each) is not _str:
            return None
    # Only a package's import nests a second _find_and_load in this path: its parent's.
    if not _str.__eq__(asked[0], name) or not all(
            _STARTS(outer, inner + ".") for inner, outer in zip(asked, asked[1:])):
        return None
    if (_code_info(frame.f_code, s=s)[1] is not STUDENT
            and asked[-1] in _imported_by_statement(frame, s)
            and _package_of(frame.f_code.co_filename, s) == _package_of(filename, s) != ""):
        return frame
    return None


def _imported_by_statement(frame, s, _type=type, _str=str, _tuple=tuple) -> tuple:
    """The modules that the ``import`` statement ``frame`` is running may load for itself:
    the name it resolves to (a relative one from the package of the frame's file, not from
    the globals' ``__package__``, which student code may change), and that name's
    submodules its from-list names; () when the frame is not at an ``import``."""
    code = frame.f_code
    body = code.co_code
    at = frame.f_lasti
    if not 0 <= at < len(body) or body[at] != _IMPORT_NAME:
        return ()
    name_index, start = _argument(body, at)
    if start < 4 or body[start - 2] != _LOAD_CONST:
        return ()
    fromlist_index, start = _argument(body, start - 2)
    if start < 2 or body[start - 2] != _LOAD_CONST:
        return ()
    level = code.co_consts[_argument(body, start - 2)[0]]
    name, fromlist = code.co_names[name_index], code.co_consts[fromlist_index]
    if _type(level) is not int or level < 0:
        return ()
    if level:
        module = _module_name_of(code.co_filename, s)
        package = module if code.co_filename.endswith("/__init__.py") else module.rpartition(
            ".")[0]
        parts = package.split(".") if package else []
        if level > len(parts):
            return ()
        base = ".".join(parts[:len(parts) - level + 1])
        name = f"{base}.{name}" if name else base
    if _type(fromlist) is not _tuple:
        return (name,)
    return (name, *(f"{name}.{each}" for each in fromlist if _type(each) is _str))


def _argument(body, at) -> tuple[int, int]:
    """The argument of the instruction whose opcode is at ``at`` in ``body`` (with the
    ``EXTENDED_ARG`` prefixes before it), and the offset where those prefixes start."""
    argument, shift, start = body[at + 1], 8, at
    while start >= 2 and body[start - 2] == _EXTENDED_ARG:
        start -= 2
        argument |= body[start + 1] << shift
        shift += 8
    return argument, start


def _made_by_the_import_system(names, filename, s, _type=type, _str=str, _list=list,
                               _get=dict.get, _missing=object()) -> bool:
    """Whether a module's globals are what the import system puts there for ``filename``:
    its name (from the path), an exact ``str`` file that is the body's, an exact list of
    installation folders as its path (a package), and the import system's own loader."""
    loaders, file = s.import_system[4], _get(names, "__file__")
    if (_type(file) is not _str or _type(filename) is not _str or not _str.__eq__(file, filename)
            or _type(_get(names, "__loader__")) not in loaders
            or _module_name_of(filename, s) != _get(names, "__name__")):
        return False
    cached = _get(names, "__cached__")
    if cached is not None and _type(cached) is not _str:
        return False
    path = _get(names, "__path__", _missing)
    if path is _missing:
        return True
    if _type(path) is not _list:
        return False
    return all(_named_under(entry, s.library) for entry in _list.copy(path))


def _module_name_of(filename, s, _type=type, _str=str) -> str:
    """The dotted name the import system gives an installation file found on the import
    path (``.../site-packages/torch/autograd/__init__.py`` is ``torch.autograd``); "" when
    it is under no entry of the import path."""
    if _type(filename) is not _str or not filename.endswith(".py"):
        return ""
    for root in s.import_system[3]:
        if _STARTS(filename, root):
            parts = filename[len(root):-3].split("/")
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
    return ""


def _package_of(filename, s, _type=type, _str=str) -> str:
    """The top-level package (or module) an installation file belongs to: its first part
    under the import path entry that holds it (``.../site-packages/torch/_dynamo/x.py`` is
    torch's); "" when it is under none."""
    if _type(filename) is not _str:
        return ""
    for root in s.import_system[3]:
        if _STARTS(filename, root):
            first = filename[len(root):].partition("/")[0]
            return first[:-3] if first.endswith(".py") else first
    return ""


def _thread_root(frame, s) -> str:
    """The root frame of a thread: the student's when student code started the thread."""
    if frame.f_code is not _BOOTSTRAP:
        return ""
    owner = frame.f_locals.get("self")
    if owner is not None and s.student_threads.get(id(owner)) is owner:
        return "(a thread your code started)"
    return ""


def _nearest_author(frame, s) -> str:
    """Whose code called grading code: the nearest frame above ``frame`` that is not the
    library's. The student's file when it is student code (or a thread student code
    started), "" when it is grading code or there is none (the library's own doing)."""
    depth = 0
    while frame is not None and depth < _MAX_DEPTH:
        info = _code_info(frame.f_code, s=s)
        if info[1] is STUDENT:
            return str.__str__(info[0].co_filename)
        if info[1] is not LIBRARY:
            return ""
        if frame.f_back is None:
            return _thread_root(frame, s)
        frame = frame.f_back
        depth += 1
    return TOO_DEEP if frame is not None else ""


# ----------------------------------------------------------------------- code the monitor knows

def _on_run_program(frame, s):
    """The check's program starts on the registered answer: report what the answer is."""
    impl = frame.f_locals.get("impl")
    for pattern in sorted(answer_patterns(impl, s.matcher, s.answer_grading)):
        s.write("answer", pattern)


def _on_drive(frame, s):
    """The grader's request: while a check that forbids torch's autograd is driven, watch
    the engine (:mod:`.engine`); the report comes when the request returns."""
    if s.new_drive is not None:
        s.new_drive()
    check = _request_check(frame.f_locals.get("request"))
    refs = s.engine_refs
    if refs is None or check not in s.matcher["engine_checks"]:
        return
    watch = refs["watch"]
    nested = "called the grader's oracle.drive inside the check"
    if _THREAD_ID() != s.driver:
        # The grader drives from the thread that runs cells, alone: a drive from another
        # thread is the student's, and never starts or stops a watch (red teams 19 and 20).
        # During a check, the check is charged for it.
        if s.engine is not None and nested not in s.engine["problems"]:
            s.engine["problems"].append(nested)
        return
    if s.engine is not None:
        if _runs_under(frame, s.engine["frame"]):
            # oracle.drive called again inside the check (it is open to student code): the
            # watch goes on, and the call is the check's business (red team 17).
            if nested not in s.engine["problems"]:   # seen at its call and at its event
                s.engine["problems"].append(nested)
            return
        s.engine = None   # a drive whose return the monitor missed (an interrupt)
        watch["stop"](refs)
    problems = [] if watch["start"](refs) else ["could not be watched (a profiler was running)"]
    if watch["dual_level_open"](refs):
        problems.append(DUAL_LEVEL_OPEN)
    if not refs["all_threads"]:   # a session of the driving thread only: fail closed
        problems += ["a thread running your code was running"
                     for owner in s.student_threads.values()
                     if _is_alive(owner) and _runs_student_code(owner, s)][:1]
    s.engine = {"frame": frame, "windows": [], "problems": problems, "thread": _THREAD_ID()}
    _remember_return(frame, _end_drive, s)


def _on_drive_event(event, args, caller, from_student, s):
    """``oracle.drive``'s first line raises this event, so that a profile function switched
    off before the drive is back (the hook puts it back at any event) before the check's
    program runs; when it was off as the drive was called, the engine watch starts now."""
    if from_student or caller.f_code is not s.drive_code:
        return
    if s.new_drive is not None:
        s.new_drive()
    if s.engine is None or s.engine["frame"] is not caller:
        _on_drive(caller, s)


# Forward mode runs no node of the engine, and needs a dual level, which torch keeps for the
# whole process: one open as the check starts or ends was entered for the answer (in an
# earlier cell, say) whatever way it was entered (red team 19).
DUAL_LEVEL_OPEN = "had a forward-mode AD level open (forward mode gives gradients too)"


def _runs_under(frame, outer, _limit=_MAX_DEPTH) -> bool:
    """Whether ``outer`` is ``frame`` or a frame it was called under (still running)."""
    depth = 0
    while frame is not None and depth < _limit:
        if frame is outer:
            return True
        frame = frame.f_back
        depth += 1
    return False


def _end_drive(frame, s):
    if s.engine is None or s.engine["frame"] is not frame:
        return   # not the drive being watched (a watch already ended and reported)
    state, s.engine = s.engine, None
    refs = s.engine_refs
    events = refs["watch"]["stop"](refs)
    problems = state["problems"]
    if refs["watch"]["dual_level_open"](refs) and DUAL_LEVEL_OPEN not in problems:
        problems.append(DUAL_LEVEL_OPEN)
    if events is None:
        problems.append("stopped or replaced the engine watch (a torch profiler started "
                        "during the check does this: torch runs one at a time)")
    else:
        problems += refs["watch"]["unasked"](events, state["windows"])
    for problem in problems:
        s.write("engine", problem)


def _on_engine_entry(frame, s):
    """``torch.autograd.graph._engine_run_backward``, the engine's one Python door: a request
    of the check's own opens a window (see :mod:`.engine`); the student's is a target call.
    A walk that meets a module body the library imports stops there only when every frame
    below it was called by its caller's own code (NOTE [What a judged body calls])."""
    if s.engine is None or _THREAD_ID() != s.engine["thread"] or _student_above(
            frame.f_back, s, called=frame):
        return   # a window is the driving thread's: another's nodes are charged anyway
    refs = s.engine_refs
    window = [_NOW_NS(), 0, refs["sequence_nr"]()]
    s.engine["windows"].append(window)
    _remember_return(frame, lambda _frame, _s, w=window: w.__setitem__(1, _NOW_NS()), s)


def _remember_return(frame, action, s):
    known = s.walked.get(id(frame))
    where = known[1] if known is not None and known[0] is frame else None
    s.walked[id(frame)] = (frame, where, action)


def _on_handed(frame, s):
    """``program.handed(obj)`` at the top level of a checks module imported after install:
    ``obj`` is open to student code, as what was handed before install is."""
    if _importing(frame.f_back, s):
        _learn(_handed_codes([frame.f_locals.get("obj")]), s.open, s)


def _on_check(frame, s):
    """``program.check(name, reference=...)`` at the top level of a checks module imported
    after install: the reference is known as a reference, as those registered before are."""
    if _importing(frame.f_back, s):
        _learn(_reference_codes(frame.f_locals.get("reference")), s.references, s)


def _importing(frame, s, _id=id) -> bool:
    """Whether ``frame`` runs the body of a grading module being imported."""
    if frame is None:
        return False
    code = frame.f_code
    return s.module_bodies.get(_id(code)) is code and _named_under(code.co_filename, s.grading)


def _learn(codes, known: dict, s) -> None:
    for code in codes:
        known[id(code)] = code
        s.infos.pop(id(code), None)


_SPECIAL_CALLS = {RUN_PROGRAM: _on_run_program, DRIVE: _on_drive,
                  ENGINE_ENTRY: _on_engine_entry, HANDED: _on_handed, CHECK: _on_check}


def _request_check(request, _type=type, _str=str, _scan=_json.scanstring) -> str:
    """The check name in the grader's request (a JSON object), read without the json
    module: ``"check": "<name>"``."""
    if _type(request) is not _str:
        return ""
    at = _str.find(request, '"check": "')
    if at < 0:
        return ""
    try:
        return _scan(request, at + 10)[0]
    except ValueError:
        return ""


def _runs_student_code(thread, s) -> bool:
    """Whether a thread runs student code of its own: its target, or its class's ``run``,
    whatever wraps them (a partial, a bound method, an object of the student's: the functions
    they are made of, read without running any of the student's code)."""
    target = _instance_dict(thread).get("_target")
    run = _DICT_OF_TYPE(type(thread)).get("run") if type(thread) is not threading.Thread \
        else None
    return any(type(f) is _FUNCTION and _code_info(_CODE_OF(f), s=s)[1] is STUDENT
               for f in _functions_of([f for f in (target, run) if f is not None]))


def _is_alive(thread) -> bool:
    """Whether a thread still runs, read without running any of the student's code (it may
    be a subclass of theirs): its ``_tstate_lock`` is held while it runs."""
    lock = _instance_dict(thread).get("_tstate_lock")
    return type(lock) is _LOCK and _LOCKED(lock)


# ----------------------------------------------------------------------- the audit hook

def _hook(event, args, s=None, handlers=None, _getframe=_GETFRAME):
    """The audit hook: one sealed handler per event (``handlers``, from :data:`_HANDLERS`)."""
    if event == "object.__getattr__":   # the most frequent event: a frame's code read, say
        if id(args[0]) in s.ours or (type(args[1]) is str and args[1] == "tb_frame"):
            _on_getattr(args, s)
        return
    if event == "sys._getframe" or event == "builtins.id":
        return
    try:
        caller = _getframe(1)
    except ValueError:   # raised by C with no Python frame at all (a native thread)
        return
    handler = handlers.get(event)
    if handler is None:
        for prefix in _PREFIXED:
            if _STARTS(event, prefix):
                handler = handlers.get(prefix)
                break
    from_student = _code_info(caller.f_code, s=s)[1] is STUDENT
    if _STARTS(event, _BY_ORIGIN):
        # subprocess, os and ctypes frames raise these: judge by who asked for them.
        origin = _origin(caller)
        from_student = origin is None or _code_info(origin.f_code, s=s)[1] is STUDENT
    elif not from_student and _STARTS(event, _INSPECTING):
        from_student = _handed_by_the_student(caller, event, s)
    if event != "sys.setprofile" and not s.is_set():
        # An interrupt inside the profile function switches it off: put it back (and a
        # thread's Python one becomes the C one). Returns it missed may have left walks of
        # frames that no longer run as they did.
        _forget_walks(s)
        s.resume()
    if from_student and _STARTS(event, _REFUSED_FROM_STUDENT):
        s.write("tamper", f"{event} from student code")
        raise RuntimeError(f"coursekit: {event} is not allowed while grading")
    if handler is not None:
        handler(event, args, caller, from_student, s)


_PREFIXED = ("ctypes.", "os.exec", "os.spawn", "os.posix_spawn")


def _handed_by_the_student(caller, event, s) -> bool:
    """Whether library code ``caller`` raised ``event`` (one of :data:`_INSPECTING`) for
    student code: its own code does not call that function by its name (``gc.get_objects()``
    loads ``get_objects``), so it calls what it was handed (``tree_map(gc.get_objects, ...)``,
    a chain of C callables that a module body runs), and student code is above it, walked
    through library module bodies too (red team 17)."""
    instruction, inlined, load = _site(caller, s)
    if (event not in _HANDS_A_FUNCTION and instruction == "CALL" and not inlined
            and load is not None
            and load[0] in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL")   # not an argument
            and load[1] == event.rsplit(".", 1)[1]):
        return False
    return _student_above(caller, s, bodies=False) != ""
_FRAME_READS = ("tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back")


def _on_getattr(args, s, _getframe=_GETFRAME):
    """Reads of the monitor's functions (their defaults hold its state) are refused; so are
    reads that would hand student code a frame of the monitor (a traceback through the audit
    hook's refusal), whose locals and globals are its state. The monitor's own reads pass.
    (The monitor's other functions are reachable only through those: see NOTE [Sealed
    state].)"""
    target = args[0]
    if id(target) in s.ours:
        s.write("tamper", f"touched the grading monitor ({_text(args[1])[:40]})")
        raise RuntimeError("coursekit: the grading monitor cannot be changed")
    reader = _getframe(2)
    if id(reader.f_code) in s.own_codes:
        return
    if id(_TB_FRAME(target).f_code) in s.own_codes and _student_above(reader, s):
        s.write("tamper", "read a frame of the grading monitor")
        raise RuntimeError("coursekit: the grading monitor's frames cannot be read")


def _on_setattr(event, args, caller, from_student, s):
    target = args[0]
    if id(target) in s.ours:
        s.write("tamper", f"touched the grading monitor ({_text(args[1])[:40]})")
        raise RuntimeError("coursekit: the grading monitor cannot be changed")
    if type(target) is _FUNCTION and type(args[1]) is str and args[1] == "__code__":
        if from_student:
            s.write("tamper", "replaced a function's code")
            raise RuntimeError("coursekit: a function's code cannot be replaced while grading")
        if event == "object.__setattr__" and type(args[2]) is _CODE:
            _adopt(args[2], s, _GLOBALS_OF(target))


def _on_setprofile(event, args, caller, from_student, s):
    code = caller.f_code
    if id(code) in s.own_codes or code is s.install_code or code is _BOOTSTRAP_INNER:
        return
    # Python also switches a profile function off when an exception escapes it (an
    # interrupt, a MemoryError): then the frame is not calling anything. A call of
    # sys.setprofile is refused; the other case is let through, logged, and the profile
    # function is put back at the next audited event.
    if _calling(caller):
        s.write("refused", "sys.setprofile from student code" if from_student
                else "sys.setprofile")
        raise RuntimeError("coursekit: profile functions cannot be changed while grading")
    s.write("profile off", "an exception left the profile function")


def _on_open(event, args, caller, from_student, s):
    path = _text(args[0]) if len(args) else ""
    if path == s.fifo or path.startswith(("/proc/self/fd", "/dev/fd/")) or (
            path.startswith("/proc/") and path.endswith("/mem")):
        s.write("tamper", f"opened {path[:80]}")
        raise PermissionError(f"coursekit: {path} cannot be opened while grading")
    # Per thread: the import system opens a .pyc and unmarshals it in the same thread, and
    # another thread's open in between (a subprocess's pipes, opened by fd) is not what
    # that thread loads.
    if len(s.last_open) > 10_000:
        s.last_open.clear()
    s.last_open[_THREAD_ID()] = path
    if from_student:
        _info(s, "open", path[:200])


def _on_compile(event, args, caller, from_student, s):
    kind = type(args[1]) if len(args) > 1 else None
    if len(args) > 1 and not (kind is str or kind is bytes or args[1] is None):
        s.write("tamper", f"made code whose file name is a {_text(type(args[1]))}")
        raise RuntimeError("coursekit: a code object's file name must be a plain string")
    filename = _text(args[1]) if len(args) > 1 else ""
    if event == "code.__new__":
        if from_student and _named_under(filename, s.library):
            s.write("tamper", f"made code that claims to be {filename[:80]}")
            raise RuntimeError("coursekit: code cannot claim a library file name")
        return
    if _named_under(filename, s.library) and not _is_file_text(args[0], filename):
        s.write("tamper", f"compiled code under the name {filename[:80]}")
        raise RuntimeError("coursekit: code cannot claim a library file name")
    if from_student:
        _info(s, "dynamic code", filename[:120])


def _on_exec(event, args, caller, from_student, s):
    """Code about to run: the student's unless it is an installation file's (loaded by the
    import system; code claiming such a name is refused when it is made)."""
    code = args[0] if len(args) else None
    if type(code) is not _CODE:
        return
    library = _named_under(code.co_filename, s.library)
    if library and from_student:
        s.write("tamper", "ran library code with globals of its own")
        raise RuntimeError("coursekit: library code cannot be exec'd while grading")
    if library and not _is_file_code(code):
        # Code compiled from a syntax tree raises no audit event, so it can take any name:
        # run as a module body (``runpy._run_code``), it is the student's, not the library's.
        s.write("tamper", f"ran code under the name {code.co_filename[:80]} that is not "
                          "that file's code")
        library = False
    if library:
        s.module_bodies[id(code)] = code   # a library module being imported (see the walk)
        _judge_body(code, caller, s)
        if _named_under(code.co_filename, s.grading):
            _learn_module(code, s)
    else:
        _adopt(code, s)


def _learn_module(body, s) -> None:
    """A grading module imported after install (a checks module no preload imported): the
    code nested in its functions is open to student code, as for the modules imported
    before (:func:`grading_identity`); what it hands over and its references are learnt as
    its top level says so (:func:`_on_handed`, :func:`_on_check`)."""
    _learn(_nested_in_functions(body), s.open, s)


def _on_function_new(event, args, caller, from_student, s):
    """A function made from a code object: the student's unless the code is a function of
    the installation file it names (code compiled from a syntax tree may take any name)."""
    code = args[0] if len(args) else None
    if type(code) is not _CODE:
        return
    if _named_under(code.co_filename, s.library) and not _is_file_code(code, nested=True):
        s.write("tamper", f"made a function under the name {code.co_filename[:80]} that is "
                          "not that file's code")
    elif _named_under(code.co_filename, s.library):
        return
    _adopt(code, s)


def _on_marshal(event, args, caller, from_student, s):
    opened = s.last_open.get(_THREAD_ID(), "")
    if from_student or not _named_under(opened, s.library):
        s.write("tamper", f"loaded compiled code ({opened[:80] or 'from bytes'})")
        raise RuntimeError("coursekit: compiled code from outside the Python installation "
                           "cannot be loaded while grading")


def _on_unpickle(event, args, caller, from_student, s):
    name = f"{_text(args[0])}.{_text(args[1])}"[:120]
    if name.startswith(GRADING_TARGET) or (from_student and name.startswith(
            ("os.", "posix.", "subprocess.", "builtins.", "sys.", "ctypes.", "importlib."))):
        s.write("tamper", f"unpickled {name}")
        raise RuntimeError("coursekit: unpickling this is not allowed while grading")
    if from_student:
        _info(s, "unpickle", name)


def _on_import(event, args, caller, from_student, s):
    # A finder of the student's put in while a library module's body runs may write into it
    # (NOTE [A module body judged when it starts]); only where student code is above can a
    # verdict matter.
    if s.library_bodies and _student_above(caller, s) and not _import_system_is_stock(s):
        _forget_library_bodies(s)
    if from_student:
        _info(s, "import", _text(args[0])[:120])


# One handler per audit event (``_hook`` finds it; events not here need none but the rules
# above the table: refused from student code, the profile function put back).
_HANDLERS = {"object.__setattr__": _on_setattr, "object.__delattr__": _on_setattr,
             "sys.setprofile": _on_setprofile, "open": _on_open, "compile": _on_compile,
             "code.__new__": _on_compile, "exec": _on_exec, "function.__new__": _on_function_new,
             "marshal.loads": _on_marshal, "marshal.load": _on_marshal,
             "pickle.find_class": _on_unpickle, "import": _on_import,
             DRIVE_EVENT: _on_drive_event}


def _adopt(code, s, globals_=None):
    """``code`` and the code nested in it are the student's from now on (NOTE [Who wrote a
    code object]). What the profile function learnt about modules is forgotten, so that the
    module this code will run in is learnt again from it."""
    for each in nested_codes(code):
        if id(each) not in s.student:
            s.student[id(each)] = each
            s.infos.pop(id(each), None)
    if globals_ is not None:
        s.student_globals.add(id(globals_))
    s.keep(dict(s.modules))
    s.modules.clear()
    _quiet_own(s)


def _forget_walks(s) -> None:
    """Drop every remembered walk (not the actions waiting for a frame's return)."""
    for key, known in list(s.walked.items()):
        if known[2] is None:
            s.keep(s.walked.pop(key))


def _info(s, kind, what):
    if s.info[0] < _INFO_LIMIT:
        s.info[0] += 1
        s.write(kind, what)


# ----------------------------------------------------------------------- small helpers

_CALL_OPCODES = frozenset(dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX", "PRECALL")
                          if name in dis.opmap)


def _calling(frame, _ops=_CALL_OPCODES, _len=len) -> bool:
    """Whether ``frame`` is calling something (its current instruction is a call)."""
    index = frame.f_lasti
    code = frame.f_code.co_code
    return 0 <= index < _len(code) and code[index] in _ops


_STDLIB = os.path.dirname(os.__file__) + "/"


def _package_folders(names: tuple[str, ...]) -> tuple[str, ...]:
    """The folders of installed packages, found without importing them."""
    import importlib.util
    folders = []
    for name in names:
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            folders += [os.path.abspath(folder) + "/", os.path.realpath(folder) + "/"]
    return tuple(folders)


# A shell escape (`!cmd`, `%%bash`, `get_ipython().system`) starts a program for whoever
# typed it: these packages' frames are passed over when asking who wanted a program.
_SHELL = _package_folders(("IPython", "ipykernel", "pexpect", "ptyprocess"))


def _origin(frame, _stdlib=_STDLIB, _shell=_SHELL, _starts=_STARTS):
    """Who really asked for what ``subprocess`` or ``os`` is doing: the first frame above
    ``frame`` that is neither the standard library's nor the shell's, or None when there is
    none. None counts as the student: a thread whose target is a standard-library function
    (``Thread(target=subprocess.run)``, an executor, the loop thread of a cell magic) has
    nobody else's code on its stack, and some code of the student's started it."""
    depth = 0
    while frame is not None and depth < 100:
        name = frame.f_code.co_filename
        stdlib = (_named_under(name, _stdlib) and "site-packages" not in name) or _starts(
            name, "<frozen ") or _named_under(name, _shell)
        if not stdlib:
            return frame
        frame = frame.f_back
        depth += 1
    return None


def _named_under(filename, prefixes, _type=type, _str=str) -> bool:
    """Whether ``filename`` names a file under one of the folders ``prefixes``: a plain
    string that starts with one of them and has no ``.`` or ``..`` part and no doubled
    slash, which could climb out of that folder into the student's
    (``/usr/lib/python3.11/../../home/student/x.py``)."""
    return (_type(filename) is _str and _STARTS(filename, prefixes) and "/../" not in filename
            and "/./" not in filename and "//" not in filename)


def _ours_text(value, _type=type, _str=str):
    """``value`` if it is a plain ``str``, else "": compared without running its code."""
    return value if _type(value) is _str else ""


def _text(value, _type=type, _str=str, _bytes=bytes) -> str:
    """``value`` as text without running any of its code (it may be the student's object)."""
    kind = _type(value)
    if kind is _str:
        return value
    if kind is _bytes:
        return value.decode("utf-8", "replace")
    return f"<{kind.__name__}>" if _type(kind) is type else "<object>"


def _owner(function, _type=type, _module_of=_MODULE_OF_TYPE, _getattr=getattr, _str=str,
           _error=Exception) -> str:
    """The module a builtin belongs to: its own, or its bound object's type's (read through
    ``type``'s own descriptor, so a student's metaclass cannot run code here)."""
    module = function.__module__ if _type(function).__name__ == "builtin_function_or_method" \
        else None
    if _type(module) is _str:
        return module
    owner = _getattr(function, "__self__", None)
    if owner is None:
        return ""
    kind = owner if _type(owner) is _type else _type(owner)
    try:
        module = _module_of(kind)
    except _error:
        return ""
    return module if _type(module) is _str else ""


def _is_file_code(code, nested=False, _equal=_CODE.__eq__) -> bool:
    """Whether ``code`` is the code of the file it names (what the import system runs as a
    module body), or with ``nested`` a code object nested in it (a function of that file).
    Code objects are compared without their file names."""
    for body in _file_codes(code.co_filename):
        for each in (nested_codes(body) if nested else (body,)):
            if _equal(code, each) is True:
                return True
    return False


def _file_codes(filename, _loads=_LOADS, _ends=str.endswith):
    """The code of the file ``filename``: from its cached bytecode, then from its text."""
    if not (_ends(filename, ".py") and _STARTS(filename, "/")):
        return
    folder, _, name = filename.rpartition("/")
    try:
        with open(f"{folder}/__pycache__/{name[:-3]}{_PYC_SUFFIX}", "rb") as handle:
            cached = _loads(handle.read()[16:])   # after the pyc header
    except Exception:  # noqa: BLE001 — no cache, or a broken one: the text is next
        cached = None
    if type(cached) is _CODE:
        yield cached
    try:
        with open(filename, "rb") as handle:
            text = handle.read()
        compiled = compile(text, filename, "exec", dont_inherit=True)
    except Exception:  # noqa: BLE001 — unreadable or not Python: no code of that file
        return
    yield compiled


def _is_file_text(source, filename: str) -> bool:
    """Whether ``source`` is the text of ``filename`` on disk (the import system compiling a
    library module that has no cached bytecode), not other code under its name."""
    if not (type(source) is str or type(source) is bytes) or not filename.startswith("/"):
        return False   # a relative name ("<frozen x>") would read the student's own folder
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data == (source.encode() if type(source) is str else source)
