"""Collect believes neither the student a hand-in names nor the time it states
(autograder/pipeline/verified_collect.py), through nbgrader's own commands.

In the exchange's inbound folder, a hand-in's folder name and ``timestamp.txt`` are written by
the student's server, so every attack here is something a student can do: set the time back,
remove it, hand in under another student's name, name a hand-in with no time in it, put a
link in it (to the instructor's solution, or a dangling one that made nbgrader's copy fail),
nest folders deeper than a walk can go, or plant a refused hand-in in another's name.
"""
from __future__ import annotations

import os
import shutil
from datetime import datetime, timedelta, timezone

import pytest

from autograder.pipeline.collect import submitted_at
from autograder.pipeline.receipts import SLACK, receipt_path
from conftest import NBGRADER, exchange_users, make_fixture_course
from nbgrader.utils import get_username, parse_utc

pytestmark = pytest.mark.slow
LAB = "labfx"
STRANGER_UID = 54_321   # a uid with no account: another user's hand-in


BACK = (datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> tuple:
    """A released lab, an honest hand-in by this account through nbgrader's submit, and
    copies of it as students' servers could write them; then one collect. Returns the
    course and what collect said."""
    tmp_path = tmp_path_factory.mktemp("exchange")
    course = make_fixture_course(tmp_path / "tree")
    users = exchange_users(course, tmp_path)
    desk = tmp_path / "desk"
    desk.mkdir()
    users.run(NBGRADER + ["release_assignment", LAB], course.course_dir, users.instructor)
    users.run(NBGRADER + ["fetch_assignment", LAB], desk, users.student)
    users.run(NBGRADER + ["submit", LAB], desk, users.student)
    inbound = course.course_dir / "exchange" / "deep-learning-software" / "inbound"
    (honest,) = inbound.iterdir()

    def copy(name: str):
        return shutil.copytree(honest, inbound / name)

    # dan sets his time a day back; eve removes hers; "bob" is another user's forgery;
    # fay's folder name holds no time at all.
    (copy(f"dan+{LAB}+{BACK}+x") / "timestamp.txt").write_text(BACK)
    (copy(f"eve+{LAB}+{BACK}+x") / "timestamp.txt").unlink()
    if os.geteuid() == 0:
        forged = copy(f"bob+{LAB}+{BACK}+forged")
        for path in [forged, *forged.rglob("*")]:
            os.lchown(path, STRANGER_UID, -1)
    copy(f"fay+{LAB}+not a time+x")
    # gus links his notebook to the instructor's solution; hal leaves a dangling link; ivy
    # nests folders deeper than any walk may go; "jon" has a genuine hand-in and a refused
    # one planted in his name.
    gus = copy(f"gus+{LAB}+{BACK}+x")
    (gus / f"{LAB}.ipynb").unlink()
    (gus / f"{LAB}.ipynb").symlink_to(course.source_notebook(course.lab(LAB)))
    (copy(f"hal+{LAB}+{BACK}+x") / "zz_broken").symlink_to("/nonexistent")
    deep = copy(f"ivy+{LAB}+{BACK}+x")
    for _ in range(60):
        deep = deep / "d"
    deep.mkdir(parents=True)
    copy(f"jon+{LAB}+{BACK}+x")
    copy(f"jon+{LAB}+no time+planted")
    said = users.run(NBGRADER + ["collect", "--before-duedate", LAB], course.course_dir,
                     users.instructor)
    return course, said, honest


def test_an_honest_hand_in_keeps_the_time_it_states(collected):
    course, _, honest = collected
    me = get_username()
    stated = parse_utc((honest / "timestamp.txt").read_text().strip())
    assert submitted_at(course.submitted_dir, me, LAB) == stated
    assert receipt_path(course.course_dir, me, LAB).is_file()


def test_a_time_set_back_counts_from_when_the_files_last_changed(collected):
    course, _, _ = collected
    when = submitted_at(course.submitted_dir, "dan", LAB)
    assert when > parse_utc(BACK) + SLACK
    assert abs(when - datetime.now(timezone.utc).replace(tzinfo=None)) < timedelta(hours=1)


def test_a_hand_in_without_a_time_is_timed_by_its_files(collected):
    course, _, _ = collected
    assert (course.submitted_dir / "eve" / LAB).is_dir()
    assert submitted_at(course.submitted_dir, "eve", LAB) is not None


@pytest.mark.skipif(os.geteuid() != 0, reason="handing in as another user needs chown (root)")
def test_a_hand_in_under_another_students_name_is_not_collected(collected):
    course, said, _ = collected
    assert f"it names the student 'bob' but belongs to 'uid {STRANGER_UID}'" in said, said
    assert not (course.submitted_dir / "bob").exists()


def test_a_name_with_no_time_in_it_is_skipped_not_fatal_to_the_others(collected):
    course, said, _ = collected
    assert "its name holds no time" in said, said
    assert not (course.submitted_dir / "fay").exists()
    assert (course.submitted_dir / "dan" / LAB).is_dir()   # everyone else's is collected


def test_a_link_in_a_hand_in_is_never_followed(collected):
    course, said, _ = collected
    assert "'labfx.ipynb' is not a file or a folder (a link?)" in said, said
    assert not (course.submitted_dir / "gus").exists() or not any(
        (course.submitted_dir / "gus").rglob("*.ipynb"))
    assert "'zz_broken' is not a file or a folder (a link?)" in said, said


def test_a_tree_too_deep_to_walk_is_refused_and_the_rest_collected(collected):
    course, said, _ = collected
    assert "folders nested deeper than" in said, said
    assert not any((course.submitted_dir / "ivy").rglob("*")) if (
        course.submitted_dir / "ivy").exists() else True
    assert (course.submitted_dir / "jon" / LAB).is_dir()


def test_a_refused_hand_in_never_stands_in_for_a_genuine_one(collected):
    course, _, _ = collected
    assert (course.submitted_dir / "jon" / LAB / f"{LAB}.ipynb").is_file()


def test_a_receipt_times_only_the_hand_in_it_was_written_for(collected, tmp_path):
    course, _, _ = collected
    assert submitted_at(course.submitted_dir, "dan", LAB) > parse_utc(BACK) + SLACK
    other = tmp_path / "submitted"
    shutil.copytree(course.submitted_dir / "dan", other / "dan")
    (other / "dan" / LAB / "submission_secret.txt").write_text("another hand-in")
    # The same receipts folder, another hand-in: its own (set back) time, not the receipt's.
    shutil.copytree(course.course_dir / "exchange_receipts", tmp_path / "exchange_receipts")
    assert submitted_at(other, "dan", LAB) == parse_utc(BACK)
