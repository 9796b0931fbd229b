"""The linters run as tests, so that `make test` and CI run them: ruff over the whole
repository, and vulture for code nothing calls (their settings are in pyproject.toml,
`[tool.ruff]` and `[tool.vulture]`). Each takes seconds."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_ruff_finds_nothing():
    # --no-cache: a test run writes nothing into the checkout.
    result = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, f"ruff check:\n{result.stdout}{result.stderr}"


def test_vulture_finds_no_unused_code():
    # A name that a framework calls or reads by name goes into tests/vulture_whitelist.py.
    result = _run("vulture")
    assert result.returncode == 0, f"vulture (unused code):\n{result.stdout}{result.stderr}"
