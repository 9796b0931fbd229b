"""The run step in a kernel (see :mod:`.run_plan`): a plan's notebook executed under the
grading monitor, its checks driven after each checks cell.

Its callers choose where the kernel runs and how seeds are drawn: ``coursekit autograde``
(a sandboxed or forked kernel, hidden checks on secret seeds) and ``coursekit validate`` (a
kernel here, visible checks on public seeds). What they get back is the same: what ran, which
checks used what their exercise forbids, and what the monitor noticed for a TA.
"""
from __future__ import annotations

import copy
from pathlib import Path

from . import monitoring
from .drive import checks_driver
from .execute import run_notebook
from .run_plan import KernelSettings, Ran, RunPlan


async def run_monitored(plan: RunPlan, kernel: KernelSettings, km, *, cwd: Path,
                        env: dict[str, str], runtime: Path) -> Ran:
    """Run ``plan`` with kernel manager ``km`` (not started), the monitor's pipe in
    ``runtime``; ``env`` is the kernel's environment before the monitor's settings."""
    channel = monitoring.Channel.open(runtime)
    notebook = copy.deepcopy(plan.nb)   # nbclient writes the outputs into the cells it runs
    try:
        execution = await run_notebook(
            notebook, km, cwd=cwd,
            env={**env, **channel.env(kernel.targets, kernel.check_path,
                                      preload=kernel.preload, warm=list(kernel.warm))},
            cell_timeout=kernel.cell_timeout, time_limit=kernel.time_limit,
            memory_mb=kernel.memory_mb, skip=set(plan.skip),
            after_cell=checks_driver(plan.checks, plan.seed_of, kernel.cell_timeout))
    finally:
        channel.close()
    driven = [drive for drives in execution.drives.values() for drive in drives]
    return Ran(notebook, execution, monitoring.delegations(channel.events, driven),
               monitoring.tampering(channel, execution))
