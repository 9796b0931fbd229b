"""The mutant suite: prove that each lab's checks catch realistic wrong answers.

``tests/mutants/<lab>.py`` holds ``MUTANTS = {answer grade_id: [(name, source), ...]}`` and,
optionally, ``ALTERNATIVES`` in the same form: right answers written differently from the
solution, which must keep full marks.
For each answer cell, the harness replaces it by the solution, the release stub, and each
mutant, and grades the checks cell that covers it through the grading pipeline's run step in
this process (:mod:`coursekit.notebook.in_process_run`), without a kernel or the rest of the
notebook, so the whole suite stays fast enough for CI: the plan runs the lab's setup cells and
the answer cells before the checks cell, the one under test replaced, then the checks cell,
whose calls are driven as a kernel's are (the reference run records the tape of inputs, the
program replays it on the answer); the grader's own code scores the observations
(:func:`coursekit.notebook.score.score_checks_cell`). Delegation is judged by what runs, with
the monitor's own rule (:mod:`coursekit.grading.watch`), as in a grading kernel.

A mutant is *killed* when it loses points. ``python -m tooling.mutants`` prints the kill
rate per lab.
"""
from __future__ import annotations

import copy
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.publish.release import release_notebook
from coursekit.course import Course, Lab, load_course
from coursekit.grading.seeds import hidden_seed, public_seed
from coursekit.grading.verdict import reference_run
from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import ANSWER, CHECKS, SETUP, LabCell
from coursekit.notebook.drive import ChecksToDrive, Drive
from coursekit.notebook.in_process_run import run_in_process
from coursekit.notebook.run_plan import RunPlan
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
        ran = run_in_process(self.plan(answer_id, code), reference=self._reference_run)
        checks = self.checks_of(answer_id)
        return checks, ran.execution.drives.get(checks.grade_id, []), ran.forbidden

    def plan(self, answer_id: str, code: str) -> RunPlan:
        """The source notebook with ``answer_id`` answered by ``code``, run up to the checks
        cell that covers it: the setup cells and the answer cells before it."""
        checks = self.checks_of(answer_id)
        nb = copy.deepcopy(self.source.nb)
        nb.cells[self.source.by_id()[answer_id].index].source = code
        ran = {c.index for c in self.source.cells
               if c.index < checks.index and c.role in (SETUP, ANSWER)} | {checks.index}
        return RunPlan(nb, frozenset(range(len(nb.cells))) - ran,
                       {checks.index: ChecksToDrive(checks.grade_id, tuple(checks.calls))},
                       self.seed)

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
