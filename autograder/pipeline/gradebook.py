"""Gradebook: nbgrader's database (SQLite under ``course/`` by default, any SQLAlchemy URL).

nbgrader's own tables hold the course structure (assignments = labs, notebooks, grade,
solution and source cells) and one ``Grade`` per graded cell and submission, so nbgrader's
formgrader can show and override them. Two tables of coursekit's sit next to them in the same
database, because nbgrader has no place for them:

* ``coursekit_outcome``: one row per student × lab — status, score, reasons (renamed notebook,
  restored cells, timeouts, tampering), whether it is flagged, and which sandbox ran it;
* ``coursekit_check``: one row per ``grade(...)`` call — points and the message students see.

Only the main grading process writes (workers, local or on a Dask cluster, hand their
results back), and re-grading replaces a submission's rows, so re-runs never add rows. Two
grading runs may share one PostgreSQL gradebook: each write holds a per-student lock, the
result graded later wins, and ``coursekit_history`` keeps every write and what it replaced.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from contextlib import contextmanager
import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import (Boolean, Column, Float, Integer, String, Text, UniqueConstraint, delete,
                        select)
from sqlalchemy.exc import SAWarning
from sqlalchemy.orm import Session, declarative_base

from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import CHECKS, WRITTEN, LabNotebook
from coursekit.course import Lab
from coursekit.notebook.safe_text import printable
from coursekit.notebook.score import CellScore
from coursekit.status import Status

COURSE_ID = "deep-learning-software"

Base = declarative_base()


class OutcomeRow(Base):
    __tablename__ = "coursekit_outcome"
    __table_args__ = (UniqueConstraint("student", "lab"),)
    id = Column(Integer, primary_key=True, autoincrement=True)
    student = Column(String(128), nullable=False)
    lab = Column(String(128), nullable=False)
    status = Column(String(32), nullable=False)
    score = Column(Float, nullable=False)
    max_score = Column(Float, nullable=False)
    auto_max_score = Column(Float, nullable=False)
    flagged = Column(Boolean, nullable=False, default=False)
    sandbox = Column(Text, nullable=False)
    reasons = Column(Text, nullable=False)   # JSON list of strings
    notebook_file = Column(Text)
    # What was graded (the hand-in and the lab's grading code, hashed): a re-run skips it when
    # neither changed. When and by which run: the later result wins (see ``record``).
    submission_hash = Column(String(64))
    graded_at = Column(Float)
    run_id = Column(String(64))


class HistoryRow(Base):
    """Every write of an outcome, and what it replaced or why it was not stored."""
    __tablename__ = "coursekit_history"
    id = Column(Integer, primary_key=True, autoincrement=True)
    student = Column(String(128), nullable=False)
    lab = Column(String(128), nullable=False)
    run_id = Column(String(64), nullable=False)
    graded_at = Column(Float, nullable=False)
    status = Column(String(32), nullable=False)
    score = Column(Float, nullable=False)
    event = Column(Text, nullable=False)


class CheckRow(Base):
    __tablename__ = "coursekit_check"
    __table_args__ = (UniqueConstraint("student", "lab", "position"),)
    id = Column(Integer, primary_key=True, autoincrement=True)
    student = Column(String(128), nullable=False)
    lab = Column(String(128), nullable=False)
    position = Column(Integer, nullable=False)
    cell = Column(String(128), nullable=False)
    kind = Column(String(16), nullable=False)   # "checks" or "written"
    check = Column(String(256), nullable=False)
    hidden = Column(Boolean, nullable=False)
    score = Column(Float)                       # None: written answer, waiting for a TA
    max_score = Column(Float, nullable=False)
    message = Column(Text, nullable=False)


class OutcomeStatus(Status):
    """A graded result's status (``Outcome.status``, the gradebook's ``status`` column): graded,
    flagged for a TA, or what collecting found instead of a notebook to grade."""

    GRADED = "graded"
    FLAGGED = "flagged"
    MISSING = "missing"
    CORRUPT = "corrupt"
    ERROR = "error"


@dataclass(frozen=True)
class Outcome:
    """The graded result of one student × lab, as the pipeline produces and stores it: made
    once, when its submission is graded; a later step (the class run's roster check, a write
    that failed) makes a new one (:meth:`with_reason`, ``dataclasses.replace``)."""

    student: str
    lab: str
    status: OutcomeStatus
    max_score: float
    auto_max_score: float
    cells: tuple[CellScore, ...] = ()
    reasons: tuple[str, ...] = ()
    flagged: bool = False
    sandbox: str = ""
    notebook_file: str = ""
    submission_hash: str = ""
    graded_at: float = 0.0          # time.time() when grading finished
    run_id: str = ""                # the grading run (one `coursekit autograde`) that made it
    # When the student handed it in, as the exchange recorded it (UTC); None for a hand-in
    # from elsewhere. nbgrader's gradebook keeps it on the submission (lateness, the
    # formgrader's Timestamp column).
    submitted_at: datetime | None = None

    @property
    def score(self) -> float:
        return sum(c.score or 0.0 for c in self.cells)

    def with_reason(self, reason: str, **changes) -> Outcome:
        """This outcome with ``reason`` said last, and ``changes`` made."""
        return dataclasses.replace(self, reasons=(*self.reasons, reason), **changes)


def _stamp_new_database(url: str) -> None:
    """Create nbgrader's schema in an empty database, stamped with its alembic head.

    nbgrader does this itself by running the ``alembic`` command line, which fails when the
    virtual environment's ``bin/`` is not on PATH (and costs a process); the head is read here
    through alembic's Python API instead.
    """
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.api import Base as NbgraderBase
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(url, future=True)
    try:
        if inspect(engine).get_table_names():
            return
        config = Config()
        config.set_main_option("script_location",
                               str(Path(nbgrader.__file__).parent / "alembic"))
        head = ScriptDirectory.from_config(config).get_current_head()
        NbgraderBase.metadata.create_all(bind=engine)
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE alembic_version "
                                    "(version_num VARCHAR(32) NOT NULL)"))
            connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                               {"v": head})
    finally:
        engine.dispose()


def open_gradebook(url: str):
    """nbgrader's Gradebook on ``url``, with coursekit's tables created next to its own."""
    from nbgrader.api import Gradebook
    from sqlalchemy import create_engine
    if url.startswith("sqlite:///"):
        Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    # Two graders starting at once on a new PostgreSQL database would both create the tables
    # (one fails on the catalogue's unique index): the schema is made by one at a time.
    engine = create_engine(url, future=True)
    try:
        with _advisory_lock(engine, "coursekit:schema"):
            _stamp_new_database(url)
            gradebook = Gradebook(url, COURSE_ID)
            Base.metadata.create_all(bind=gradebook.engine)
            _add_new_columns(gradebook.engine)
    finally:
        engine.dispose()
    return gradebook


def _add_new_columns(engine) -> None:
    """Columns coursekit added to its tables since a gradebook was made (an older SQLite
    gradebook under course/ keeps working)."""
    from sqlalchemy import inspect, text
    for table in Base.metadata.sorted_tables:
        present = {column["name"] for column in inspect(engine).get_columns(table.name)}
        for column in table.columns:
            if column.name not in present:
                kind = column.type.compile(dialect=engine.dialect)
                with engine.begin() as connection:
                    connection.execute(text(f'ALTER TABLE {table.name} ADD COLUMN '
                                            f'"{column.name}" {kind}'))


def register_lab(gradebook, lab: Lab, source: LabNotebook) -> None:
    """Make the lab's structure known to nbgrader (assignment, notebook, cells); one grader
    at a time, since two would both create the assignment's rows."""
    with _advisory_lock(gradebook.engine, f"coursekit:lab:{lab.id}"):
        gradebook.update_or_create_assignment(lab.id)
        notebook = lab.id
        gradebook.update_or_create_notebook(notebook, lab.id)
        for cell in source.cells:
            meta = lab_cells.nbgrader_meta(cell.cell)
            if not cell.grade_id:
                continue
            cell_type = "code" if cell.cell.cell_type == "code" else "markdown"
            if cell.role in (CHECKS, WRITTEN):
                gradebook.update_or_create_grade_cell(cell.grade_id, notebook, lab.id,
                                                      max_score=cell.points, cell_type=cell_type)
            if meta.get("solution"):
                gradebook.update_or_create_solution_cell(cell.grade_id, notebook, lab.id)
            gradebook.update_or_create_source_cell(
                cell.grade_id, notebook, lab.id, cell_type=cell_type,
                locked=bool(meta.get("locked")), source=cell.source,
                checksum=meta.get("checksum"))


