"""The test suite's own tools, not part of the installed packages: the mutant harness
(:mod:`.mutants`), mechanical mutants by cosmic-ray (:mod:`.mechanical`) and the planted-copy
class of the similarity tests (:mod:`.planted_class`). Importable as ``tooling`` wherever
``tests/`` is on the path: under pytest (``tests/conftest.py``'s folder), with
``PYTHONPATH=tests`` (``make mutants``: ``python -m tooling.mechanical``), and in the scripts
that use them (``tests/blind/score_blind.py``, ``tests/labs/sweep_secrets.py``)."""
