"""Targets: what a check's ``forbid=`` patterns name, in a form the monitor can match.

A pattern is a dotted name (``"torch.autograd"``, ``"torch.nn.Module"``, ``"torch.sigmoid"``)
or a method name after a dot (``".backward"``). The monitor in a grading kernel must match
calls without importing anything, so this module, run in the grader (or in the student's own
notebook), resolves each pattern once into plain data: the files and qualified names of Python
code, and the names and modules of C functions.
"""
from __future__ import annotations

import importlib
import inspect
import os
from pathlib import Path

from .monitor import GRADING_TARGET
from .program import get_check

# Grading code a student's code has no reason to call: references and the grader's own steps.
# (The oracle is not one: checks cells call its register(), and its drive() is the grader's
# own entry point, which the monitor knows.)
_GRADING_FILES = ("verdict.py", "compare.py", "program.py", "tape.py", "encoding.py",
                  "seeds.py", "monitor.py")


def _grading_target() -> dict:
    import coursekit.grading as grading
    folder = Path(grading.__file__).resolve().parent
    files = [str(folder / name) for name in _GRADING_FILES]
    return {"pattern": GRADING_TARGET, "files": files,
            # The references never run in a kernel, whoever calls them.
            "also": [{"files": [str(folder / "checks") + "/"], "qual": "_reference",
                      "always": True}]}


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


def target(pattern: str) -> dict | None:
    """What the monitor matches for one forbid pattern (see the module docstring)."""
    if pattern.startswith("."):
        name = pattern[1:]
        roots = [f for package in ("torch", "coursekit") for f in _files_of(_resolve(package))]
        return {"pattern": pattern, "files": roots, "name": name,
                "c_names": [name], "c_owners": ["torch", "coursekit"]}
    obj = _resolve(pattern)
    if obj is None:
        return None
    spec: dict = {"pattern": pattern}
    if inspect.ismodule(obj):
        spec["files"] = _files_of(obj)
        spec["c_modules"] = [pattern]
        if pattern in ("torch", "torch.autograd"):  # the engine itself, not its submodules
            spec["c_names"], spec["c_owners"] = ["run_backward"], ["torch"]
    elif inspect.isbuiltin(obj):
        spec["c_names"] = [obj.__name__]
        spec["c_owners"] = [getattr(obj, "__module__", None) or pattern.rsplit(".", 1)[0]]
    elif inspect.isclass(obj) or inspect.isfunction(obj):
        # A decorated function (torch.distributed.all_reduce is one) runs the code of the
        # function it wraps: match that code, not the decorator's wrapper shared by many.
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


def for_patterns(patterns) -> list[dict]:
    """The targets of some forbid patterns (those that name nothing installed are left out)."""
    return [spec for spec in (target(p) for p in sorted(set(patterns))) if spec is not None]


def targets(lab_checks: list[str], check_paths=()) -> list[dict]:
    """Every target the lab's checks forbid, plus the grading code itself (with the
    references of a course whose checks live in ``check_paths``)."""
    patterns = sorted({p for name in lab_checks for p in get_check(name).forbid})
    found = []
    grading = _grading_target()
    found.append({"pattern": GRADING_TARGET, "files": grading["files"]})
    for extra in grading["also"]:
        found.append({"pattern": GRADING_TARGET, **extra})
    for folder in check_paths:
        found.append({"pattern": GRADING_TARGET, "files": [str(Path(folder).resolve()) + "/"],
                      "qual": "_reference", "always": True})
    for pattern in patterns:
        spec = target(pattern)
        if spec is not None:
            found.append(spec)
    return found
