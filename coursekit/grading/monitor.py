"""The grading monitor: what really runs in a grading kernel, reported to the grader.

Installed by :mod:`coursekit.grading.kernel` before ipykernel starts, so before any student
code. Two parts, both out of the student's reach once installed:

* a PEP 578 **audit hook** (``sys.addaudithook``). Python has no way to remove one. It refuses
  the escape hatches that could defeat the rest (ctypes from student code, walking the
  interpreter's objects with ``gc``, replacing the profile function, reading or changing this
  module's functions, code objects that pretend to live in the Python installation, compiled
  files from outside it, unpickling grader code, new programs) and records dynamic code,
  imports, unpickling and opened files for the TA;
* a **profile function** (``sys.setprofile``, and ``threading.setprofile`` for every thread
  started later) that sees each call into the lab's forbidden targets (``forbid=`` of its
  checks, plus the grading code itself) and reports it when student code is on the stack above
  it. Calls made by the check program on its own (between the grader's request and the
  student's code) are not reported.

Reports go, one JSON line each with a CLOCK_MONOTONIC timestamp, into a pipe the grader opened
before the kernel started. The grader knows when it drove which check, so it charges a call into
``torch.autograd`` to the check that was running at that moment, and ignores the same call made
by an exercise that may use it. Nothing here decides a grade; it only tells the grader what ran.

What state the monitor keeps lives in default arguments of its functions, which Python only
lets code read or change through audited attribute access, and that is refused. A monitor in
the same process cannot survive everything (see the threat model in the README): this one is
built so that each way around it is refused, reported, or kills the kernel (a replaced pipe).
"""
from __future__ import annotations

import dis
import functools
import json
import os
import sys
import threading
import time

FIFO_ENV = "COURSEKIT_MONITOR_FIFO"
TARGETS_ENV = "COURSEKIT_MONITOR_TARGETS"
LIBRARY_ENV = "COURSEKIT_MONITOR_LIBRARY"  # more folders of trusted code: a course's checks
GRADING_TARGET = "coursekit.grading"   # always forbidden to student code while a check runs
EXIT_CHANNEL_TAMPERED = 86

# Audit events refused when student code makes them (see the module docstring).
_REFUSED_FROM_STUDENT = (
    "ctypes.", "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "pty.spawn",
    "os.fork", "os.forkpty", "_thread.start_new_thread",
)
_FORK_EXEC = getattr(sys.modules.get("_posixsubprocess") or __import__("_posixsubprocess"),
                     "fork_exec", None)
_INFO_LIMIT = 400   # informational lines per kernel: the TA's log, not a flood
_STARTS = str.startswith  # never a str subclass's own startswith (see student_above)
# A forked process inherits the hook, the profile function and the pipe: it is watched. Still,
# only library code forks (DataLoader workers, coursekit.distributed's ranks): student code that
# forks is refused, like every other way of starting a process.
_SPAWNING = ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
             "pty.spawn", "os.fork", "os.forkpty")
# The same forbidden call from the same student file is reported at most once per REPORT_S:
# a training loop must not flood the pipe. The grader leaves a gap longer than this before
# and after every check it drives, so the first such call inside a check is always reported.
REPORT_S = 0.005


def install_from_env() -> bool:
    """Install the monitor if the grader asked for it (``COURSEKIT_MONITOR_FIFO``)."""
    path = os.environ.get(FIFO_ENV)
    if not path:
        return False
    targets = json.loads(os.environ.get(TARGETS_ENV, "[]"))
    install(path, targets)
    return True


def _library_prefixes() -> tuple[str, ...]:
    """Folders of trusted code: the Python installation, the environment's packages, the
    coursekit package and the course's own checks (``COURSEKIT_MONITOR_LIBRARY``). An
    editable install's checkout is not trusted as a whole: it may hold student-like files."""
    import coursekit
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.abspath(coursekit.__file__))}
    roots |= {p for p in sys.path if p and "site-packages" in p}
    roots |= {p for p in os.environ.get(LIBRARY_ENV, "").split(os.pathsep) if p}
    prefixes = {path.rstrip("/") + "/" for root in roots
                for path in (os.path.abspath(root), os.path.realpath(root))}
    return tuple(sorted(prefixes)) + ("<frozen ",)


