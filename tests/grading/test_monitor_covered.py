"""Targets reported in a drive are not judged again in it (NOTE [Cost] in monitor.py): the C
fast paths pass over a call of targets that were all reported since the grader's current
drive started. What must hold: every drive is still charged what it calls, however often
the same targets were reported before it (in an earlier cell, in an earlier drive); and,
with the compiled fast paths, a drive that calls a target many times is reported it once.
"""
from __future__ import annotations

import pytest

from monitor_harness import run
from test_monitor_identity import E4, E4_ANSWER

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

GRAD = "torch.autograd.grad"

PLAINLY = E4_ANSWER + '''
import time
import torch
from coursekit.grading import grade


def plainly(x, y, w1, w2):
    a, b, loss = graph(x, y, w1, w2)
    time.sleep(0.002)   # each step outlasts the pipe's rate limit (REPORT_S) by a little
    return (loss.detach(), *torch.autograd.grad(loss, (a, b)))


# An earlier cell, outside any drive: the same target, reported (and covered) before it.
_leaf = torch.ones(2, requires_grad=True)
for _ in range(20):
    torch.autograd.grad((_leaf * 2).sum(), (_leaf,))
    time.sleep(0.002)

answer("first", grads=plainly)
answer("honest", grads=by_hand)
answer("second", grads=plainly)
'''


def _reports_in(found, label, pattern):
    windows = [(start, end) for name, _, start, end in found.windows if name == label]
    return [what for t, kind, what in found.reports if kind == "call"
            and what.startswith(pattern + " from ")
            and any(start <= t <= end for start, end in windows)]


@pytest.mark.parametrize("profile", ["compiled", "python"])
def test_every_drive_is_charged_what_it_calls_whatever_was_reported_before(tmp_path,
                                                                           profile):
    found = run(tmp_path, PLAINLY, [E4], profile=profile)
    assert GRAD in found.charged("first"), found.reports
    assert found.charged("honest") == set(), found.reports
    assert GRAD in found.charged("second"), found.reports   # not covered by the first drive


def test_a_drive_that_calls_a_target_many_times_is_reported_it_once(tmp_path):
    """The compiled fast paths cover the target after its first report in the drive; the
    Python profile function alone reports it again after each REPORT_S (the pipe's rate
    limit), which tells the two apart."""
    (tmp_path / "compiled").mkdir()
    (tmp_path / "python").mkdir()
    compiled = run(tmp_path / "compiled", PLAINLY, [E4])
    python = run(tmp_path / "python", PLAINLY, [E4], profile="python")
    for label in ("first", "second"):
        assert len(_reports_in(compiled, label, GRAD)) == 1, compiled.reports
        assert len(_reports_in(python, label, GRAD)) > 1, python.reports
