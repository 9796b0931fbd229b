"""The four hand-ins that used to stop a whole class (0 rows stored), each an outcome now.

* a notebook with ``"nbformat_minor": "x"``;
* deeply nested JSON;
* a zip whose notebook uses a compression method zipfile cannot read;
* a corrupt notebook whose error message carried a lone surrogate (``nbformat: "\\ud800"``,
  in a file whose name is not UTF-8), which the gradebook could not encode.

Each is collected, judged and recorded in this process (no kernel) into a real SQLite
gradebook; then one class mixing all four with an honest student and a submission the grader
itself fails on is graded for real by ``coursekit autograde``.
"""
from __future__ import annotations

import asyncio
import json
import os
import zipfile

import nbformat
import pytest

from autograder.demo import demo_class
from autograder.isolation.sandbox import probe
from autograder.pipeline import collect
from autograder.pipeline import gradebook as gb
from autograder.pipeline.grader import Grader, prepare_lab
from autograder.publish import export, feedback
from coursekit.cli import main as coursekit_main
from coursekit.grading.seeds import public_seed
from coursekit.notebook.score import score_notebook

SURROGATE_NAME = os.fsdecode(b"labfx-\xff\xfe.ipynb")   # bytes that are not UTF-8


def hand_in_minor_x(demo, submitted):
    nb = json.loads(nbformat.writes(demo.notebook()))
    nb["nbformat_minor"] = "x"
    (submitted / "bad_minor").mkdir(parents=True)
    (submitted / "bad_minor" / "labfx.ipynb").write_text(json.dumps(nb))


def hand_in_deep_json(demo, submitted):
    (submitted / "bad_deep").mkdir(parents=True)
    (submitted / "bad_deep" / "labfx.ipynb").write_text(
        '{"nbformat": 4, "cells": ' + "[" * 100_000 + "]" * 100_000 + "}")


def _method_99(archive, member: str) -> None:
    """Say, in the zip's headers, that ``member`` uses compression method 99."""
    with zipfile.ZipFile(archive) as zf:
        offset = zf.getinfo(member).header_offset
    data = bytearray(archive.read_bytes())
    data[offset + 8:offset + 10] = (99).to_bytes(2, "little")       # local header
    at = data.find(b"PK\x01\x02")
    while at != -1:                                                 # central directory
        length = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 46:at + 46 + length] == member.encode():
            data[at + 10:at + 12] = (99).to_bytes(2, "little")
        at = data.find(b"PK\x01\x02", at + 4)
    archive.write_bytes(bytes(data))


def hand_in_zip_unknown_method(demo, submitted, member="labfx/labfx.ipynb", student="bad_zip"):
    submitted.mkdir(parents=True, exist_ok=True)
    archive = submitted / f"{student}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("labfx/labfx.ipynb", nbformat.writes(demo.notebook()))
        zf.writestr("labfx/data.csv", "x,y\n1,2\n")
    _method_99(archive, member)


def hand_in_surrogate(demo, submitted):
    (submitted / "bad_surrogate").mkdir(parents=True)
    (submitted / "bad_surrogate" / SURROGATE_NAME).write_text(
        '{"nbformat": "\\ud800", "nbformat_minor": 0, "metadata": {}, "cells": []}')


@pytest.fixture
def demo(fixture_course):
    return demo_class.demo_lab(fixture_course, fixture_course.labs[0])


def _collect_one(demo, student):
    lab = demo.lab
    subs = collect.collect(demo.course, [lab], {lab.id: demo.source.identifying_ids},
                           demo.course.submitted_dir, [student])
    (sub,) = subs
    return sub


