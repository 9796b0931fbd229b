"""Prints the mutant suite's kill rate per lab (tests/mutants) at the end of the session.

It lives at the top of tests/ so that pytest-xdist's controller loads it too: the results
travel from the workers in the test reports' user properties."""
from __future__ import annotations

_KILLS: dict[str, list[bool]] = {}


def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    for key, value in getattr(report, "user_properties", []):
        if key == "mutant":
            _KILLS.setdefault(value["lab"], []).append(bool(value["killed"]))


def pytest_terminal_summary(terminalreporter):
    if not _KILLS:
        return
    terminalreporter.section("mutant suite: kill rate per lab")
    for lab, kills in sorted(_KILLS.items()):
        terminalreporter.write_line(f"{lab:<18} {sum(kills):>3}/{len(kills):<3} mutants killed "
                                    f"({sum(kills) / len(kills):.0%})")