def _scaffolding_prefixes() -> tuple[str, ...]:
    """Folders of the checks' own code: coursekit's check programs and a course's own."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checks")
    roots = {folder} | {p for p in os.environ.get(LIBRARY_ENV, "").split(os.pathsep) if p}
    return tuple(sorted({path.rstrip("/") + "/" for root in roots
                         for path in (os.path.abspath(root), os.path.realpath(root))}))


def install(fifo_path: str, targets: list[dict]) -> None:
    """Open the report pipe, then install the profile function and the audit hook."""
    fd = os.open(fifo_path, os.O_WRONLY)
    identity = (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
    library = _library_prefixes()
    from . import oracle, program
    drive_code = oracle.drive.__code__
    run_code = program.run_program.__code__
    start_code = threading.Thread.start.__code__
    own_file = os.path.abspath(__file__)

    compiled = compile_targets(targets)
    py_targets, py_prefixes, c_names, c_owned, c_modules = compiled
    sealed = _sealed_helpers()

    def write(kind, what, _fd=fd, _identity=identity, _write=os.write, _fstat=os.fstat,
              _exit=os._exit, _now=time.monotonic, _dumps=json.dumps, _pid=os.getpid):
        """One report line; a pipe that is no longer the grader's ends the kernel."""
        try:
            stat = _fstat(_fd)
            if (stat.st_dev, stat.st_ino) != _identity:
                _exit(EXIT_CHANNEL_TAMPERED)
            _write(_fd, (_dumps({"t": _now(), "kind": kind, "what": what[:300], "pid": _pid()})
                         + "\n").encode())
        except OSError:
            _exit(EXIT_CHANNEL_TAMPERED)

    scaffolding = _scaffolding_prefixes()
    # Walks of frames still running: id -> (frame, its caller, the walk's answer). A target
    # call deep inside a library (JAX tracing, TorchScript) would otherwise walk the same
    # dozens of frames again for every call, reading each frame's code (an audited, costly
    # read): that walk was most of the monitor's cost on lab08. A frame's walk cannot change
    # while it runs, so it is kept until the frame returns (the profile function's "return"
    # event, also sent for a generator's yield and an exception), and all of it is dropped
    # when the profile function was off and may have missed a return.
    walked: dict = {}

    def student_above(frame, _drive=drive_code, _library=library, _starts=_STARTS, _str=str,
                      _scaffolding=scaffolding, _walked=walked, _id=id, _len=len):
        """The file of the student code on the stack from ``frame`` up to the grader's request
        ("" when there is none). File names are read as plain ``str``: a code object's file
        name can be a str subclass that answers anything."""
        depth = 0
        passed = []
        where = None
        while frame is not None and depth < 400:
            known = _walked.get(_id(frame))
            if known is not None and known[0] is frame and known[1] is frame.f_back:
                where = known[2]
                break
            code = frame.f_code
            if code is _drive:
                where = ""
                break
            if not _starts(code.co_filename, _library):
                where = _str.__str__(code.co_filename)
                break
            if code.co_name == "<module>":  # a library module being imported: its own doing
                where = ""
                break
            if _starts(code.co_filename, _scaffolding):
                # The check's own code (a dataset, a test function) that the student's code
                # calls back: what it does is the check's. Student code that calls check
                # code of its own accord is reported as a call into the grading code.
                where = ""
                break
            passed.append(frame)
            frame = frame.f_back
            depth += 1
        if where is None:  # the walk gave up: no answer to keep for the frames it passed
            return ""
        if _len(_walked) > 50_000:
            _walked.clear()
        for frame in passed:  # each of them leads to the same answer
            _walked[_id(frame)] = (frame, frame.f_back, where)
        return where

    def answer_uses(impl, _patterns=sealed["answer_patterns"], _compiled=compiled, _write=write,
                    _sorted=sorted):
        """Report what the registered answer *is* when that is a forbidden target: the
        reference itself, an alias of torch's class, a class that inherits its methods."""
        for pattern in _sorted(_patterns(impl, _compiled)):
            _write("answer", pattern)

    def report(what, _last={}, _now=time.monotonic, _write=write, _every=REPORT_S, _len=len):
        now = _now()
        if now - _last.get(what, -1.0) >= _every:
            if _len(_last) > 20_000:
                _last.clear()
            _last[what] = now
            _write("call", what)

    me: list = []
    # Files whose code the profile function must look at: targets, and the few functions it
    # knows by identity (run_program, Thread.start).
    watched = tuple(py_prefixes) + (os.path.abspath(program.__file__),
                                    os.path.abspath(threading.__file__))

    def profile(frame, event, arg, _py_prefixes=py_prefixes, _py_targets=py_targets,
                _c_names=c_names, _c_owned=c_owned, _c_modules=c_modules, _start=start_code,
                _drive=drive_code, _threading=threading, _write=write, _above=student_above,
                _owner=sealed["_owner"], _me=me, _base=BaseException, _interrupt=KeyboardInterrupt,
                _type=type, _run=run_code, _answer=answer_uses, _lib=library, _report=report,
                _starts=_STARTS, _modules={}, _id=id, _len=len, _watched=watched,
                _fork_exec=_FORK_EXEC, _origin=sealed["_origin"], _walked=walked):
        try:
            if event == "call":
                # Most calls are into modules that hold no target: known by their globals
                # (reading a frame's code is an audited, costly event). A function's globals
                # cannot be swapped for its code's: building one is refused (function.__new__).
                globals_ = frame.f_globals
                known = _modules.get(_id(globals_))
                if known is not None and known[0] is globals_ and not known[1]:
                    return
                code = frame.f_code
                if (known is None or known[0] is not globals_) and _starts(code.co_filename,
                                                                           _lib):
                    # Only library code names its module's kind: student code run with a
                    # library module's globals must not mark that module as unwatched.
                    if _len(_modules) > 50_000:
                        _modules.clear()
                    _modules[_id(globals_)] = (globals_, _starts(code.co_filename, _watched))
                if code is _run:
                    _answer(frame.f_locals.get("impl"))
                    return
                if code is _start and _threading._profile_hook is not _me[0]:
                    _threading.setprofile(_me[0])
                    _write("tamper", "threading.setprofile was changed before a thread started")
                filename = code.co_filename
                if _starts(filename, _py_prefixes) and code is not _drive:
                    where = None
                    for pattern, prefix, qual, name, always in _py_targets:
                        if (_starts(filename, prefix) and _starts(code.co_qualname, qual)
                                and (not name or code.co_name == name)):
                            if always:  # the grader's references never run in a kernel
                                caller = frame.f_back
                                if caller is None or caller.f_code.co_name != "<module>":
                                    _report(pattern + " from (any caller)")
                                continue
                            if where is None:
                                where = _above(frame.f_back)
                            if where:
                                _report(pattern + " from " + where)
            elif event == "return":
                if _walked:
                    _walked.pop(_id(frame), None)
            elif event == "c_call":
                if arg is _fork_exec:
                    # multiprocessing's spawn and forkserver start a new interpreter with no
                    # audit event, and no monitor in it: not refused, but never unnoticed when
                    # student code asked for it (judged as the audit hook judges new programs).
                    origin = _origin(frame)
                    if origin is None or not _starts(origin.f_code.co_filename, _lib):
                        _write("tamper", "started a program the monitor cannot follow "
                                         "(multiprocessing spawn or forkserver)")
                # A C function counts when student code calls it itself; one that a library
                # calls is reached through the library's Python code, which is watched above.
                # (Checking only the caller keeps the cost of torch-heavy code down.)
                if _starts(frame.f_code.co_filename, _lib):
                    return
                name = arg.__name__
                module = None
                where = None
                if name in _c_names:
                    module = _owner(arg)
                    for pattern, target, owners in _c_owned:
                        if name == target and _starts(module, owners):
                            where = _above(frame) if where is None else where
                            if where:
                                _report(pattern + " from " + where)
                if _c_modules:
                    module = module if module is not None else _owner(arg)
                    for pattern, prefix, target in _c_modules:
                        if _starts(module, prefix) and (not target or name == target):
                            where = _above(frame) if where is None else where
                            if where:
                                _report(pattern + " from " + where)
                if name == "start_new_thread":
                    _write("tamper", "started a thread outside threading")
        except _base as error:  # a profile function that raises is switched off: never do
            if _type(error) is _interrupt:
                raise  # the grader's interrupt must stop the cell; the hook puts us back

    me.append(profile)
    ours = (profile, write, student_above, me, answer_uses, report)
    info = [0]
    last_open = [""]

    def hook(event, args, _ours=ours, _library=library, _fifo=fifo_path, _write=write,
             _info=info, _last=last_open, _refused=_REFUSED_FROM_STUDENT, _getframe=sys._getframe,
             _profile=profile, _getprofile=sys.getprofile, _setprofile=sys.setprofile,
             _own_file=own_file, _text=sealed["_text"], _is_file_text=sealed["_is_file_text"],
             _len=len, _calling=sealed["_calling"], _starts=_STARTS, _equals=str.__eq__,
             _spawning=_SPAWNING, _origin=sealed["_origin"], _type=type, _str=str, _bytes=bytes,
             _none=type(None), _code_type=type(_library_prefixes.__code__),
             _limit=_INFO_LIMIT, _grading=GRADING_TARGET, _walked=walked):
        if event == "sys._getframe" or event == "builtins.id":
            return
        if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__"):
            target = args[0]
            if (target is _ours[0] or target is _ours[1] or target is _ours[2]
                    or target is _ours[3] or target is _ours[4] or target is _ours[5]):
                _write("tamper", f"touched the grading monitor ({_text(args[1])[:40]})")
                raise RuntimeError("coursekit: the grading monitor cannot be changed")
            return
        caller = _getframe(1)
        from_student = not _starts(caller.f_code.co_filename, _library)
        if event.startswith(_spawning) or event.startswith("ctypes."):
            # subprocess, os and ctypes frames raise these: judge by who asked for them.
            origin = _origin(caller)
            from_student = origin is None or not _starts(origin.f_code.co_filename, _library)
        if event == "sys.setprofile":
            if (_equals(caller.f_code.co_filename, _own_file)
                    or (caller.f_code.co_name == "_bootstrap_inner" and not from_student)):
                return
            # Python also switches a profile function off when an exception escapes it (an
            # interrupt, a MemoryError): then the frame is not calling anything. A call of
            # sys.setprofile is refused; the other case is let through, logged, and the
            # profile function is put back at the next audited event.
            if _calling(caller):
                _write("refused", "sys.setprofile from student code" if from_student
                       else "sys.setprofile")
                raise RuntimeError("coursekit: profile functions cannot be changed while grading")
            _write("profile off", "an exception left the profile function")
            return
        if from_student and event.startswith(_refused):
            _write("tamper", f"{event} from student code")
            raise RuntimeError(f"coursekit: {event} is not allowed while grading")
        if _getprofile() is not _profile:
            # An interrupt inside the profile function switches it off: put it back. Returns
            # it missed may have left walks of frames that no longer run as they did.
            _walked.clear()
            _setprofile(_profile)
        if event == "open":
            path = _text(args[0]) if _len(args) else ""
            if path == _fifo or path.startswith(("/proc/self/fd", "/dev/fd/")) or (
                    path.startswith("/proc/") and path.endswith("/mem")):
                _write("tamper", f"opened {path[:80]}")
                raise PermissionError(f"coursekit: {path} cannot be opened while grading")
            _last[0] = path
            if from_student and _info[0] < _limit:
                _info[0] += 1
                _write("open", path[:200])
        elif event in ("code.__new__", "compile") and _len(args) > 1 and _type(args[1]) not in (
                _str, _bytes, _none):
            _write("tamper", f"made code whose file name is a {_text(_type(args[1]))}")
            raise RuntimeError("coursekit: a code object's file name must be a plain string")
        elif event == "exec" and from_student and _len(args) and _type(args[0]) is _code_type \
                and _starts(args[0].co_filename, _library):
            _write("tamper", "ran library code with globals of its own")
            raise RuntimeError("coursekit: library code cannot be exec'd while grading")
        elif event == "function.__new__":
            code = args[0] if _len(args) else None
            if from_student and code is not None and _starts(code.co_filename, _library):
                _write("tamper", "made a function from library code")
                raise RuntimeError("coursekit: functions cannot be rebuilt from library code")
        elif event == "code.__new__":
            filename = _text(args[1]) if _len(args) > 1 else ""
            if from_student and _starts(filename, _library):
                _write("tamper", f"made code that claims to be {filename[:80]}")
                raise RuntimeError("coursekit: code cannot claim a library file name")
        elif event == "compile":
            filename = _text(args[1]) if _len(args) > 1 else ""
            if _starts(filename, _library) and not _is_file_text(args[0], filename):
                _write("tamper", f"compiled code under the name {filename[:80]}")
                raise RuntimeError("coursekit: code cannot claim a library file name")
            if from_student and _info[0] < _limit:
                _info[0] += 1
                _write("dynamic code", filename[:120])
        elif event in ("marshal.loads", "marshal.load"):
            if from_student or not _starts(_last[0], _library):
                _write("tamper", f"loaded compiled code ({_last[0][:80] or 'from bytes'})")
                raise RuntimeError("coursekit: compiled code from outside the Python "
                                   "installation cannot be loaded while grading")
        elif event == "pickle.find_class":
            name = f"{_text(args[0])}.{_text(args[1])}"[:120]
            if name.startswith(_grading) or (from_student and name.startswith(
                    ("os.", "posix.", "subprocess.", "builtins.", "sys.", "ctypes.",
                     "importlib."))):
                _write("tamper", f"unpickled {name}")
                raise RuntimeError("coursekit: unpickling this is not allowed while grading")
            if from_student and _info[0] < _limit:
                _info[0] += 1
                _write("unpickle", name)
        elif event == "import" and from_student and _info[0] < _limit:
            _info[0] += 1
            _write("import", _text(args[0])[:120])
        elif event == "sys.settrace" and from_student and _info[0] < _limit:
            _info[0] += 1
            _write("settrace", "")

    sys.setprofile(profile)
    threading.setprofile(profile)
    sys.addaudithook(hook)
    write("ready", f"{len(targets)} targets")


