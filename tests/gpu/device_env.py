"""What the lent GPU machine has, what the GPU check carries there, and a stand-in for it here.

The device machine runs its own ``python3`` (Python 3.12, torch with CUDA) and reaches no
network: the project's venv cannot be built there. Its image holds the packages in
``DEVICE_IMAGE`` (read from the workplace's description of the machine, as of 2026-11-17).
The GPU check needs a few more, pure Python but for ``pyzmq``, ``rpds-py`` and ``tornado``
(``CARRIED``): they travel as wheels in ``.whl/``, fetched here by ``make gpu-wheels``, and
are installed there into a folder of their own (:func:`install`), timed.

NOTE [why these and not nbgrader]
    The in-process harness (``tooling.mutants.Harness``) reads notebooks with nbformat and
    turns IPython syntax into Python with IPython's transformer; ``coursekit.notebook.score`` imports
    ``coursekit.notebook.execute`` at module level, which imports nbclient and zmq (used only to run
    kernels, which the harness never starts). nbgrader, needed only to build the student
    release, is *not* carried: its dependency tree is the size of Jupyter. The GPU check's
    harness does without the release (``lab_run.SolutionHarness``).

:func:`simulated_site` builds, from this machine's venv, a ``sys.path`` folder holding only
the distributions the device has or gets carried: the test runs the dry run on it, so a new
import of a package the device lacks fails here first, not in the one lent run.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

# The device image's Python packages ("Python packages already there", read 2026-11-17).
_IMAGE_LIST = """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch
build certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage
cuda-bindings cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops
equinox etils execnet filelock flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio
h11 h5py hf-xet httpcore httpx huggingface-hub humanize hypothesis idna imageio iniconfig
interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver
lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown
markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict
multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft
nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py
nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime
onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint
packaging pandas pathspec patsy peft pillow pip pluggy portalocker prometheus-client propcache
protobuf psutil pyarrow pybind11 py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions
pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout pytest-xdist python-dateutil
pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-core scikit-image
scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham simplejson six
sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore
threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric
torchmetrics torchvision tqdm transformers treescope triton typer typing-extensions typing-inspect
urllib3 uvloop wadler-lindig werkzeug wheel wrapt xarray xxhash yarl zipp
"""
DEVICE_IMAGE = frozenset(_IMAGE_LIST.split())

# What the GPU check needs that the image lacks (found by running the dry run on
# ``simulated_site``; see the NOTE above). Carried at the versions of this machine's venv.
CARRIED = (
    # notebooks (coursekit.notebook.cells)
    "nbformat", "fastjsonschema", "jsonschema", "jsonschema-specifications", "referencing",
    "rpds-py", "traitlets", "jupyter-core", "platformdirs",
    # imported by coursekit.notebook.execute at module level (kernels: never started here)
    "nbclient", "jupyter-client", "pyzmq", "tornado",
    # IPython's input transformer (coursekit.notebook.in_process_run) and IPython.display
    # (coursekit.viz): IPython 9 imports its terminal, completer and traceback packages
    # (prompt_toolkit, jedi, stack_data) lazily, and neither path reaches them
    "ipython",
)

# pip's platform tags for the device (x86-64 Linux; pip matches each tag exactly).
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64")


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them (``Jupyter_Core`` -> ``jupyter-core``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def missing_on_device() -> list[str]:
    """Carried distributions that this Python cannot import yet (all of them on the device)."""
    missing = []
    for name in CARRIED:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def download(dest: Path, python_version: str = "3.12") -> list[Path]:
    """Fetch the carried wheels for the device into ``dest``, at this venv's versions."""
    dest.mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={metadata.version(name)}" for name in CARRIED]
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--python-version", python_version, "--implementation", "cp",
               "-d", str(dest)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    subprocess.run(command + pins, check=True)
    return sorted(dest.glob("*.whl"))


def install(wheels: Path, target: Path) -> tuple[float, list[str]]:
    """Install every wheel in ``wheels`` into ``target`` (no index, no dependencies).

    Returns the seconds it took and the wheel file names.
    """
    files = sorted(wheels.glob("*.whl"))
    start = time.perf_counter()
    if files:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                        "--no-compile", "--no-cache-dir", "--upgrade", "--disable-pip-version-check",
                        "--target", str(target), *map(str, files)], check=True)
    return time.perf_counter() - start, [f.name for f in files]


def _top_level_entries(dist: metadata.Distribution) -> set[str]:
    """The names a distribution puts directly into site-packages (packages, modules, its
    ``.dist-info``)."""
    entries = set()
    for path in dist.files or ():
        first = Path(path).parts[0] if Path(path).parts else ""
        if first and first not in ("..", "__pycache__") and not first.endswith(".pth"):
            entries.add(first)
    return entries


def simulated_site(dest: Path) -> Path:
    """A folder of links to this venv's distributions that the device has or gets carried.

    Run Python with ``-S`` (no site-packages) and ``PYTHONPATH`` = this folder and the work
    tree to import only what the device would. Distributions of the image that this venv
    lacks (CUDA's, triton) are simply absent; the check must not need them for a dry run.
    """
    allowed = DEVICE_IMAGE | {normalise(n) for n in CARRIED}
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for dist in metadata.distributions():
        name = normalise(dist.metadata["Name"] or "")
        if name not in allowed:
            continue
        root = Path(dist.locate_file(""))
        for entry in _top_level_entries(dist):
            source = root / entry
            if source.exists() and not (dest / entry).exists():
                os.symlink(source, dest / entry)
    return dest
