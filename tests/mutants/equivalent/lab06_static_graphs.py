"""Mechanical mutants of lab06_static_graphs that behave like the solution (see
tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

EQUIVALENT = [
    ("trace_disagreements", 'warnings.simplefilter("ignore")', "pass",
     "the filter only silences torch.jit.trace's TracerWarnings while tracing; what the "
     "function returns is the same with or without them printed"),
]
