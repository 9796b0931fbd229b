"""Validate in the instructor's server: the grading sandbox as the place a notebook's kernel
runs (:class:`coursekit.notebook.validate.KernelPlace`).

There a notebook may be anybody's, a student's hand-in above all, and the server runs with the
instructor's rights. So it runs as grading runs it: in the course's grading sandbox, on a copy
of its folder (:func:`graded_folder.prepare`), with none of the server's environment; where
the machine has no sandbox, it does not run.
"""
from __future__ import annotations

import os
from pathlib import Path

from autograder.isolation import graded_folder, sandbox
from coursekit.course import Course
from coursekit.notebook import kernels
from coursekit.notebook.validate import KernelPlace, KernelUnavailable


class SandboxPlace(KernelPlace):
    def open(self, course: Course | None, path: Path, runtime: Path, limits: kernels.Limits
             ) -> tuple[object, Path, dict[str, str]]:
        if course is None:
            raise KernelUnavailable(f"{path.name} belongs to no course, so it cannot run in "
                                    f"the course's grading sandbox")
        status = sandbox.probe(course)
        if not status.sandboxed:
            raise KernelUnavailable(status.warning)
        workdir = course.work_dir / "validate" / runtime.name
        graded_folder.prepare(workdir, path.parent, path)
        km = sandbox.kernel_manager(course, workdir=workdir, runtime_dir=runtime,
                                    status=status, limits=limits)
        env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
               "LANG": "C.UTF-8", "HOME": "/tmp", **course.kernel_env()}
        return km, workdir, env

    def close(self, workdir: Path) -> None:
        kernels.remove_tree(workdir)
