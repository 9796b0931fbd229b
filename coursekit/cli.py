"""The ``coursekit`` command.

Thin by design: each subcommand parses its arguments and calls one function that does the
work (students' and everyone's commands live in ``coursekit``; instructor commands in
``autograder``). Imports are lazy so ``coursekit --help`` stays fast.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> (module, function, one-line help). The module exposes
# ``add_arguments(parser)`` named ``<function>_arguments`` and ``<function>(args) -> int``.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "doctor": ("coursekit.hardware.doctor", "doctor", "is this machine ready for the course, and how fast is it"),
    "validate": ("coursekit.student.commands", "validate", "self-check a notebook: run its visible checks, list pass/fail"),
    "fetch": ("coursekit.student.commands", "fetch", "copy a released lab into work/ (git ignores it) to work on it; never overwrites your edits"),
    "release": ("autograder.commands", "release", "generate notebooks/ (student versions) from solutions/"),
    "autograde": ("autograder.commands", "autograde", "grade a class of submissions in the sandbox"),
    "feedback": ("autograder.commands", "feedback", "write per-student feedback HTML"),
    "export": ("autograder.commands", "export", "write grades.csv, Gradescope-style results.json and the LMS's CSV (--format canvas|moodle)"),
    "extend": ("autograder.commands", "extend", "give a student a later due date for one lab (course/extensions.toml)"),
    "demo": ("autograder.commands", "demo", "grade the bundled demo class end to end"),
    "similarity": ("autograder.commands", "similarity", "find answers copied from classmates or the references; flag them for a TA"),
    "reveal": ("autograder.commands", "reveal", "let students read a lab's reference code from today (or --on DATE)"),
    "bundle": ("autograder.commands", "bundle", "build the student distribution: labs, library, doctor and validate"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coursekit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, function, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_target=(module, function))
        try:
            add_arguments = getattr(importlib.import_module(module), f"{function}_arguments")
        except (ImportError, AttributeError):
            continue  # the instructor's, in a student build; it says so when run
        add_arguments(p)
    return parser


def _instructors(command: str) -> int:
    print(f"coursekit {command} is the instructor's command: the student build of coursekit "
          f"does not have it (the grader's package, autograder, is not installed)",
          file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Only import the module of the command being run, not all of them.
    parser = argparse.ArgumentParser(prog="coursekit", add_help=False)
    parser.add_argument("command", nargs="?")
    known, _ = parser.parse_known_args(argv)
    if known.command not in COMMANDS:
        build_parser().print_help()
        return 0 if known.command is None or known.command in ("-h", "--help") else 2
    module, function = COMMANDS[known.command][:2]
    full = argparse.ArgumentParser(prog=f"coursekit {known.command}",
                                   description=COMMANDS[known.command][2])
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != "autograder":
            raise
        return _instructors(known.command)
    getattr(mod, f"{function}_arguments", lambda p: None)(full)
    args = full.parse_args(argv[1:])
    return int(getattr(mod, function)(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
