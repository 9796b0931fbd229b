"""Mechanical mutants: cosmic-ray's operators applied to every answer cell, judged by the grader.

The hand-written suite (:mod:`tooling.mutants`) holds the bugs people imagine. This module
adds the ones nobody imagines: every arithmetic, comparison, constant, boolean, loop and
statement mutation of each solution's answer cells, made by cosmic-ray's operators
(https://cosmic-ray.readthedocs.io).

Why cosmic-ray and not mutmut: cosmic-ray's operators are plain objects over a parso tree
(``mutation_positions(node)`` / ``mutate(node, index)``) and ``cosmic_ray.mutating.mutate_code``
applies one occurrence to a source string, so the mutants can be judged in-process by our
own harness. mutmut 3 rewrites modules into trampolines dispatched through an environment
variable and drives pytest itself; a notebook cell judged by the grader's scoring fits it badly.

How a run goes, per lab:

1. each answer cell of ``solutions/<lab>`` is written to ``build/mutation/<lab>/<answer>.py``
   (the module the operators mutate; kept for reading). Only what a student writes is
   mutated: the ``### BEGIN SOLUTION`` regions and every default value of a signature; a
   mutant of the given code around them (the same in the release) is counted, not judged;
2. every operator of :data:`OPERATORS` is applied at every occurrence; mutants that are not
   valid Python, or that equal the solution or an earlier mutant once parsed, are counted and
   not judged;
3. each mutant is scored with :class:`tooling.mutants.Harness`, exactly as the hand-written
   ones, under two grade secrets: that yields three seeds, the visible (public) one and two
   hidden ones. A mutant is **killed** only if it loses points on every seed;
4. mutants listed in ``tests/mutants/equivalent/<lab>.py`` (``EQUIVALENT``: answer, the line
   before, the line after, a one-line reason) are reported as equivalent, never dropped.

``python -m tooling.mechanical [LAB...]`` (``make mutants``) prints the table and writes
``tests/mutants/mechanical_results.json``, which the end of ``make test`` summarises.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures as futures
import difflib
import importlib.util
import json
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import parso
from cosmic_ray.mutating import mutate_code
from cosmic_ray.operators.operator import Operator
from cosmic_ray.plugins import get_operator

from tooling.mutants import MUTANT_SECRET, Harness, load_mutants, mutants_path
from coursekit.course import Course, Lab, ManifestError, load_course

SECRETS = (MUTANT_SECRET, "mechanical-second")  # two students' hidden seeds
SEEDS = ("visible", "hidden-1", "hidden-2")
RESULTS = Path("tests") / "mutants" / "mechanical_results.json"
TIMEOUT_S = 15.0  # per score (the slowest right answer takes about 3 s): an infinite loop is interrupted, as the grader's cell timeout


class DeleteStatement(Operator):
    """Replace one simple statement (assignment, call, return, raise, assert...) by ``pass``.

    cosmic-ray has no statement-deletion operator; this one uses its Operator API, so it is
    applied and counted like the built-in ones.
    """

    KINDS = ("expr_stmt", "return_stmt", "raise_stmt", "assert_stmt", "del_stmt")

    def mutation_positions(self, node):
        if node.type in self.KINDS or (node.type in ("atom_expr", "power")
                                       and node.parent is not None
                                       and node.parent.type == "simple_stmt"):
            if node.parent is not None and node.parent.type == "simple_stmt":
                yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        return parso.python.tree.Keyword("pass", node.start_pos, prefix=node.get_first_leaf().prefix)

    @classmethod
    def examples(cls):
        return ()


_BUILTIN = [
    # arithmetic: each operator to its nearest wrong sibling
    "ReplaceBinaryOperator_Add_Sub", "ReplaceBinaryOperator_Sub_Add",
    "ReplaceBinaryOperator_Mul_Div", "ReplaceBinaryOperator_Div_Mul",
    "ReplaceBinaryOperator_Mul_Add", "ReplaceBinaryOperator_Pow_Mul",
    "ReplaceBinaryOperator_FloorDiv_Div", "ReplaceBinaryOperator_Mod_FloorDiv",
    # comparisons: the boundary (< vs <=) and the negation
    "ReplaceComparisonOperator_Lt_LtE", "ReplaceComparisonOperator_LtE_Lt",
    "ReplaceComparisonOperator_Gt_GtE", "ReplaceComparisonOperator_GtE_Gt",
    "ReplaceComparisonOperator_Eq_NotEq", "ReplaceComparisonOperator_NotEq_Eq",
    "ReplaceComparisonOperator_Is_IsNot", "ReplaceComparisonOperator_IsNot_Is",
    # constants, booleans, unary minus
    "NumberReplacer", "ReplaceTrueWithFalse", "ReplaceFalseWithTrue",
    "ReplaceAndWithOr", "ReplaceOrWithAnd", "AddNot", "ReplaceUnaryOperator_USub_UAdd",
    # control flow
    "ReplaceBreakWithContinue", "ReplaceContinueWithBreak", "ZeroIterationForLoop",
]
OPERATORS: dict[str, Operator] = {name: get_operator(f"core/{name}")() for name in _BUILTIN}
OPERATORS["DeleteStatement"] = DeleteStatement()


@dataclass
class Mutant:
    lab: str
    answer: str
    operator: str
    occurrence: int
    before: str  # the solution's line(s) the mutant changes
    after: str
    code: str = field(repr=False, default="")


@dataclass
class Verdict:
    mutant: Mutant
    lost: dict[str, bool]  # seed -> lost points
    score: dict[str, str]  # seed -> "got/max"
    equivalent: str = ""   # the reason, when listed as equivalent

    @property
    def killed(self) -> bool:
        return all(self.lost.values())


def _normal(code: str) -> str | None:
    try:
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return None


def _changed(original: str, mutated: str) -> tuple[str, str]:
    a, b = original.splitlines(), mutated.splitlines()
    before, after = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            before += [line.strip() for line in a[i1:i2]]
            after += [line.strip() for line in b[j1:j2]]
    return " / ".join(before), " / ".join(after)


def student_lines(source: str) -> set[int]:
    """0-based lines a student writes: ``### BEGIN SOLUTION`` regions, and the default values
    of every signature (a default is the student's to get right even where the lab gives the
    ``def`` line). The rest of the cell is given code, the same in the release."""
    lines, inside = set(), False
    for number, line in enumerate(source.splitlines()):
        if "### BEGIN SOLUTION" in line:
            inside = True
        elif "### END SOLUTION" in line:
            inside = False
        elif inside:
            lines.add(number)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                lines.update(range(default.lineno - 1, default.end_lineno))
    return lines


def _changed_lines(original: str, mutated: str) -> set[int]:
    a, b = original.splitlines(), mutated.splitlines()
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.update(range(i1, max(i2, i1 + 1)))
    return out


def generate(lab: str, answer: str, source: str, counts: dict[str, int]) -> list[Mutant]:
    """Every mutant of one answer cell's student-written lines; ``counts`` tallies the ones
    not judged (invalid Python, duplicates, mutants of the given code)."""
    seen = {_normal(source)}
    mine = student_lines(source)
    mutants = []
    for name, operator in OPERATORS.items():
        occurrence = 0
        while True:
            mutated = mutate_code(source, operator, occurrence)
            if mutated is None:
                break
            normal = _normal(mutated)
            if normal is None:
                counts["invalid"] = counts.get("invalid", 0) + 1
            elif normal in seen:
                counts["duplicate"] = counts.get("duplicate", 0) + 1
            elif not _changed_lines(source, mutated) <= mine:
                counts["given code"] = counts.get("given code", 0) + 1
            else:
                seen.add(normal)
                before, after = _changed(source, mutated)
                mutants.append(Mutant(lab, answer, name, occurrence, before, after, mutated))
            occurrence += 1
    return mutants


def write_modules(course: Course, lab: Lab, harness: Harness) -> None:
    folder = course.root / "build" / "mutation" / lab.id
    folder.mkdir(parents=True, exist_ok=True)
    for cell in harness.answers:
        (folder / f"{cell.grade_id}.py").write_text(cell.source + "\n")


def load_equivalent(course: Course, lab: str) -> dict[tuple[str, str, str], str]:
    path = course.root / "tests" / "mutants" / "equivalent" / f"{lab}.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"_equivalent_{lab}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {(a, b, c): reason for a, b, c, reason in getattr(module, "EQUIVALENT", [])}


# --- judging, in worker processes -------------------------------------------------------------

class MutantTimeout(BaseException):
    """Raised by the alarm inside a mutant that runs too long (an infinite loop)."""


_HARNESSES: dict[tuple[str, str], Harness] = {}


def _harness(lab: str, secret: str) -> Harness:
    if (lab, secret) not in _HARNESSES:
        course = load_course()
        _HARNESSES[(lab, secret)] = Harness(course, course.lab(lab), secret)
    return _HARNESSES[(lab, secret)]


def _alarm(signum, frame):
    raise MutantTimeout()


def judge(mutant: Mutant) -> tuple[dict[str, bool], dict[str, str]]:
    """Lost points per seed: the visible seed and the two secrets' hidden seeds."""
    lost, score = {}, {}
    signal.signal(signal.SIGALRM, _alarm)
    for secret, seed in zip(SECRETS, SEEDS[1:]):
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
        try:
            cell = _harness(mutant.lab, secret).score(mutant.answer, mutant.code)
            checks = cell.checks
        except MutantTimeout:
            checks = None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for hidden, name in ((False, "visible"), (True, seed)):
            if name in lost:
                continue
            if checks is None:
                lost[name], score[name] = True, "timeout"
                continue
            mine = [c for c in checks if c.hidden == hidden]
            got, top = sum(c.score for c in mine), sum(c.max_score for c in mine)
            lost[name], score[name] = got < top - 1e-9, f"{got:g}/{top:g}"
    return lost, score


