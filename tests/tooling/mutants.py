"""The mutant suite: prove that each lab's checks catch realistic wrong answers.

``tests/mutants/<lab>.py`` holds ``MUTANTS = {answer grade_id: [(name, source), ...]}`` and,
optionally, ``ALTERNATIVES`` in the same form: right answers written differently from the
solution, which must keep full marks.
For each answer cell, the harness replaces it by the solution, the release stub, and each
mutant, and scores the checks cell that covers it — in this process, without a kernel or the
rest of the notebook, so the whole suite stays fast enough for CI:

1. run the lab's setup cells (locked code cells without points) in a fresh namespace;
2. run the answer cells before the checks cell, the one under test replaced;
3. run the checks cell (hidden tests included) with ``grade`` driven as the grader drives a
   kernel: the reference run records the tape of inputs, the program replays it on the
   answer (:mod:`coursekit.grading.tape`), and the grader's own code scores the observations
   (:func:`coursekit.notebook.score.score_checks_cell`). Delegation is judged by what runs, with the
   monitor's own rule (:mod:`coursekit.grading.watch`), as in a grading kernel.

A mutant is *killed* when it loses points. ``python -m tooling.mutants`` prints the kill
rate per lab.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import linecache
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

from coursekit.grading.watch import reason as delegation_reason
from coursekit.grading.watch import watching
from coursekit.grading.program import get_check, run_program
from coursekit.grading.seeds import hidden_seed, public_seed
from coursekit.grading import tape as tapes
from coursekit.grading.tape import TapeRng
from coursekit.grading.verdict import observed, reference_run
from coursekit.grading.warm import warm_up_for

from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import ANSWER, CHECKS, SETUP, GradeCall, LabCell
from coursekit.notebook.drive import Drive, DriveStatus
from coursekit.course import Course, Lab, load_course
from autograder.publish.release import release_notebook
from coursekit.notebook.score import CellScore, score_checks_cell

MUTANT_SECRET = "mutant-suite"  # hidden seeds of the suite: fixed, so a run is reproducible
MIN_MUTANTS = 3


def mutants_path(course: Course, lab: Lab | str) -> Path:
    lab_id = lab if isinstance(lab, str) else lab.id
    return course.root / "tests" / "mutants" / f"{lab_id}.py"


def load_mutants(path: Path, kind: str = "MUTANTS") -> dict[str, list[tuple[str, str]]]:
    """``MUTANTS`` (or ``ALTERNATIVES``) of a lab's mutant file; empty when there is none."""
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"_mutants_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(getattr(module, kind, {}))


def _python(source: str) -> str:
    """Cell source as plain Python (``%magics`` and ``!shell`` lines transformed)."""
    from IPython.core.inputtransformer2 import TransformerManager
    return TransformerManager().transform_cell(source)


def _run_cell(source: str, filename: str, namespace: dict) -> None:
    """Run a cell as IPython does: its lines in linecache, so that ``inspect.getsource`` finds
    the cell's functions (``torch.jit.script`` compiles from their source)."""
    text = _python(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)


@dataclass
class MutantResult:
    lab: str
    answer: str
    name: str
    score: float
    max_score: float
    detail: str = ""

    @property
    def killed(self) -> bool:
        return self.score < self.max_score - 1e-9


