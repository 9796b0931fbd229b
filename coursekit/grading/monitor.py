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
    "_thread.start_new_thread",
)
_INFO_LIMIT = 400   # informational lines per kernel: the TA's log, not a flood
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

    py_targets = tuple((t["pattern"], p, t.get("qual", ""), t.get("name", ""))
                       for t in targets for p in t.get("files", ()))
    py_prefixes = tuple(sorted({p for _, p, _, _ in py_targets})) or ("\0",)
    c_modules = tuple((t["pattern"], m, t.get("name", "")) for t in targets
                      for m in t.get("c_modules", ()))
    c_names = frozenset(n for t in targets for n in t.get("c_names", ()))
    c_owned = tuple((t["pattern"], n, tuple(t.get("c_owners", ("",))))
                    for t in targets for n in t.get("c_names", ()))

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

    def student_above(frame, _drive=drive_code, _library=library):
        """The file of the student code on the stack from ``frame`` up to the grader's request
        ("" when there is none)."""
        depth = 0
        while frame is not None and depth < 400:
            code = frame.f_code
            if code is _drive:
                return ""
            if not code.co_filename.startswith(_library):
                return code.co_filename
            frame = frame.f_back
            depth += 1
        return ""

    def answer_uses(impl, _functions=_functions_of, _targets=py_targets, _c_names=c_names,
                    _c_owned=c_owned, _c_modules=c_modules, _owner=_owner, _write=write):
        """Report what the registered answer *is* when that is a forbidden target: the
        reference itself, an alias of torch's class, a class that inherits its methods."""
        # Method-name patterns (".backward") are about calls: a class inherits stubs by those
        # names from its library base (torch.autograd.Function.vjp is one) that never run.
        found = set()
        for function in _functions(impl):
            code = _CODE_OF(function) if _type_is_function(function) else None
            if code is not None:
                for pattern, prefix, qual, name in _targets:
                    if (code.co_filename.startswith(prefix) and code.co_qualname.startswith(qual)
                            and (not name or code.co_name == name) and pattern[0] != "."):
                        found.add(pattern)
            else:
                name, module = function.__name__, _owner(function)
                for pattern, target, owners in _c_owned:
                    if name == target and module.startswith(owners) and pattern[0] != ".":
                        found.add(pattern)
                for pattern, prefix, target in _c_modules:
                    if module.startswith(prefix) and (not target or name == target):
                        found.add(pattern)
        for pattern in sorted(found):
            _write("answer", pattern)

    def report(what, _last={}, _now=time.monotonic, _write=write, _every=REPORT_S, _len=len):
        now = _now()
        if now - _last.get(what, -1.0) >= _every:
            if _len(_last) > 20_000:
                _last.clear()
            _last[what] = now
            _write("call", what)

    me: list = []

    def profile(frame, event, arg, _py_prefixes=py_prefixes, _py_targets=py_targets,
                _c_names=c_names, _c_owned=c_owned, _c_modules=c_modules, _start=start_code,
                _drive=drive_code, _threading=threading, _write=write, _above=student_above,
                _owner=_owner, _me=me, _base=BaseException, _interrupt=KeyboardInterrupt,
                _type=type, _run=run_code, _answer=answer_uses, _lib=library, _report=report):
        try:
            if event == "call":
                code = frame.f_code
                if code is _run:
                    _answer(frame.f_locals.get("impl"))
                    return
                if code is _start and _threading._profile_hook is not _me[0]:
                    _threading.setprofile(_me[0])
                    _write("tamper", "threading.setprofile was changed before a thread started")
                filename = code.co_filename
                if filename.startswith(_py_prefixes) and code is not _drive:
                    for pattern, prefix, qual, name in _py_targets:
                        if (filename.startswith(prefix) and code.co_qualname.startswith(qual)
                                and (not name or code.co_name == name)):
                            where = _above(frame.f_back)
                            if where:
                                _report(pattern + " from " + where)
                            return
            elif event == "c_call":
                name = arg.__name__
                module = None
                if name in _c_names:
                    module = _owner(arg)
                    for pattern, target, owners in _c_owned:
                        if name == target and module.startswith(owners):
                            where = _above(frame)
                            if where:
                                _report(pattern + " from " + where)
                            return
                if _c_modules:
                    module = module if module is not None else _owner(arg)
                    for pattern, prefix, target in _c_modules:
                        if module.startswith(prefix) and (not target or name == target):
                            where = _above(frame)
                            if where:
                                _report(pattern + " from " + where)
                            return
                if name == "start_new_thread" and not frame.f_code.co_filename.startswith(_lib):
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
             _own_file=own_file, _text=_text, _is_file_text=_is_file_text, _len=len,
             _limit=_INFO_LIMIT, _grading=GRADING_TARGET):
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
        from_student = not caller.f_code.co_filename.startswith(_library)
        if event == "sys.setprofile":
            if (caller.f_code.co_filename == _own_file
                    or (caller.f_code.co_name == "_bootstrap_inner" and not from_student)):
                return
            _write("tamper", "tried to replace the profile function")
            raise RuntimeError("coursekit: profile functions cannot be changed while grading")
        if from_student and event.startswith(_refused):
            _write("tamper", f"{event} from student code")
            raise RuntimeError(f"coursekit: {event} is not allowed while grading")
        if _getprofile() is not _profile:
            # An interrupt inside the profile function switches it off: put it back.
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
        elif event == "code.__new__":
            filename = _text(args[1]) if _len(args) > 1 else ""
            if from_student and filename.startswith(_library):
                _write("tamper", f"made code that claims to be {filename[:80]}")
                raise RuntimeError("coursekit: code cannot claim a library file name")
        elif event == "compile":
            filename = _text(args[1]) if _len(args) > 1 else ""
            if filename.startswith(_library) and not _is_file_text(args[0], filename):
                _write("tamper", f"compiled code under the name {filename[:80]}")
                raise RuntimeError("coursekit: code cannot claim a library file name")
            if from_student and _info[0] < _limit:
                _info[0] += 1
                _write("dynamic code", filename[:120])
        elif event in ("marshal.loads", "marshal.load"):
            if from_student or not _last[0].startswith(_library):
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


def _type_is_function(value) -> bool:
    return type(value) is _FUNCTION


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
    if type(source) not in (str, bytes):
        return False
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data == (source.encode() if isinstance(source, str) else source)
