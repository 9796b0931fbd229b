"""The grading core: programs, safe encoding, comparison messages, verdicts, integrity scans."""
import json

import numpy as np
import pytest

from coursekit.grading import Case, CheckFailed, check, grade, judge, run_program, get_check
from coursekit.grading.encoding import decode, encode
from coursekit.grading.integrity import find_forbidden, find_tampering
from coursekit.grading.seeds import hidden_seed, public_seed
from coursekit.grading.verdict import decode_payload, observed


def _reference_square():
    return lambda x: x ** 2


@check("toy.square", reference=_reference_square, forbid=("coursekit.autograd",))
def _square_program(impl, rng):
    for trial in range(3):
        x = rng.standard_normal((2, 3))
        yield Case(f"square, trial {trial}", lambda: impl(x), hint="square every element")
    yield Case("square of a string raises TypeError", lambda: impl("a"))


def test_correct_implementation_passes_in_student_mode(capsys):
    grade("toy.square", lambda x: x * x)
    assert "4/4 cases passed" in capsys.readouterr().out


def test_wrong_implementation_fails_with_index_and_hint(capsys):
    with pytest.raises(CheckFailed, match="4 of 4 cases differ"):
        grade("toy.square", lambda x: x * 2 if not isinstance(x, str) else x * 2)
    out = capsys.readouterr().out
    assert "differs at index (0, 0)" in out and "hint: square every element" in out
    assert "expected TypeError to be raised" in out


def test_always_equal_object_is_not_accepted():
    class AlwaysEqual:
        def __eq__(self, other):
            return True
    result = judge("toy.square", 0, [(label, observed(AlwaysEqual())) for label in
                                     [f"square, trial {t}" for t in range(3)]], hidden=False)
    assert all(not c.passed for c in result.cases)
    assert "object of type" in result.cases[0].message


def test_payload_round_trip_is_plain_json_and_judged_in_the_grader(monkeypatch):
    monkeypatch.setenv("COURSEKIT_MODE", "grade")
    observations = run_program(get_check("toy.square"), lambda x: x ** 2, public_seed("toy.square"))
    payload = {"observations": [{"label": o.label, "value": encode(o.value) if o.error is None
                                 else {"error": [type(o.error).__name__], "message": ""}}
                                for o in observations]}
    text = json.dumps(payload)  # must be JSON, not pickle
    result = judge("toy.square", public_seed("toy.square"), decode_payload(json.loads(text)),
                   hidden=False)
    assert result.passed and result.fraction == 1.0


def _reference_negate():
    return lambda x: -x


@check("toy.same_label_twice", reference=_reference_negate)
def _same_label_program(impl, rng):
    # Two different inputs under one label, as when a random case lands on a planted one.
    for x in (1.0, 2.0):
        yield Case("negate one number", lambda x=x: impl(x))


def test_cases_that_share_a_label_are_each_judged_against_their_own_reference():
    result = judge("toy.same_label_twice", 0,
                   [(o.label, observed(o.value))
                    for o in run_program(get_check("toy.same_label_twice"), lambda x: -x, 0)],
                   hidden=True)
    assert result.passed and len(result.cases) == 2
    wrong = judge("toy.same_label_twice", 0,
                  [(o.label, observed(o.value)) for o in
                   run_program(get_check("toy.same_label_twice"),
                               lambda x: -x if x == 1.0 else x, 0)], hidden=True)
    assert [c.passed for c in wrong.cases] == [True, False]


def test_a_payload_cannot_answer_a_repeated_label_with_one_value():
    """Attack: a kernel that reports the plain label twice (or once, with the value of the
    case it passes) gets the repeat "not observed", never both cases for one value."""
    twice = [("negate one number", observed(-1.0)), ("negate one number", observed(-2.0))]
    result = judge("toy.same_label_twice", 0, twice, hidden=True)
    assert not result.passed
    assert [c.message.startswith("not observed") for c in result.cases] == [False, True]


def test_missing_observations_are_failures_with_a_reason():
    result = judge("toy.square", 1, [], hidden=True)
    assert result.fraction == 0 and all("not observed" in c.message for c in result.cases)


def test_encoding_rejects_object_arrays_and_keeps_numbers():
    assert isinstance(decode(encode(np.array([object()]))), object)
    assert "opaque" in encode(np.array([object()], dtype=object))
    np.testing.assert_array_equal(decode(encode(np.arange(6.0).reshape(2, 3))),
                                  np.arange(6.0).reshape(2, 3))
    assert decode(encode((1, [2.5, "x"], {"a": None}))) == (1, [2.5, "x"], {"a": None})
    assert np.isnan(decode(encode(float("nan"))))


def test_torch_and_meta_tensors_are_encoded():
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(decode(encode(torch.ones(2, dtype=torch.float64))), np.ones(2))
    meta = decode(encode(torch.empty(3, 4, device="meta")))
    assert meta.device == "meta" and meta.shape == (3, 4)


def test_hidden_seeds_depend_on_secret_and_student():
    assert hidden_seed("a.b", "s1", "x") != hidden_seed("a.b", "s2", "x")
    assert hidden_seed("a.b", "s1", "x") != hidden_seed("a.b", "s1", "y")
    assert public_seed("a.b") == public_seed("a.b")


