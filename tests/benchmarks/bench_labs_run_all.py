"""How long a student waits: each lab's Run All and its ``coursekit validate``, solved.

For each lab (``COURSEKIT_BENCH_LABS``, default lab06 to lab11) the release is filled with the
solution's answers — what a student who has done every exercise runs — and

* executed top to bottom in a fresh kernel, as JupyterLab's Run All does (goal ≤ 90 s on the
  course's 2-core machine, busy or not); the five slowest cells are printed;
* validated with ``coursekit validate`` (goal ≤ 60 s), which skips the exploration cells;
* read for noise a student should not see: stderr lines of TensorFlow's C++ logging
  (``I0000 00:00 ...``, ``E0000 ...``, oneDNN's notice) and of the ONNX exporter's progress
  (``[torch.onnx] ...``), which must be none.

``make bench`` runs it with the other benchmarks; ``pytest -m benchmark -s
tests/benchmarks/bench_labs_run_all.py`` alone. The figures are printed, never asserted: a
timed test on a shared machine measures the machine.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.publish.release import release_notebook
from coursekit import course as manifest
from coursekit.notebook.cells import nbgrader_meta

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)
LABS = os.environ.get("COURSEKIT_BENCH_LABS", "lab06 lab07 lab08 lab09 lab10 lab11").split()
NOISE = re.compile(r"^(?:[IWE]\d{4} \d\d:\d\d|\[torch\.onnx\]|oneDNN custom operations|"
                   r"WARNING: All log messages before absl).*$", re.MULTILINE)

pytestmark = pytest.mark.benchmark


def solved_release(lab) -> nbformat.NotebookNode:
    """The release with every answer cell as the solution writes it."""
    source = nbformat.read(str(COURSE.source_notebook(lab)), as_version=4)
    answers = {c.get("id"): c.source for c in source.cells
               if nbgrader_meta(c).get("solution") and c.cell_type == "code"}
    nb = release_notebook(COURSE, lab, source)
    for cell in nb.cells:
        if cell.get("id") in answers:
            cell.source = answers[cell["id"]]
    return nb


@pytest.mark.parametrize("prefix", LABS)
def test_run_all_and_validate(prefix, tmp_path_factory):
    from coursekit.notebook.validate import validate

    (lab,) = [lab for lab in COURSE.labs if lab.id.startswith(prefix + "_")]
    folder = REPO / "build" / "bench" / lab.id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lab.id}.ipynb"
    nb = solved_release(lab)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=True,
                            resources={"metadata": {"path": str(folder)}})
    start = time.monotonic()
    client.execute()
    run_all = time.monotonic() - start
    cells = []
    noise = []
    for index, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            from datetime import datetime

            begin = datetime.fromisoformat(timing["iopub.execute_input"].rstrip("Z"))
            end = datetime.fromisoformat(timing["shell.execute_reply"].rstrip("Z"))
            cells.append(((end - begin).total_seconds(), index, cell.get("id")))
        for output in cell.get("outputs", []):
            if output.get("name") == "stderr":
                noise += [(index, line) for line in NOISE.findall(output.get("text", ""))]
    nbformat.write(nb, str(path))
    start = time.monotonic()
    result = validate(path)
    validate_s = time.monotonic() - start
    slowest = ", ".join(f"cell {i} ({cid}) {s:.1f} s" for s, i, cid in sorted(cells)[::-1][:5])
    print(f"\n{lab.id}: Run All {run_all:.1f} s (goal 90), validate {validate_s:.1f} s (goal 60), "
          f"{sum(c.passed for c in result.checks)}/{len(result.checks)} visible checks passed, "
          f"{len(noise)} noise lines\n  slowest: {slowest}")
    for index, line in noise[:5]:
        print(f"  noise in cell {index}: {line}")
    assert result.ok, result.report()
