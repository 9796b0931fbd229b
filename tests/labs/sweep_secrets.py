"""Every solution under many students' secrets: finds a check that fails a right answer on
rare hidden seeds, before a student (or CI's run of the solutions, whose hidden calls draw a
fresh seed each time) meets it.

``make sweep-secrets`` (``SECRETS=N``, ``LABS="lab05_data ..."``) scores each answer cell of
each lab's solution with the mutant suite's harness, once per secret, and prints every cell
that loses points with the cases that differ; it exits 1 when one does. The suite itself scores
the solutions under three secrets; a rare failure needs more (lab05.batch_sampler failed 1
hidden seed in about 140, see ``coursekit.grading.program.run_program``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the test suite's tooling
from tooling.mutants import Harness
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]


def sweep(lab_ids: list[str], secrets: int) -> int:
    """The number of (lab, answer, secret) scores below full marks, each printed."""
    course = manifest.load_course(REPO)
    failures = 0
    for lab_id in lab_ids:
        start = time.monotonic()
        for k in range(secrets):
            harness = Harness(course, course.lab(lab_id), f"sweep-{k}")
            for cell in harness.answers:
                scored = harness.score(cell.grade_id, harness.solution(cell.grade_id))
                if scored.score < scored.max_score - 1e-9:
                    failures += 1
                    print(f"{lab_id} {cell.grade_id}, secret sweep-{k}: "
                          f"{scored.score:g}/{scored.max_score:g}", flush=True)
                    for check in scored.checks:
                        if not check.passed:
                            print(f"    {check.name}: {check.message[:500]}", flush=True)
        print(f"{lab_id}: {secrets} secrets in {time.monotonic() - start:.0f} s", flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/labs/sweep_secrets.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("labs", nargs="*", metavar="LAB", help="lab ids (default: every lab)")
    parser.add_argument("--secrets", type=int, default=10, help="secrets per lab (default 10)")
    args = parser.parse_args(argv)
    course = manifest.load_course(REPO)
    labs = [lab.id for lab in course.select(args.labs)]
    failures = sweep(labs, args.secrets)
    print(f"{failures} solution score(s) below full marks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