class Harness:
    """Scores one answer cell's variants against the checks cell that covers it.

    ``secret`` stands for the grade secret: hidden checks draw their inputs from it, so
    harnesses with different secrets score as different students' hidden seeds would.
    """

    def __init__(self, course: Course, lab: Lab, secret: str = MUTANT_SECRET):
        course.enable_checks()
        self.course, self.lab, self.secret = course, lab, secret
        self.source = lab_cells.load(course.source_notebook(lab))
        self.release = lab_cells.split(release_notebook(course, lab, self.source.nb))
        self.setup = [c for c in self.source.cells if c.role == SETUP]

    @property
    def answers(self) -> list[LabCell]:
        return self.source.with_role(ANSWER)

    def checks_of(self, answer_id: str) -> LabCell:
        answer = self.source.by_id()[answer_id]
        for cell in self.source.with_role(CHECKS):
            if answer in self.source.covered_answers(cell):
                return cell
        raise LookupError(f"no checks cell covers the answer {answer_id!r}")

    def solution(self, answer_id: str) -> str:
        return self.source.by_id()[answer_id].source

    def stub(self, answer_id: str) -> str:
        return self.release.by_id()[answer_id].source

    def score(self, answer_id: str, code: str) -> CellScore:
        """The checks cell's score when ``answer_id`` is answered with ``code``."""
        return self.scored(*self.drive(answer_id, code))

    def scored(self, checks: LabCell, drives: list[Drive], delegated: dict) -> CellScore:
        """What :meth:`drive` returned, scored by the grader's own code."""
        return score_checks_cell(checks, drives, seed_of=self.seed, forbidden=delegated,
                                 reason_if_missing="the checks cell raised before this call")

    def drive(self, answer_id: str, code: str) -> tuple[LabCell, list[Drive], dict]:
        """The checks cell run with ``answer_id`` answered by ``code``: the cell, what each of
        its ``grade(...)`` calls observed, and the calls that used a forbidden capability."""
        checks = self.checks_of(answer_id)
        namespace: dict = {"__name__": "__main__"}
        earlier = [a for a in self.answers if a.index < checks.index]
        drives: list[Drive] = []
        delegated: dict = {}
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()), self._driving(drives, delegated):
            warnings.simplefilter("ignore")
            for cell in self.setup:
                _run_cell(cell.source, f"<setup {cell.grade_id}>", namespace)
            for cell in earlier + [checks]:
                text = code if cell.grade_id == answer_id else cell.source
                try:
                    _run_cell(text, f"<{cell.role} {cell.grade_id}>", namespace)
                except Exception:  # noqa: BLE001 — a broken answer is an outcome, as in a kernel
                    pass
        return checks, drives, delegated

    def _reference_run(self, check_name: str, seed: int) -> tuple:
        """The reference's run on ``seed``, kept for every variant this harness scores: the
        reference is the same for all of them, and re-running it was a third of every score.
        Kept per device too (``$COURSEKIT_DEVICE``): the GPU check scores one harness on
        several. Made on first use, so that a subclass's own ``__init__`` needs nothing."""
        runs = self.__dict__.setdefault("_reference_runs", {})
        key = (check_name, seed, os.environ.get("COURSEKIT_DEVICE"))
        if key not in runs:
            runs[key] = reference_run(check_name, seed)
        return runs[key]

    def seed(self, check: str, hidden: bool) -> int:
        return hidden_seed(check, self.secret, "mutant") if hidden else public_seed(check)

    @contextlib.contextmanager
    def _driving(self, drives: list[Drive], delegated: dict):
        """Make ``grade(...)`` drive the answer as the grader drives a kernel, into ``drives``.

        The checks cell (and any setup cell) gets ``grade`` from ``coursekit.grading``; for
        the duration, that name runs the reference with a recording generator, replays the
        tape on the answer, and keeps both sides for the scorer.
        """
        import coursekit.grading as grading

        def drive(check_name, impl, *, hidden=False):
            seed = self.seed(check_name, hidden)
            expected, tape = self._reference_run(check_name, seed)
            # Through JSON, as the tape travels to a grading kernel.
            sent = tapes.load(json.loads(json.dumps(tapes.dump(tape))))
            check = get_check(check_name)
            warm_up_for(check)   # as a grading kernel does before its monitor
            with watching(check.forbid, impl) as seen:  # the monitor's rule, in-process
                observations = run_program(check, impl, rng=TapeRng(sent))
            if seen:
                delegated[(check_name, hidden)] = delegation_reason(seen)
            drives.append(Drive(GradeCall(check_name, hidden, 0), seed, expected=expected,
                                observed=[(o.label, observed(o.value, o.error))
                                          for o in observations], status=DriveStatus.DONE))

        original = grading.grade
        grading.grade = drive
        try:
            yield
        finally:
            grading.grade = original


def run_lab(course: Course, lab: Lab) -> list[MutantResult]:
    """Every mutant of ``lab``, scored."""
    harness = Harness(course, lab)
    results = []
    for answer, variants in load_mutants(mutants_path(course, lab)).items():
        for name, code in variants:
            cell = harness.score(answer, code)
            results.append(MutantResult(lab.id, answer, name, cell.score, cell.max_score))
    return results


def kill_rate_table(results: list[MutantResult]) -> str:
    by_lab: dict[str, list[MutantResult]] = {}
    for result in results:
        by_lab.setdefault(result.lab, []).append(result)
    lines = [f"{'lab':<18} {'mutants':>7} {'killed':>6} {'kill rate':>9}"]
    for lab, items in by_lab.items():
        killed = sum(r.killed for r in items)
        lines.append(f"{lab:<18} {len(items):>7} {killed:>6} {killed / len(items):>9.0%}")
        lines += [f"    survived: {r.answer}: {r.name} ({r.score:g}/{r.max_score:g})"
                  for r in items if not r.killed]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    course = load_course()
    labs = course.select(list(argv if argv is not None else sys.argv[1:]))
    results = []
    for lab in labs:
        results += run_lab(course, lab)
    print(kill_rate_table(results))
    return 0 if all(r.killed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
