"""The untouched student release of every lab runs top to bottom, failing only where it should.

A student who opens a lab and runs all cells before writing anything must see the stubs'
``NotImplementedError`` and the checks that fail because of them, never a ``NameError`` or a
missing import (which would mean the release leaks a name only the solution defines).
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from machine_load import scaled

ROOT = Path(__file__).resolve().parents[2]
LABS = [lab["id"] for lab in tomllib.loads((ROOT / "course" / "course.toml").read_text()).get("lab", [])]
EXPECTED_ERRORS = {"NotImplementedError", "CheckFailed"}


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS)
def test_untouched_release_fails_only_with_stubs_and_their_checks(lab, tmp_path):
    path = ROOT / "notebooks" / lab / f"{lab}.ipynb"
    assert path.exists(), f"{path} is missing: run `coursekit release {lab}`"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=scaled(300), kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [(index, output["ename"], output.get("evalue", ""))
              for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    unexpected = [e for e in errors if e[1] not in EXPECTED_ERRORS]
    assert not unexpected, f"{lab}: unexpected errors (cell, type, message): {unexpected}"
    assert any(e[1] == "NotImplementedError" for e in errors), f"{lab}: no stub raised"
