"""TensorFlow's two logical CPUs for lab10's Exercise 4, split before any test runs.

The mutant harness runs each lab's setup cells in this process. TensorFlow fixes its devices
the first time anything runs an op (lab07's and lab11's checks do, earlier in the session),
and lab10's setup cell, run later, could then no longer split the CPU in two: its
``MirroredStrategy(["/cpu:0", "/cpu:1"])`` would find one device. As tests/conftest.py does
for JAX's host devices, the split is made first, here, whenever lab10's tests are selected.
Importing TensorFlow and configuring devices starts no thread, so the forks of lab05's
workers and lab10's ranks stay safe. (tests/labs/conftest.py holds the same hook.)
"""
from __future__ import annotations

import os

import pytest


@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_modifyitems(items):
    if any("lab10" in item.nodeid for item in items):
        split_tensorflow_cpu()


def split_tensorflow_cpu(count: int = 2) -> None:
    """Two logical CPU devices, unless TensorFlow is missing or already fixed its devices."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # as lab07's and lab10's setup cells
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    try:
        import tensorflow as tf
    except ImportError:
        return
    cpu = tf.config.list_physical_devices("CPU")[0]
    if tf.config.get_logical_device_configuration(cpu) is None:
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)])
        except RuntimeError:  # an op already ran in this process: nothing to do any more
            pass