REASON_CHARS = 2_000      # one note about a submission
MESSAGE_CHARS = 20_000    # one check's message (a failed case lists what differed)


def record(gradebook, outcome: Outcome) -> bool:
    """Store ``outcome``, replacing whatever was stored for the same submission, unless that
    was graded later by another run (two graders on one gradebook: the later result wins).
    Either way a ``coursekit_history`` row says what happened. Returns whether it was stored.

    Every text is made printable first (:func:`coursekit.notebook.safe_text.printable`): a reason may
    quote a file name or an exception message that no database can encode. nbgrader's
    student and submission rows are created first (nbgrader commits them itself); the grades,
    the outcome, its checks and the history row are then one transaction. A write that fails
    is rolled back before the error is raised, so the session stays usable for the next
    submission and nothing stored before is lost, nbgrader's grades included.
    """
    with _student_lock(gradebook, outcome.student):
        try:
            kept = gradebook.db.execute(select(OutcomeRow).where(
                OutcomeRow.student == outcome.student, OutcomeRow.lab == outcome.lab)
            ).scalar_one_or_none()
            event = "stored"
            if kept is not None and kept.run_id and kept.run_id != outcome.run_id:
                if (kept.graded_at or 0.0) > outcome.graded_at:
                    _history(gradebook, outcome, f"not stored: run {kept.run_id} graded this "
                                                 f"submission later and its result is kept")
                    gradebook.db.commit()
                    return False
                event = f"stored; replaced the result of run {kept.run_id}"
            _record(gradebook, outcome)
            _history(gradebook, outcome, event)
            gradebook.db.commit()   # grades, outcome, checks and history: one transaction
            return True
        except BaseException:
            gradebook.db.rollback()
            raise


