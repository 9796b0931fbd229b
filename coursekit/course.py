"""The course manifest, ``course/course.toml``, and the folders a course lives in.

Everything the pipeline needs to know about a course comes from here: where the instructor
notebooks (nbgrader's *source*) and the student notebooks (the *release*) are, which labs
exist with their points and limits, and where runtime state (gradebook, submissions,
autograded copies, feedback, exports) goes. Every step takes a :class:`Course`, so tests can
build a small course in a temporary folder and run the real pipeline on it.
"""
from __future__ import annotations

import math
import os
import secrets
import sys
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DB_ENV = "COURSEKIT_DB"  # the gradebook URL every command and the formgrader use, where set


class ManifestError(ValueError):
    """``course.toml`` is missing, malformed, or names a lab that does not exist."""


DAY_S = 86_400


@dataclass(frozen=True)
class LatePolicy:
    """What a hand-in after its due date loses, as a share of the points it earned.

    ``per_day`` of them for each started day (24 hours) late, at most ``cap`` of them; with
    ``no_credit``, all of them. The default loses nothing: a late hand-in is only shown late.
    Shares are decimals (``Decimal("0.1") * 3`` is 0.3 exactly), so a penalty is the share of
    the points, not a float's neighbour of it.
    """

    per_day: Decimal = Decimal(0)
    cap: Decimal = Decimal(1)
    no_credit: bool = False

    def share(self, seconds_late: float) -> Decimal:
        """The share of the points lost ``seconds_late`` after the due date."""
        if seconds_late <= 0:
            return Decimal(0)
        if self.no_credit:
            return Decimal(1)
        return min(self.cap, self.per_day * math.ceil(seconds_late / DAY_S))

    def describe(self) -> str:
        """The policy in words, for a feedback page: "10% per started day late, at most 50%"."""
        if self.no_credit:
            return "no credit once late"
        if not self.per_day:
            return "no penalty for lateness"
        return (f"{_percent(self.per_day)} per started day late"
                + ("" if self.cap >= 1 else f", at most {_percent(self.cap)}"))


def _percent(share: Decimal) -> str:
    return f"{(share * 100).normalize():f}%"


@dataclass(frozen=True)
class Lab:
    """One ``[[lab]]`` block of the manifest."""

    id: str
    title: str
    points: float
    cell_timeout_s: float
    time_limit_s: float
    memory_mb: int
    # The lab's reference answers in the library: paths under the course root (a package
    # folder, one file) or "file.py:Name" for one top-level definition of a file. They enter
    # the student build only once the lab is revealed.
    reveals: tuple[str, ...] = ()
    reveal_after: date | None = None   # None: never revealed until `coursekit reveal`
    # Earlier labs whose revealed answers this lab's exercises use (lab03's coursekit Function
    # runs on lab02's engine): the student build hands this lab out once they are revealed.
    builds_on: tuple[str, ...] = ()
    # When hand-ins are due, in UTC without a zone (as nbgrader's gradebook keeps times);
    # None: no due date, nothing is late.
    due: datetime | None = None
    late: LatePolicy = LatePolicy()

    @property
    def notebook(self) -> str:
        """The notebook's file name: the lab id is also the notebook's stem."""
        return f"{self.id}.ipynb"

    def revealed(self, today: date | None = None) -> bool:
        """Whether students may read this lab's reference code (on ``today``, default: now)."""
        return self.reveal_after is not None and (today or date.today()) >= self.reveal_after


