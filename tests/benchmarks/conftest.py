"""Collect ``bench_*.py`` here, so ``make bench`` (``pytest -m benchmark tests/benchmarks``) finds them.

pytest's default ``python_files`` is ``test_*.py``; benchmark files are named ``bench_*`` so
the default run never even imports them. A file given explicitly on the command line is
collected by pytest itself, so it is skipped here (no duplicate). Benchmarks are collected
only when the run selects them (``-m benchmark``): importing one sets thread-count
environment variables that the default run's subprocesses must not inherit.
"""
from __future__ import annotations

import pytest


def _benchmarks_selected(config: pytest.Config) -> bool:
    markexpr = config.option.markexpr or ""
    return "benchmark" in markexpr and "not benchmark" not in markexpr


def pytest_collect_file(file_path, parent):
    if (file_path.suffix == ".py" and file_path.name.startswith("bench_")
            and not parent.session.isinitpath(file_path) and _benchmarks_selected(parent.config)):
        return pytest.Module.from_parent(parent, path=file_path)
    return None
