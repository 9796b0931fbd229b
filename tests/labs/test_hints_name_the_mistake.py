"""Labs 06-11 as a student meets them: a typical wrong answer, graded for real (the mutant
suite's harness: setup cells, earlier answers, the checks cell, the grader's scoring), is
told about its own mistake and not about another one (issue 26).

Each test names the mistake, grades it, and reads the messages a student would read: the
visible check's (cases, values and hints) and the hidden check's (hints only).
"""
from __future__ import annotations

import ast
import linecache
import time
from functools import lru_cache
from pathlib import Path

import pytest

from tooling.mutants import Harness, load_mutants, mutants_path
from coursekit import course as manifest
from coursekit.notebook.score import CellScore, explain_dependencies

REPO = Path(__file__).resolve().parents[2]
COURSE = manifest.load_course(REPO)


@lru_cache(maxsize=None)
def _harness(lab: str) -> Harness:
    return Harness(COURSE, COURSE.lab(lab))


def _mutant(lab: str, answer: str, starts: str) -> str:
    (code,) = [code for name, code in load_mutants(mutants_path(COURSE, lab))[answer]
               if name.startswith(starts)]
    return code


def _graded(lab: str, answer: str, code: str) -> CellScore:
    return _harness(lab).score(answer, code)


def _text(cell: CellScore) -> str:
    """Everything the student reads about the cell: every call's message, visible and hidden."""
    return "\n".join(check.message for check in cell.checks)


def _solution_with(lab: str, answer: str, old: str, new: str) -> str:
    solution = _harness(lab).solution(answer)
    assert old in solution, (answer, old)
    return solution.replace(old, new)


# ------------------------------------------------------------ 1. lab11 param_groups after freeze

def test_param_groups_says_its_own_mistake_while_freeze_fails_too():
    """Neither the answer nor the check of param_groups calls freeze_except: a failing freeze
    must not replace param_groups' own message (frozen parameters in the optimizer)."""
    h = Harness(COURSE, COURSE.lab("lab11_after_training"))   # its source is changed below
    wrong_freeze = _mutant("lab11_after_training", "freeze", "only freezes")
    freeze = h.score("freeze", wrong_freeze)
    assert not all(check.passed for check in freeze.checks)
    h.source.by_id()["freeze"].cell.source = wrong_freeze
    groups = h.score("param_groups", _mutant("lab11_after_training", "param_groups",
                                             "keeps the frozen parameters"))
    cells = [freeze, groups]
    explain_dependencies(cells)
    text = _text(groups)
    assert groups.score < groups.max_score
    assert "depends on" not in text
    assert "leave out every parameter with requires_grad False" in text


def test_every_declared_dependency_is_called_by_the_solution():
    """`after=` says "this exercise's answer calls that one": the solution, or what its checks
    cell hands the check, must name something the earlier answer defines, or the message
    would blame an exercise that plays no part."""
    from coursekit.grading.program import get_check

    for lab in COURSE.labs:
        h = _harness(lab.id)
        for answer in h.answers:
            checks_cell = h.checks_of(answer.grade_id or "")
            for call in checks_cell.calls:
                for dependency in get_check(call.check).after:
                    defined = set()
                    for other in h.answers:
                        other_checks = h.checks_of(other.grade_id or "")
                        if any(c.check == dependency for c in other_checks.calls):
                            tree = ast.parse(other.source)
                            defined |= {node.name for node in ast.walk(tree) if isinstance(
                                node, (ast.FunctionDef, ast.ClassDef))}
                    # What the answer names, and what the checks cell hands the check.
                    used = set()
                    for source in (answer.source, checks_cell.source):
                        tree = ast.parse(source)
                        used |= ({node.id for node in ast.walk(tree)
                                  if isinstance(node, ast.Name)}
                                 | {node.attr for node in ast.walk(tree)
                                    if isinstance(node, ast.Attribute)})
                    assert defined & used, (call.check, dependency, sorted(defined))


# ------------------------------------------------------------ 2. lab09: a docstring is prose

def test_the_stubs_own_docstring_is_not_delegation():
    """The loss scaler's stub says it works "step for step as torch.amp.GradScaler": keeping
    that docstring is no use of torch.amp, while code that imports it still is."""
    from coursekit.notebook.score import delegation

    h = _harness("lab09_performance")
    calls = h.checks_of("loss_scaler").calls
    solution = h.solution("loss_scaler")
    assert "torch.amp.GradScaler" in solution   # the docstring the release keeps
    assert delegation(calls, {"cell 12 (loss_scaler)": solution}) == {}
    message = 'print("compare with torch.amp.GradScaler by hand")\n' + solution
    assert delegation(calls, {"cell 12 (loss_scaler)": message}) == {}
    uses = solution + "\nfrom torch.amp import GradScaler\n"
    assert delegation(calls, {"cell 12 (loss_scaler)": uses})