def _history(gradebook, outcome: Outcome, event: str) -> None:
    gradebook.db.add(HistoryRow(student=outcome.student, lab=outcome.lab,
                                run_id=outcome.run_id or "-", graded_at=outcome.graded_at,
                                status=printable(outcome.status),
                                score=round(outcome.score, 6), event=printable(event)))


@contextmanager
def _student_lock(gradebook, student: str):
    """Serialise writes about one student across processes sharing a PostgreSQL gradebook
    (nbgrader creates the student and submission rows it needs, which two writers would race
    for)."""
    with _advisory_lock(gradebook.engine, f"coursekit:{student}"):
        yield


@contextmanager
def _advisory_lock(engine, name: str):
    """Hold PostgreSQL's advisory lock ``name`` across processes: a session-level lock on a
    connection of its own, so the work inside may commit as often as it likes. SQLite has
    one writer at a time anyway."""
    if engine.dialect.name != "postgresql":
        yield
        return
    from sqlalchemy import text
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
            connection.commit()


def roster(gradebook) -> set[str] | None:
    """The course's roster: the students a TA entered with a name or an email (``nbgrader db
    student import``, Manage Students), or None when nobody did. The grader adds each
    student it grades without either, so those rows are no roster."""
    from nbgrader.api import Student
    named = {student.id for student in gradebook.db.query(Student)
             if student.first_name or student.last_name or student.email
             or student.lms_user_id}
    return named or None


def stored_hashes(gradebook, labs: list[str]) -> dict[tuple[str, str], str]:
    """``{(student, lab): submission hash}`` of stored outcomes a re-run may keep: graded by
    the grader (not a grader error) from a known hand-in."""
    rows = gradebook.db.execute(select(OutcomeRow.student, OutcomeRow.lab,
                                       OutcomeRow.submission_hash, OutcomeRow.status)
                                .where(OutcomeRow.lab.in_(labs)))
    return {(student, lab): digest for student, lab, digest, status in rows
            if digest and status != OutcomeStatus.ERROR}


