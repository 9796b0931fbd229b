"""Grading in a process of its own, and hand-ins, for the attack tests and the benchmarks
(tests/benchmarks load this file by its path)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat

# A display whose one extra part is 1 GB, sent by the kernel's own session.
SEND_1_GB = '''
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, "display_data",
                    {"data": {"text/plain": "x"}, "metadata": {}},
                    parent=kernel.get_parent(), buffers=[bytearray(2**30)])
'''

GRADE_IN_A_PROCESS = '''
import json, resource, sys
from coursekit import course as manifest
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
course = manifest.load_course(sys.argv[1])
run = autograde(course, jobs=1, overrides=Overrides(30, 300, 4096), progress=False,
                log=lambda m: None, fork_kernels=False)
print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "outcomes": {o.student: [o.score, o.reasons] for o in run.outcomes}}))
'''


def grade_in_a_process(root: Path) -> dict:
    """Grade the class at ``root`` in a grader process of its own (fresh kernels, one job):
    ``{"peak_mb": its peak resident memory, "outcomes": {student: [score, reasons]}}``. The
    peak is the grader's alone: kernels are other processes."""
    done = subprocess.run([sys.executable, "-c", GRADE_IN_A_PROCESS, str(root)],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def hand_in(course, student: str, nb, name: str | None = None) -> Path:
    """Put ``nb`` into the class folder as ``student``'s hand-in of the course's first lab."""
    folder = course.submitted_dir / student / course.labs[0].id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or course.labs[0].notebook)
    nbformat.write(nb, str(path))
    return path
