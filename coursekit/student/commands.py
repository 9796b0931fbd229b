"""The student's ``coursekit`` commands (``validate``, ``fetch``): argument parsing and
printing only, as :mod:`coursekit.cli` expects them (``<name>_arguments(parser)`` and
``<name>(args) -> int``). The instructor's commands build on the helpers here
(``autograder.commands``)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import course as manifest


def root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, default=None,
                        help="the course tree (holding course/, solutions/, notebooks/); "
                             "default: found from the current folder, else this repository")


def course_of(args) -> manifest.Course:
    return manifest.load_course(args.root)


def fail(message: str) -> int:
    print(f"coursekit: {message}", file=sys.stderr)
    return 2


# --------------------------------------------------------------------------- validate

def validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebook", type=Path, help="the notebook to check, e.g. "
                                                    "notebooks/lab01_graphs/lab01_graphs.ipynb")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per cell (default: the lab's limit, else 120)")
    parser.add_argument("--all", action="store_true", dest="all_cases",
                        help="list every failing case of every check, not the first five")


def validate(args) -> int:
    from ..notebook.validate import validate as run_validation
    if not args.notebook.exists():
        return fail(f"{args.notebook} does not exist")
    try:
        result = run_validation(args.notebook, timeout=args.timeout, all_cases=args.all_cases)
    except Exception as error:  # noqa: BLE001 — unreadable notebook: say so, exit non-zero
        return fail(f"cannot validate {args.notebook}: {type(error).__name__}: {error}")
    print(result.report())
    return 0 if result.ok else 1


# --------------------------------------------------------------------------- fetch

def fetch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labs", nargs="*", metavar="LAB",
                        help="lab ids, or their short form (lab02)")
    parser.add_argument("--all", action="store_true", dest="every",
                        help="every released lab (what `make lab` runs)")
    root_argument(parser)


def fetch(args) -> int:
    from .fetch import WORK, FetchError
    from .fetch import fetch as run_fetch
    if not args.labs and not args.every:
        return fail("name a lab (coursekit fetch lab01_graphs) or give --all")
    try:
        results, unreleased = run_fetch(course_of(args), args.labs, every=args.every)
    except (manifest.ManifestError, FetchError) as error:
        return fail(str(error))
    for result in results:
        print(result.report())
    if unreleased:
        print(f"not released yet: {', '.join(unreleased)}")
    if results:
        print(f"work in {WORK}/ (git ignores it); `git pull` and `coursekit fetch` again "
              f"bring new releases without touching your edits")
    return 0
