"""JAX values travel from a kernel to the grader as plain data, compared by value (lab08)."""
from __future__ import annotations

import numpy as np
import pytest

# Imported first: it asks XLA for two host devices when JAX is not imported yet.
from coursekit.grading.checks import lab08  # noqa: F401 — for what importing it does (above)
from coursekit.grading.compare import compare
from coursekit.grading.verdict import observed

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_a_pytree_of_dicts_arrives_as_a_dict_of_arrays_equal_to_numpy():
    tree = {"w1": jnp.arange(6.0).reshape(2, 3), "b": {"inner": jnp.zeros(3)},
            "pair": (jnp.ones(2, dtype=jnp.int32), 1.5)}
    got = observed(tree)
    assert isinstance(got["w1"], np.ndarray) and got["w1"].dtype == np.float32
    expected = observed({"w1": np.arange(6.0).reshape(2, 3), "b": {"inner": np.zeros(3)},
                         "pair": (np.ones(2, dtype=np.int32), 1.5)})
    assert compare(got, expected) is None
    wrong = observed({**tree, "w1": tree["w1"].at[1, 2].set(0.0)})
    assert compare(wrong, expected) == "['w1']: differs at index (1, 2): got 0, expected 5"


def test_an_array_spread_over_every_device_arrives_whole():
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = jax.local_devices()
    spread = NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec("d"))
    value = np.arange(len(devices) * 3, dtype=np.float32).reshape(len(devices), 3)
    on_devices = jax.device_put(value, spread)
    assert len(on_devices.sharding.device_set) == len(devices)
    assert np.array_equal(observed(on_devices), value)
    by_pmap = jax.pmap(lambda v: v * 2)(jnp.asarray(value))
    assert np.array_equal(observed({"g": by_pmap})["g"], value * 2)


def test_a_typed_prng_key_arrives_as_its_key_data_like_a_legacy_key():
    typed, legacy = jax.random.key(7), jax.random.PRNGKey(7)
    assert np.array_equal(observed(typed), observed(legacy))
    assert observed(jax.random.split(typed)).shape == (2, 2)


def test_a_tracer_is_an_outcome_not_a_crash_of_the_kernel():
    seen = []
    jax.jit(lambda x: seen.append(observed(x)) or x)(jnp.ones(2))
    assert "could not" in repr(seen[0]) or "symbolic" in repr(seen[0])
