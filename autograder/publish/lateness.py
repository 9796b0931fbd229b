"""Lateness: when a hand-in came, against its due date, and what the lab's late policy takes.

Worked out whenever grades leave (feedback, export, the formgrader) from what is stored:

* when it was handed in: the exchange's timestamp, which grading copies into nbgrader's
  gradebook (``SubmittedAssignment.timestamp``; see :func:`autograder.pipeline.collect.
  submitted_at`); a regrade reads the same exchange file, so the time never becomes "now";
* the lab's due date and late policy (``course/course.toml``), and the student's
  extension (``course/extensions.toml``, :mod:`.extensions`).

So an extension granted, or a written answer graded after the autograder ran, shows at once,
without regrading. The raw points are never changed: the penalty is shown beside them, and
the final score is raw minus penalty. The penalty goes through nbgrader's late-submission
plugin interface (``late_submission_penalty(student_id, score, total_seconds_late)``).

NOTE [who is never late]: a hand-in without an exchange timestamp (copied into
``course/submitted/`` by hand, or a zip) is "lateness not known" and loses nothing, and a lab
without a due date has no late hand-ins; a missing hand-in is not late, it is missing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Instance

from autograder.pipeline import gradebook as gb
from coursekit.course import Course, Lab, LatePolicy

ON_TIME, LATE, NO_DUE_DATE, NOT_KNOWN, NOT_HANDED_IN = (
    "on time", "late", "no due date", "not known", "not handed in")
NOT_HANDED_IN_STATUSES = ("missing",)


class CourseLatePolicy(LateSubmissionPlugin):
    """nbgrader's late-submission plugin, answered by a lab's :class:`LatePolicy`."""

    policy = Instance(LatePolicy, args=())

    def late_submission_penalty(self, student_id: str, score: float,
                                total_seconds_late: float) -> float | None:
        share = self.policy.share(total_seconds_late)
        if not share:
            return None
        # the score as the gradebook stores it (6 decimals), times the exact share
        return float(Decimal(str(round(score, 6))) * share)


@dataclass(frozen=True)
class Lateness:
    """One hand-in against its due date."""

    status: str                     # ON_TIME, LATE, NO_DUE_DATE, NOT_KNOWN, NOT_HANDED_IN
    submitted_at: datetime | None   # UTC
    due: datetime | None            # the student's due date, extension included (UTC)
    extension: timedelta | None
    seconds_late: float
    penalty: float                  # points taken from the raw total
    policy: str                     # the lab's late policy in words

    def describe(self) -> str:
        """One line for a person: "late by 1 day 2 h 5 min (handed in ..., due ...)"."""
        if self.status in (NO_DUE_DATE, NOT_HANDED_IN):
            return self.status
        due = f"due {_when(self.due)}" + (f" with an extension of {_span(self.extension)}"
                                          if self.extension else "")
        if self.status == NOT_KNOWN:
            return f"lateness not known: no exchange timestamp ({due}); no penalty"
        said = ON_TIME if self.status == ON_TIME else f"late by {_span(self.seconds_late)}"
        return f"{said} (handed in {_when(self.submitted_at)}, {due})"


def lateness(lab: Lab, outcome: gb.StoredOutcome,
             extensions: dict[tuple[str, str], timedelta]) -> Lateness:
    """The lateness of ``outcome`` (``extensions``: :func:`.extensions.load_extensions`)."""
    extension = extensions.get((outcome.student, outcome.lab))
    policy = lab.late.describe()
    if outcome.status in NOT_HANDED_IN_STATUSES:
        return Lateness(NOT_HANDED_IN, None, None, extension, 0.0, 0.0, policy)
    if lab.due is None:
        return Lateness(NO_DUE_DATE, outcome.submitted_at, None, extension, 0.0, 0.0, policy)
    due = lab.due + (extension or timedelta(0))
    if outcome.submitted_at is None:
        return Lateness(NOT_KNOWN, None, due, extension, 0.0, 0.0, policy)
    seconds_late = max(0.0, (outcome.submitted_at - due).total_seconds())
    if not seconds_late:
        return Lateness(ON_TIME, outcome.submitted_at, due, extension, 0.0, 0.0, policy)
    penalty = CourseLatePolicy(policy=lab.late).late_submission_penalty(
        outcome.student, outcome.total, seconds_late) or 0.0
    return Lateness(LATE, outcome.submitted_at, due, extension, seconds_late, penalty, policy)


def lateness_of_all(course: Course, outcomes: list[gb.StoredOutcome]) -> dict[tuple[str, str],
                                                                              Lateness]:
    """``{(student, lab): Lateness}`` of stored outcomes of ``course``'s labs (an outcome of
    a lab no longer in the manifest has none)."""
    from autograder.publish.extensions import load_extensions
    extensions = load_extensions(course)
    labs = {lab.id: lab for lab in course.labs}
    return {(o.student, o.lab): lateness(labs[o.lab], o, extensions)
            for o in outcomes if o.lab in labs}


def _when(moment: datetime | None) -> str:
    return "?" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _span(length: timedelta | float | None) -> str:
    """``1 day 2 h 5 min 3 s``: whole seconds, the units that are not zero."""
    # rounded up: a hand-in 0.3 s late reads "late by 1 s", never "late by 0 s"
    seconds = math.ceil(length.total_seconds() if isinstance(length, timedelta) else length or 0)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = ([f"{days} day" + ("s" if days != 1 else "")] if days else []) + [
        f"{value} {unit}" for value, unit in ((hours, "h"), (minutes, "min"), (seconds, "s"))
        if value]
    return " ".join(parts) or "0 s"