_MODULE_OF_TYPE = type.__dict__["__module__"].__get__
_MRO_OF_TYPE = type.__dict__["__mro__"].__get__
_DICT_OF_TYPE = type.__dict__["__dict__"].__get__
_FUNCTION = type(_library_prefixes)
_CODE_OF = _FUNCTION.__dict__["__code__"].__get__
_METHOD = type(_library_prefixes.__get__(0))
_FUNC_OF_METHOD = _METHOD.__dict__["__func__"].__get__
_BUILTIN = type(len)
_STATIC_FUNC = staticmethod.__dict__["__func__"].__get__
_CLASS_FUNC = classmethod.__dict__["__func__"].__get__
_PARTIAL = functools.partial
_PARTIAL_FUNC = functools.partial.__dict__["func"].__get__


_HELPERS = ("_owner", "_text", "_is_file_text", "_calling", "_functions_of", "match_code",
            "match_builtin", "answer_patterns", "_origin")


def _sealed_helpers() -> dict:
    """Copies of this module's helpers that the installed monitor calls, bound to a private
    copy of the module's globals and of the builtins: student code can replace names in this
    module or in ``builtins``, and the monitor does not see it. (A copy is only reachable
    through the monitor's default arguments, whose reads are refused.)"""
    import builtins
    private = dict(globals())
    private["__builtins__"] = dict(vars(builtins))
    for name in _HELPERS:
        original = globals()[name]
        private[name] = _FUNCTION(original.__code__, private, original.__name__,
                                  original.__defaults__, original.__closure__)
    return {name: private[name] for name in _HELPERS}


