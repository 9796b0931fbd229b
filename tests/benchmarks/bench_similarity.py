"""Benchmark of `coursekit similarity` on a class of 200 (``make bench``; printed with ``-s``).

The class is lab04's planted class (the largest answers) grown to 200 students: the original,
its disguised copies and honest answers, the rest variants of the original with every
name renamed differently (a class of near-copies is the slow case: every pair is a candidate).
Figures: seconds for the whole comparison against the reference sources and each other, and
the ratio to fingerprinting alone (how much the pairwise part adds); goal: seconds, not minutes.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from tooling.planted_class import planted_class, rename_variables
from autograder.publish import similarity as sim
from coursekit import course as manifest

REPO = Path(__file__).resolve().parents[2]
CLASS_SIZE = 200


@pytest.mark.benchmark
def test_similarity_of_a_class_of_200(tmp_path):
    course = manifest.load_course(REPO)
    lab = course.lab("lab04_modules")
    planted = planted_class(course, lab, tmp_path / "submitted")
    answers = sim.answers_of(course, lab, tmp_path / "submitted")
    original = planted.answers["original"]
    for n in range(len(answers), CLASS_SIZE):
        answers[f"student_{n:03d}"] = {e: rename_variables(code).replace("v", f"s{n}_")
                                       if n % 2 else code for e, code in original.items()}
    base = sim.release_base(course, lab)
    references = sim.reference_sources(course)

    started = time.perf_counter()
    for per in answers.values():
        for code in per.values():
            sim._fingerprint(code, base)
    fingerprint_s = time.perf_counter() - started

    started = time.perf_counter()
    matches = sim.compare_answers(answers, base, references)
    total_s = time.perf_counter() - started
    print(f"\nsimilarity, {len(answers)} students × {len(original)} exercises of {lab.id}: "
          f"{total_s:.1f}s ({len([m for m in matches if m.flagged])} pairs flagged); "
          f"fingerprinting alone {fingerprint_s:.1f}s, ratio {total_s / fingerprint_s:.1f}×")
    assert len(answers) == CLASS_SIZE