@dataclass(frozen=True)
class Course:
    """A course tree: ``<root>/course/``, ``<root>/solutions/``, ``<root>/notebooks/``.

    Attributes:
        root: the folder that holds ``course/``, ``solutions/`` and ``notebooks/``.
        check_path: folders (absolute) holding extra check packages, for courses whose checks
            live outside ``coursekit.grading.checks`` (the test fixtures do this).
        check_packages: packages searched for ``<lab>`` modules after the built-in one.
    """

    root: Path
    name: str
    labs: tuple[Lab, ...]
    check_path: tuple[Path, ...] = ()
    check_packages: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    # ------------------------------------------------------------------ folders
    @property
    def course_dir(self) -> Path:
        return self.root / "course"

    @property
    def source_dir(self) -> Path:
        return self.root / "solutions"

    @property
    def release_dir(self) -> Path:
        return self.root / "notebooks"

    @property
    def submitted_dir(self) -> Path:
        return self.course_dir / "submitted"

    @property
    def autograded_dir(self) -> Path:
        return self.course_dir / "autograded"

    @property
    def feedback_dir(self) -> Path:
        return self.course_dir / "feedback"

    @property
    def exports_dir(self) -> Path:
        return self.course_dir / "exports"

    @property
    def work_dir(self) -> Path:
        """Scratch space (unpacked zips); safe to delete."""
        return self.course_dir / ".work"

    @property
    def default_db_url(self) -> str:
        """``$COURSEKIT_DB`` where set (a team's shared PostgreSQL gradebook, read by
        ``course/nbgrader_config.py`` too, so the formgrader sees the same one), else the
        embedded SQLite file under ``course/``."""
        return os.environ.get(DB_ENV) or f"sqlite:///{self.course_dir / 'gradebook.db'}"

    def source_notebook(self, lab: Lab | str) -> Path:
        lab_id = lab if isinstance(lab, str) else lab.id
        return self.source_dir / lab_id / f"{lab_id}.ipynb"

    def release_notebook(self, lab: Lab | str) -> Path:
        lab_id = lab if isinstance(lab, str) else lab.id
        return self.release_dir / lab_id / f"{lab_id}.ipynb"

    # ------------------------------------------------------------------ labs
    def lab(self, lab_id: str) -> Lab:
        for lab in self.labs:
            if lab.id == lab_id:
                return lab
        known = ", ".join(lab.id for lab in self.labs) or "none"
        raise ManifestError(f"no lab {lab_id!r} in {self.course_dir / 'course.toml'} "
                            f"(labs: {known})")

    def select(self, lab_ids: list[str] | None) -> list[Lab]:
        """The labs named (all of them when ``lab_ids`` is empty), in manifest order."""
        if not lab_ids:
            return list(self.labs)
        wanted = [self.lab(lab_id) for lab_id in lab_ids]
        return [lab for lab in self.labs if lab in wanted]

    # ------------------------------------------------------------------ secrets and checks
    def secret(self) -> str:
        """The course's grading secret (``course/.secret``), created on first use.

        Hidden checks draw their inputs from seeds derived from it; it never leaves the
        grader except as a per-student derivation (see :mod:`autograder.isolation.sandbox`).
        """
        path = self.course_dir / ".secret"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
        return path.read_text().strip()

    def enable_checks(self) -> None:
        """Make this course's extra check packages importable in this (the grader's) process."""
        for folder in self.check_path:
            if str(folder) not in sys.path:
                sys.path.insert(0, str(folder))
        if self.check_packages:
            from coursekit.grading.program import CHECK_PACKAGES_ENV
            current = [p for p in os.environ.get(CHECK_PACKAGES_ENV, "").split(",") if p]
            merged = current + [p for p in self.check_packages if p not in current]
            os.environ[CHECK_PACKAGES_ENV] = ",".join(merged)

    def kernel_env(self) -> dict[str, str]:
        """Environment a kernel needs to find this course's checks."""
        env = {}
        if self.check_path:
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in self.check_path)
        if self.check_packages:
            from coursekit.grading.program import CHECK_PACKAGES_ENV
            env[CHECK_PACKAGES_ENV] = ",".join(self.check_packages)
        return env


def _reveals(path: Path, block: dict) -> tuple[str, ...]:
    value = block.get("reveals", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{path}: lab {block['id']!r}: reveals must be a list of paths, "
                            f"e.g. [\"coursekit/autograd\"]")
    return tuple(value)


def reveal_entry(entry: str) -> tuple[str, str | None]:
    """A ``reveals`` entry as ``(path, name)``: ``name`` is None for a whole folder or file."""
    path, _, name = entry.partition(":")
    return path, (name or None)


def _builds_on(path: Path, block: dict, earlier: set[str]) -> tuple[str, ...]:
    value = block.get("builds_on", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{path}: lab {block['id']!r}: builds_on must be a list of lab ids, "
                            f"e.g. [\"lab02_autograd\"]")
    unknown = [v for v in value if v not in earlier]
    if unknown:
        raise ManifestError(f"{path}: lab {block['id']!r}: builds_on names {', '.join(unknown)}, "
                            f"which is not a lab listed above it")
    return tuple(value)