def test_delegation_to_forbidden_module_is_found_through_aliases_and_strings():
    cells = {
        "cell 3": "import coursekit as ck\ndef f(x):\n    return ck.autograd.tensor(x)",
        "cell 4": "import importlib\nm = importlib.import_module('coursekit.autograd')",
        "cell 5": "from torch import autograd",
        "cell 6": "y = x.backward()",
        "cell 7": "import numpy as np\ndef f(x):\n    return np.exp(x)",
    }
    found = find_forbidden(cells, ("coursekit.autograd", "torch.autograd", ".backward"))
    assert {f.cell for f in found} == {"cell 3", "cell 4", "cell 5", "cell 6"}


def test_input_transformer_and_builtins_patching_are_tampering():
    cells = {
        "a": "ip = get_ipython()\nip.input_transformers_cleanup.append(lambda lines: ['pass'])",
        "b": "import builtins\nbuiltins.AssertionError = Exception",
        "c": "%matplotlib inline\nimport numpy as np\nx = np.ones(3)",
    }
    assert {f.cell for f in find_tampering(cells)} == {"a", "b"}


def test_report_says_once_that_a_stub_is_not_implemented_yet():
    from coursekit.grading.report import format_check
    from coursekit.grading.verdict import CaseResult, CheckResult

    stub = "raised NotImplementedError: f: replace this line with your implementation"
    skipped = "raised EarlierStepFailed: skipped: the call to your function failed"
    result = CheckResult("lab.f", hidden=False, cases=[
        CaseResult("trial 1: value", False, stub, hint="h1"),
        CaseResult("trial 1: after", False, skipped, hint="h2"),
        CaseResult("trial 2: value", False, stub, hint="h1")])
    text = format_check(result)
    assert "not implemented yet (3 cases): NotImplementedError: f: replace this line" in text
    assert "hint" not in text and "trial" not in text

    # A real mistake next to the stub's failures keeps the case-by-case report.
    result.cases.append(CaseResult("trial 3: shape", False, "got (2,), expected (3,)", hint="h3"))
    text = format_check(result)
    assert "not implemented yet" not in text and "trial 3: shape: got (2,), expected (3,)" in text


@pytest.mark.parametrize("source, flagged", [
    ('from coursekit.grading import grade\ngrade("lab01.numpy_graph_grads", f)', False),
    ('import sys\nprint("numpy" in sys.modules)', False),
    ('model.eval()\nfast = torch.compile(model)', False),
    ('message = "a" f"{x}"', False),
    ('raise ValueError("batch_size must be " + "positive")', False),
    ('f = grade.__globals__["get_check"]("lab01.x").reference_impl()', True),
    ('T = __import__("tor" + "ch")', True),
    ('import importlib\nm = importlib.import_module("coursekit.grading.checks.lab01")', True),
    ('from coursekit.grading.checks.lab01 import _reference_numpy_graph_grads', True),
    ('import sys\nsys.modules["numpy"] = None', True),
    ('import sys\nsys.modules.pop("numpy")', True),
    ('exec("x = 1")', True),
    ('def grade(name, impl, **kw):\n    pass', True),
    ('globals()["grade"] = print', True),
    ('import builtins\nbuiltins.print = len', True),
    ('import ctypes', True),
    # Ordinary code that an honest student writes
    ('def defined(name):\n    return name in globals()', False),
    ('def eval(f, *args):\n    return f(*args)\n\neval(len, [1, 2])', False),
    ('OUT_FILE = "weights" + ".npy"', False),
    ('import importlib\nimportlib.reload(helpers)', False),
    ('import builtins\ntotal = builtins.sum(xs)', False),
    ('same = type(v).__module__ == "builtins"', False),
])
def test_tampering_scan_flags_hidden_code_and_spares_ordinary_code(source, flagged):
    from coursekit.grading.integrity import find_tampering

    assert bool(find_tampering({"cell 3": source})) is flagged


@pytest.mark.parametrize("source", [
    'getattr(loss, "back" + "ward")()',
    'getattr(loss, "backward")()',
    'T = __import__("tor" + "ch")',
    'name = "".join(["tor", "ch"])',
    'from operator import methodcaller\nmethodcaller("backward")(loss)',
    # deeper than Python's recursion limit: the pieces are walked, not recursed into
    "name = " + " + ".join(['""'] * 1200 + ['"tor"', '"ch"']),
])
def test_delegation_scan_reads_names_spelled_in_pieces(source):
    from coursekit.grading.integrity import find_forbidden

    assert find_forbidden({"cell 3": source}, ("torch", ".backward"))


def test_integrity_scans_pass_over_code_nested_too_deeply_to_compile():
    """The kernel cannot compile it either (the cell fails where it runs); the scans must not
    turn it into a grader error that hides the student's other marks."""
    from coursekit.grading.integrity import find_forbidden, find_tampering

    source = "x = " + " + ".join(["1"] * 20_000)
    with pytest.raises(RecursionError):
        compile(source, "cell 3", "exec")
    assert find_tampering({"cell 3": source}) == []
    assert find_forbidden({"cell 3": source}, ("torch",)) == []
