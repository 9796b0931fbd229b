"""Fixtures of the browser test: Debian's Chromium driven by Playwright, and JupyterLab servers.

The browser is the system's (``apt-get install chromium``; ``make`` installs it as root), given
to Playwright as ``executable_path``: Playwright never downloads one. Without it every browser
test is skipped with the reason. Each JupyterLab listens on 127.0.0.1 with a random port and
token, in its own process group, and is stopped by that id when the test ends.

Servers start as the Makefile starts them (:func:`grade_ui`, :func:`make_lab`): in the course
tree, with its ``course/`` or ``course/student/`` as the Jupyter configuration folder, and
the same root folder (the tree, or ``work/`` given as ``jupyter lab work/`` gives it).
"""
from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]
LAB = "labfx"             # the fixture course's lab, which the demo class handed in
NOBODYS_LAB = "labfy"     # a second lab of the TA's course, which nobody handed in
ARTIFACTS = Path(__file__).parent / "artifacts"   # screenshots, JupyterLab logs (git-ignored)
STARTUP_S = scaled(180)  # a loaded CI machine starts JupyterLab in 10-60 s; a busier one later
BROWSERS = ("chromium", "chromium-browser")


def chromium_path() -> str | None:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (the system's), or a skip that says how to get it. Per module:
    Playwright's event loop runs in this thread while it lives, and a later test file in the
    same worker that grades (asyncio.run) must not find it running."""
    path = chromium_path()
    if path is None:
        pytest.skip("browser test skipped: no Chromium on PATH (install the Debian package "
                    "'chromium': `apt-get install chromium`, which `make` does when run as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser test skipped: the playwright package is missing "
                    "(`pip install -e '.[dev]'`)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
        chromium = playwright.chromium.launch(executable_path=path,
                                              args=["--no-sandbox", "--disable-gpu"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def page(browser, request, artifacts):
    """A fresh browser page; when the test fails, its last view is saved as
    ``artifacts/<test>-failure.png``."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(scaled(60) * 1000)
    page = context.new_page()
    try:
        yield page
    finally:
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            page.screenshot(path=artifacts / f"{request.node.name}-failure.png",
                            full_page=True)
        context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@dataclass
class Lab:
    """A running JupyterLab."""

    url: str
    token: str
    pid: int
    log: Path

    def at(self, path: str) -> str:
        """``path`` on this server, with the token."""
        return f"{self.url}{path}{'&' if '?' in path else '?'}token={self.token}"

    def log_in(self, page) -> None:
        """Log ``page`` in with the token, as a person would: the session cookie then lets
        the pages' own requests (the formgrader's API calls) through."""
        page.goto(f"{self.url}/login")
        page.fill("input[name=password]", self.token)
        with page.expect_navigation():
            page.press("input[name=password]", "Enter")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def grade_ui(tree: Path, log: Path, home: Path, extra_env: dict[str, str] | None = None):
    """``make grade-ui`` in the course tree ``tree``: started there, ``course/`` as the
    Jupyter configuration folder, the tree as the root folder, opened on the formgrader."""
    return jupyter_lab(tree, tree / "course", log, home, extra_env, cwd=tree,
                       args=[f"--ServerApp.root_dir={tree}", "--LabApp.default_url=/formgrader"])


def make_lab(tree: Path, log: Path, home: Path, config_dir: Path | None = None):
    """``make lab``'s JupyterLab in ``tree`` (its ``coursekit fetch --all`` aside): started
    there, ``course/student/`` as the Jupyter configuration folder (``config_dir`` where the
    tree has none), ``jupyter lab work/``."""
    return jupyter_lab(tree / "work", config_dir or tree / "course" / "student", log, home,
                       cwd=tree, args=["work/"])


@contextmanager
def jupyter_lab(root: Path, config_dir: Path, log: Path, home: Path,
                extra_env: dict[str, str] | None = None, *, cwd: Path | None = None,
                args: list[str] | None = None):
    """JupyterLab serving ``root`` with ``config_dir`` as its Jupyter configuration folder
    (``course/`` for a TA, ``course/student/`` for a student); stopped by its process group.
    It starts in ``cwd`` (default: ``root``) with ``args`` (default: ``root`` as
    ``--ServerApp.root_dir``), so that it can be started as the Makefile starts it."""
    port, token = _free_port(), secrets.token_hex(16)
    # Every cell in the page, not only those scrolled into view (JupyterLab's default
    # windowing leaves the others out of the DOM, where a test cannot find their outputs).
    notebook_settings = home / "settings" / "@jupyterlab" / "notebook-extension"
    notebook_settings.mkdir(parents=True, exist_ok=True)
    (notebook_settings / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    # Offline: no "get notified about Jupyter news?" notice over the page.
    notification = home / "settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(config_dir), "HOME": str(home),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           **(extra_env or {})}
    # As `make` runs it: the environment's bin/ on PATH (nbgrader runs `alembic` by name).
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
               *(args if args is not None else [f"--ServerApp.root_dir={root}"])]
    if os.geteuid() == 0:
        command.append("--allow-root")
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=cwd or root, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    lab = Lab(f"http://127.0.0.1:{port}", token, process.pid, log)
    try:
        _wait_until_up(lab, process)
        yield lab
    finally:
        stop_group(process)


def _wait_until_up(lab: Lab, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab exited with {process.returncode}:\n"
                        + lab.log.read_text(errors="replace")[-3000:])
        try:
            with urllib.request.urlopen(lab.at("/api/status"), timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {STARTUP_S} s:\n"
                + lab.log.read_text(errors="replace")[-3000:])


def stop_group(process: subprocess.Popen, grace_s: float = 20) -> None:
    """SIGTERM to the server's process group (it shuts its kernels down), then SIGKILL to
    whatever of the group is left."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


# --------------------------------------------------------------------------- courses

def pipeline_module(name: str, file: str):
    """tests/autograder/``file``, loaded once under ``name``."""
    module = sys.modules.get(name)
    if module is None:
        path = REPO / "tests" / "autograder" / file
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module   # its dataclasses look their module up there
        spec.loader.exec_module(module)
    return module


def graded_class_copy(tmp_path_factory, name: str) -> Path:
    """A private copy of the graded demo class (tests/autograder/conftest.py, graded once per
    run), with the repository's configuration folders (``course/``, ``course/student/``)."""
    module = pipeline_module("pipeline_fixtures", "conftest.py")
    # In a thread of its own: grading runs an asyncio loop, and Playwright's runs in this one.
    with ThreadPoolExecutor(1) as thread:
        graded = Path(thread.submit(module.once_per_run, tmp_path_factory, "graded_class",
                                    module._grade_demo_class).result()["root"])
    root = tmp_path_factory.mktemp(name) / "class"
    shutil.copytree(graded, root, symlinks=True)
    for config in ("nbgrader_config.py", "jupyter_server_config.py"):
        shutil.copy(REPO / "course" / config, root / "course" / config)
    shutil.copytree(REPO / "course" / "student", root / "course" / "student")
    return root


def add_a_lab_nobody_handed_in(root: Path) -> None:
    """``labfy`` in the manifest, with a solution notebook of its own cell ids: the class
    handed in labfx only."""
    nb = nbformat.read(str(root / "solutions" / LAB / f"{LAB}.ipynb"), as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id"):
            meta["grade_id"] += "_fy"
    (root / "solutions" / NOBODYS_LAB).mkdir()
    nbformat.write(nb, str(root / "solutions" / NOBODYS_LAB / f"{NOBODYS_LAB}.ipynb"))
    with open(root / "course" / "course.toml", "a", encoding="utf-8") as manifest:
        manifest.write(f'\n[[lab]]\nid = "{NOBODYS_LAB}"\ntitle = "A lab nobody handed in"\n'
                       f"points = 6\n")
