"""lab07_tensorflow beyond the shared suites: the references agree with independent oracles,
TensorFlow's values travel to the grader as values, the forbidden Keras and TF names resolve to
code the monitor can match, and TensorFlow's start-up noise never reaches the student."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coursekit.grading.checks import lab07
from coursekit.grading.targets import target
from coursekit.grading.verdict import observed
from machine_load import scaled

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")
torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def test_numpy_training_reference_agrees_with_torch_autograd():
    """The hand-derived gradients of the TF1 and tape checks' reference, against autograd."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        n, d_in, h, d_out = (int(v) for v in rng.integers(2, 7, size=4))
        x, y, w1, w2 = lab07._net_problem(rng, n, d_in, h, d_out)
        losses, w1_final, w2_final = lab07._numpy_train(x, y, w1, w2, 0.05, 4)
        tx, ty = (torch.tensor(a, dtype=torch.float64) for a in (x, y))
        t1, t2 = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (w1, w2))
        expected = []
        for _ in range(4):
            loss = ((tx @ t1).clamp(min=0) @ t2 - ty).pow(2).sum(dim=1).mean()
            expected.append(loss.item())
            g1, g2 = torch.autograd.grad(loss, (t1, t2))
            with torch.no_grad():
                t1 -= 0.05 * g1
                t2 -= 0.05 * g2
        np.testing.assert_allclose(losses, expected, rtol=1e-12)
        np.testing.assert_allclose(w1_final, t1.detach().numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(w2_final, t2.detach().numpy(), rtol=1e-12, atol=1e-14)



def test_cross_framework_reference_agrees_with_torch_autograd_in_each_layout():
    """The hand-derived gradients of the Keras-vs-PyTorch check, against float64 nn.Linear
    layers: torch's weight gradients as they are, Keras' as their transposes."""
    rng = np.random.default_rng(11)
    for _ in range(5):
        (n, d_in, h, d_out), args = lab07._tf_torch_problem(rng)
        assert len({d_in, h}) == 2 and len({h, d_out}) == 2
        x, y, w1, b1, w2, b2 = args
        expected = lab07._reference_tf_torch_grads()(*args)
        linear1 = torch.nn.Linear(d_in, h, dtype=torch.float64)
        linear2 = torch.nn.Linear(h, d_out, dtype=torch.float64)
        with torch.no_grad():
            for param, value in zip((linear1.weight, linear1.bias, linear2.weight, linear2.bias),
                                    (w1.T, b1, w2.T, b2)):
                param.copy_(torch.from_numpy(value))
        y_pred = linear2(torch.relu(linear1(torch.from_numpy(x))))
        loss = ((y_pred - torch.from_numpy(y)) ** 2).sum(dim=1).mean()
        loss.backward()
        grads = [p.grad.numpy() for p in (linear1.weight, linear1.bias, linear2.weight,
                                          linear2.bias)]
        for framework in ("tf", "torch"):
            assert expected[framework]["loss"] == pytest.approx(loss.item(), rel=1e-12)
        for name, grad in zip(("w1", "b1", "w2", "b2"), grads):
            np.testing.assert_allclose(expected["torch"][name], grad, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(expected["tf"][name], grad.T, rtol=1e-12, atol=1e-14)

@pytest.mark.parametrize("kind", ["sin", "tanh", "gauss"])
def test_derivative_reference_agrees_with_finite_differences(kind):
    f = lab07._Elementwise(kind, 1.3, 0.8)
    x = np.linspace(-1.7, 1.9, 7)
    dy, d2y, dz = lab07._reference_tape_derivatives()(f, x)

    def value(points):
        return f(torch.tensor(points, dtype=torch.float64)).numpy()

    eps = 1e-5
    np.testing.assert_allclose(dy, (value(x + eps) - value(x - eps)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(d2y, (value(x + eps) - 2 * value(x) + value(x - eps)) / eps ** 2,
                               rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dz, 2 * value(x) * dy, rtol=1e-12)
    # The same function object runs on TensorFlow tensors, with the same values.
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), value(x), rtol=1e-12)


def test_tensorflow_variables_and_keras_weights_travel_as_values():
    variable = tf.Variable([[1.0, 2.0]], dtype=tf.float64)
    np.testing.assert_array_equal(observed(variable), [[1.0, 2.0]])
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    weights = observed(model.weights)
    assert [w.shape for w in weights] == [(3, 2), (2,)]
    np.testing.assert_array_equal(weights[0], model.get_weights()[0])


def test_a_symbolic_tensor_is_described_not_sent():
    with tf.Graph().as_default():
        symbolic = tf.constant(1.0) + 1.0
        got = observed(symbolic)
    assert "symbolic" in repr(got) and "not a value" in repr(got)


@pytest.mark.parametrize("pattern, file_end, qual", [
    ("keras.Model.fit", "keras/src/backend/tensorflow/trainer.py", "TensorFlowTrainer.fit"),
    ("keras.Model.train_on_batch", "keras/src/backend/tensorflow/trainer.py",
     "TensorFlowTrainer.train_on_batch"),
    ("tensorflow.compat.v1.Session", "tensorflow/python/client/session.py", "Session."),
    ("tensorflow.GradientTape", "tensorflow/python/eager/backprop.py", "GradientTape."),
    ("tensorflow.function", "polymorphic_function/polymorphic_function.py", "function"),
])
def test_forbidden_tensorflow_and_keras_names_resolve_to_their_code(pattern, file_end, qual):
    spec = target(pattern)
    assert spec is not None and spec["qual"] == qual
    assert any(f.endswith(file_end) for f in spec["files"]), spec["files"]


def _setup_source() -> str:
    nb = json.loads((REPO / "notebooks" / "lab07_tensorflow" / "lab07_tensorflow.ipynb")
                    .read_text())
    (cell,) = [c for c in nb["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup"]
    return "".join(cell["source"])


def test_the_setup_cell_keeps_tensorflows_start_up_notices_out_and_warnings_on():
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS")}
    env["MPLBACKEND"] = "Agg"
    code = _setup_source() + "\nimport warnings\nwarnings.warn('a real warning')\n"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=scaled(300))
    assert result.returncode == 0, result.stderr
    assert "eager execution: True" in result.stdout
    # Only the warning the code raised itself: no oneDNN, CPU-feature or absl lines.
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [line for line in lines if "UserWarning: a real warning" in line], \
        result.stderr
    assert lines, "the real warning must still reach stderr"


def test_saving_a_model_in_the_lab_kernel_prints_no_tensorflow_info_lines(tmp_path):
    """In a Jupyter kernel TensorFlow's Python logger writes INFO lines ("INFO:tensorflow:Assets
    written to: ...", on stdout and stderr, when the lab saves a SavedModel): the setup cell
    keeps them out."""
    import nbformat
    from nbclient import NotebookClient

    save = ("module = tf.Module()\nmodule.v = tf.Variable(1.0)\n"
            f"tf.saved_model.save(module, {str(tmp_path / 'saved')!r})\nprint('saved')")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_setup_source()),
                                         nbformat.v4.new_code_cell(save)])
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    NotebookClient(nb, timeout=scaled(300), kernel_name="python3", resources={
        "metadata": {"path": str(tmp_path)}}, env=env).execute()
    printed = "".join(out.get("text", "") for cell in nb.cells for out in cell.outputs)
    assert "saved" in printed
    assert "INFO:tensorflow" not in printed and "Assets written" not in printed, printed
