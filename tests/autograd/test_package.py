"""The top-level package: exports, lazy subpackages, and no torch at import time."""
from __future__ import annotations

import subprocess
import sys

import coursekit as ck
import coursekit.autograd as ag


def test_import_coursekit_never_imports_torch():
    code = "import sys, coursekit; x = coursekit.tensor([1.0], requires_grad=True); (x * 2).sum().backward(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_top_level_exports_mirror_torch_names():
    for name in ("tensor", "Tensor", "no_grad", "enable_grad", "autograd", "float32", "float64"):
        assert hasattr(ck, name), name
    assert ck.float32 is not None and ck.tensor([1.0], dtype=ck.float64).dtype == ck.float64


def test_autograd_exports_the_engine_api():
    for name in ("Function", "gradcheck", "GradcheckError", "Tensor", "backward", "toposort", "no_grad", "enable_grad"):
        assert hasattr(ag, name), name


def test_unknown_attribute_raises_attribute_error():
    try:
        ck.no_such_thing
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def test_subpackages_load_lazily_on_first_access():
    code = "import sys, coursekit; a = 'coursekit.optim' in sys.modules; coursekit.optim; print(a, 'coursekit.optim' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False True"
