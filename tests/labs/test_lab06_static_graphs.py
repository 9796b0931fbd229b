"""lab06's library parts, beyond what the mutant suite proves: the functions its trace check
uses do what the lab says of them, the fresh process runs an exported graph at any batch
size, answers a pickled module (which needs its class) with a message, and has a time limit,
and the timing check's planted tie is exact whatever the seed."""
from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coursekit.grading.program import get_check, run_program
from coursekit.graphs import FreshProcessError, run_in_fresh_process, trace_disagreements
from coursekit.graphs.models import FUNCTIONS, random_model


def test_reference_flags_exactly_the_inputs_a_trace_gets_wrong():
    example = torch.rand(4, 3) + 0.1
    same_shape = torch.rand(4, 3) + 0.1
    inputs = [same_shape, -same_shape, torch.rand(6, 3) + 0.1]
    verdicts = {name: trace_disagreements(fn, example, inputs) for name, fn in FUNCTIONS.items()}
    assert verdicts["grow_or_shrink"] == [False, True, False]     # the branch
    assert verdicts["keep_first_half"] == [False, False, False]   # x.shape is traced
    assert verdicts["scale_by_length"] == [False, False, True]    # len() is not
    assert verdicts["double_each_row"] == [False, False, True]    # the unrolled loop raises
    assert verdicts["via_numpy"] == [True, True, True]            # a stored constant
    assert verdicts["smooth_gate"] == [False, False, False]


def test_a_trace_that_raises_counts_as_a_disagreement_not_an_error():
    assert trace_disagreements(FUNCTIONS["double_each_row"], torch.ones(2, 2),
                               [torch.ones(3, 2)]) == [True]


def _saved(tmp_path, how: str):
    model, features = random_model("batchnorm_mlp", np.random.default_rng(0))
    model.eval()
    example = torch.randn(3, features)
    path = tmp_path / f"model.{how}"
    if how == "pt2":
        batch = torch.export.Dim("batch")
        torch.export.save(torch.export.export(model, (example,),
                                              dynamic_shapes={"x": {0: batch}}), path)
    else:
        torch.save(model, path)   # a pickle: it needs BatchNormMLP to load
    return model, features, path


def test_fresh_process_runs_an_exported_graph_at_any_batch_size(tmp_path):
    model, features, path = _saved(tmp_path, "pt2")
    inputs = [np.random.default_rng(b).standard_normal((b, features)).astype(np.float32)
              for b in (1, 3, 9)]
    outputs = run_in_fresh_process(path, inputs)
    with torch.no_grad():
        for x, y in zip(inputs, outputs):
            np.testing.assert_allclose(y, model(torch.from_numpy(x)).numpy(), rtol=1e-5,
                                       atol=1e-6)


def test_fresh_process_refuses_a_pickled_module_with_a_message(tmp_path):
    _, features, path = _saved(tmp_path, "pt")
    with pytest.raises(FreshProcessError, match="neither torch.export.load nor torch.jit.load"):
        run_in_fresh_process(path, [np.zeros((2, features), np.float32)])


def test_fresh_process_has_a_time_limit_and_says_so(tmp_path):
    _, features, path = _saved(tmp_path, "pt2")
    with pytest.raises(FreshProcessError, match="did not finish within"):
        run_in_fresh_process(path, [np.ones((1, features), np.float32) * 7], timeout_s=0.01)


def test_fresh_process_says_when_no_file_was_saved(tmp_path):
    with pytest.raises(FreshProcessError, match="no file was saved"):
        run_in_fresh_process(tmp_path / "missing.pt2", [np.zeros((1, 2), np.float32)])


def test_time_compiled_planted_tie_breaks_even_exactly_for_every_seed():
    # Costs in powers of two make the compile cost exactly N savings, so ceil finds N and
    # int(ratio) + 1 finds N + 1; with rounded costs the case would be a coin flip.
    check = get_check("lab06.time_compiled")
    for seed in range(12):
        (tie,) = [o for o in run_program(check, check.reference_impl(), seed)
                  if "calls break even" in o.label]
        calls = int(re.search(r"exactly (\d+) times", tie.label).group(1))
        record, counts = tie.value
        assert record["compile_s"] / (record["eager_s"] - record["compiled_s"]) == calls
        assert record["break_even_calls"] == calls
        assert counts["compile(fn) calls"] == 1
