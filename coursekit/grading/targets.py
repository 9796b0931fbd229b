"""Targets: what a check's ``forbid=`` patterns name, in a form the monitor can match.

A pattern names a capability the exercise rebuilds: a function or class by its dotted name
(``"torch.autograd.grad"``, ``"torch.optim.SGD"``), a whole module where the exercise
rebuilds the whole of it (``"torch.utils.data"``), a method name after a dot (``".backward"``:
any function of that name that torch or coursekit defines), or ``"torch.autograd.engine"``:
torch's autograd engine itself, however it is started (the monitor watches it from C++ while
the check is driven, :mod:`.engine`; :mod:`.capabilities` groups it with the Python ways in).
Grad-mode context managers (``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``, torch's and coursekit's) are never targets, whatever a pattern covers:
updating weights by hand under ``no_grad`` is the lecture's idiom (:func:`exemptions`).

The monitor in a grading kernel must match calls without importing anything, so this module,
run in the grader (or in the student's own notebook), resolves each pattern once into plain
data: the files and qualified names of Python code, and the names and modules of C functions.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import os

from .capabilities import BY_FILE
from .monitor import ENGINE_TARGET
from .program import get_check

# Grad-mode context managers: (file relative to the package, qualified-name prefixes).
_GRAD_MODE = {
    "torch": [("autograd/grad_mode.py", ("no_grad", "enable_grad", "set_grad_enabled",
                                         "inference_mode", "_enter_inference_mode",
                                         "_exit_inference_mode")),
              ("utils/_contextlib.py", ("",))],
    "coursekit": [("autograd/grad_mode.py", ("",))],
}
_GRAD_MODE_C = ("_set_grad_enabled", "is_grad_enabled", "is_inference_mode_enabled")


def _resolve(dotted: str):
    """The object a forbid pattern names (a module, class, function or builtin), or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 — not a module (or not installed): try a shorter name
            continue
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        return obj
    return None


def _files_of(module) -> list[str]:
    path = getattr(module, "__file__", None)
    if not path:
        return []
    path = os.path.abspath(path)
    if os.path.basename(path) == "__init__.py":
        folder = os.path.dirname(path)
        return sorted({folder + "/", os.path.realpath(folder) + "/"})
    return sorted({path, os.path.realpath(path)})


def _package_folder(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.abspath(next(iter(spec.submodule_search_locations)))


@functools.cache
def _files_defining(name: str, package: str) -> tuple[str, ...]:
    """The files of ``package`` that define a function called ``name`` (read as text, never
    imported): only those hold code a method-name pattern can match."""
    folder = _package_folder(package)
    if folder is None:
        return ()
    needle = f"def {name}("
    found = set()
    for root, _, files in os.walk(folder):
        for file in files:
            if file.endswith(".py"):
                path = os.path.join(root, file)
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        if needle in handle.read():
                            found |= {path, os.path.realpath(path)}
                except OSError:
                    continue
    return tuple(sorted(found))


def _engine(checks=()) -> dict | None:
    """Torch's autograd engine: its one Python door (a target like any other), its C entry
    called directly, and the checks whose drives the monitor watches it in."""
    try:
        import torch.autograd.graph as graph
    except ImportError:
        return None
    source = inspect.getsourcefile(graph._engine_run_backward)
    return {"pattern": ENGINE_TARGET, "engine": True, "checks": sorted(checks),
            "files": sorted({os.path.abspath(source), os.path.realpath(source)}),
            "qual": "_engine_run_backward", "name": "_engine_run_backward",
            "c_names": ["run_backward"], "c_owners": ["torch"]}


def target(pattern: str) -> dict | None:
    """What the monitor matches for one forbid pattern (see the module docstring)."""
    if pattern == ENGINE_TARGET:
        return _engine()
    if pattern in BY_FILE:
        package, relative, qual, name = BY_FILE[pattern]
        folder = _package_folder(package)
        if folder is None:
            return None
        path = os.path.join(folder, relative)
        return {"pattern": pattern, "files": sorted({path, os.path.realpath(path)}),
                "qual": qual, "name": name}
    if pattern.startswith("."):
        name = pattern[1:]
        files = [f for package in ("torch", "coursekit") for f in _files_defining(name, package)]
        return {"pattern": pattern, "files": files, "name": name,
                "c_names": [name], "c_owners": ["torch", "coursekit"]}
    obj = _resolve(pattern)
    if obj is None:
        return None
    spec: dict = {"pattern": pattern}
    if inspect.ismodule(obj):
        spec["files"] = _files_of(obj)
        if any(inspect.isbuiltin(v) or inspect.ismethoddescriptor(v) for v in vars(obj).values()):
            spec["c_modules"] = [pattern]   # a module with C functions of its own
    elif inspect.isbuiltin(obj):
        spec["c_names"] = [obj.__name__]
        spec["c_owners"] = [getattr(obj, "__module__", None) or pattern.rsplit(".", 1)[0]]
    elif inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismethod(obj):
        # A decorated function (torch.distributed.all_reduce is one) runs the code of the
        # function it wraps: match that code, not the decorator's wrapper shared by many.
        obj = getattr(obj, "__func__", obj)
        obj = inspect.unwrap(obj) if inspect.isfunction(obj) else obj
        try:
            source = inspect.getsourcefile(obj)
        except TypeError:
            return None
        if not source:
            return None
        spec["files"] = sorted({os.path.abspath(source), os.path.realpath(source)})
        spec["qual"] = obj.__qualname__ + ("." if inspect.isclass(obj) else "")
        if inspect.isfunction(obj):
            spec["name"] = obj.__name__
    else:
        return None
    return spec


@functools.lru_cache(maxsize=1)
def exemptions() -> tuple[dict, ...]:
    """Grad-mode context managers, torch's and coursekit's: never targets (module docstring)."""
    found = []
    for package, places in _GRAD_MODE.items():
        folder = _package_folder(package)
        if folder is None:
            continue
        for relative, quals in places:
            path = os.path.join(folder, relative)
            files = sorted({path, os.path.realpath(path)})
            found += [{"exempt": True, "files": files, "qual": qual} for qual in quals]
    if _package_folder("torch") is not None:
        found.append({"exempt": True, "c_names": list(_GRAD_MODE_C), "c_owners": ["torch"]})
    return tuple(found)


def for_patterns(patterns, engine_checks=()) -> list[dict]:
    """The targets of some forbid patterns (those that name nothing installed are left out),
    with the grad-mode exemptions; the engine is watched in ``engine_checks``' drives."""
    specs = []
    for pattern in sorted(set(patterns)):
        spec = _engine(engine_checks) if pattern == ENGINE_TARGET else target(pattern)
        if spec is not None:
            specs.append(spec)
    return specs + list(exemptions())


def targets(lab_checks: list[str]) -> list[dict]:
    """Every target the lab's checks forbid. (Grading code, the course's own checks included,
    is the monitor's own business: see :mod:`.monitor`.)"""
    forbids = {name: get_check(name).forbid for name in lab_checks}
    patterns = {p for forbid in forbids.values() for p in forbid}
    engine = [name for name, forbid in forbids.items() if ENGINE_TARGET in forbid]
    return for_patterns(patterns, engine)
