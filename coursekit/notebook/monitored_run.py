"""The run step shared by grading and validating: a notebook executed in a kernel under the
grading monitor, its checks driven after each checks cell.

Its callers choose where the kernel runs and how seeds are drawn: ``coursekit autograde``
(a sandboxed or forked kernel, hidden checks on secret seeds) and ``coursekit validate`` (a
kernel here, visible checks on public seeds). What they get back is the same: what ran, which
checks used what their exercise forbids, and what the monitor noticed for a TA.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from . import monitoring
from .cells import GradeCall
from .drive import checks_driver
from .execute import Execution, run_notebook


@dataclass(frozen=True)
class RunPlan:
    """What to run and what to drive: ``calls`` are the ``grade(...)`` calls to drive after
    each checks cell (by the cell's index in ``nb``), read from the instructor's source, never
    from the notebook being run."""
    nb: NotebookNode
    skip: frozenset[int]
    calls: Mapping[int, list[GradeCall]]
    seed_of: Callable[[str, bool], int]
    targets: list[dict]             # what the checks driven forbid (monitoring.targets)
    check_path: tuple[Path, ...]    # folders of the course's own checks
    preload: str                    # the release's setup imports, run before the monitor
    warm: tuple[str, ...]           # checks whose modules the kernel warms up before it
    cell_timeout: float
    time_limit: float
    memory_mb: int


@dataclass(frozen=True)
class Monitored:
    """What a monitored run found: the execution (cells run, checks driven), the checks that
    used a forbidden capability (``{(check, hidden): reason}``) and the monitor's notes."""
    execution: Execution
    forbidden: dict
    noticed: list[str]


async def run_monitored(plan: RunPlan, km, *, cwd: Path, env: dict[str, str],
                        runtime: Path) -> Monitored:
    """Run ``plan`` with kernel manager ``km`` (not started), the monitor's pipe in
    ``runtime``; ``env`` is the kernel's environment before the monitor's settings."""
    channel = monitoring.Channel.open(runtime)
    try:
        execution = await run_notebook(
            plan.nb, km, cwd=cwd,
            env={**env, **channel.env(plan.targets, plan.check_path, preload=plan.preload,
                                      warm=list(plan.warm))},
            cell_timeout=plan.cell_timeout, time_limit=plan.time_limit,
            memory_mb=plan.memory_mb, skip=set(plan.skip),
            after_cell=checks_driver(dict(plan.calls), plan.seed_of, plan.cell_timeout))
    finally:
        channel.close()
    driven = [drive for drives in execution.drives.values() for drive in drives]
    return Monitored(execution, monitoring.delegations(channel.events, driven),
                     monitoring.tampering(channel, execution))
