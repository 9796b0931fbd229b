"""lab10.mirrored_step's reference (one device, the batch cut into the strategy's two shards)
against two oracles: the plain full-batch SGD step on one device, and a real
``tf.distribute.MirroredStrategy`` over two logical CPUs (tests/labs/conftest.py splits the
CPU before any test runs)."""
from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from coursekit.grading.checks import lab10


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    rows, d_in, d_out = 2 * int(rng.integers(2, 6)), int(rng.integers(2, 6)), int(rng.integers(1, 4))
    weights = [rng.standard_normal((d_in, d_out)), rng.standard_normal(d_out)]
    return weights, rng.standard_normal((rows, d_in)), rng.standard_normal((rows, d_out)), 0.2


def _squared_error(y_true, y_pred):
    return tf.reduce_sum(tf.square(y_pred - y_true), axis=-1)


@pytest.mark.parametrize("seed", range(4))
def test_reference_equals_the_full_batch_step_on_one_device(seed):
    weights, x, y, lr = _problem(seed)
    (w, b), loss = lab10._one_device_step(weights, x, y, lr, _squared_error)
    prediction = x @ weights[0] + weights[1]
    grad = 2.0 * (prediction - y) / len(x)  # of the mean over rows of the summed squares
    np.testing.assert_allclose(loss, np.mean(np.sum((prediction - y) ** 2, axis=1)), rtol=1e-12)
    np.testing.assert_allclose(w, weights[0] - lr * x.T @ grad, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b, weights[1] - lr * grad.sum(axis=0), rtol=1e-12, atol=1e-14)


def _mirrored(weights, x, y, lr, per_example_loss):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        variables = [tf.Variable(v) for v in weights]
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(len(x), drop_remainder=True)
    xs, ys = next(iter(strategy.experimental_distribute_dataset(data)))

    @tf.function
    def step(xs, ys):
        def replica(xb, yb):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(
                    per_example_loss(yb, xb @ variables[0] + variables[1]),
                    global_batch_size=len(x))
            return loss, tape.gradient(loss, variables)

        losses, grads = strategy.run(replica, args=(xs, ys))
        for variable, grad in zip(variables, grads):
            variable.assign_sub(lr * strategy.reduce("SUM", grad, axis=None))
        return strategy.reduce("SUM", losses, axis=None)

    loss = step(xs, ys)
    return [v.numpy() for v in variables], float(loss), strategy.num_replicas_in_sync


@pytest.mark.parametrize("seed", range(2))
def test_reference_equals_a_real_mirrored_strategy_on_two_logical_cpus(seed):
    if len(tf.config.list_logical_devices("CPU")) < 2:
        pytest.skip("TensorFlow fixed its devices before the CPU could be split in two")
    weights, x, y, lr = _problem(seed)
    rows_ref, rows_real = [], []
    expected_weights, expected_loss = lab10._one_device_step(weights, x, y, lr,
                                                             lab10._recording_loss(rows_ref))
    got_weights, got_loss, replicas = _mirrored(weights, x, y, lr, lab10._recording_loss(rows_real))
    assert replicas == 2
    assert sorted(rows_real) == sorted(rows_ref) == [len(x) // 2] * 2
    np.testing.assert_allclose(got_loss, expected_loss, rtol=1e-12)
    for got, expected in zip(got_weights, expected_weights):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