def _init_worker():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass


def run(labs: list[str] | None = None, jobs: int = 2) -> dict:
    course = load_course()
    selected = course.select(labs or [])
    report: dict = {"seeds": list(SEEDS), "labs": {}}
    start = time.monotonic()
    for lab in selected:
        harness = Harness(course, lab, SECRETS[0])
        write_modules(course, lab, harness)
        counts: dict[str, int] = {}
        mutants = [m for cell in harness.answers
                   for m in generate(lab.id, cell.grade_id, cell.source, counts)]
        equivalent = load_equivalent(course, lab.id)
        verdicts: list[Verdict] = []
        context = multiprocessing.get_context("fork")
        with futures.ProcessPoolExecutor(jobs, mp_context=context,
                                         initializer=_init_worker) as pool:
            for mutant, (lost, score) in zip(mutants, pool.map(judge, mutants, chunksize=4)):
                reason = equivalent.get((mutant.answer, mutant.before, mutant.after), "")
                verdicts.append(Verdict(mutant, lost, score, reason))
        hand = _hand_written(course, lab, harness)
        report["labs"][lab.id] = _summary(verdicts, counts, hand)
        print(f"{lab.id}: {len(mutants)} mutants judged ({time.monotonic() - start:.0f} s)",
              file=sys.stderr, flush=True)
    report["seconds"] = round(time.monotonic() - start, 1)
    return report


