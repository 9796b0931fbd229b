"""What a student reads when an answer is wrong: the message names the student's mistake, never
the grader's or the stub's (issue 9)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from coursekit.grading.compare import compare
from coursekit.grading.grade import CheckFailed
from coursekit.grading.report import format_check
from coursekit.grading.verdict import CaseResult, CheckResult, observed

STUB = "raised NotImplementedError: f: replace this line with your implementation"


# ------------------------------------------------------------------ compare never raises

def test_a_cpu_tensor_where_a_meta_tensor_is_expected_is_named():
    # lab01 Ex 4: losses = torch.zeros(steps, dtype=x.dtype); losses[t] += loss — torch lets an
    # in-place op mix a CPU tensor with meta ones, so a CPU tensor reaches the comparison.
    got, expected = observed(torch.zeros(4)), observed(torch.zeros(4, device="meta"))
    message = compare((got,), (expected,), names=("losses",))
    assert message.startswith("losses: got a cpu tensor of shape (4,) where a meta tensor "
                              "was expected")
    assert "device=" in message


def test_a_meta_tensor_with_the_wrong_dtype_says_which_attribute_differs():
    got = observed(torch.zeros(3, device="meta", dtype=torch.float64))
    message = compare(got, observed(torch.zeros(3, device="meta")))
    assert message == "got a tensor with dtype torch.float64 where torch.float32 was expected"


_KINDS = [torch.zeros(3), torch.zeros(3, device="meta"), np.zeros((2, 2)), np.array([1, 2]),
          np.array([1]), np.array(3), np.array(True), np.zeros(3, dtype=complex), 1, 2.0, True,
          None, "s", float("nan"), (1, 2), [1.0], {"a": 1}, object(), ValueError("x")]


@pytest.mark.parametrize("got, expected", list(itertools.product(range(len(_KINDS)), repeat=2)))
def test_comparing_any_two_observed_values_gives_a_message_not_an_exception(got, expected):
    # An ndarray on the left of `==` with a scalar, None, a string or a MetaTensor used to
    # raise "truth value of an array is ambiguous": the grader then blamed itself.
    message = compare(observed(_KINDS[got]), observed(_KINDS[expected]))
    assert message is None or isinstance(message, str)


def test_an_array_where_a_scalar_is_expected_is_described():
    assert compare(observed(np.array([1, 2])), 1) == "got an array of shape (2,), expected 1"
    assert compare(observed(np.array([1])), 1) is None


# ------------------------------------------------------------------ "not implemented yet"

def _result(*messages: str) -> CheckResult:
    return CheckResult("lab.f", hidden=False, cases=[
        CaseResult(f"case {i}", False, m, hint=f"hint {i}") for i, m in enumerate(messages)])


def test_torch_not_implemented_error_is_a_real_error_with_its_hint():
    # A .cpu().numpy() on a meta tensor in lab05's collate, torch.zeros(steps) in lab01.
    torch_error = ("raised NotImplementedError: Cannot copy out of meta tensor; no data! "
                   "Please use .to() instead of .cpu() or .numpy()")
    text = format_check(_result(torch_error, torch_error))
    assert "not implemented yet" not in text
    assert "Cannot copy out of meta tensor" in text and "hint 0" in text


def test_every_form_of_the_stub_failure_reads_not_implemented_yet():
    text = format_check(_result(
        STUB,
        "expected ValueError to be raised, got NotImplementedError: f: replace this line "
        "with your implementation",
        "raised EarlierStepFailed: skipped: building the module tree failed",
        "expected AttributeError to be raised, got EarlierStepFailed: skipped: building"))
    assert text.splitlines()[1] == ("  ✗ not implemented yet (4 cases): NotImplementedError: f: "
                                    "replace this line with your implementation")
    assert "hint" not in text


def test_nbgraders_default_stub_without_a_message_is_the_stub_too():
    assert "not implemented yet (1 case)" in format_check(_result("raised NotImplementedError"))


def test_counts_are_singular_for_one():
    assert "0/1 case passed" in format_check(_result("got 1, expected 2"))
    text = format_check(_result(*["got 1, expected 2"] * 6))
    assert text.endswith("… and 1 more failing case")


# ------------------------------------------------------------------ no traceback under a report

def test_a_failed_check_shows_one_line_instead_of_a_traceback():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    result = shell.run_cell("from coursekit.grading.grade import CheckFailed\n"
                            "raise CheckFailed('lab.f: 1 of 2 cases differ from the reference')")
    assert isinstance(result.error_in_exec, CheckFailed)  # the cell still fails (nbgrader)
    lines = CheckFailed("lab.f: 1 of 2 cases differ")._render_traceback_()
    assert len(lines) == 1 and "CheckFailed" in lines[0] and "grade.py" not in lines[0]


def test_a_later_check_says_it_depends_on_the_failing_earlier_exercise():
    """A bad two_layer_grads makes the training loop that calls it fail too: that check says
    so, and nothing else, instead of a hint about recording the loss."""
    from pathlib import Path

    from tooling.mutants import Harness
    from coursekit import course as manifest
    from coursekit.notebook.score import CellScore, explain_dependencies

    course = manifest.load_course(Path(__file__).resolve().parents[2])
    h = Harness(course, course.lab("lab01_graphs"))
    wrong_grads = h.solution("two_layer_grads").replace("2.0 * (y_pred - y)", "(y_pred - y)")
    assert wrong_grads != h.solution("two_layer_grads")
    first = h.score("two_layer_grads", wrong_grads)
    h.source.by_id()["two_layer_grads"].cell.source = wrong_grads  # the earlier answer is wrong
    second = h.score("train_two_layer", h.solution("train_two_layer"))
    assert not second.checks[0].passed
    cells: list[CellScore] = [first, second]
    explain_dependencies(cells)
    message = second.checks[0].message
    assert "depends on lab01.two_layer_grads" in message and "hint" not in message