def history(gradebook, *, student: str | None = None, lab: str | None = None) -> list[HistoryRow]:
    query = select(HistoryRow).order_by(HistoryRow.id)
    if student is not None:
        query = query.where(HistoryRow.student == student)
    if lab is not None:
        query = query.where(HistoryRow.lab == lab)
    return list(gradebook.db.execute(query).scalars())


def _record(gradebook, outcome: Outcome) -> None:
    gradebook.update_or_create_student(outcome.student)
    with warnings.catch_warnings():
        # nbgrader's add_submission builds rows before adding them to the session, which
        # SQLAlchemy 2 reports as SAWarnings; the rows are stored correctly.
        warnings.simplefilter("ignore", SAWarning)
        submission = gradebook.update_or_create_submission(outcome.lab, outcome.student)
    submission.timestamp = outcome.submitted_at
    by_cell = {c.grade_id: c for c in outcome.cells}
    for notebook in submission.notebooks:
        notebook.flagged = outcome.flagged
        for grade in notebook.grades:
            cell = by_cell.get(grade.name)
            if cell is None:
                continue
            if cell.role == WRITTEN:
                # A missing or corrupt hand-in has no written answer for a TA to grade.
                grade.needs_manual_grade = grade.manual_score is None and bool(
                    outcome.notebook_file)
                grade.auto_score = None
            else:
                grade.auto_score = round(cell.score or 0.0, 6)
                grade.needs_manual_grade = outcome.flagged

    session: Session = gradebook.db
    session.execute(delete(CheckRow).where(CheckRow.student == outcome.student,
                                           CheckRow.lab == outcome.lab))
    session.execute(delete(OutcomeRow).where(OutcomeRow.student == outcome.student,
                                             OutcomeRow.lab == outcome.lab))
    reasons = [printable(reason, REASON_CHARS) for reason in outcome.reasons]
    session.add(OutcomeRow(student=outcome.student, lab=outcome.lab,
                           status=printable(outcome.status),
                           score=round(outcome.score, 6), max_score=outcome.max_score,
                           auto_max_score=outcome.auto_max_score, flagged=outcome.flagged,
                           sandbox=printable(outcome.sandbox, REASON_CHARS),
                           reasons=json.dumps(reasons),
                           notebook_file=printable(outcome.notebook_file, REASON_CHARS),
                           submission_hash=outcome.submission_hash or None,
                           graded_at=outcome.graded_at, run_id=outcome.run_id or None))
    position = 0
    for cell in outcome.cells:
        if cell.role == WRITTEN:
            session.add(CheckRow(student=outcome.student, lab=outcome.lab, position=position,
                                 cell=cell.grade_id, kind=WRITTEN, check=cell.grade_id,
                                 hidden=False, score=None, max_score=cell.max_score,
                                 message=printable(cell.note, MESSAGE_CHARS)))
            position += 1
            continue
        for check in cell.checks:
            session.add(CheckRow(student=outcome.student, lab=outcome.lab, position=position,
                                 cell=cell.grade_id, kind=CHECKS, check=printable(check.check),
                                 hidden=check.hidden, score=round(check.score, 6),
                                 max_score=round(check.max_score, 6),
                                 message=printable(check.message, MESSAGE_CHARS)))
            position += 1


@dataclass
class StoredCheck:
    cell: str
    kind: str
    check: str
    hidden: bool
    score: float | None
    max_score: float
    message: str


@dataclass
class StoredOutcome:
    student: str
    lab: str
    status: str
    score: float
    max_score: float
    auto_max_score: float
    flagged: bool
    sandbox: str
    reasons: list[str]
    notebook_file: str
    checks: list[StoredCheck]
    manual_scores: dict[str, float] = field(default_factory=dict)
    # checks cells whose points a TA set by hand in the formgrader: {cell: points}
    overrides: dict[str, float] = field(default_factory=dict)
    # when the exchange says it was handed in (UTC, naive): nbgrader's submission timestamp
    submitted_at: datetime | None = None

    @property
    def total(self) -> float:
        """Autograded points plus any written answers a TA has graded; a checks cell a TA
        gave points by hand counts those points instead of its autograded ones."""
        changed = sum(points - sum(c.score or 0.0 for c in self.checks if c.cell == cell)
                      for cell, points in self.overrides.items())
        return self.score + sum(self.manual_scores.values()) + changed


