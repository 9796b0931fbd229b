"""Score the blind corpus (issue 27): answers written from a lab's released text alone, by
someone who had not read tests/mutants/ or the checks. Prints, per lab, how many wrong answers
lose points under every secret and how many right answers keep full marks.

Each round is written by someone new, after the checks were fixed for the rounds before it:
round 1 in ``tests/blind/<lab>.py``, rounds 2 to 9 in ``tests/blind/round2/``
to ``round9/``. A round's
first score is the figure for answers the checks had never seen.

    .venv/bin/python tests/blind/score_blind.py [--round round2] [lab_id ...]
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))   # the test suite's tooling
# As in tests/conftest.py: JAX reads XLA_FLAGS once, at its first import, and lab08's
# data-parallel checks need two host devices whichever lab imports JAX first.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=2").strip()

from tooling.mutants import MUTANT_SECRET, Harness
from coursekit import course as manifest

SECRETS = (MUTANT_SECRET, "blind-corpus-second-student")
ROUNDS = {"round1": Path(__file__).parent, "round2": Path(__file__).parent / "round2",
          "round3": Path(__file__).parent / "round3", "round4": Path(__file__).parent / "round4",
          "round5": Path(__file__).parent / "round5", "round6": Path(__file__).parent / "round6",
          "round7": Path(__file__).parent / "round7", "round8": Path(__file__).parent / "round8",
          "round9": Path(__file__).parent / "round9"}


def corpus(lab_id: str, round_name: str = "round1") -> dict:
    path = ROUNDS[round_name] / f"{lab_id}.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"_blind_{round_name}_{lab_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"WRONG": module.WRONG, "RIGHT": module.RIGHT,
            "SURVIVORS": getattr(module, "SURVIVORS", {})}


def main(argv: list[str]) -> int:
    round_name = "round1"
    if argv[:1] == ["--round"]:
        round_name, argv = argv[1], argv[2:]
    course = manifest.load_course(REPO)
    labs = argv or [lab.id for lab in course.labs if corpus(lab.id, round_name)]
    results = {}
    for lab_id in labs:
        answers = corpus(lab_id, round_name)
        harnesses = [Harness(course, course.lab(lab_id), secret) for secret in SECRETS]
        rows = []
        for kind in ("WRONG", "RIGHT"):
            for grade_id, variants in answers[kind].items():
                for index, (label, source) in enumerate(variants):
                    scores = [h.score(grade_id, source) for h in harnesses]
                    lost = [s.score < s.max_score - 1e-9 for s in scores]
                    messages = [c.message.splitlines()[0][:160] for s in scores[:1]
                                for c in s.checks if not c.passed]
                    ok = all(lost) if kind == "WRONG" else not any(lost)
                    rows.append({"kind": kind, "grade_id": grade_id, "index": index,
                                 "label": label, "ok": ok, "lost": lost,
                                 "scores": [f"{s.score:g}/{s.max_score:g}" for s in scores],
                                 "messages": messages})
                    mark = "ok  " if ok else "MISS"
                    print(f"{mark} {lab_id} {kind:5} {grade_id}[{index}] {rows[-1]['scores']} "
                          f"{label}", flush=True)
        wrong = [r for r in rows if r["kind"] == "WRONG"]
        right = [r for r in rows if r["kind"] == "RIGHT"]
        print(f"== {lab_id}: wrong caught {sum(r['ok'] for r in wrong)}/{len(wrong)}, "
              f"right kept {sum(r['ok'] for r in right)}/{len(right)}", flush=True)
        results[lab_id] = rows
    out = REPO / "build" / f"blind_scores_{round_name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
