"""Fetch: the student's own copy of a released lab, in a folder git ignores.

``notebooks/<lab>/`` is the release. The instructor regenerates it, and ``git pull`` (or a new
student bundle) brings each new version. A student who worked in it directly would have their
answers and outputs in a tracked file, and the next pull would conflict. So students work in
``work/<lab>/`` (``work/`` is in ``.gitignore``), a copy that ``coursekit fetch`` makes:

* a lab not fetched yet is copied whole;
* a file the student has not changed since it was fetched follows the release: it is
  replaced by the new version;
* a file the student changed is never written. When the release changed it too, the whole
  new release is copied *beside* the lab's folder, to ``work/<lab>.release-<day>/``, and
  the report says what to do with it.

``work/.fetched.json`` records, per lab, the SHA-256 of every file as the release gave it:
that is how a file the student changed is told from one they did not.

A student who worked in ``notebooks/`` before (git shows the release file modified) has their
work there: it is copied as theirs, never recorded as the release, and the report says how to
give ``notebooks/`` back to git.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from ..course import Course, Lab, ManifestError

WORK = "work"
STATE = ".fetched.json"
SKIPPED = {".ipynb_checkpoints", "__pycache__"}


class FetchError(RuntimeError):
    """A lab cannot be fetched; the message says why and what to do."""


@dataclass
class Fetched:
    """What fetching one lab did (paths relative to the course root)."""

    lab: str
    folder: Path
    copied: list[str] = field(default_factory=list)    # new in the working folder
    updated: list[str] = field(default_factory=list)   # unchanged by the student, replaced
    kept: list[str] = field(default_factory=list)      # changed by the student and by the release
    beside: Path | None = None                         # where the new release went, if kept
    beside_is_new: bool = False
    edited_release: list[str] = field(default_factory=list)  # git: changed in notebooks/
    release_folder: Path | None = None

    def report(self) -> str:
        lines = []
        if self.edited_release:
            copied = all(name in self.copied for name in self.edited_release)
            lines += [
                f"! {self.lab}: you have changed {', '.join(self.edited_release)} in "
                f"{self.release_folder}/ itself (git shows it modified), so `git pull` may "
                f"conflict. " + (f"Your version is now in {self.folder}/: work there." if copied
                                 else f"Your copy in {self.folder}/ is left as it is; compare "
                                      f"the two and keep what you need there."),
                f"  Then give the release back to git: git checkout -- {self.release_folder}/"]
        if not (self.copied or self.updated or self.kept):
            return "\n".join(lines + [
                f"✓ {self.lab}: {self.folder}/ is up to date with the release"])
        if self.copied:
            lines.append(f"✓ {self.lab}: copied to {self.folder}/: {', '.join(self.copied)}")
        if self.updated:
            lines.append(f"✓ {self.lab}: updated in {self.folder}/ to the new release (you had "
                         f"not changed them): {', '.join(self.updated)}")
        if self.kept:
            what = "is now" if self.beside_is_new else "is still"
            lines += [
                f"! {self.lab}: a new release changed {', '.join(self.kept)}, which you have "
                f"edited in {self.folder}/. Your work is kept as it is.",
                f"  The new release {what} beside it, in {self.beside}/.",
                f"  What to do: {self.folder}/ stays the notebook you work in and hand "
                f"in. Open the new release beside it to see what changed, copy into yours "
                f"what you want (text, given code), then delete {self.beside}/. Grading "
                f"takes the checks cells from the instructor's copy, so yours is graded on "
                f"the new checks."]
        return "\n".join(lines)


def work_folder(course: Course, lab: Lab) -> Path:
    """``work/<lab>/`` under the course root: where the student works on ``lab``."""
    return course.root / WORK / lab.id


def find_lab(course: Course, name: str) -> Lab:
    """The lab called ``name``, or the only one whose id starts with ``name_`` (``lab02``)."""
    matches = [lab for lab in course.labs if lab.id == name] or [
        lab for lab in course.labs if lab.id.startswith(f"{name}_")]
    if len(matches) == 1:
        return matches[0]
    return course.lab(name)  # raises ManifestError listing the labs


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path) -> dict[str, Path]:
    """Every file under ``folder`` by its POSIX path relative to it (checkpoints left out)."""
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
            if p.is_file() and not SKIPPED & set(p.relative_to(folder).parts)}


def _load_state(work: Path) -> dict:
    try:
        state = json.loads((work / STATE).read_text(encoding="utf-8"))
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: every differing file then counts as the student's


def _save_state(work: Path, state: dict) -> None:
    tmp = work / f"{STATE}.tmp"
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(work / STATE)


def _changed_in_git(folder: Path) -> set[str]:
    """Files under ``folder`` (relative to it) that git says differ from the last commit;
    empty where git or a repository is missing."""
    try:
        run = subprocess.run(["git", "ls-files", "--modified", "-z", "--", "."], cwd=folder,
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    return set(filter(None, run.stdout.split("\0"))) if run.returncode == 0 else set()


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _beside(work: Path, lab: Lab, release: dict[str, Path], today: date) -> tuple[Path, bool]:
    """The folder beside ``work/<lab>/`` holding this release: an earlier one with the same
    files if there is one, else a new ``<lab>.release-<day>[-n]``."""
    digests = {name: _digest(path) for name, path in release.items()}
    for folder in sorted(work.glob(f"{lab.id}.release-*")):
        if folder.is_dir() and {n: _digest(p) for n, p in _files(folder).items()
                                if n in digests} == digests:
            return folder, False
    stem = f"{lab.id}.release-{today.isoformat()}"
    folder, n = work / stem, 1
    while folder.exists():
        n += 1
        folder = work / f"{stem}-{n}"
    for name, path in release.items():
        _copy(path, folder / name)
    return folder, True


def fetch_lab(course: Course, lab: Lab, *, today: date | None = None) -> Fetched:
    """Copy ``lab``'s release into ``work/<lab>/`` without ever writing over the student's
    edits (see the module docstring)."""
    source = course.release_dir / lab.id
    if not course.release_notebook(lab).is_file():
        raise FetchError(f"{lab.id} is not released yet ({source.relative_to(course.root)}/ "
                         f"has no {lab.notebook}): `git pull` to get it, or ask your instructor")
    work = course.root / WORK
    folder = work_folder(course, lab)
    folder.mkdir(parents=True, exist_ok=True)
    state = _load_state(work)
    fetched_before = state.get(lab.id)
    if not isinstance(fetched_before, dict):
        fetched_before = {}
    release = _files(source)
    done = Fetched(lab.id, folder.relative_to(course.root),
                   release_folder=source.relative_to(course.root))
    recorded: dict[str, str] = {}
    # In the instructor's tree (solutions/ is there) a changed release is a new release.
    edited = set() if course.source_notebook(lab).exists() else _changed_in_git(source)
    for name, path in release.items():
        new = _digest(path)
        target = folder / name
        if name in edited:  # the student's work, not the release: never recorded as one
            done.edited_release.append(name)
            if not target.exists():
                _copy(path, target)
                done.copied.append(name)
            continue
        if not target.exists():
            _copy(path, target)
            done.copied.append(name)
            recorded[name] = new
            continue
        current = _digest(target)
        if new in (current, fetched_before.get(name)):  # the same, or edited by the student
            recorded[name] = new                          # while the release stayed as it was
        elif current == fetched_before.get(name):  # as fetched: the student has not touched it
            _copy(path, target)
            done.updated.append(name)
            recorded[name] = new
        else:  # the student's own version, and the release moved on: never write over it
            done.kept.append(name)
            if name in fetched_before:
                recorded[name] = fetched_before[name]
    if done.kept:
        beside, done.beside_is_new = _beside(work, lab, release, today or date.today())
        done.beside = beside.relative_to(course.root)
    state[lab.id] = recorded
    _save_state(work, state)
    return done


def record_fetched(course: Course, lab: Lab) -> None:
    """Record ``work/<lab>/`` as its release, as :func:`fetch_lab` records what it copies:
    the lab was just fetched another way (JupyterLab's Assignment List, from the course's
    exchange), so a later ``coursekit fetch`` tells the student's edits from release files
    instead of taking every file for the student's own."""
    work = course.root / WORK
    state = _load_state(work)
    state[lab.id] = {name: _digest(path)
                     for name, path in _files(work_folder(course, lab)).items()}
    _save_state(work, state)


def fetch(course: Course, names: list[str], *, every: bool = False,
          today: date | None = None) -> tuple[list[Fetched], list[str]]:
    """Fetch the labs ``names`` (or, with ``every``, every released lab of the manifest).

    Returns what each fetch did, and the labs of the manifest skipped because they are not
    released yet (only with ``every``; a named lab without a release raises FetchError).
    """
    if every:
        labs = list(course.labs)
    else:
        try:
            labs = [find_lab(course, name) for name in names]
        except ManifestError as error:
            raise FetchError(str(error)) from None
    results, unreleased = [], []
    for lab in labs:
        if every and not course.release_notebook(lab).is_file():
            unreleased.append(lab.id)
            continue
        results.append(fetch_lab(course, lab, today=today))
    return results, unreleased
