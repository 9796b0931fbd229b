"""Mechanical mutants of lab00_setup that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

EQUIVALENT = [
    ("time_it", 'if repeats < 1:', 'if repeats < 0:',
     "repeats=0 still raises ValueError: statistics.median([]) raises StatisticsError, a "
     "ValueError subclass; only the message differs"),
    ("time_it", 'raise ValueError(f"repeats must be at least 1, got {repeats}")', 'pass',
     "repeats=0 still raises ValueError: statistics.median([]) raises StatisticsError, a "
     "ValueError subclass; only the message differs"),
    ("transfer_vs_compute", 'x_on_device = x.to(device, copy=True)',
     'x_on_device = x.to(device, copy=False)',
     "the compute operand is only read by op; without copy it is x itself on x's device and a "
     "new tensor elsewhere, the same values either way"),
]