# ------------------------------------------------------------ 3. lab06 w2_model without float

def test_an_unannotated_prev_loss_is_told_why_a_python_float_is_refused():
    cell = _graded("lab06_static_graphs", "w2_model",
                   _mutant("lab06_static_graphs", "w2_model", "prev_loss without annotation"))
    text = _text(cell)
    # Scripted, both branches, right values: only the float costs (0.5 of 2 points).
    assert cell.score == pytest.approx(1.5)
    assert "prev_loss: float" in text and "refuses the Python float" in text
    assert "decorate the function" not in text


# ------------------------------------------------------------ 4. lab06 export without eval

def test_an_export_in_training_mode_is_told_about_eval_not_dynamic_shapes():
    cell = _graded("lab06_static_graphs", "export_for_inference",
                   _mutant("lab06_static_graphs", "export_for_inference", "forgets model.eval()"))
    text = _text(cell)
    assert 0 < cell.score < cell.max_score
    assert "model.eval()" in text
    assert "dynamic_shapes" not in text and "batch dimension dynamic" not in text
    # The opposite mistake is told the opposite.
    static = _text(_graded("lab06_static_graphs", "export_for_inference",
                           _mutant("lab06_static_graphs", "export_for_inference",
                                   "no dynamic_shapes")))
    assert "dynamic_shapes" in static and "call model.eval()" not in static


# ------------------------------------------------------------ 5. lab11: a loss still attached

def test_the_side_by_side_cell_takes_a_torch_loss_still_attached_to_its_graph():
    """The exercise never asks to detach; a full-mark answer returns `loss` as it is."""
    import numpy as np
    import torch

    import coursekit as ck

    h = _harness("lab11_after_training")
    frameworks = h.solution("frameworks")
    (given,) = [node for node in ast.parse(frameworks).body
                if isinstance(node, ast.FunctionDef) and node.name == "numpy_two_layer"]

    def attached_torch(x, y, w1, w2):
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        w1, w2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        return loss, w1.grad, w2.grad   # loss requires grad

    namespace = {"np": np, "torch": torch, "ck": ck}
    text = ast.get_source_segment(frameworks, given) + "\n"
    linecache.cache["<frameworks>"] = (len(text), None, text.splitlines(True), "<frameworks>")
    exec(compile(text, "<frameworks>", "exec"), namespace)   # the cell shows its source
    namespace["TWO_LAYER"] = {"numpy": namespace["numpy_two_layer"], "torch": attached_torch}
    side_by_side = next(c.source for c in h.source.nb.cells if c.get("id") == "cell-37")
    exec(compile(side_by_side, "<side by side>", "exec"), namespace)   # raised before


def test_a_torch_loss_still_attached_keeps_full_marks():
    names = [name for name, _ in load_mutants(mutants_path(COURSE, "lab11_after_training"),
                                              "ALTERNATIVES")["frameworks"]]
    assert any("attached" in name for name in names)


# ------------------------------------------------------------ 6. lab09 predict: cat outside

def test_a_torch_cat_after_inference_mode_loses_one_property_and_is_told_why():
    code = '''def predict(model, x, batch_size=256):
    """The model's outputs for x, in eval mode and inference mode, batch by batch."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            outputs = [model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)]
        return torch.cat(outputs)
    finally:
        model.train(was_training)
'''
    cell = _graded("lab09_performance", "predict", code)
    text = _text(cell)
    # One case among ten (five trials' values, four properties over them, the mode after a
    # raising call): 1/10 of the points.
    assert cell.score == pytest.approx(cell.max_score * 9 / 10)
    assert "torch.cat inside" in text and "inference tensor" in text


# ------------------------------------------------------------ 7. lab10 two_stage

