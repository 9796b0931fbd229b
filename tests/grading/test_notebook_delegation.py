"""In a real kernel, ``grade()`` judges delegation as grading does: by what runs while the
check runs, never by what the code says. A self-test that calls ``.backward()`` in the answer
cell, a docstring that names ``torch.autograd``, a method of the student's own called
``backward``, or ``torch.enable_grad()`` (the lecture's grad-mode idiom) cost nothing; a
backward that asks torch autograd for the gradient fails, also through a C wrapper that no
Python profile function sees (torch's engine is watched from C++, as at grading)."""
from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from machine_load import scaled

pytest.importorskip("torch")

MY_RELU = '''import torch


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)
'''
SELF_TEST = "\n_t = torch.randn(3, requires_grad=True)\nMyReLU.apply(_t).sum().backward()\n"


def _grade_output(answer_cell: str) -> str:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(answer_cell),
        nbformat.v4.new_code_cell('from coursekit.grading import grade\ngrade("lab03.my_relu", MyReLU)')])
    NotebookClient(nb, timeout=scaled(120), allow_errors=True, kernel_name="python3").execute()
    return "".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[1].outputs)


DELEGATING = MY_RELU.replace(
    """        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)""",
    """        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(leaf.clamp(min=0), leaf, grad_output)
        return grad""")
THROUGH_C = MY_RELU.replace(
    """        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)""",
    """        (x,) = ctx.saved_tensors
        import functools
        engine = torch.autograd.Variable._execution_engine
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            (grad,) = functools.partial(engine.run_backward, (leaf.clamp(min=0),),
                                        (grad_output,), False, False, (leaf,), False, False)()
        return grad""")
DOCUMENTED = MY_RELU.replace(
    "class MyReLU(torch.autograd.Function):",
    'class MyReLU(torch.autograd.Function):\n    """No torch.autograd.grad and no .backward() here: my own backward."""')


@pytest.mark.slow
def test_the_notebook_judges_delegation_by_what_runs_during_the_check():
    assert "✓ lab03.my_relu" in _grade_output(MY_RELU)
    assert "✓ lab03.my_relu" in _grade_output(MY_RELU + SELF_TEST)
    assert "✓ lab03.my_relu" in _grade_output(DOCUMENTED)
    out = _grade_output(DELEGATING)
    assert "uses what this exercise asks you to build yourself" in out
    assert "torch.autograd.grad" in out and "torch.enable_grad" not in out
    out = _grade_output(THROUGH_C)
    assert "uses what this exercise asks you to build yourself" in out
    assert "torch.autograd.engine" in out


SIGMOID_IMPORTING = '''import sys
sys.path.insert(0, {folder!r})
import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        import lazylib  # first use: its import runs torch.nn code, as torch's lazy imports do
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)
'''


@pytest.mark.slow
def test_a_library_import_the_answer_sets_off_is_the_librarys_doing(tmp_path):
    """lab03's honest Sigmoid once failed in the notebook: its first autograd.Function call made
    torch import torch._dynamo, whose import runs torch.nn code. An import is the module's own
    doing, as at grading; a call of torch.nn from the answer itself still fails."""
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "lazylib.py").write_text(
        "import torch\n_ONE = torch.nn.functional.relu(torch.ones(1))\n")

    def output(answer):
        nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell(answer),
            nbformat.v4.new_code_cell('from coursekit.grading import grade\n'
                                      'grade("lab03.sigmoid", Sigmoid)')])
        NotebookClient(nb, timeout=scaled(120), allow_errors=True,
                       kernel_name="python3").execute()
        return "".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[1].outputs)

    honest = SIGMOID_IMPORTING.format(folder=str(library))
    assert "✓ lab03.sigmoid" in output(honest), output(honest)
    delegating = honest.replace("y = 1 / (1 + torch.exp(-x))", "y = torch.nn.functional.sigmoid(x)")
    out = output(delegating)
    assert "uses what this exercise asks you to build yourself" in out and "torch.nn" in out, out


@pytest.mark.slow
def test_a_module_body_of_the_students_own_launders_nothing(tmp_path):
    """Attack on the rule above: the answer writes its own module, whose body makes the
    forbidden call, and imports it while the check runs. Only a library's module body is the
    library's doing; a student's file is the student's code, body and all."""
    own = tmp_path / "helper_own"
    own.mkdir()
    (own / "launder.py").write_text(
        "import builtins, torch\nbuiltins._laundered = torch.nn.functional.sigmoid(builtins._x)\n")
    answer = SIGMOID_IMPORTING.format(folder=str(own)).replace(
        """        import lazylib  # first use: its import runs torch.nn code, as torch's lazy imports do
        y = 1 / (1 + torch.exp(-x))""",
        """        import builtins, importlib, sys
        builtins._x = x
        sys.modules.pop("launder", None)
        importlib.import_module("launder")
        y = builtins._laundered""")
    assert "launder" in answer
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(answer),
        nbformat.v4.new_code_cell('from coursekit.grading import grade\ngrade("lab03.sigmoid", Sigmoid)')])
    NotebookClient(nb, timeout=scaled(120), allow_errors=True, kernel_name="python3").execute()
    out = "".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[1].outputs)
    assert "uses what this exercise asks you to build yourself" in out and "torch.nn" in out, out
