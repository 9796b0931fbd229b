"""The run step in this process (see :mod:`.run_plan`): the course's own test answers (the
mutant suite, the blind corpus) graded as a kernel grades them, many times a second.

The plan's code cells run in one namespace, in order, as IPython runs them (``%magics``
transformed, each cell's lines in ``linecache`` so that ``inspect.getsource`` and
``torch.jit.script`` find its functions), in grade mode: a checks cell's ``grade(...)`` only
registers the answer (:mod:`coursekit.grading.oracle`). After each checks cell its calls are
driven as :mod:`.drive` drives a kernel: the reference's run records the tape of inputs, the
tape travels through JSON, and the program replays it on the registered answer. What the
answer calls is judged by the monitor's rule run in this process
(:mod:`coursekit.grading.watch`).

No kernel means no time or memory limit and no isolation: never run a hand-in here.
Printed output and warnings are dropped (scoring reads only the drives).
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import linecache
import os
import time
import warnings
from collections.abc import Callable

from coursekit.grading import oracle
from coursekit.grading import tape as tapes
from coursekit.grading.grade import MODE_ENV
from coursekit.grading.program import STOPPED, get_check, run_program
from coursekit.grading.tape import TapeRng
from coursekit.grading.verdict import observed, reference_run
from coursekit.grading.warm import warm_up_for
from coursekit.grading.watch import reason as delegation_reason
from coursekit.grading.watch import watching

from .cells import GradeCall, role_of
from .drive import Drive, DriveStatus, from_end
from .execute import CellRun, CellStatus, Execution
from .run_plan import Ran, RunPlan

Reference = Callable[[str, int], tuple]   # (check, seed) -> (expected, tape)


def run_in_process(plan: RunPlan, *, reference: Reference = reference_run) -> Ran:
    """Run ``plan`` here (see the module docstring). ``reference`` gives a check's expected
    values and tape for a seed; a caller scoring many answers may keep them."""
    notebook = copy.deepcopy(plan.nb)
    execution, forbidden = Execution(), {}
    namespace: dict = {"__name__": "__main__"}
    started = time.monotonic()
    with _grade_mode(), warnings.catch_warnings(), \
            contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            if index in plan.skip:
                execution.cells[index] = CellRun(index, CellStatus.SKIPPED)
                continue
            execution.cells[index] = _run_cell(cell, index, namespace)
            if index in plan.checks:
                key, calls = plan.checks[index]
                execution.drives[key] = [
                    _drive(call, from_end(list(calls), call),
                           plan.seed_of(call.check, call.hidden), reference, forbidden)
                    for call in calls]
    execution.seconds = time.monotonic() - started
    return Ran(notebook, execution, forbidden, [])


@contextlib.contextmanager
def _grade_mode():
    """Grade mode for the run, with no registration left from an earlier one."""
    before = os.environ.get(MODE_ENV)
    os.environ[MODE_ENV] = "grade"
    oracle.forget()
    try:
        yield
    finally:
        oracle.forget()
        if before is None:
            del os.environ[MODE_ENV]
        else:
            os.environ[MODE_ENV] = before


def run_source(source: str, filename: str, namespace: dict) -> None:
    """Run a cell's source in ``namespace`` as IPython does: ``%magics`` and ``!shell`` lines
    transformed, its lines in linecache under ``filename``. Raises what the cell raises."""
    from IPython.core.inputtransformer2 import TransformerManager

    text = TransformerManager().transform_cell(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)


def _run_cell(cell, index: int, namespace: dict) -> CellRun:
    """One cell, as IPython runs it; what it raises is the cell's outcome, as in a kernel."""
    grade_id = (cell.metadata.get("nbgrader") or {}).get("grade_id")
    filename = f"<{role_of(cell)} {grade_id}>" if grade_id else f"<cell {index + 1}>"
    began = time.monotonic()
    try:
        run_source(cell.source, filename, namespace)
    except Exception as error:  # noqa: BLE001 — a broken answer is an outcome, as in a kernel
        return CellRun(index, CellStatus.ERROR, time.monotonic() - began,
                       type(error).__name__, str(error), label=filename)
    return CellRun(index, CellStatus.OK, time.monotonic() - began, label=filename)


def _drive(call: GradeCall, which: int, seed: int, reference: Reference,
           forbidden: dict) -> Drive:
    """One call driven here as :func:`.drive.drive_call` drives it in a kernel."""
    expected, tape = reference(call.check, seed)
    drive = Drive(call, seed, expected=list(expected))
    try:
        impl = oracle.registered(call.check, call.hidden, which)
    except LookupError:
        return drive   # MISSING, as the kernel answers
    sent = tapes.load(json.loads(json.dumps(tapes.dump(tape))))   # as the tape travels
    check = get_check(call.check)
    warm_up_for(check)   # as a grading kernel does before its monitor
    with watching(check.forbid, impl) as seen:
        observations = run_program(check, impl, rng=TapeRng(sent))
    if seen:
        forbidden[call.key] = delegation_reason(seen)
    drive.observed = [(o.label, observed(o.value, o.error)) for o in observations]
    drive.status = DriveStatus.DONE
    if any(label == STOPPED for label, _ in drive.observed):
        drive.status = DriveStatus.STOPPED_EARLY
    return drive
