"""Package versions and JupyterLab extension discovery (environment.py)."""
from __future__ import annotations

import json
from pathlib import Path

from coursekit.hardware import environment


def test_package_versions_come_from_metadata_without_importing(monkeypatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    found = environment.package_versions()
    assert found["torch"]["version"] and found["torch"]["required"] is True
    assert found["ipywidgets"]["required"] is False
    assert found["tensorflow"]["distribution"] in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos")
    assert "tensorflow" not in sys.modules  # reading a version must not import the framework


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_lab_extensions_installed_disabled_and_server_extensions(tmp_path, monkeypatch) -> None:
    data, user_config, sys_config = tmp_path / "share", tmp_path / "user", tmp_path / "sys"
    _write(data / "@jupyter" / "nbgrader" / "package.json", {"name": "@jupyter/nbgrader"})
    _write(sys_config / "labconfig" / "page_config.json",
           {"disabledExtensions": {"@jupyter/nbgrader": True}})
    _write(user_config / "labconfig" / "page_config.json",   # earlier path wins: re-enabled by the user
           {"disabledExtensions": {"@jupyter/nbgrader": False}})
    _write(sys_config / "jupyter_server_config.d" / "nbgrader.json",
           {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.assignment_list": True,
                                                  "nbgrader.server_extensions.validate_assignment": False,
                                                  "jupyterlab": True}}})
    monkeypatch.setattr(environment, "_jupyter_paths", lambda: ([str(data)], [str(user_config), str(sys_config)]))
    found = environment.jupyter_extensions()
    assert found["labextensions"]["@jupyter/nbgrader"] == {
        "installed": True, "enabled": True, "path": str(data / "@jupyter" / "nbgrader")}
    assert found["labextensions"]["@jupyter-widgets/jupyterlab-manager"]["installed"] is False
    assert found["server_extensions"] == {"assignment_list": True, "validate_assignment": False}


def test_a_disabled_lab_extension_is_reported_disabled(tmp_path, monkeypatch) -> None:
    data, config = tmp_path / "share", tmp_path / "etc"
    _write(data / "@jupyter-widgets" / "jupyterlab-manager" / "package.json", {})
    _write(config / "labconfig" / "page_config.json",
           {"disabledExtensions": {"@jupyter-widgets/jupyterlab-manager": True}})
    monkeypatch.setattr(environment, "_jupyter_paths", lambda: ([str(data)], [str(config)]))
    state = environment.jupyter_extensions()["labextensions"]["@jupyter-widgets/jupyterlab-manager"]
    assert state["installed"] is True and state["enabled"] is False


def test_no_jupyter_at_all_means_nothing_installed(monkeypatch) -> None:
    monkeypatch.setattr(environment, "_jupyter_paths", lambda: ([], []))
    found = environment.jupyter_extensions()
    assert not any(s["installed"] for s in found["labextensions"].values())
    assert found["server_extensions"] == {}
