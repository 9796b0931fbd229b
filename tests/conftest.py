"""Every test process's set-up: two JAX host devices and two TensorFlow logical CPUs (the
labs' multi-device exercises), no instructor's gradebook; and the mutant suite's kill rate per
lab (tests/mutants), printed at the end of the session.

It lives at the top of tests/ so that pytest-xdist's controller loads it too: the kill rates
travel from the workers in the test reports' user properties."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

# JAX reads XLA_FLAGS once, when first imported: every test process gets two host devices,
# whichever lab's code imports JAX first (lab08's pmap checks need two; one lab's setup cell
# run in-process by the mutant harness must not leave the next lab with one).
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=2").strip()



@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_modifyitems(items):
    """TensorFlow's two logical CPUs for lab10's Exercise 4, split before any test runs.

    The mutant harness runs each lab's setup cells in this process. TensorFlow fixes its
    devices the first time anything runs an op (lab07's and lab11's checks do), and lab10's
    setup cell, run later, could then no longer split the CPU in two: its
    ``MirroredStrategy(["/cpu:0", "/cpu:1"])`` would find one device. As for JAX's host
    devices above, the split is made first, whenever lab10's tests are selected. Importing
    TensorFlow and configuring devices starts no thread, so the forks of lab05's workers and
    lab10's ranks stay safe."""
    if any("lab10" in item.nodeid for item in items):
        _split_tensorflow_cpu()


def _split_tensorflow_cpu(count: int = 2) -> None:
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


# Test files whose parametrized tests grade one lab each, independently: `make test` sends
# each lab's tests of them to a worker of its own, so that they spread over the workers.
# Every other file stays whole on one worker (`--dist loadfile`): nbval's cells of one
# notebook share a kernel, and many files share module-scoped fixtures. (A custom scheduler:
# `--dist loadgroup` cannot do this with pytest 9, whose node ids xdist 3.8 cannot suffix.)
SPREAD_BY_LAB = ("tests/autograder/test_manifest_labs.py", "tests/autograder/test_bundle_labs.py")
# The blind corpus goes out a round at a time (about a minute each): whole, it was one worker's
# five minutes.
SPREAD_BY_ROUND = ("tests/blind/test_blind.py",)
# xdist hands out files with the most tests first, so files of a few long tests came last, and
# one worker ran them alone while the other had finished (77 s of a 29-minute run). These go
# out first, longest first (seconds in the quiet run of 2026-11-28: a file's tests together).
LONG_FILES = (
    "tests/ui/test_browser.py",                        # 240
    "tests/notebooks/test_release_notebooks.py",       # 225
    "tests/autograder/test_cluster.py",                # 131
    "tests/autograder/test_grader_side_attacks.py",    # 129
    "tests/autograder/test_lab10_processes.py",        # 112
    "tests/autograder/test_grader_side_review.py",     # 94
    "tests/hub/test_term.py",                          # 92
    "tests/autograder/test_demo_command.py",           # 85
    "tests/autograder/test_exchange.py",               # 76
)


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LabsSpread(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            lab = re.search(r"\[(lab[^\]-]*)\]$", nodeid)
            if path in SPREAD_BY_LAB and lab:
                return f"{path}[{lab.group(1)}]"
            round_name = re.search(r"\[(round\d+)-", nodeid)
            if path in SPREAD_BY_ROUND and round_name:
                return f"{path}[{round_name.group(1)}]"
            return path

        def schedule(self) -> None:
            super().schedule()   # the first files are handed out here, the rest queued
            for scope in reversed(LONG_FILES):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)

    return LabsSpread(config, log)


# Tests choose their gradebook themselves; an instructor's shared one ($COURSEKIT_DB) must
# never receive a test's grades.
os.environ.pop("COURSEKIT_DB", None)

_KILLS: dict[str, list[bool]] = {}


@pytest.fixture(autouse=True)
def _sigchld_left_as_found():
    """Each test leaves the process's SIGCHLD handler as it found it.

    torch's DataLoader installs a process-wide SIGCHLD handler the first time it starts
    workers in the main thread (the lab09 checks and their recordings run in this process).
    That handler raises "DataLoader worker (pid N) exited unexpectedly" inside whatever code
    runs when any child exits while a worker it registered is gone, so a later file's
    grading failed in the gradebook code for a loader another test had left."""
    import signal
    before = signal.getsignal(signal.SIGCHLD)
    yield
    if signal.getsignal(signal.SIGCHLD) is not before:
        signal.signal(signal.SIGCHLD, before)



def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    for key, value in getattr(report, "user_properties", []):
        if key == "mutant":
            _KILLS.setdefault(value["lab"], []).append(bool(value["killed"]))


def _mechanical() -> dict:
    """The last `make mutants` run's figures per lab (tests/mutants/mechanical_results.json)."""
    path = Path(__file__).parent / "mutants" / "mechanical_results.json"
    try:
        return json.loads(path.read_text())["labs"]
    except (OSError, ValueError, KeyError):
        return {}


def pytest_terminal_summary(terminalreporter):
    if not _KILLS:
        return
    mechanical = _mechanical()
    terminalreporter.section("mutant suite: kill rate per lab "
                             "(mechanical: last `make mutants`, killed on every seed)")
    for lab, kills in sorted(_KILLS.items()):
        line = (f"{lab:<18} {sum(kills):>3}/{len(kills):<3} mutants killed "
                f"({sum(kills) / len(kills):.0%})")
        mech = mechanical.get(lab, {}).get("mechanical")
        if mech and mech.get("judged"):
            line += (f"   mechanical {mech['killed']:>3}/{mech['judged']:<3} "
                     f"({mech['killed'] / mech['judged']:.1%}), "
                     f"{len(mech.get('equivalent', []))} equivalent")
        terminalreporter.write_line(line)
