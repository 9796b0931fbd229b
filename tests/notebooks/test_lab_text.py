"""The labs' text as a student meets it (issue 9): lectures rather than source files, rules stated
once, no holes against the lecture notes, written answers not given away, and the small cells
that teach by running (lab02's freed graph, lab01's MPS guard) doing what the text says."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest
import torch

from coursekit.grading.program import get_check, run_program

REPO = Path(__file__).resolve().parents[2]
LABS = sorted(p.name for p in (REPO / "notebooks").iterdir() if p.is_dir())


def release(lab: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "notebooks" / lab / f"{lab}.ipynb", as_version=4)


def solution(lab: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "solutions" / lab / f"{lab}.ipynb", as_version=4)


def text(nb) -> str:
    return "\n".join(cell.source for cell in nb.cells)


def cell_with(nb, needle: str) -> str:
    (source,) = [c.source for c in nb.cells if needle in c.source]
    return source


@pytest.mark.parametrize("lab", LABS)
def test_students_read_of_lectures_not_of_source_files(lab):
    # "seed 000 §12.2.3", "slides of seed 002", "the seed's lr": students read a random seed.
    found = re.findall(r"seed \d{3}|of seed\b|the seed's|\bseeds?\b \d", text(release(lab)))
    assert not found, found


def test_lab03_names_no_lab_that_does_not_exist():
    assert not re.search(r"\blab 0?6\b", text(release("lab03_functions")), re.IGNORECASE)


def test_lab03_states_its_autograd_rule_once_and_the_checks_follow_it():
    intro = release("lab03_functions").cells[0].source
    assert "In Exercises 1–4 the answer cell may not run autograd" in intro
    assert "Exercise 5 is the one exception" in intro and "`torch.autograd.grad` is allowed" in intro
    exercise5 = cell_with(release("lab03_functions"), "### Exercise 5")
    assert "`torch.autograd.grad` is fine" not in exercise5  # the old, second statement
    for name in ("sigmoid", "my_relu", "softplus", "ck_sigmoid"):
        assert ".backward" in get_check(f"lab03.{name}").forbid
    assert "torch.autograd.grad" in get_check("lab03.sigmoid").forbid
    assert "torch.autograd.grad" not in get_check("lab03.my_gradcheck").forbid


def _run_cells(nb, indices: list[int]) -> str:
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for index in indices:
            exec(compile(nb.cells[index].source, f"<cell {index}>", "exec"), namespace)
    return out.getvalue()


def test_lab02_shows_the_freed_graph_error_then_the_accumulation():
    nb = solution("lab02_autograd")
    intro = cell_with(nb, "**The graph is freed after backward.**")
    assert "retain_graph=True" in intro and "every gradient doubles" not in intro
    setup = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    first = next(i for i, c in enumerate(nb.cells) if "loss.backward()\nprint(\"w1.grad:" in c.source)
    shown = next(i for i, c in enumerate(nb.cells) if "loss.backward(retain_graph=True)" in c.source)
    out = _run_cells(nb, [setup, first, shown])
    assert "second backward on the same graph raises RuntimeError" in out
    ratios = [float(v) for v in re.findall(r"= (\d+\.\d+)", out)]
    assert ratios == pytest.approx([2.0, 3.0])


def test_lab01_runs_float64_only_where_the_device_has_it():
    source = cell_with(solution("lab01_graphs"), "def float_dtypes(device):")
    namespace = {"torch": torch}
    exec(re.search(r"def float_dtypes.*?\n\n\n", source, re.S).group(0), namespace)
    float_dtypes = namespace["float_dtypes"]
    assert float_dtypes(torch.device("mps")) == (torch.float32,)  # MPS has no float64
    # The rule on the meta device, as the checks do: every dtype it names can be made there.
    for dtype in float_dtypes(torch.device("meta")):
        assert torch.zeros(2, 3, dtype=dtype, device="meta").dtype == dtype
    assert float_dtypes("meta") == (torch.float64, torch.float32)
    assert "float_dtypes(device)" in source and "(torch.float64, torch.float32), desc" not in source


def test_lab04_teaches_that_a_parameter_requires_grad():
    nb = solution("lab04_modules")
    source = cell_with(nb, 'print("a Parameter is a tensor:"')
    out = _run_cells(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import torch\nfrom torch.nn import Parameter\n" + source)]), [0])
    assert "Parameter(torch.zeros(3)).requires_grad       : True" in out
    assert "requires_grad=False).requires_grad: False" in out


def test_lab05_covers_tensor_dataset_and_prefetch_factor():
    body = text(release("lab05_data"))
    assert "TensorDataset(x_all, y_all)" in body
    assert "prefetch_factor" in body and "num_workers × prefetch_factor" in body


def test_lab00_compares_cpu_gpu_and_tpu_on_paper():
    table = cell_with(release("lab00_setup"), "### CPUs, GPUs and TPUs on paper")
    for needle in ("tensor cores", "bf16", "fp16", "TPU v4", "H100", "A100", "systolic"):
        assert needle in table


def test_lab00_exercise3_says_what_a_cpu_can_show_and_models_the_gpu():
    nb = release("lab00_setup")
    assert "What a CPU-only machine can and cannot show" in text(nb)
    source = cell_with(nb, "def verdict(transfer_s, compute_s):")
    assert '"tie"' in source and "modelled for an H100 SXM" in source


def test_lab04_written_answers_are_not_given_away():
    nb = release("lab04_modules")
    summary = cell_with(nb, "## Summary")
    assert "too large" not in summary
    assert "does **not** turn off gradients" not in text(nb)


def test_small_things_lab00_labels_lab03_zero_bars_lab04_progress():
    assert "xytext=(6, -12) if k % 2 == 0 else (-34, 6)" in text(release("lab00_setup"))
    assert "nothing extra kept" in text(release("lab03_functions"))
    assert "progress.update()" in text(release("lab04_modules"))


# ------------------------------------------------------------------ weights stated in the text

def _case_weights(check: str) -> list[tuple[str, float]]:
    c = get_check(check)
    return [(o.label, o.case.weight) for o in run_program(c, c.reference_impl(), 0) if o.case]


@pytest.mark.parametrize("check, total, stated", [
    ("lab03.sigmoid", 3.0, "saving the output `y` for backward 1"),
    ("lab04.sgd", 2.0, "momentum as torch\ndefines it, $b_t = \\mu b_{t-1} + g_t$, 1"),
    ("lab04.adam", 3.0, "the update with bias correction, step by step in\nthree settings, 2.1"),
])
def test_each_check_is_weighted_as_its_lab_states(check, total, stated):
    weights = _case_weights(check)
    assert sum(w for _, w in weights) == pytest.approx(total)
    lab = "lab03_functions" if check.startswith("lab03") else "lab04_modules"
    assert stated in text(release(lab))
    if check == "lab03.sigmoid":
        assert dict(weights)["forward saves the output y for backward"] == pytest.approx(1.0)
    else:
        update = [w for label, w in weights if "parameters after step" in label
                  and "no grad" not in label]
        assert sum(update) == pytest.approx(1.3 if check == "lab04.sgd" else 2.1)
