"""Red team (issue 8, "Done when"): a determined student who has read the grader attacks
lab01_graphs, graded for real (release, nbgrader assembly, sandboxed kernels with the grading
monitor, a SQLite gradebook, feedback pages and exports), all in ONE class run next to honest
students.

* every attack scores 0 on the exercise it targets, or (alone in its hand-in) is flagged for
  a TA;
* the honest students keep full marks unflagged: the solution, answers written differently
  (``ALTERNATIVES`` of the mutant suite), answers that name torch.autograd and
  ``.backward()`` in comments, docstrings and strings or define their own ``backward``
  method, and the lecture's grad-mode idioms around a hand-written backward (updates under
  ``torch.no_grad()``, ``inference_mode``, ``set_grad_enabled``, ``enable_grad``,
  ``detach``: issue 24);
* no hand-in stops the class run or breaks the grader (no ``error`` outcome);
* nothing from the student's process reaches a hidden check's feedback, and hidden inputs
  differ between two gradings of the same hand-in.

The hand-ins themselves are in :mod:`red_team_lab01`.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from autograder.demo import demo_class
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
from autograder.pipeline.gradebook import load_outcomes, open_gradebook
from autograder.publish.export import export
from autograder.publish.feedback import write_feedback
from autograder.publish.release import write_release
from coursekit import course as manifest
from coursekit.grading.integrity import DELEGATION

sys.path.insert(0, str(Path(__file__).resolve().parent))
import red_team_lab01 as rt

REPO = Path(__file__).resolve().parents[2]
HANDS, ATTACKS, HONEST = rt.hands()
LIMITS = Overrides(cell_timeout_s=30, time_limit_s=150)

pytestmark = pytest.mark.slow


def _grade_class(root: Path) -> dict:
    (root / "course").mkdir(parents=True)
    for name in ("course.toml", "nbgrader_config.py"):
        shutil.copy(REPO / "course" / name, root / "course" / name)
    shutil.copytree(REPO / "solutions" / rt.LAB, root / "solutions" / rt.LAB)
    course = manifest.load_course(root)
    lab = course.lab(rt.LAB)
    write_release(course, lab)
    demo = demo_class.demo_lab(course, lab)
    for hand in HANDS:
        hand.write(demo, course.submitted_dir / hand.student)
    run = autograde(course, labs=[rt.LAB], jobs=2, overrides=LIMITS, progress=False,
                    log=lambda message: None)
    write_feedback(course)
    export(course)
    return {"seconds": run.seconds, "sandboxed": run.status.sandboxed,
            "students": sorted(o.student for o in run.outcomes)}


class Graded:
    def __init__(self, info: dict):
        self.root = Path(info["root"])
        self.info = info
        self.course = manifest.load_course(self.root)
        gradebook = open_gradebook(self.course.default_db_url)
        try:
            self.outcomes = {o.student: o for o in load_outcomes(gradebook)}
        finally:
            gradebook.close()

    def score(self, student: str, exercise: str) -> float:
        """Points of every check of ``exercise`` (visible and hidden) for ``student``."""
        check = rt.CHECK[exercise]
        return sum(c.score or 0.0 for c in self.outcomes[student].checks if c.check == check)

    def feedback(self, student: str) -> str:
        return (self.course.feedback_dir / student / rt.LAB / f"{rt.LAB}.html").read_text()

    def results(self, student: str) -> str:
        return (self.course.exports_dir / "results" / student / rt.LAB
                / "results.json").read_text()

    def describe(self, student: str) -> str:
        o = self.outcomes[student]
        checks = "".join(
            f"\n    {c.check}{' (hidden)' if c.hidden else ''} {c.score:g}/{c.max_score:g}: "
            + ((c.message or "")[:600] if (c.score or 0) < c.max_score
               else (c.message or "").splitlines()[0])
            for c in o.checks if c.kind != "written")
        return (f"{student}: {o.status}, {o.score:g}/{o.auto_max_score:g}, flagged={o.flagged}"
                f"\n  reasons: {o.reasons}\n  checks: {checks}")


@pytest.fixture(scope="module")
def graded(once) -> Graded:
    return Graded(once("red_team_class", _grade_class))


def test_one_class_run_graded_everyone(graded):
    """No hand-in stopped the run or broke the grader."""
    expected = sorted(h.student for h in HANDS)
    assert graded.info["students"] == expected
    assert sorted(graded.outcomes) == expected
    errors = [graded.describe(s) for s, o in graded.outcomes.items() if o.status == "error"]
    assert not errors, "\n".join(errors)
    assert graded.info["sandboxed"], "the red team needs the real sandbox (bubblewrap)"


@pytest.mark.parametrize("student", HONEST)
def test_honest_students_keep_full_marks(graded, student):
    outcome = graded.outcomes[student]
    assert outcome.score == pytest.approx(outcome.auto_max_score), graded.describe(student)
    assert not outcome.flagged, graded.describe(student)
    assert outcome.status == "graded", graded.describe(student)


# Attacks that still succeed, each a documented limit (README: "Not guaranteed"). Strict:
# the day one is stopped, its test says so and the entry must go. (The functools.partial over
# torch's engine was one until the engine was watched from C++: issue 24.)
KNOWN_LIMITS: dict[str, str] = {}


@pytest.mark.parametrize("attack", [
    pytest.param(a, id=f"{a.student}-{'-'.join(a.targets)}",
                 marks=[pytest.mark.xfail(strict=True, reason=KNOWN_LIMITS[a.name])]
                 if a.name in KNOWN_LIMITS else [])
    for a in ATTACKS])
def test_attack_gains_nothing(graded, attack):
    """0 on every targeted exercise, or flagged for a TA (the score is kept for the TA to
    judge): when the hand-in holds only this attack, or a reason names what this attack did."""
    outcome = graded.outcomes[attack.student]
    scores = {exercise: graded.score(attack.student, exercise) for exercise in attack.targets}
    if outcome.flagged and (attack.alone or (
            attack.evidence and any(attack.evidence in r for r in outcome.reasons))):
        return
    assert all(score == 0.0 for score in scores.values()), (
        f"{attack.name} ({attack.what}) scored {scores}\n{graded.describe(attack.student)}")


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.student in rt.DELEGATING],
                         ids=lambda a: f"{a.student}-{'-'.join(a.targets)}")
def test_delegation_is_what_stops_it(graded, attack):
    """The attacks of issue 24 score 0 because the monitor saw the delegation, not because
    they broke: every check of the exercise says so."""
    outcome = graded.outcomes[attack.student]
    for exercise in attack.targets:
        assert any(r.startswith(f"{rt.CHECK[exercise]}: {DELEGATION}") for r in outcome.reasons), (
            exercise, graded.describe(attack.student))


@pytest.mark.parametrize("marker", rt.LEAK_MARKERS)
def test_nothing_from_the_kernel_reaches_a_hidden_check(graded, marker):
    """Exception text that carries the kernel's environment, files and hidden inputs appears
    in no hidden check's message: not in the gradebook, the feedback page or results.json.
    (A visible check, or the note on an answer cell, may quote the student's own error: the
    student wrote it. What it could carry, this grading's hidden inputs, is worth nothing to
    the next grading, which draws new ones — see the test below.)"""
    student = "rt_leaks"
    outcome = graded.outcomes[student]
    hidden = [c for c in outcome.checks if c.hidden]
    assert hidden and all(marker not in (c.message or "") for c in hidden), \
        graded.describe(student)
    results = json.loads(graded.results(student))
    hidden_tests = [t for t in results["tests"] if t.get("visibility") == "after_published"]
    assert hidden_tests and all(marker not in t.get("output", "") for t in hidden_tests)


def test_a_hidden_check_that_raises_scores_nothing(graded):
    assert graded.score("rt_leaks", rt.EXERCISES[0]) == pytest.approx(1.0), \
        graded.describe("rt_leaks")  # the visible half only


def test_hidden_inputs_change_with_every_grading(graded):
    """The twins hand in the same notebook; each call's inputs were logged by the kernel.
    Visible checks see the same inputs, hidden ones new inputs every grading."""
    a = rt.input_log(graded.root, "rt_honest_words_a")
    b = rt.input_log(graded.root, "rt_honest_words_b")
    # 12 visible calls (4 problems, 3 gradients each), then 12 hidden
    assert len(a) == len(b) == 24, (len(a), len(b))
    assert a[:12] == b[:12]
    assert a[12:] != b[12:]
    assert all(x != y for x, y in zip(a[12:], b[12:]))


def test_flagged_hand_ins_say_why(graded):
    """A flag always comes with a reason a TA can read."""
    for student, outcome in graded.outcomes.items():
        if outcome.flagged:
            assert any("flagged for a TA" in r for r in outcome.reasons), \
                graded.describe(student)


def test_report(graded, capsys):
    """Not a check: prints every hand-in's outcome (pytest -s) for the red team's table."""
    with capsys.disabled():
        print(f"\nred team class run: {graded.info['seconds']:.0f}s")
        for student in sorted(graded.outcomes):
            print(graded.describe(student))
    json.dumps(graded.info)