def compile_targets(targets: list[dict]) -> tuple:
    """Target specs (:mod:`.targets`) as the tuples the matchers take: Python code
    ``(pattern, file prefix, qualname prefix, name)``, their file prefixes, C function names,
    C functions by name ``(pattern, name, owner modules)`` and C modules ``(pattern, module
    prefix, name)``."""
    py = tuple((t["pattern"], p, t.get("qual", ""), t.get("name", ""), bool(t.get("always")))
               for t in targets for p in t.get("files", ()))
    return (py, tuple(sorted({p for _, p, _, _, _ in py})) or ("\0",),
            frozenset(n for t in targets for n in t.get("c_names", ())),
            tuple((t["pattern"], n, tuple(t.get("c_owners", ("",))))
                  for t in targets for n in t.get("c_names", ())),
            tuple((t["pattern"], m, t.get("name", "")) for t in targets
                  for m in t.get("c_modules", ())))


def match_code(code, py) -> str:
    """The pattern Python code ``code`` is a target of ("" for none)."""
    filename = code.co_filename
    for pattern, prefix, qual, name, _ in py:
        if (_STARTS(filename, prefix) and _STARTS(code.co_qualname, qual)
                and (not name or code.co_name == name)):
            return pattern
    return ""


def match_builtin(function, c_owned, c_modules, _owner_of=None) -> str:
    """The pattern a C function is a target of ("" for none)."""
    name = function.__name__
    module = (_owner_of or _owner)(function)
    for pattern, target, owners in c_owned:
        if name == target and _STARTS(module, owners):
            return pattern
    for pattern, prefix, target in c_modules:
        if _STARTS(module, prefix) and (not target or name == target):
            return pattern
    return ""


