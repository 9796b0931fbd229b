"""The run step's input and output, whatever runs it: a :class:`RunPlan` says which cells of
which notebook run and which checks are driven after each checks cell; a :class:`Ran` says what
happened. Two modes run a plan:

* :mod:`.monitored_run`: in a kernel under the grading monitor (sandboxed or forked for
  ``coursekit autograde``, this machine's own for ``coursekit validate``), with time and
  memory limits (:class:`KernelSettings`);
* :mod:`.in_process_run`: in this process, for the course's own test answers (the mutant
  suite, the blind corpus): no kernel, no limits, no isolation, never a hand-in.

Scoring (:mod:`.score`) reads a ``Ran`` the same way whichever mode made it.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from .drive import ChecksToDrive
from .execute import Execution


@dataclass(frozen=True)
class RunPlan:
    """What to run and what to drive: ``checks`` are the ``grade(...)`` calls to drive after
    each checks cell (by the cell's index in ``nb``), read from the instructor's source, never
    from the notebook being run. ``nb`` is never changed: a run works on a copy."""
    nb: NotebookNode
    skip: frozenset[int]
    checks: Mapping[int, ChecksToDrive]
    seed_of: Callable[[str, bool], int]


@dataclass(frozen=True)
class KernelSettings:
    """How a kernel runs a plan: the monitor's targets and what the kernel loads before it,
    and the limits."""
    targets: list[dict]             # what the checks driven forbid (monitoring.targets)
    check_path: tuple[Path, ...]    # folders of the course's own checks
    preload: str                    # the release's setup imports, run before the monitor
    warm: tuple[str, ...]           # checks whose modules the kernel warms up before it
    cell_timeout: float
    time_limit: float
    memory_mb: int


@dataclass(frozen=True)
class Ran:
    """What a run found: the notebook as it ran (outputs in place), the execution (cells
    run, checks driven, by the checks cell's key), the checks that used a forbidden
    capability (``{(check, hidden): reason}``) and what the monitor noticed for a TA."""
    notebook: NotebookNode
    execution: Execution
    forbidden: dict
    noticed: list[str]
