"""The points a visible check is worth, for the report a checks cell prints in the notebook.

A checks cell's points are split over the cases of all its visible ``grade(...)`` calls by
case weight, as ``coursekit validate`` and the grader split them
(coursekit/notebook/score.py). The kernel does not see a cell's nbgrader metadata, so the
points are read from the lab's release, ``notebooks/<lab>/<lab>.ipynb``, found above the
working folder (the repository, or the student bundle: both hold ``course/course.toml`` and
``notebooks/``). Where there is no release to read, the report shows the cases alone.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from coursekit.caps import MAX_RELEASE_NOTEBOOK_BYTES

_CALL = re.compile(r"""\bgrade\(\s*["']([\w.]+)["']""")


def _course_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / "course" / "course.toml").is_file() and (folder / "notebooks").is_dir():
            return folder
    return None


@lru_cache(maxsize=32)
def _cells(lab_prefix: str, root: str) -> tuple[tuple[float, tuple[str, ...]], ...]:
    """``(points, visible check names)`` of every checks cell of the lab's release."""
    for notebook in sorted(Path(root, "notebooks").glob(f"{lab_prefix}_*/{lab_prefix}_*.ipynb")):
        try:
            if notebook.stat().st_size > MAX_RELEASE_NOTEBOOK_BYTES:
                continue
            cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        found = []
        for cell in cells:
            meta = (cell.get("metadata") or {}).get("nbgrader") or {}
            if not meta.get("grade") or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            calls = tuple(name for line in source.splitlines() if "hidden=True" not in line
                          for name in _CALL.findall(line))
            if calls:
                found.append((float(meta.get("points", 0) or 0), calls))
        return tuple(found)
    return ()


def cell_of(check_name: str, start: Path | None = None) -> tuple[float, tuple[str, ...]] | None:
    """The points of the checks cell that calls ``grade(check_name)`` and the visible checks
    it calls (in order), or None when the lab's release cannot be found."""
    root = _course_root((start or Path.cwd()).resolve())
    if root is None:
        return None
    lab_prefix = check_name.split(".", 1)[0]
    for points, calls in _cells(lab_prefix, str(root)):
        if check_name in calls:
            return points, calls
    return None
