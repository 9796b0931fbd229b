"""``run_in_fresh_process``: load a saved graph in a new Python process and run it.

The new process stands for a deployment machine: it has torch, but none of your code. It
never imports coursekit (the import is blocked) and never sees the notebook, so a file that
needs a class definition to be rebuilt cannot load there. It loads the file with
``torch.export.load`` (a ``.pt2`` from ``torch.export.save``) or, failing that,
``torch.jit.load`` (TorchScript), and nothing else: never ``torch.load``, which would unpickle
whatever the file holds.

The caller's process starts the new one, with a time limit, so a file that hangs the loader is
a message, not a hang.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

TIMEOUT_S = 120

# Run as `python -I -c CHILD <graph> <folder> <count>`: reads in_<i>.npy, writes out_<i>.npy.
_CHILD = r"""
import sys
sys.modules["coursekit"] = None  # the deployment has torch, not the course's code
import numpy as np
import torch
graph, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    module = torch.export.load(graph).module()
    how = "torch.export.load"
except Exception as export_error:
    try:
        module = torch.jit.load(graph)
        how = "torch.jit.load"
    except Exception as jit_error:
        sys.stderr.write("LOAD FAILED: neither torch.export.load nor torch.jit.load can read "
                         "it (torch.export.load: %s; torch.jit.load: %s)\n"
                         % (type(export_error).__name__, type(jit_error).__name__))
        sys.exit(3)
with torch.no_grad():
    for i in range(count):
        x = torch.from_numpy(np.load(f"{folder}/in_{i}.npy"))
        try:
            y = module(x)
        except Exception as error:
            sys.stderr.write(f"RUN FAILED: the graph loaded with {how} raised "
                             f"{type(error).__name__} on an input of shape {tuple(x.shape)}\n")
            sys.exit(4)
        if isinstance(y, (tuple, list)) and len(y) == 1:
            y = y[0]
        np.save(f"{folder}/out_{i}.npy", y.detach().numpy())
"""


class FreshProcessError(RuntimeError):
    """The saved graph could not be loaded or run in a fresh process."""


# Outputs by the file's and the inputs' bytes: the same graph on the same inputs gives the same
# outputs, so a process that grades many answers against one reference starts it once.
_RESULTS: dict[str, list[np.ndarray]] = {}


def _key(path: Path, inputs: Sequence[np.ndarray]) -> str:
    digest = hashlib.sha256(path.read_bytes())
    for x in inputs:
        x = np.ascontiguousarray(x)
        digest.update(f"{x.dtype}{x.shape}".encode())
        digest.update(x.tobytes())
    return digest.hexdigest()


def run_in_fresh_process(path: str | os.PathLike, inputs: Sequence[np.ndarray],
                         timeout_s: float = TIMEOUT_S) -> list[np.ndarray]:
    """Load the graph saved at ``path`` in a new Python process and run it on each input.

    Returns:
        One NumPy array per input: the graph's output (its only output, if it returns a tuple).

    Raises:
        FreshProcessError: the file is missing, cannot be loaded without the code that made it,
            fails on an input, or the process runs longer than ``timeout_s``.
    """
    path = Path(path)
    if not path.is_file():
        raise FreshProcessError(f"no file was saved at {path}")
    key = _key(path, inputs)
    if key not in _RESULTS:
        _RESULTS[key] = _run(path, inputs, timeout_s)
    return [x.copy() for x in _RESULTS[key]]


def _run(path: Path, inputs: Sequence[np.ndarray], timeout_s: float) -> list[np.ndarray]:
    with tempfile.TemporaryDirectory(prefix="fresh-process-") as folder:
        for i, x in enumerate(inputs):
            np.save(f"{folder}/in_{i}.npy", np.ascontiguousarray(x))
        # A small environment of its own: the deployment machine shares nothing but the file.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": folder,
               "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run([sys.executable, "-I", "-c", _CHILD, str(path), folder,
                                   str(len(inputs))], capture_output=True, text=True,
                                  timeout=timeout_s, env=env, cwd=folder)
        except subprocess.TimeoutExpired:
            raise FreshProcessError(f"the fresh process did not finish within {timeout_s:g} s"
                                    ) from None
        if done.returncode != 0:
            said = [line for line in done.stderr.splitlines()
                    if line.startswith(("LOAD FAILED", "RUN FAILED"))]
            raise FreshProcessError(said[-1] if said else
                                    f"the fresh process failed (exit status {done.returncode})")
        return [np.load(f"{folder}/out_{i}.npy") for i in range(len(inputs))]