def _hand_written(course: Course, lab: Lab, harness: Harness) -> dict:
    """The hand-written suite under the same three seeds."""
    killed = total = 0
    survivors = []
    for answer, variants in load_mutants(mutants_path(course, lab)).items():
        for name, code in variants:
            lost, _ = judge(Mutant(lab.id, answer, "hand-written", 0, "", "", code))
            total += 1
            killed += all(lost.values())
            if not all(lost.values()):
                survivors.append(f"{answer}: {name} (lost on {[s for s in SEEDS if lost[s]]})")
    return {"mutants": total, "killed": killed, "survivors": survivors}


def _summary(verdicts: list[Verdict], counts: dict[str, int], hand: dict) -> dict:
    judged = [v for v in verdicts if not v.equivalent]
    out = {
        "hand_written": hand,
        "mechanical": {
            "generated": len(verdicts) + sum(counts.values()),
            "not_judged": counts,
            "judged": len(judged),
            "killed": sum(v.killed for v in judged),
            "killed_per_seed": {s: sum(v.lost[s] for v in judged) for s in SEEDS},
            "equivalent": [dict(answer=v.mutant.answer, before=v.mutant.before,
                                after=v.mutant.after, reason=v.equivalent,
                                killed=v.killed) for v in verdicts if v.equivalent],
            "survivors": [dict(answer=v.mutant.answer, operator=v.mutant.operator,
                               before=v.mutant.before, after=v.mutant.after, score=v.score)
                          for v in judged if not v.killed],
        },
    }
    return out


def rate(killed: int, total: int) -> str:
    return f"{killed}/{total} ({killed / total:.1%})" if total else "—"


def table(report: dict) -> str:
    lines = [f"{'lab':<18} {'hand-written':>18} {'mechanical':>20} {'equivalent':>10}"]
    for lab, item in report["labs"].items():
        hand, mech = item["hand_written"], item["mechanical"]
        lines.append(f"{lab:<18} {rate(hand['killed'], hand['mutants']):>18} "
                     f"{rate(mech['killed'], mech['judged']):>20} "
                     f"{len(mech['equivalent']):>10}")
    lines.append(f"(killed = lost points on every seed: {', '.join(report['seeds'])}; "
                 f"{report.get('seconds', 0):g} s)")
    for lab, item in report["labs"].items():
        mech = item["mechanical"]
        per_seed = ", ".join(f"{s} {n}" for s, n in mech["killed_per_seed"].items())
        lines.append(f"\n{lab}: {mech['generated']} generated, {mech['judged']} judged, "
                     f"not judged {mech['not_judged'] or {}}; killed per seed: {per_seed}")
        for e in mech["equivalent"]:
            lines.append(f"  equivalent  {e['answer']}: `{e['before']}` -> `{e['after']}`: "
                         f"{e['reason']}")
        for s in item["hand_written"]["survivors"]:
            lines.append(f"  SURVIVED (hand-written) {s}")
        for s in mech["survivors"]:
            lines.append(f"  SURVIVED {s['answer']} [{s['operator']}]: `{s['before']}` -> "
                         f"`{s['after']}` {s['score']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="PYTHONPATH=tests python -m tooling.mechanical",
        description="Mechanical mutants of every answer cell, judged by the grader; prints the "
                    "kill rates and writes tests/mutants/mechanical_results.json "
                    "(MUTANT_JOBS=N worker processes, default 2).")
    parser.add_argument("labs", nargs="*", metavar="LAB", help="lab ids (default: every lab)")
    args = parser.parse_args(argv).labs
    jobs = int(os.environ.get("MUTANT_JOBS", "2"))
    try:
        load_course().select(args)
    except ManifestError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report = run(args, jobs)
    course = load_course()
    path = course.root / RESULTS
    if not args and path.parent.exists():
        path.write_text(json.dumps(report, indent=1) + "\n")
    elif path.exists():  # a partial run updates its labs only
        old = json.loads(path.read_text())
        old["labs"].update(report["labs"])
        path.write_text(json.dumps(old, indent=1) + "\n")
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
