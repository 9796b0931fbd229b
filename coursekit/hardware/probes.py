"""Probing each framework in a child process.

Importing TensorFlow takes seconds and can abort the whole interpreter (a missing CUDA
library, an illegal instruction on an old CPU); a GPU runtime can hang. So the doctor never
imports a framework itself: it runs this file in a fresh interpreter per framework, with a
time limit, and reads one JSON line back. A crash, a hang or an exception becomes a
``broken`` / ``timeout`` entry with the reason, and the other probes carry on.

Each probe reports the framework's version, the devices it sees and, for each device, whether
a tiny matrix product really runs *there* and gives the right answer:
``[[1, 2], [3, 4]] @ [[5, 6], [7, 8]] == [[19, 22], [43, 50]]``.

NOTE [self-contained]
    The child runs this file's source with ``python -c``; it must not import ``coursekit``
    (whose ``__init__`` may import numpy, which could be the broken thing) and may only use the
    standard library at module level. The parent half (``run_probe``) lives here too, so the
    protocol is in one place.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

MARKER = "COURSEKIT-PROBE-RESULT "
FRAMEWORKS = ("numpy", "torch", "tensorflow", "jax")

_A = [[1.0, 2.0], [3.0, 4.0]]
_B = [[5.0, 6.0], [7.0, 8.0]]
_EXPECTED = [[19.0, 22.0], [43.0, 50.0]]


# ---------------------------------------------------------------------------------------------
# Child side: runs in the probe process
# ---------------------------------------------------------------------------------------------

def _tiny_op(run: Callable[[], Any]) -> dict[str, Any]:
    """Run ``run()`` (which returns the product as nested lists) and check it."""
    start = time.perf_counter()
    try:
        got = run()
    except Exception as exc:  # noqa: BLE001 - the failure is the finding
        return {"ok": False, "seconds": time.perf_counter() - start,
                "error": f"{type(exc).__name__}: {exc}"[:500]}
    seconds = time.perf_counter() - start
    if [[float(v) for v in row] for row in got] != _EXPECTED:
        return {"ok": False, "seconds": seconds, "error": f"wrong result {got}, expected {_EXPECTED}"}
    return {"ok": True, "seconds": seconds, "error": None}


def _device(name: str, kind: str, description: str | None, memory: int | None,
            run: Callable[[], Any]) -> dict[str, Any]:
    return {"name": name, "kind": kind, "description": description,
            "memory_bytes": memory, "tiny_op": _tiny_op(run)}


def probe_numpy() -> dict[str, Any]:
    import numpy as np

    blas: dict[str, Any] = {"name": None, "version": None, "threads": None, "detail": None}
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas.update(name=config.get("name"), version=config.get("version"),
                    detail=config.get("openblas configuration"))
    except Exception:  # noqa: BLE001 - older numpy: no dict mode
        pass
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                blas.update(name=pool.get("internal_api") or blas["name"],
                            version=pool.get("version") or blas["version"],
                            threads=pool.get("num_threads"),
                            architecture=pool.get("architecture"),
                            threading_layer=pool.get("threading_layer"))
                break
    except Exception:  # noqa: BLE001 - threadpoolctl is optional
        pass

    def run() -> Any:
        return (np.array(_A, dtype=np.float32) @ np.array(_B, dtype=np.float32)).tolist()

    return {"version": np.__version__, "blas": blas,
            "devices": [_device("cpu", "cpu", "host CPU", None, run)], "details": {}}


def _torch_blas(torch: Any) -> dict[str, Any]:
    config = torch.__config__.show()
    blas: dict[str, Any] = {"name": None, "version": None, "threads": torch.get_num_threads(), "detail": None}
    match = re.search(r"BLAS_INFO=([\w.+-]+)", config)
    if match:
        blas["name"] = match.group(1)
    for line in config.splitlines():
        line = line.strip(" -")
        if "Math Kernel Library" in line or "OpenBLAS" in line:
            blas["detail"] = line
        if line.startswith("CPU capability usage:"):
            blas["cpu_capability"] = line.split(":", 1)[1].strip()
    parallel = torch.__config__.parallel_info()
    for line in parallel.splitlines():
        if line.startswith("ATen parallel backend:"):
            blas["threading_layer"] = line.split(":", 1)[1].strip()
    return blas


def probe_torch() -> dict[str, Any]:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import torch

        cuda_ok = torch.cuda.is_available()
        cuda_count = torch.cuda.device_count() if cuda_ok else 0
    mps = getattr(torch.backends, "mps", None)
    details: dict[str, Any] = {
        "cuda_build": torch.version.cuda,
        "hip_build": getattr(torch.version, "hip", None),
        "cudnn_version": None,
        "cuda_available": cuda_ok,
        "cuda_device_count": cuda_count,
        "cuda_arch_list": [],
        "mps_built": bool(mps and mps.is_built()),
        "mps_available": bool(mps and mps.is_available()),
    }
    try:
        if torch.backends.cudnn.is_available():
            details["cudnn_version"] = torch.backends.cudnn.version()
        details["cuda_arch_list"] = torch.cuda.get_arch_list() if torch.version.cuda else []
    except Exception:  # noqa: BLE001 - report what we can
        pass

    def on(dev: Any) -> Callable[[], Any]:
        def run() -> Any:
            a = torch.tensor(_A, device=dev)
            b = torch.tensor(_B, device=dev)
            c = a @ b
            if c.device != torch.device(dev):
                raise RuntimeError(f"result landed on {c.device}, not {dev}")
            return c.cpu().tolist()
        return run

    devices = [_device("cpu", "cpu", "host CPU", None, on("cpu"))]
    for i in range(cuda_count):
        try:
            props = torch.cuda.get_device_properties(i)
            name, memory = props.name, int(props.total_memory)
            extra = {"capability": f"{props.major}.{props.minor}",
                     "multiprocessors": props.multi_processor_count,
                     "uuid": str(getattr(props, "uuid", "")) or None}
        except Exception as exc:  # noqa: BLE001
            name, memory, extra = f"unreadable ({exc})", None, {}
        entry = _device(f"cuda:{i}", "gpu", name, memory, on(f"cuda:{i}"))
        entry.update(extra)
        devices.append(entry)
    if details["mps_available"]:
        devices.append(_device("mps:0", "mps", "Apple GPU (Metal)", None, on("mps:0")))
    return {"version": torch.__version__, "blas": _torch_blas(torch), "devices": devices,
            "details": details, "warnings": [str(w.message) for w in caught]}


def probe_tensorflow() -> dict[str, Any]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:  # before any op: TF otherwise reserves all GPU memory
        try:
            tf.config.experimental.set_memory_growth(gpu, True)
        except Exception:  # noqa: BLE001 — a device probe never raises
            pass
    # Without this TF silently runs an op on the CPU when the GPU cannot: the probe must see it.
    tf.config.set_soft_device_placement(False)
    build = {}
    try:
        build = dict(tf.sysconfig.get_build_info())
    except Exception:  # noqa: BLE001 — a device probe never raises
        pass
    details = {
        "built_with_cuda": bool(tf.test.is_built_with_cuda()),
        "cuda_build": build.get("cuda_version"),
        "cudnn_build": build.get("cudnn_version"),
        "physical_devices": [d.name for d in tf.config.list_physical_devices()],
    }

    def on(name: str) -> Callable[[], Any]:
        def run() -> Any:
            with tf.device(name):
                c = tf.matmul(tf.constant(_A), tf.constant(_B))
            if not c.device.upper().endswith(name.upper()):
                raise RuntimeError(f"result landed on {c.device}, not {name}")
            return c.numpy().tolist()
        return run

    devices = []
    for logical in tf.config.list_logical_devices():
        if logical.device_type not in ("CPU", "GPU", "TPU"):
            continue
        short = logical.name.split("device:")[-1]  # "/device:GPU:0" -> "GPU:0"
        kind = logical.device_type.lower()
        description = None
        if kind == "gpu":
            try:
                index = int(short.split(":")[-1])
                description = tf.config.experimental.get_device_details(gpus[index]).get("device_name")
            except Exception:  # noqa: BLE001 — a device probe never raises
                pass
        devices.append(_device(short, kind, description, None, on(short)))
    return {"version": tf.__version__, "devices": devices, "details": details}


def probe_jax() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp

    details: dict[str, Any] = {"default_backend": jax.default_backend()}
    try:
        import jaxlib

        details["jaxlib_version"] = getattr(jaxlib, "__version__", None) or jaxlib.version.__version__
    except Exception:  # noqa: BLE001 — a device probe never raises
        details["jaxlib_version"] = None
    seen: list[Any] = []
    for backend in (None, "cpu"):
        try:
            for d in jax.devices(backend) if backend else jax.devices():
                if d not in seen:
                    seen.append(d)
        except Exception:  # noqa: BLE001 — a device probe never raises
            pass

    def on(dev: Any) -> Callable[[], Any]:
        def run() -> Any:
            a = jax.device_put(jnp.asarray(_A), dev)
            b = jax.device_put(jnp.asarray(_B), dev)
            c = (a @ b).block_until_ready()
            if set(c.devices()) != {dev}:
                raise RuntimeError(f"result landed on {c.devices()}, not {dev}")
            return c.tolist()
        return run

    devices = []
    for d in seen:
        kind = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "rocm": "gpu", "tpu": "tpu"}.get(d.platform, "other")
        memory = None
        try:
            stats = d.memory_stats() or {}
            memory = stats.get("bytes_limit")
        except Exception:  # noqa: BLE001 — a device probe never raises
            pass
        devices.append(_device(f"{d.platform}:{d.id}", kind, getattr(d, "device_kind", None), memory, on(d)))
    return {"version": jax.__version__, "devices": devices, "details": details}


_PROBES: dict[str, Callable[[], dict[str, Any]]] = {
    "numpy": probe_numpy,
    "torch": probe_torch,
    "tensorflow": probe_tensorflow,
    "jax": probe_jax,
}


def _child(name: str) -> dict[str, Any]:
    """Run one probe in this process and describe the outcome (never raises)."""
    import logging

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.WARNING)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage()[:500])

    keep = Keep()
    logging.getLogger().addHandler(keep)  # JAX says "no CUDA-enabled jaxlib" through logging
    start = time.perf_counter()
    try:
        result = _PROBES[name]()
        result["status"], result["reason"] = "ok", None
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        status = "missing" if missing in (name, "jaxlib" if name == "jax" else name) else "broken"
        result = {"status": status, "reason": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc()[-2000:]}
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a bad import is a finding too
        result = {"status": "broken", "reason": f"{type(exc).__name__}: {exc}"[:1000],
                  "traceback": traceback.format_exc()[-2000:]}
    result["seconds"] = time.perf_counter() - start
    result["warnings"] = list(result.get("warnings", [])) + keep.messages
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in _PROBES:
        print(f"usage: probes.py {{{','.join(_PROBES)}}}", file=sys.stderr)
        return 2
    result = _child(argv[0])
    sys.stdout.flush()
    sys.stdout.write("\n" + MARKER + json.dumps(result, default=str) + "\n")
    sys.stdout.flush()
    return 0


# ---------------------------------------------------------------------------------------------
# Parent side: runs in the doctor
# ---------------------------------------------------------------------------------------------

def _empty(name: str, status: str, reason: str, seconds: float) -> dict[str, Any]:
    return {"status": status, "version": None, "reason": reason, "seconds": seconds,
            "devices": [], "details": {}, "warnings": []}


def _signal_name(code: int) -> str:
    import signal

    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_probe(name: str, timeout: float = 120.0) -> dict[str, Any]:
    """Probe framework ``name`` in a fresh interpreter; never raises.

    Returns a dict with ``status`` (``ok``, ``missing``, ``broken``, ``timeout``), ``version``,
    ``reason``, ``seconds``, ``devices``, ``details``, ``warnings`` and, where the child got that
    far, ``blas``.
    """
    if name not in _PROBES:
        raise ValueError(f"unknown framework {name!r}: expected one of {', '.join(_PROBES)}")
    with open(__file__, encoding="utf-8") as handle:
        source = handle.read()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TF's C++ start-up chatter
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would grab 75 % of the GPU for a 2x2 op
    start = time.perf_counter()
    try:
        # A neutral working directory, so a student's numpy.py next to the notebook cannot
        # shadow the real one in the probe.
        done = subprocess.run([sys.executable, "-c", source, name], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=_neutral_dir())
    except subprocess.TimeoutExpired:
        return _empty(name, "timeout", f"importing {name} and running a tiny op took longer than "
                      f"{timeout:.0f} s", time.perf_counter() - start)
    except OSError as exc:
        return _empty(name, "broken", f"could not start {sys.executable}: {exc}", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if not lines:
        if done.returncode < 0:
            why = f"the interpreter crashed ({_signal_name(done.returncode)}) while importing {name}"
        else:
            why = f"the probe exited with code {done.returncode} without a result"
        tail = done.stderr.strip().splitlines()[-3:]
        return _empty(name, "broken", why + (": " + " | ".join(tail) if tail else ""), seconds)
    try:
        result = json.loads(lines[-1][len(MARKER):])
    except json.JSONDecodeError as exc:
        return _empty(name, "broken", f"unreadable probe output: {exc}", seconds)
    full = _empty(name, result.get("status", "broken"), result.get("reason"), seconds)
    full.update({k: v for k, v in result.items() if k not in ("seconds",)})
    full["seconds"] = round(seconds, 3)
    full.setdefault("version", None)
    return full


def _neutral_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


def run_probes(names: tuple[str, ...] | list[str] = FRAMEWORKS, timeout: float = 120.0,
               workers: int | None = None) -> dict[str, dict[str, Any]]:
    """``run_probe`` for several frameworks at once (in parallel child processes)."""
    names = list(names)
    with ThreadPoolExecutor(max_workers=workers or max(1, len(names))) as pool:
        results = list(pool.map(lambda n: run_probe(n, timeout), names))
    return dict(zip(names, results))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
