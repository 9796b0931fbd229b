"""The doctor's judgement: rules that turn an environment report into findings with fixes.

Each rule is a small function ``rule(report) -> list[Finding]`` over the report dict (the same
dict ``coursekit doctor --json`` prints), so every rule can be tested by feeding it a
synthetic report. Levels:

* ``error``: something the course needs is broken (a required package missing or not
  importable, a framework that cannot run a tiny op on a device it claims). The doctor exits
  non-zero.
* ``warning``: something optional is missing or a GPU goes unused; the course still works.
* ``info``: worth knowing, nothing to fix.

Rules read the report defensively (``.get`` with defaults): a partial report yields fewer
findings, never an exception, and a rule that fails anyway is reported as a finding itself.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

LEVELS = ("error", "warning", "info")
REINSTALL = "reinstall the course environment: `pip install -e .` in the course folder (or `make test`)"


@dataclass(frozen=True)
class Finding:
    """One problem or remark: what is wrong, and what to do about it."""

    level: str
    code: str
    message: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


Rule = Callable[[dict[str, Any]], Iterable[Finding]]
RULES: list[Rule] = []


def rule(fn: Rule) -> Rule:
    """Register ``fn`` as a rule (rules run in definition order)."""
    RULES.append(fn)
    return fn


# --- helpers over the report -----------------------------------------------------------------

def _framework(report: dict[str, Any], name: str) -> dict[str, Any]:
    return report.get("frameworks", {}).get(name) or {}


def _ok(report: dict[str, Any], name: str) -> bool:
    return _framework(report, name).get("status") == "ok"


def _gpus(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [d for d in _framework(report, name).get("devices", []) if d.get("kind") == "gpu"]


def _driver_gpus(report: dict[str, Any]) -> list[dict[str, Any]]:
    return report.get("gpu", {}).get("devices", [])


def _has_nvidia_gpu(report: dict[str, Any]) -> bool:
    gpu = report.get("gpu", {})
    return bool(gpu.get("devices")) or bool(gpu.get("driver_present"))


def _env(report: dict[str, Any]) -> dict[str, str]:
    return report.get("env", {}) or {}


def _major(version: str | None) -> int | None:
    try:
        return int(str(version).split(".")[0])
    except (TypeError, ValueError):
        return None


def _version_tuple(version: str | None) -> tuple[int, ...]:
    parts = []
    for piece in str(version or "").split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


# --- the rules -------------------------------------------------------------------------------

@rule
def python_version(report: dict[str, Any]) -> list[Finding]:
    version = report.get("machine", {}).get("python", {}).get("version")
    if version and _version_tuple(version)[:2] < (3, 10):
        return [Finding("error", "python-too-old", f"Python {version} is too old for the course",
                        "use Python 3.10 or newer (the course is tested on 3.11)")]
    return []


_PROBED = ("numpy", "torch", "tensorflow", "jax")
_INSTALL = {
    "numpy": 'pip install numpy',
    "torch": 'pip install "torch==2.13.0" (the version the course pins)',
    "tensorflow": "pip install tensorflow-cpu (or tensorflow on a Linux GPU machine)",
    "jax": 'pip install jax (add "jax[cuda12]" for an NVIDIA GPU)',
    "jaxlib": "pip install jaxlib (comes with jax)",
    "nbgrader": 'pip install "nbgrader>=0.9,<0.10"',
    "jupyterlab": 'pip install "jupyterlab>=4"',
    "ipywidgets": 'pip install "ipywidgets>=8"',
    "matplotlib": "pip install matplotlib",
    "threadpoolctl": "pip install threadpoolctl",
}


@rule
def frameworks_import(report: dict[str, Any]) -> list[Finding]:
    """A probed framework that is missing, crashes on import, or hangs."""
    found = []
    for name in _PROBED:
        probe = _framework(report, name)
        status, reason = probe.get("status"), probe.get("reason") or ""
        if not probe or status == "ok":
            continue
        if status == "missing":
            found.append(Finding("error", f"missing:{name}", f"{name} is not installed",
                                 f"{_INSTALL[name]}; or {REINSTALL}"))
        elif status == "timeout":
            found.append(Finding("error", f"timeout:{name}", f"{name} did not finish importing: {reason}",
                                 "check for a hanging GPU driver (run `nvidia-smi`); run "
                                 f"`python -c 'import {name}'` to see where it stops"))
        else:
            found.append(Finding("error", f"broken:{name}", f"{name} is installed but does not work: {reason}",
                                 f"run `python -c 'import {name}'` to see the full error; then "
                                 f"`pip install --force-reinstall` it, or {REINSTALL}"))
    return found


@rule
def packages_installed(report: dict[str, Any]) -> list[Finding]:
    """Packages that are not probed: nbgrader, JupyterLab, ipywidgets, matplotlib..."""
    found = []
    for name, info in report.get("packages", {}).items():
        if name in _PROBED or info.get("version"):
            continue
        if name == "jaxlib" and _framework(report, "jax").get("status") in ("missing", "ok"):
            continue  # already said, or jax works anyway
        level = "error" if info.get("required") else "warning"
        purpose = info.get("purpose", "")
        found.append(Finding(level, f"missing:{name}", f"{name} is not installed ({purpose})",
                             _INSTALL.get(name, f"pip install {name}")))
    ipywidgets = report.get("packages", {}).get("ipywidgets", {}).get("version")
    if ipywidgets and (_major(ipywidgets) or 0) < 8:
        found.append(Finding("warning", "old:ipywidgets", f"ipywidgets {ipywidgets} is older than 8; "
                             "widgets in JupyterLab 4 need ipywidgets 8", _INSTALL["ipywidgets"]))
    return found


@rule
def tiny_ops(report: dict[str, Any]) -> list[Finding]:
    """A framework that lists a device but cannot compute on it."""
    found = []
    for name in _PROBED:
        probe = _framework(report, name)
        if probe.get("status") != "ok":
            continue
        devices = probe.get("devices", [])
        if not devices:
            found.append(Finding("error", f"no-device:{name}", f"{name} imports but reports no device at all",
                                 f"run `python -c 'import {name}'` and check its warnings; {REINSTALL}"))
        for device in devices:
            op = device.get("tiny_op", {})
            if op.get("ok", True):
                continue
            where = f"{device.get('name')} ({device.get('description')})" if device.get("description") else device.get("name")
            if device.get("kind") == "cpu":
                fix = f"`pip install --force-reinstall` {name}, or {REINSTALL}"
            else:
                fix = (f"the {name} build does not support this GPU or its driver: install a {name} build "
                       "for your GPU's CUDA version and compute capability; until then set "
                       "COURSEKIT_DEVICE=cpu to run the labs on the CPU")
            found.append(Finding("error", f"tiny-op-failed:{name}:{device.get('name')}",
                                 f"{name} cannot compute on {where}: {op.get('error')}", fix))
    return found


@rule
def torch_and_the_gpu(report: dict[str, Any]) -> list[Finding]:
    """The driver shows a GPU; does torch use it?"""
    if not _has_nvidia_gpu(report) or not _ok(report, "torch"):
        return []
    details = _framework(report, "torch").get("details", {})
    driver_cuda = report.get("gpu", {}).get("cuda_driver_version")
    names = ", ".join(d.get("name", "?") for d in _driver_gpus(report)) or "an NVIDIA GPU"
    if not details.get("cuda_build") and not details.get("hip_build"):
        version = str(_framework(report, "torch").get("version") or "").split("+")[0]
        pin = f"torch=={version} " if version else "torch "
        return [Finding("warning", "torch-cpu-build", f"this machine has {names}, but the installed torch "
                        f"({_framework(report, 'torch').get('version')}) is a CPU-only build",
                        f"pip install --force-reinstall {pin}--index-url https://download.pytorch.org/whl/cu126 "
                        f"(use the cuXXX that pytorch.org/get-started lists for this torch and that is no "
                        f"newer than the driver's CUDA {driver_cuda or 'version'})")]
    if details.get("cuda_build") and not details.get("cuda_available"):
        build = details.get("cuda_build")
        if driver_cuda and _version_tuple(driver_cuda) < _version_tuple(build)[:2]:
            fix = (f"the driver supports CUDA up to {driver_cuda} but torch was built for CUDA {build}: "
                   f"update the NVIDIA driver, or install a torch build for CUDA {driver_cuda} or older")
        else:
            hint = "; ".join(_framework(report, "torch").get("warnings", [])[:2])
            fix = ("check CUDA_VISIBLE_DEVICES and the permissions on /dev/nvidia*"
                   + (f"; torch said: {hint}" if hint else ""))
        return [Finding("warning", "torch-no-cuda", f"torch is built for CUDA {build} but cannot use {names}", fix)]
    return []


@rule
def other_frameworks_and_the_gpu(report: dict[str, Any]) -> list[Finding]:
    """torch uses a GPU that TensorFlow or JAX does not see."""
    torch_gpus = _gpus(report, "torch")
    if not torch_gpus:
        return []
    found = []
    if _ok(report, "tensorflow") and not _gpus(report, "tensorflow"):
        details = _framework(report, "tensorflow").get("details", {})
        if not details.get("built_with_cuda"):
            fix = ("the installed TensorFlow is a CPU-only build (e.g. tensorflow-cpu). On Linux: "
                   "`pip uninstall tensorflow-cpu && pip install \"tensorflow[and-cuda]\"`. "
                   "The TensorFlow lab also runs on the CPU")
        else:
            fix = (f"TensorFlow was built for CUDA {details.get('cuda_build')} / cuDNN "
                   f"{details.get('cudnn_build')} and did not find matching libraries: "
                   "`pip install \"tensorflow[and-cuda]\"` installs them")
        found.append(Finding("warning", "tensorflow-no-gpu", "torch sees the GPU but TensorFlow does not", fix))
    if _ok(report, "jax") and not _gpus(report, "jax"):
        if (_env(report).get("JAX_PLATFORMS") or "").strip().lower() == "cpu":
            found.append(Finding("info", "jax-cpu-forced", "JAX_PLATFORMS=cpu keeps JAX on the CPU",
                                 "unset JAX_PLATFORMS to let JAX use the GPU"))
        else:
            found.append(Finding("warning", "jax-no-gpu", "torch sees the GPU but JAX does not",
                                 'pip install -U "jax[cuda12]" (a jaxlib with CUDA); the JAX lab also runs on the CPU'))
    return found


@rule
def coursekit_device(report: dict[str, Any]) -> list[Finding]:
    wanted = (_env(report).get("COURSEKIT_DEVICE") or "").strip()
    if not wanted or wanted.lower() == "auto" or not _ok(report, "torch"):
        return []
    names = [d.get("name") for d in _framework(report, "torch").get("devices", []) if d.get("tiny_op", {}).get("ok")]
    candidates = {wanted, f"{wanted}:0"} if ":" not in wanted else {wanted}
    if candidates & set(names):
        return []
    return [Finding("warning", "coursekit-device-unavailable",
                    f"COURSEKIT_DEVICE={wanted} but torch has no working device of that name; labs will fall "
                    "back to the automatic choice",
                    f"unset COURSEKIT_DEVICE, or set it to one of: {', '.join(names) or 'cpu'}")]


@rule
def grading_monitor_compiled(report: dict[str, Any]) -> list[Finding]:
    if report.get("grading", {}).get("monitor_compiled", True):
        return []
    # Only a machine that grades needs it: a student's laptop is fine without (info).
    return [Finding("info", "grading-monitor-uncompiled",
                    "coursekit was installed without its compiled grading monitor; a machine that "
                    "grades hand-ins would run a slower monitor with more ways around it",
                    "on a grading machine: install a C compiler (Debian: gcc, python3-dev), then "
                    "install coursekit again (make .venv, or pip install)")]


@rule
def thread_limits(report: dict[str, Any]) -> list[Finding]:
    cores = report.get("machine", {}).get("cpu", {}).get("usable_cores") or 1
    found = []
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        value = (_env(report).get(var) or "").strip()
        if value.isdigit() and int(value) < cores:
            found.append(Finding("info", f"threads-limited:{var}",
                                 f"{var}={value} limits math libraries to {value} of {cores} cores",
                                 f"unset {var} unless you share the machine on purpose"))
    return found


@rule
def numpy_blas(report: dict[str, Any]) -> list[Finding]:
    blas = report.get("blas", {}).get("numpy")
    if not blas or not _ok(report, "numpy"):
        return []
    name = str(blas.get("name") or "").lower()
    if name and not any(fast in name for fast in ("openblas", "mkl", "accelerate", "blis", "armpl", "flexiblas")):
        return [Finding("warning", "slow-blas", f"numpy uses the BLAS {blas.get('name')!r}, which may be an "
                        "unoptimised reference implementation", "pip install --force-reinstall numpy "
                        "(the wheels ship OpenBLAS)")]
    return []


@rule
def jupyter_extensions(report: dict[str, Any]) -> list[Finding]:
    packages = report.get("packages", {})
    if not packages.get("jupyterlab", {}).get("version"):
        return []  # packages_installed already says JupyterLab is missing
    jupyter = report.get("jupyter", {})
    found = []
    for name, state in jupyter.get("labextensions", {}).items():
        owner = "nbgrader" if "nbgrader" in name else "ipywidgets"
        if not packages.get(owner, {}).get("version"):
            continue  # the package itself is missing: said elsewhere
        if not state.get("installed"):
            found.append(Finding("warning", f"labextension-missing:{name}",
                                 f"the JupyterLab extension {name} is not installed",
                                 f"pip install --force-reinstall {owner} (its wheel ships the extension), "
                                 "then restart JupyterLab"))
        elif not state.get("enabled"):
            found.append(Finding("warning", f"labextension-disabled:{name}",
                                 f"the JupyterLab extension {name} is installed but disabled",
                                 f"jupyter labextension enable {name}"))
    if packages.get("nbgrader", {}).get("version"):
        server = jupyter.get("server_extensions", {})
        for part in ("assignment_list", "validate_assignment"):
            if not server.get(part):
                found.append(Finding("warning", f"server-extension-disabled:nbgrader.{part}",
                                     f"nbgrader's server extension {part} is not enabled",
                                     f"jupyter server extension enable --sys-prefix nbgrader.server_extensions.{part}"))
    return found


@rule
def memory(report: dict[str, Any]) -> list[Finding]:
    total = report.get("machine", {}).get("memory", {}).get("total_bytes")
    if total and total < 4 * 1024**3:
        return [Finding("warning", "low-memory", f"only {total / 1024**3:.1f} GiB of RAM; TensorFlow, JAX and "
                        "JupyterLab together need about 4 GiB", "close other programs, or use a bigger machine")]
    return []


@rule
def no_accelerator(report: dict[str, Any]) -> list[Finding]:
    if _has_nvidia_gpu(report) or not _ok(report, "torch"):
        return []
    kinds = {d.get("kind") for d in _framework(report, "torch").get("devices", [])}
    if kinds <= {"cpu"}:
        return [Finding("info", "cpu-only", "no GPU on this machine: every lab runs on the CPU "
                        "(GPU-only measurements are skipped)", "")]
    return []


@rule
def bench_failures(report: dict[str, Any]) -> list[Finding]:
    found = []
    for result in (report.get("bench") or {}).get("results", []):
        skipped = result.get("skipped") or ""
        if skipped.startswith(("failed", "device not available")):
            found.append(Finding("warning", f"bench-failed:{result.get('kind')}:{result.get('device')}",
                                 f"benchmark {result.get('kind')} {result.get('dtype') or ''} on "
                                 f"{result.get('device')} {skipped}",
                                 "re-run `coursekit doctor --bench --quick`; an out-of-memory error means "
                                 "another process holds the device"))
    return found


def evaluate(report: dict[str, Any], rules: Iterable[Rule] = RULES) -> list[Finding]:
    """All findings for ``report``, errors first (never raises)."""
    findings: list[Finding] = []
    for check in rules:
        try:
            findings.extend(check(report))
        except Exception as exc:  # noqa: BLE001 - a buggy rule must not take the doctor down
            findings.append(Finding("warning", f"rule-failed:{check.__name__}",
                                    f"the doctor's check {check.__name__} failed: {type(exc).__name__}: {exc}",
                                    "please report this to the course staff"))
    return sorted(findings, key=lambda f: LEVELS.index(f.level) if f.level in LEVELS else len(LEVELS))


def exit_code(findings: Iterable[Finding | dict[str, Any]]) -> int:
    """1 if any finding is an error, else 0 (warnings and info do not fail the doctor)."""
    levels = [f.level if isinstance(f, Finding) else f.get("level") for f in findings]
    return 1 if "error" in levels else 0


def status(findings: Iterable[Finding | dict[str, Any]]) -> str:
    """``"broken"`` with any error, ``"warnings"`` with any warning, else ``"ok"``."""
    levels = {f.level if isinstance(f, Finding) else f.get("level") for f in findings}
    return "broken" if "error" in levels else "warnings" if "warning" in levels else "ok"
