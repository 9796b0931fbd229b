"""In a real kernel, ``grade()`` scans the whole cell that defined the answer, as grading
scans the whole answer cell: a self-test that calls ``.backward()`` next to a custom Function
fails in the notebook too, instead of passing there and scoring zero at grading."""
from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

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
    NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3").execute()
    return "".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[1].outputs)


@pytest.mark.slow
def test_a_backward_call_in_the_answer_cell_fails_the_check_in_the_notebook():
    assert "✓ lab03.my_relu" in _grade_output(MY_RELU)
    out = _grade_output(MY_RELU + SELF_TEST)
    assert "uses what this exercise asks you to build yourself" in out
    assert "try your code out in a cell after the checks" in out