def load_outcomes(gradebook, *, students: list[str] | None = None,
                  labs: list[str] | None = None) -> list[StoredOutcome]:
    """Every stored outcome (filtered), sorted by student then lab."""
    session: Session = gradebook.db
    query = select(OutcomeRow)
    if students:
        query = query.where(OutcomeRow.student.in_(students))
    if labs:
        query = query.where(OutcomeRow.lab.in_(labs))
    stamps = _timestamps(gradebook)
    outcomes = []
    for row in session.execute(query.order_by(OutcomeRow.student, OutcomeRow.lab)).scalars():
        checks = [StoredCheck(c.cell, c.kind, c.check, c.hidden, c.score, c.max_score, c.message)
                  for c in session.execute(
                      select(CheckRow).where(CheckRow.student == row.student,
                                             CheckRow.lab == row.lab)
                      .order_by(CheckRow.position)).scalars()]
        outcomes.append(StoredOutcome(row.student, row.lab, row.status, row.score, row.max_score,
                                      row.auto_max_score, row.flagged, row.sandbox,
                                      json.loads(row.reasons), row.notebook_file or "", checks,
                                      *_manual_scores(gradebook, row.student, row.lab, checks),
                                      submitted_at=stamps.get((row.student, row.lab))))
    return outcomes


def _timestamps(gradebook) -> dict[tuple[str, str], datetime]:
    """``{(student, lab): when it was handed in}``, as nbgrader's gradebook keeps it."""
    from nbgrader.api import Assignment, Student, SubmittedAssignment
    rows = (gradebook.db.query(Student.id, Assignment.name, SubmittedAssignment.timestamp)
            .join(SubmittedAssignment, SubmittedAssignment.student_id == Student.id)
            .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
            .filter(SubmittedAssignment.timestamp.isnot(None)))
    return {(student, lab): stamp for student, lab, stamp in rows if stamp is not None}


def _manual_scores(gradebook, student: str, lab: str,
                   checks: list[StoredCheck]) -> tuple[dict, dict]:
    """Points a TA gave by hand (nbgrader's ``manual_score`` plus ``extra_credit``), as
    ``(written answers, overridden checks cells)``."""
    written, overrides = {}, {}
    for cell in dict.fromkeys(check.cell for check in checks):
        try:
            grade = gradebook.find_grade(cell, lab, lab, student)
        except Exception:  # noqa: BLE001 — MissingEntry: nothing graded yet
            continue
        if grade.manual_score is None:
            continue
        points = float(grade.manual_score) + float(grade.extra_credit or 0.0)
        kind = next(check.kind for check in checks if check.cell == cell)
        (written if kind == WRITTEN else overrides)[cell] = points
    return written, overrides


# --------------------------------------------------------------------------- similarity flags
# A third coursekit table, written by `coursekit similarity` (autograder/publish/similarity.py): one row
# per flagged pair and exercise, for a TA to look at. It never touches a score.

class SimilarityRow(Base):
    __tablename__ = "coursekit_similarity"
    __table_args__ = (UniqueConstraint("lab", "student", "other", "exercise"),)
    id = Column(Integer, primary_key=True, autoincrement=True)
    lab = Column(String(128), nullable=False)
    student = Column(String(128), nullable=False)
    other = Column(String(256), nullable=False)      # a classmate, or "reference:<path>"
    exercise = Column(String(128), nullable=False)   # the answer cell's grade id
    similarity = Column(Float, nullable=False)
    shared = Column(Integer, nullable=False)         # fingerprints in common
    report = Column(Text, nullable=False)            # the HTML report that shows the pair


def record_similarity(gradebook, lab: str, flagged: list, *, report: str) -> None:
    """Replace the lab's similarity flags by ``flagged`` (:class:`autograder.publish.similarity.Match`)."""
    session: Session = gradebook.db
    session.execute(delete(SimilarityRow).where(SimilarityRow.lab == lab))
    for match in flagged:
        session.add(SimilarityRow(lab=lab, student=match.student, other=match.other,
                                  exercise=match.exercise, similarity=float(match.similarity),
                                  shared=int(match.shared), report=report))
    session.commit()