def _stored(demo, sub):
    """``sub`` judged by the grader (no kernel: it is not a found notebook) and recorded in
    a real gradebook next to another student's grade; returns what the gradebook holds."""
    course = demo.course
    context = prepare_lab(course, demo.lab)
    gradebook = gb.open_gradebook(course.default_db_url)
    try:
        gb.register_lab(gradebook, demo.lab, context.source)
        other = gb.Outcome("zoe", demo.lab.id, "graded", context.source.max_score,
                           context.source.auto_max_score,
                           score_notebook(context.source, None, None,
                                          seed_of=lambda c, h: public_seed(c), zero_reason="-"),
                           ["zoe's own grade"])
        gb.record(gradebook, other)
        outcome = asyncio.run(Grader(course, probe(course, disabled=True)).grade(
            sub, context))
        gb.record(gradebook, outcome)
        stored = {o.student: o for o in gb.load_outcomes(gradebook)}
    finally:
        gradebook.close()
    assert stored["zoe"].reasons == ["zoe's own grade"]
    mine = stored[sub.student]
    feedback.render(mine, "t").encode("utf-8")
    json.dumps(export.results_json(mine), ensure_ascii=False).encode("utf-8")
    return mine


def test_nbformat_minor_x_is_a_corrupt_outcome_that_says_so(demo):
    hand_in_minor_x(demo, demo.course.submitted_dir)
    sub = _collect_one(demo, "bad_minor")
    assert sub.status == collect.SubmissionStatus.CORRUPT
    assert sub.notes == ["'labfx.ipynb': not a notebook: nbformat_minor is 'x', expected an "
                         "integer"]
    stored = _stored(demo, sub)
    assert stored.status == "corrupt" and stored.reasons == sub.notes
    assert all(c.score == 0 and "nbformat_minor is 'x'" in c.message
               for c in stored.checks if c.kind == "checks")


def test_deeply_nested_json_is_a_corrupt_outcome_that_says_so(demo):
    hand_in_deep_json(demo, demo.course.submitted_dir)
    sub = _collect_one(demo, "bad_deep")
    assert sub.status == collect.SubmissionStatus.CORRUPT and "nested too deeply" in sub.notes[0]
    assert _stored(demo, sub).status == "corrupt"


def test_json_nested_deeper_than_a_notebook_but_readable_is_refused_by_depth(demo):
    folder = demo.course.submitted_dir / "bad_depth"
    folder.mkdir(parents=True)
    nb = json.loads(nbformat.writes(demo.notebook()))
    nb["metadata"]["deep"] = "@"
    (folder / "labfx.ipynb").write_text(json.dumps(nb).replace('"@"', "[" * 500 + "]" * 500))
    sub = _collect_one(demo, "bad_depth")
    assert sub.status == collect.SubmissionStatus.CORRUPT
    assert f"expected at most {collect.MAX_JSON_DEPTH}" in sub.notes[0]


def test_a_zip_whose_notebook_uses_an_unknown_compression_method_is_corrupt_and_named(demo):
    hand_in_zip_unknown_method(demo, demo.course.submitted_dir)
    sub = _collect_one(demo, "bad_zip")
    assert sub.status == collect.SubmissionStatus.CORRUPT
    assert sub.notes[0] == ("'labfx/labfx.ipynb': could not be unpacked from the zip: it uses "
                            "compression method 99, which cannot be read (re-zip it with the "
                            "standard method, deflate)")
    assert _stored(demo, sub).status == "corrupt"


def test_a_zip_member_with_an_unknown_method_is_left_out_and_the_notebook_graded(demo):
    hand_in_zip_unknown_method(demo, demo.course.submitted_dir, member="labfx/data.csv",
                               student="half_zip")
    sub = _collect_one(demo, "half_zip")
    assert sub.status == collect.SubmissionStatus.FOUND
    assert any(n.startswith("'labfx/data.csv' was left out of the zip: it uses compression "
                            "method 99") for n in sub.notes), sub.notes


def test_a_corrupt_notebook_whose_message_carries_a_lone_surrogate_is_stored(demo):
    hand_in_surrogate(demo, demo.course.submitted_dir)
    sub = _collect_one(demo, "bad_surrogate")
    assert sub.status == collect.SubmissionStatus.CORRUPT
    assert "nbformat is '\ufffd', expected an integer (4)" in sub.notes[0]
    stored = _stored(demo, sub)
    assert stored.status == "corrupt"
    # The name's bytes are quoted as Python escapes: a TA can tell which file it is.
    assert stored.reasons[0].startswith("'labfx-\\udcff\\udcfe.ipynb': not a notebook")