def answer_patterns(impl, compiled: tuple) -> set[str]:
    """The dotted patterns an answer *is* made of (see :func:`_functions_of`); method-name
    patterns (".backward") are about calls, and a class inherits stubs by those names from its
    library base (torch.autograd.Function.vjp is one) that never run."""
    py, _, _, c_owned, c_modules = compiled
    found = set()
    for function in _functions_of(impl):
        pattern = (match_code(_CODE_OF(function), py) if type(function) is _FUNCTION
                   else match_builtin(function, c_owned, c_modules))
        if pattern and pattern[0] != ".":
            found.add(pattern)
    return found


def _functions_of(impl, _type=type, _dict=dict, _tuple=tuple, _list=list, _str=str,
                  _issubclass=issubclass) -> list:
    """The functions an answer is made of, read without running any of the student's code:
    a function; a class's effective methods (the first definition along its MRO, so an
    inherited method counts and an overridden one does not); the values of a dict or list;
    the function of a bound method, a partial, a static or class method; a builtin."""
    found: list = []
    todo = [impl]
    seen = 0
    while todo and seen < 2000:
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
        elif kind is staticmethod:
            todo.append(_STATIC_FUNC(value))
        elif kind is classmethod:
            todo.append(_CLASS_FUNC(value))
        elif kind is _PARTIAL:
            todo.append(_PARTIAL_FUNC(value))
        elif _issubclass(kind, _type):  # a class: its effective methods
            effective: dict = {}
            for cls in _MRO_OF_TYPE(value):
                if cls is object:
                    continue
                for name, member in _DICT_OF_TYPE(cls).items():
                    if _type(name) is _str and name not in effective:
                        effective[name] = member
            todo.extend(member for member in effective.values()
                        if _type(member) in (_FUNCTION, staticmethod, classmethod))
    return found


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
        stdlib = (_starts(name, _stdlib) and "site-packages" not in name) or _starts(
            name, "<frozen ") or _starts(name, _shell)
        if not stdlib:
            return frame
        frame = frame.f_back
        depth += 1
    return None


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


def _is_file_text(source, filename: str) -> bool:
    """Whether ``source`` is the text of ``filename`` on disk (the import system compiling a
    library module that has no cached bytecode), not other code under its name."""
    if type(source) not in (str, bytes) or not os.path.isabs(filename):
        return False   # a relative name ("<frozen x>") would read the student's own folder
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data == (source.encode() if isinstance(source, str) else source)
