"""Framework probes in child processes: a broken, crashing or hanging import is a finding.

The failure cases put a fake ``numpy`` first on the child's ``PYTHONPATH``; the child starts
in a fraction of a second because the fake imports nothing.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from coursekit.hardware import probes


def fake_numpy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    package = tmp_path / "numpy"
    package.mkdir()
    (package / "__init__.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))


def test_real_numpy_probe_runs_the_tiny_op_on_the_cpu() -> None:
    result = probes.run_probe("numpy", timeout=60)
    assert result["status"] == "ok", result["reason"]
    assert result["version"]
    (cpu,) = result["devices"]
    assert cpu["name"] == "cpu" and cpu["tiny_op"] == {"ok": True, "seconds": cpu["tiny_op"]["seconds"], "error": None}
    assert result["blas"]["name"]


def test_an_import_error_is_reported_as_broken_with_the_reason(tmp_path, monkeypatch) -> None:
    fake_numpy(tmp_path, monkeypatch, "raise ImportError('libopenblas.so.0: cannot open shared object file')\n")
    result = probes.run_probe("numpy", timeout=30)
    assert result["status"] == "broken"
    assert "libopenblas" in result["reason"] and result["devices"] == []


def test_a_missing_framework_is_reported_as_missing(tmp_path, monkeypatch) -> None:
    fake_numpy(tmp_path, monkeypatch, "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    assert probes.run_probe("numpy", timeout=30)["status"] == "missing"


def test_a_crashing_interpreter_does_not_take_the_parent_down(tmp_path, monkeypatch) -> None:
    fake_numpy(tmp_path, monkeypatch, "import os\nos.abort()\n")
    result = probes.run_probe("numpy", timeout=30)
    assert result["status"] == "broken"
    assert "crashed" in result["reason"] and "SIGABRT" in result["reason"]


def test_a_hanging_import_times_out(tmp_path, monkeypatch) -> None:
    fake_numpy(tmp_path, monkeypatch, "import time\ntime.sleep(60)\n")
    result = probes.run_probe("numpy", timeout=1)
    assert result["status"] == "timeout" and "1 s" in result["reason"]


def test_a_wrong_answer_fails_the_tiny_op() -> None:
    op = probes._tiny_op(lambda: [[19, 22], [43, 51]])
    assert not op["ok"] and "wrong result" in op["error"]
    op = probes._tiny_op(lambda: 1 / 0)
    assert not op["ok"] and "ZeroDivisionError" in op["error"]


def test_unknown_framework_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="expected one of"):
        probes.run_probe("caffe")


def test_probe_source_imports_nothing_outside_the_standard_library_at_module_level() -> None:
    # The child runs this file with `python -c`; a coursekit or third-party import at the top would
    # defeat the isolation the probes exist for.
    import ast

    tree = ast.parse(Path(probes.__file__).read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {alias.name.split(".")[0] for n in top for alias in n.names} | \
        {n.module.split(".")[0] for n in top if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= {"__future__", "json", "os", "re", "subprocess", "sys", "time", "traceback",
                     "concurrent", "typing", "annotations", "ThreadPoolExecutor", "Any", "Callable"}