def test_the_gradebook_replaces_unencodable_text_and_rolls_back_a_failed_write(demo):
    hand_in_minor_x(demo, demo.course.submitted_dir)
    sub = _collect_one(demo, "bad_minor")
    sub.notes = ["\ud800 lone, \x00 NUL, \x1b[31m escape"]
    stored = _stored(demo, sub)
    assert stored.reasons[0] == "\ufffd lone, \ufffd NUL, \ufffd[31m escape"
    gradebook = gb.open_gradebook(demo.course.default_db_url)
    try:
        flagged = _flagged(gradebook, demo.lab.id, "bad_minor")
        # max_score None: NOT NULL, so the write fails after the old rows were deleted
        broken = gb.Outcome("bad_minor", demo.lab.id, "graded", None, 5.0, flagged=not flagged)
        with pytest.raises(Exception):
            gb.record(gradebook, broken)
        kept = {o.student: o for o in gb.load_outcomes(gradebook)}
        assert _flagged(gradebook, demo.lab.id, "bad_minor") is flagged   # nbgrader's rows too
    finally:
        gradebook.close()
    assert kept["bad_minor"].reasons == stored.reasons and "zoe" in kept


def _flagged(gradebook, lab: str, student: str) -> bool:
    """nbgrader's own flag on the student's notebook, read afresh from the database."""
    gradebook.db.expire_all()
    (notebook,) = gradebook.find_submission(lab, student).notebooks
    return bool(notebook.flagged)


@pytest.mark.slow
def test_a_class_with_every_bad_hand_in_grades_the_honest_student_and_exits_1(demo,
                                                                               test_limits):
    course, lab = demo.course, demo.lab
    submitted = course.submitted_dir
    (submitted / "ann").mkdir(parents=True)
    nbformat.write(demo.notebook(), str(submitted / "ann" / lab.notebook))
    hand_in_minor_x(demo, submitted)
    hand_in_deep_json(demo, submitted)
    hand_in_zip_unknown_method(demo, submitted)
    hand_in_surrogate(demo, submitted)
    # A submission the grader itself fails on: a file stands where its graded folder goes.
    (submitted / "eve_blocked").mkdir()
    nbformat.write(demo.notebook(), str(submitted / "eve_blocked" / lab.notebook))
    course.autograded_dir.mkdir(parents=True, exist_ok=True)
    (course.autograded_dir / "eve_blocked").write_text("not a folder")
    # A grade stored before this run, of a student not in this class.
    context = prepare_lab(course, lab)
    gradebook = gb.open_gradebook(course.default_db_url)
    try:
        gb.register_lab(gradebook, lab, context.source)
        gb.record(gradebook, gb.Outcome("zoe", lab.id, "graded", context.source.max_score,
                                        context.source.auto_max_score,
                                        reasons=["graded last week"]))
    finally:
        gradebook.close()

    limits = ["--cell-timeout", str(test_limits.cell_timeout_s), "--time-limit",
              str(test_limits.time_limit_s), "--memory-mb", str(test_limits.memory_mb)]
    code = coursekit_main(["autograde", "--root", str(course.root), "--no-progress",
                           "--jobs", "2", *limits])

    gradebook = gb.open_gradebook(course.default_db_url)
    try:
        stored = {o.student: o for o in gb.load_outcomes(gradebook)}
    finally:
        gradebook.close()
    assert code == 1   # eve's grader error is reported by the exit code
    assert stored["ann"].status == "graded"
    assert stored["ann"].score == pytest.approx(demo.max_score)
    for student, words in [("bad_minor", "nbformat_minor is 'x'"),
                           ("bad_deep", "nested too deeply"),
                           ("bad_zip", "compression method 99"),
                           ("bad_surrogate", "nbformat is '\ufffd'")]:
        assert stored[student].status == "corrupt", stored[student]
        assert words in stored[student].reasons[0]
    eve = stored["eve_blocked"]
    assert eve.status == "error" and eve.score == 0
    assert "the grader failed on this submission" in eve.reasons[-1]
    assert "Traceback" not in eve.reasons[-1] and len(eve.reasons[-1]) < 600
    assert stored["zoe"].reasons == ["graded last week"]

    # Only the corrupt ones, again: no grader error, so exit 0.
    assert coursekit_main(["autograde", "--root", str(course.root), "--no-progress",
                           "--student", "bad_minor", "--student", "bad_zip", *limits]) == 0
