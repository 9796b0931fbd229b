"""`coursekit similarity` on the planted-copy class (:mod:`tooling.planted_class`).

Every lab's class holds the solution, five disguised copies of it, answers pasted from the
reference source and the honest right answers of ``tests/mutants`` written differently. The
fingerprints are deterministic (stable k-gram hashes, not the salted ``hash()``), so the test
asserts the measured outcome exactly: which copies are caught, that every pasted reference is
caught, and that no independently written answer is flagged, each score at least ``MARGIN``
from the threshold it is judged against. Rates are printed (``-s``) for the record.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from autograder import commands
from coursekit import course as manifest
from autograder.publish import similarity as sim
from tooling.planted_class import DISGUISES, REFERENCE_COPIES, planted_class
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)

# The one known limit, measured: lab00's roofline is six one-line functions; reordered, the
# copy keeps 0.43 of the original's fingerprints, no more than an honest answer writing the
# same one-liners (0.40), so neither is flagged at THRESHOLD (0.5).
KNOWN_MISSES = {"lab00_setup": {("reordered", "roofline"), ("disguised", "roofline")}}
MARGIN = 0.03  # every score this far at least from the threshold it is judged against


def _best(matches, student: str, exercise: str, other) -> sim.Match | None:
    pairs = [m for m in matches if m.exercise == exercise and
             ((m.student == student and other(m.other)) or
              (m.other == student and other(m.student)))]
    return max(pairs, key=lambda m: m.similarity, default=None)


def _score(match: sim.Match | None) -> float:
    return match.similarity if match else 0.0


@pytest.mark.parametrize("lab_id", [lab.id for lab in COURSE.labs])
def test_planted_copies_are_caught_and_honest_answers_are_not(lab_id, tmp_path):
    lab = COURSE.lab(lab_id)
    planted = planted_class(COURSE, lab, tmp_path / "submitted")
    base = sim.release_base(COURSE, lab)
    matches = sim.compare_answers(sim.answers_of(COURSE, lab, tmp_path / "submitted"), base,
                                  sim.reference_sources(COURSE), keep=10**9)
    is_reference = lambda o: o.startswith(sim.REFERENCE)
    # An exercise is judged when the solution has MIN_TOKENS tokens of its own.
    judged = [e for e, code in planted.answers["original"].items()
              if sim._fingerprint(code, base).token_coverage >= sim.MIN_TOKENS]
    copies = {(how, e): _best(matches, f"copy_{how}", e, lambda o: o == "original")
              for how in DISGUISES for e in judged}
    pasted = {e: _best(matches, "copy_reference", e, is_reference)
              for (lab_, e) in REFERENCE_COPIES if lab_ == lab_id and sim._fingerprint(
                  planted.answers["copy_reference"][e], base).token_coverage >= sim.MIN_TOKENS}
    independent = {s: e for s, (e, _, free) in planted.honest.items() if free}
    honest = {s: (_best(matches, s, e, lambda o: not is_reference(o)),
                  _best(matches, s, e, is_reference)) for s, e in independent.items()}

    missed = {key for key, m in copies.items() if not (m and m.flagged)}
    missed_pasted = sorted(e for e, m in pasted.items() if not (m and m.flagged))
    false_flags = sorted((s, independent[s]) for s, pair in honest.items()
                         if any(m and m.flagged for m in pair))
    print(f"\n{lab_id}: disguised copies caught {len(copies) - len(missed)}/{len(copies)} "
          f"({len(judged)} exercises judged, {len(planted.answers['original']) - len(judged)} "
          f"too short to judge); pasted references caught {len(pasted) - len(missed_pasted)}"
          f"/{len(pasted)}; honest answers flagged {len(false_flags)}/{len(independent)}")
    assert missed == KNOWN_MISSES.get(lab_id, set()), f"copies not flagged: {sorted(missed)}"
    assert missed_pasted == [], f"pasted references not flagged: {missed_pasted}"
    assert false_flags == [], f"honest answers flagged: {false_flags}"

    # Margins: no outcome above hangs on a point or two of similarity.
    near = [(f"copy_{how}", e, _score(m)) for (how, e), m in copies.items()
            if abs(_score(m) - sim.THRESHOLD) < MARGIN]
    near += [("copy_reference", e, _score(m)) for e, m in pasted.items()
             if abs(_score(m) - sim.REFERENCE_THRESHOLD) < MARGIN]
    near += [(s, independent[s], _score(m)) for s, (m, _) in honest.items()
             if abs(_score(m) - sim.THRESHOLD) < MARGIN]
    near += [(s, independent[s], _score(r)) for s, (_, r) in honest.items()
             if abs(_score(r) - sim.REFERENCE_THRESHOLD) < MARGIN]
    assert near == [], f"scores within {MARGIN} of a threshold: {near}"


def test_command_writes_report_and_gradebook_flags_without_touching_scores(tmp_path, capsys):
    lab = COURSE.lab("lab05_data")
    planted_class(COURSE, lab, tmp_path / "submitted")
    db = tmp_path / "gradebook.db"
    report = tmp_path / "report.html"
    parser = commands.argparse.ArgumentParser()
    commands.similarity_arguments(parser)
    args = parser.parse_args(["lab05_data", str(tmp_path / "submitted"), "--out", str(report),
                              "--db", f"sqlite:///{db}", "--root", str(REPO)])
    assert commands.similarity(args) == 0
    out = capsys.readouterr().out
    assert "flagged" in out and "no score changed" in out
    page = report.read_text(encoding="utf-8")
    assert "<mark>" in page and "copy_disguised" in page and "reference:coursekit/data" in page
    with sqlite3.connect(db) as connection:
        rows = connection.execute("select student, other, exercise, similarity from "
                                  "coursekit_similarity where lab = 'lab05_data'").fetchall()
        outcomes = connection.execute("select count(*) from coursekit_outcome").fetchone()[0]
    flagged = {(s, o) for s, o, _, _ in rows} | {(o, s) for s, o, _, _ in rows}
    assert ("copy_renamed", "original") in flagged
    assert not any(s.startswith("honest_") or o.startswith("honest_") for s, o, _, _ in rows)
    assert outcomes == 0  # no grade was written or changed
    # Re-running replaces the lab's flags, never adds to them.
    assert commands.similarity(args) == 0
    with sqlite3.connect(db) as connection:
        again = connection.execute("select count(*) from coursekit_similarity").fetchone()[0]
    assert again == len(rows)


def test_fingerprints_are_the_same_in_every_process():
    """The k-gram hashes are not Python's salted ``hash()``: another process, with another
    PYTHONHASHSEED, fingerprints an answer the same."""
    import os
    import subprocess
    import sys
    code = (REPO / "coursekit" / "optim" / "sgd.py").read_text(encoding="utf-8")
    here = sorted(sim._fingerprint(code, sim.base_hashes("x = 1\n")).hashes)
    script = ("import sys; from autograder.publish import similarity as sim\n"
              "code = sys.stdin.read()\n"
              "print(sorted(sim._fingerprint(code, sim.base_hashes('x = 1\\n')).hashes))")
    for seed in ("1", "2"):
        there = subprocess.run([sys.executable, "-c", script], input=code, text=True, cwd=REPO,
                               env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True,
                               timeout=scaled(120), check=True).stdout
        assert there.strip() == str(here)
    assert here and sim.kgram_hashes("return V*V*V").size == 0  # shorter than K: no k-gram
    assert sim.kgram_hashes("a" * sim.K).tolist() == [sim.kgram_hashes("a" * (sim.K + 1))[0]]