_TWO_STAGE_HEAD = '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
'''


def test_a_received_activation_without_requires_grad_is_named_without_a_traceback():
    code = _TWO_STAGE_HEAD + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''
    text = _text(_graded("lab10_distributed", "two_stage", code))
    assert "requires_grad_()" in text and "received.grad None" in text
    assert "Traceback" not in text and "deadlock" not in text


def test_a_blocking_send_on_both_ranks_is_named_a_deadlock_soon():
    code = _TWO_STAGE_HEAD + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.send(torch.zeros(hidden_shape, dtype=received.dtype), dst=0)   # "ready"
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''
    from coursekit.grading.checks.lab10 import TIMEOUT_S

    # The solution, scored just before, is the cost of the rest (forking the ranks, gloo, the
    # model) on this machine now: a busy machine makes it longer, not the waits' deadlines.
    start = time.monotonic()
    _graded("lab10_distributed", "two_stage", _harness("lab10_distributed").solution("two_stage"))
    rest = time.monotonic() - start
    start = time.monotonic()
    cell = _graded("lab10_distributed", "two_stage", code)
    waited = time.monotonic() - start - rest
    text = _text(cell)
    assert cell.score == 0
    assert "deadlock" in text and "requires_grad_" not in text
    # Visible and hidden: each waited the whole run (TIMEOUT_S) before; now one send's wait.
    assert waited < 2 * TIMEOUT_S, f"the deadlock cost {waited:.0f} s more than the solution"


# ------------------------------------------------------------ 8. lab07 w = w - lr * g

def test_a_variable_replaced_by_a_tensor_is_told_about_assign_sub():
    code = _solution_with("lab07_tensorflow", "tape_train", '''        w1.assign_sub(lr * grad_w1)
        w2.assign_sub(lr * grad_w2)''', '''        w1 = w1 - lr * grad_w1
        w2 = w2 - lr * grad_w2''')
    cell = _graded("lab07_tensorflow", "tape_train", code)
    text = _text(cell)
    assert 0 < cell.score < cell.max_score   # one step is right
    assert "assign_sub" in text and "does not watch" in text
    assert "reduce_mean" not in text          # the loss formula is right


# ------------------------------------------------------------ 9. cascades

@pytest.mark.parametrize("mutant", [
    "keeps counting good steps across an overflow", "steps the optimizer even when",
    "step() unscales again", "counts every step towards growth", "unscales a copy"])
def test_a_scaler_that_uses_isfinite_is_never_told_to(mutant):
    text = _text(_graded("lab09_performance", "loss_scaler",
                         _mutant("lab09_performance", "loss_scaler", mutant)))
    assert "torch.isfinite" not in text, text


def test_a_scaler_that_misses_nan_is_told_to_use_isfinite():
    text = _text(_graded("lab09_performance", "loss_scaler",
                         _mutant("lab09_performance", "loss_scaler", "looks for inf only")))
    assert "torch.isfinite" in text


def test_time_jit_without_block_until_ready_is_not_told_about_the_median():
    text = _text(_graded("lab08_jax", "time_jit",
                         _mutant("lab08_jax", "time_jit", "no block_until_ready")))
    assert "block_until_ready" in text
    assert "median of the timed calls" not in text and "not their mean" not in text


def test_time_jit_with_the_mean_is_told_about_the_median_only():
    text = _text(_graded("lab08_jax", "time_jit", _mutant("lab08_jax", "time_jit", "the mean")))
    assert "not their mean" in text
    assert "returns as soon as its work is queued" not in text


@pytest.mark.parametrize("mutant", [
    "averages the parameters only", "decay on the wrong side", "the first update averages",
    "copies the buffers"])
def test_an_ema_that_copies_deeply_is_never_told_to_deepcopy(mutant):
    text = _text(_graded("lab11_after_training", "ema",
                         _mutant("lab11_after_training", "ema", mutant)))
    assert "deepcopy" not in text and "deep copy" not in text, text


def test_an_ema_without_a_copy_is_told_to_deepcopy_and_nothing_else():
    text = _text(_graded("lab11_after_training", "ema",
                         _mutant("lab11_after_training", "ema", "no deep copy")))
    assert "copy.deepcopy(model)" in text
    assert "avg = decay * avg" not in text


# ------------------------------------------------------------ 10. cases and points, both places

def test_the_notebook_report_shows_cases_and_points(capsys, monkeypatch):
    """In JupyterLab a check printed `1/4 cases passed` and no points; validate printed both."""
    import torch

    from coursekit.grading import grade
    from coursekit.grading.grade import CheckFailed

    monkeypatch.chdir(REPO / "solutions" / "lab11_after_training")
    monkeypatch.delenv("COURSEKIT_MODE", raising=False)

    def no_eval(models, x):
        with torch.no_grad():
            probs = torch.stack([m(x).softmax(dim=1) for m in models]).mean(dim=0)
        return probs, probs.argmax(dim=1)

    with pytest.raises(CheckFailed):
        grade("lab11.ensemble", no_eval)
    header = capsys.readouterr().out.splitlines()[0]
    assert "cases passed" in header and "/2 points" in header, header

    def freeze(model, trainable):
        prefixes = tuple(name + "." for name in trainable)
        for name, parameter in model.named_parameters():
            parameter.requires_grad_(name.startswith(prefixes))

    grade("lab11.freeze", freeze)   # one of the cell's two calls: its share of the 2 points
    header = capsys.readouterr().out.splitlines()[0]
    assert "cases passed" in header and "points" in header and "/2 points" not in header


def test_validate_reports_cases_and_points():
    from coursekit.notebook.score import CheckScore
    from coursekit.notebook.validate import Validation

    score = CheckScore("ensemble_check", "lab11.ensemble", False, 0.4, 2.0,
                       "1/5 cases passed\n✗ a case: got 1, expected 2", 1, 5)
    report = Validation(Path("lab11_after_training.ipynb"),
                        cells=[CellScore("ensemble_check", "checks", 2.0, 0.4, [score])]).report()
    assert "0.40/2.00 points" in report and "(1/5 cases)" in report
