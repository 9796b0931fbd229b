"""A grading kernel in miniature, for tests of the monitor's rules: the lab's checks preloaded
(or, ``preloaded=False``, imported when first driven, as in a kernel that had no release to
preload from) and the monitor installed as :mod:`coursekit.grading.kernel` does, then
"student" code run under a file name outside the installation, which drives checks as the
grader's requests do (``drive(check)``: ``oracle.drive`` with a tape the harness made before
the monitor).

:func:`run` returns what the monitor reported, and per driven check what the grader would
charge it (:func:`coursekit.notebook.monitoring.delegations`' rule: a report inside the drive's
window whose pattern the check forbids, grading code, or an engine report).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

HARNESS = textwrap.dedent('''
    import json, linecache, os, sys, threading, time
    os.environ["COURSEKIT_MODE"] = "grade"
    if os.environ.get("HARNESS_PROFILE") == "uncompiled":   # as if built without a compiler
        sys.modules["coursekit.grading._fast_profile"] = None
    fifo, student, checks = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    preloaded = json.loads(sys.argv[4])
    lines = []

    def read():
        with open(fifo, "rb") as pipe:
            for line in pipe:
                lines.append(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    from coursekit.grading import kernel, monitor, oracle
    from coursekit.grading.tape import dump
    from coursekit.grading.targets import targets
    from coursekit.grading.verdict import reference_run
    kernel.preload("import numpy as np\\nimport torch\\n", checks if preloaded else [])
    requests = {}
    for check in checks:
        _, tape = reference_run(check, 1)
        requests[check] = json.dumps({"ticket": "t", "check": check, "hidden": False,
                                      "from_end": 1, "tape": dump(tape)})
    windows = []
    specs = targets(checks)
    if not preloaded:   # the tapes and targets needed the checks: forgotten, imported again
        from coursekit.grading import program
        for check in checks:
            sys.modules.pop(program._REGISTRY.pop(check).program.__module__, None)
    monitor.install(fifo, specs)

    def drive(check, label=None, _requests=requests, _windows=windows, _now=time.monotonic):
        time.sleep(0.02)   # the grader's quiet gap: what came before stays out of the window
        start = _now()
        oracle.drive(_requests[check])
        _windows.append((label or check, check, start, _now()))
        time.sleep(0.02)

    source = open(student).read()
    name = "/home/student/cell.py"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"__name__": "__main__", "drive": drive}
    try:
        exec(compile(source, name, "exec"), namespace)
    except BaseException as error:
        print("RAISED", type(error).__name__, error)
    time.sleep(0.3)
    print("MONITOR", json.dumps({"reports": [[l["t"], l["kind"], l["what"]] for l in lines],
                                 "windows": windows}))
    # What the student left running must not decide the exit status: a daemon thread blocked
    # inside torch's engine can make CPython's teardown abort the process ("terminate called
    # without an active exception"), after everything was reported.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
''')


@dataclass
class Run:
    reports: list          # [(t, kind, what), ...]
    windows: list          # [(label, check, start, end), ...]
    output: str

    def kinds(self, kind: str) -> list[str]:
        return [what for _, k, what in self.reports if k == kind]

    def charged(self, label: str) -> set[str]:
        """What the grader would charge to the drive called ``label`` (module docstring)."""
        from coursekit.grading.monitor import ENGINE_TARGET, GRADING_TARGET
        from coursekit.grading.program import get_check
        found = set()
        assert label in {w[0] for w in self.windows}, (label, self.output[-3000:])
        for name, check, start, end in self.windows:
            if name != label:
                continue
            forbid = set(get_check(check).forbid)
            for t, kind, what in self.reports:
                if start <= t <= end and kind in ("call", "answer", "engine"):
                    pattern = ENGINE_TARGET if kind == "engine" else what.split(" from ", 1)[0]
                    if pattern in forbid or pattern == GRADING_TARGET:
                        found.add(pattern)
        return found


PROFILES = ("compiled", "python", "uncompiled")


def run(tmp_path: Path, student: str, checks: list[str], preloaded: bool = True,
        profile: str = "compiled", env: dict | None = None) -> Run:
    """Run ``student`` in the miniature kernel. ``profile``: the monitor's compiled fast
    paths, its Python profile function only (``COURSEKIT_MONITOR_PROFILE=python``), or no
    compiled module at all (an installation built without a compiler). ``env``: more of the
    kernel's environment (a ``PYTHONPATH`` with a ``site-packages`` folder of the test's
    adds installed packages)."""
    assert profile in PROFILES, profile
    fifo = tmp_path / "monitor"
    os.mkfifo(fifo)
    (tmp_path / "harness.py").write_text(HARNESS)
    (tmp_path / "student.py").write_text(textwrap.dedent(student))
    done = subprocess.run([sys.executable, str(tmp_path / "harness.py"), str(fifo),
                           str(tmp_path / "student.py"), json.dumps(checks),
                           json.dumps(preloaded)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "HARNESS_PROFILE": profile,
                               **({"COURSEKIT_MONITOR_PROFILE": "python"}
                                  if profile == "python" else {}), **(env or {})})
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "MONITOR " in done.stdout, output[-3000:]
    found = json.loads(done.stdout.split("MONITOR ", 1)[1].splitlines()[0])
    return Run([tuple(r) for r in found["reports"]], [tuple(w) for w in found["windows"]],
               output)
