"""Collecting the environment report: machine, packages, Jupyter, frameworks, GPU driver.

``collect_environment()`` gathers the facts and judges nothing; ``rules.py`` turns the facts
into findings. Package versions come from installed metadata (``importlib.metadata``), which
costs no import; frameworks are probed in child processes (``probes.py``); the GPU from the
driver (``nvidia.py``). All of it runs concurrently, so the slowest import (TensorFlow) sets
the time.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from . import host, nvidia, probes


@dataclass(frozen=True)
class Package:
    """A package the course uses: the distributions that provide it, and why it matters."""

    name: str
    distributions: tuple[str, ...]
    required: bool
    purpose: str


PACKAGES: tuple[Package, ...] = (
    Package("numpy", ("numpy",), True, "arrays; the coursekit reference engine is built on it"),
    Package("torch", ("torch",), True, "PyTorch: most labs"),
    Package("tensorflow", ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos"), True,
            "TensorFlow lab (07)"),
    Package("jax", ("jax",), True, "JAX lab (08)"),
    Package("jaxlib", ("jaxlib",), True, "JAX's compiled backend"),
    Package("nbgrader", ("nbgrader",), True, "releasing, validating and grading notebooks"),
    Package("jupyterlab", ("jupyterlab",), True, "where the labs are worked"),
    Package("ipywidgets", ("ipywidgets",), False, "interactive widgets in the labs"),
    Package("matplotlib", ("matplotlib",), False, "plots in the labs and plot_bench"),
    Package("threadpoolctl", ("threadpoolctl",), False, "reporting the BLAS numpy uses"),
)

# JupyterLab front-end extensions the course relies on, by the name they are installed under.
LAB_EXTENSIONS = {
    "@jupyter/nbgrader": "nbgrader's assignment list and validate button in JupyterLab",
    "@jupyter-widgets/jupyterlab-manager": "renders ipywidgets in JupyterLab",
}
SERVER_EXTENSION_PREFIX = "nbgrader.server_extensions."

# Environment variables that change what the frameworks do; reported when set.
ENV_VARS = ("COURSEKIT_DEVICE", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
            "OPENBLAS_NUM_THREADS", "JAX_PLATFORMS", "XLA_PYTHON_CLIENT_PREALLOCATE",
            "TF_CPP_MIN_LOG_LEVEL", "PYTORCH_CUDA_ALLOC_CONF")


def package_versions() -> dict[str, dict[str, Any]]:
    """``{name: {version, distribution, required, purpose}}``; ``version`` is ``None`` if absent."""
    found: dict[str, dict[str, Any]] = {}
    for package in PACKAGES:
        version = distribution = None
        for dist in package.distributions:
            try:
                version, distribution = metadata.version(dist), dist
                break
            except metadata.PackageNotFoundError:
                continue
        found[package.name] = {"version": version, "distribution": distribution,
                               "required": package.required, "purpose": package.purpose}
    return found


def _jupyter_paths() -> tuple[list[str], list[str]]:
    """(data paths for ``labextensions``, config paths), or empty lists without jupyter_core."""
    try:
        from jupyter_core.paths import jupyter_config_path, jupyter_path

        return jupyter_path("labextensions"), jupyter_config_path()
    except Exception:  # noqa: BLE001 - no jupyter_core: nothing is installed
        return [], []


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def jupyter_extensions() -> dict[str, Any]:
    """Which course-relevant JupyterLab extensions are installed and enabled.

    Reads the same folders ``jupyter labextension list`` reads (without its two seconds of
    start-up): an extension is installed if ``<data path>/labextensions/<name>/package.json``
    exists, and disabled if a ``labconfig/page_config.json`` lists it under
    ``disabledExtensions``. nbgrader's server extensions are enabled through
    ``jupyter_server_config.d/*.json``.
    """
    data_paths, config_paths = _jupyter_paths()
    disabled: set[str] = set()
    server: dict[str, bool] = {}
    # Earlier config paths take precedence, so read the later ones first and let earlier ones win.
    for config_dir in reversed(config_paths):
        page = _read_json(Path(config_dir) / "labconfig" / "page_config.json")
        listed = page.get("disabledExtensions", {})
        if isinstance(listed, dict):
            for name, off in listed.items():
                (disabled.add if off else disabled.discard)(name)
        elif isinstance(listed, list):
            disabled.update(listed)
        for conf in sorted((Path(config_dir) / "jupyter_server_config.d").glob("*.json")):
            extensions = _read_json(conf).get("ServerApp", {}).get("jpserver_extensions", {})
            for name, on in extensions.items():
                if name.startswith(SERVER_EXTENSION_PREFIX):
                    server[name[len(SERVER_EXTENSION_PREFIX):]] = bool(on)
    lab: dict[str, dict[str, Any]] = {}
    for name in LAB_EXTENSIONS:
        path = next((Path(d) / name for d in data_paths if (Path(d) / name / "package.json").exists()), None)
        lab[name] = {"installed": path is not None, "enabled": path is not None and name not in disabled,
                     "path": str(path) if path else None}
    return {"labextensions": lab, "server_extensions": server}


def collect_environment(timeout: float = 120.0,
                        frameworks: tuple[str, ...] = probes.FRAMEWORKS) -> dict[str, Any]:
    """Every fact the doctor reports, as a JSON-ready dict (sections of the report schema).

    Args:
        timeout: seconds each framework probe may take before it is reported as hanging.
        frameworks: which frameworks to probe in child processes.
    """
    with ThreadPoolExecutor(max_workers=2) as pool:
        gpu_future = pool.submit(nvidia.driver_report)
        probe_future = pool.submit(probes.run_probes, frameworks, timeout)
        machine = host.machine_report()
        packages = package_versions()
        jupyter = jupyter_extensions()
        grading = grading_report()
        gpu = gpu_future.result()
        found = probe_future.result()
    blas = {name: found[name].pop("blas", None) if name in found else None for name in ("numpy", "torch")}
    for probe in found.values():
        probe.pop("blas", None)
    env = {var: os.environ[var] for var in ENV_VARS if var in os.environ}
    return {"machine": machine, "env": env, "packages": packages, "jupyter": jupyter, "blas": blas,
            "frameworks": found, "gpu": gpu, "grading": grading}


def grading_report() -> dict[str, Any]:
    """Whether the grading monitor's fast paths in C were built with coursekit (an optional
    extension: where no C compiler was at hand, the installation succeeded without it)."""
    from coursekit.notebook.monitoring import compiled_warning

    return {"monitor_compiled": not compiled_warning()}