def _reveal_date(path: Path, block: dict) -> date | None:
    """``reveal_after`` as a date: TOML's own date (2027-03-01) or a quoted ISO string."""
    value = block.get("reveal_after")
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ManifestError(f"{path}: lab {block['id']!r}: reveal_after = {value!r} is not a "
                            f"date; write it as \"YYYY-MM-DD\"") from None


def _due(path: Path, block: dict) -> datetime | None:
    """``due`` as a naive UTC time: TOML's offset date-time (2027-03-01T23:59:00+01:00) or a
    quoted ISO string with its offset. A time without an offset is refused: whose midnight
    it means decides who is late."""
    value = block.get("due")
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            value = None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ManifestError(f"{path}: lab {block['id']!r}: due = {block['due']!r} is not a time "
                            f"with its UTC offset; write it as 2027-03-01T23:59:00+01:00 "
                            f"(or ...Z for UTC)")
    return value.astimezone(timezone.utc).replace(tzinfo=None)


def _share(path: Path, where: str, key: str, value) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ManifestError(f"{path}: {where}: late.{key} = {value!r} is not a share of the "
                            f"points between 0 and 1 (0.1 is 10%)")
    return Decimal(str(value))


def _late(path: Path, where: str, value, default: LatePolicy) -> LatePolicy:
    """``late`` as a policy: ``"none"``, ``"no credit"``, or ``{ per_day = 0.1, cap = 0.5 }``."""
    if value is None:
        return default
    if value == "none":
        return LatePolicy()
    if value == "no credit":
        return LatePolicy(no_credit=True)
    if isinstance(value, dict) and set(value) <= {"per_day", "cap"} and "per_day" in value:
        return LatePolicy(per_day=_share(path, where, "per_day", value["per_day"]),
                          cap=_share(path, where, "cap", value.get("cap", 1)))
    raise ManifestError(f"{path}: {where}: late = {value!r} is not a late policy; write "
                        f"late = {{ per_day = 0.1, cap = 0.5 }} (10% of the points per started "
                        f"day, at most 50%), late = \"no credit\" or late = \"none\"")


def find_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the current one) holding
    ``course/course.toml``; the repository itself when there is none."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / "course" / "course.toml").is_file():
            return folder
    return REPO_ROOT


def load_course(root: Path | str | None = None) -> Course:
    """Read ``<root>/course/course.toml`` (see the comments in that file for the format)."""
    root = Path(root).resolve() if root is not None else find_root()
    path = root / "course" / "course.toml"
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ManifestError(f"no manifest at {path}") from None
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{path}: {error}") from None
    course = data.get("course", {})
    defaults = {
        "cell_timeout_s": float(course.get("default_cell_timeout_s", 120)),
        "time_limit_s": float(course.get("default_time_limit_s", 600)),
        "memory_mb": int(course.get("default_memory_mb", 6144)),
    }
    course_late = _late(path, "[course]", course.get("late"), LatePolicy())
    labs, seen = [], set()
    for index, block in enumerate(data.get("lab", []), start=1):
        missing = [key for key in ("id", "title", "points") if key not in block]
        if missing:
            raise ManifestError(f"{path}: lab #{index} lacks {', '.join(missing)}")
        if block["id"] in seen:
            raise ManifestError(f"{path}: lab {block['id']!r} is listed twice")
        seen.add(block["id"])
        labs.append(Lab(
            id=str(block["id"]), title=str(block["title"]), points=float(block["points"]),
            cell_timeout_s=float(block.get("cell_timeout_s", defaults["cell_timeout_s"])),
            time_limit_s=float(block.get("time_limit_s", defaults["time_limit_s"])),
            memory_mb=int(block.get("memory_mb", defaults["memory_mb"])),
            reveals=_reveals(path, block), reveal_after=_reveal_date(path, block),
            builds_on=_builds_on(path, block, seen - {block["id"]}),
            due=_due(path, block),
            late=_late(path, f"lab {block['id']!r}", block.get("late"), course_late)))
    check_path = tuple((path.parent / p).resolve() for p in course.get("check_path", []))
    return Course(root=root, name=str(course.get("name", root.name)), labs=tuple(labs),
                  check_path=check_path,
                  check_packages=tuple(course.get("check_packages", [])), extra=course)
