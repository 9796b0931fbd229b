"""Prints the mutant suite's kill rate per lab (tests/mutants) at the end of the session.

It lives at the top of tests/ so that pytest-xdist's controller loads it too: the results
travel from the workers in the test reports' user properties."""
from __future__ import annotations

import json
import os
from pathlib import Path

# JAX reads XLA_FLAGS once, when first imported: every test process gets two host devices,
# whichever lab's code imports JAX first (lab08's pmap checks need two; one lab's setup cell
# run in-process by the mutant harness must not leave the next lab with one).
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=2").strip()

# Tests choose their gradebook themselves; an instructor's shared one ($COURSEKIT_DB) must
# never receive a test's grades.
os.environ.pop("COURSEKIT_DB", None)

_KILLS: dict[str, list[bool]] = {}


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
