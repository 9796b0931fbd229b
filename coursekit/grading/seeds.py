"""Seeds for checks: public for visible checks, fresh and secret for hidden ones.

Visible checks use a public seed derived from the check's name, so a student sees the same
inputs on every run. Hidden checks at grading time use a seed the grader draws anew for every
submission and keeps to itself: the student's kernel only ever receives the inputs of a check
while that check is driven (:mod:`.tape`), so knowing last time's inputs does not help and a
table of answers is useless. The grader records the seed with the result, for a TA who wants to
replay a case. Outside grading (a solution run by nbval, say), hidden checks draw a fresh seed
each run, printed so a failure can be reproduced with ``COURSEKIT_SEED``.
"""
from __future__ import annotations

import hashlib
import os
import secrets

FIXED_SEED_ENV = "COURSEKIT_SEED"


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:4], "little")


def public_seed(check_name: str) -> int:
    return _digest("public", check_name)


def hidden_seed(check_name: str, secret: str, student: str = "") -> int:
    """A reproducible hidden seed (the mutant suite replays checks under chosen secrets)."""
    return _digest("hidden", secret, student, check_name)


def fresh_seed() -> int:
    """A hidden seed for one grading of one submission."""
    return secrets.randbelow(2**32)


def seed_for(check_name: str, hidden: bool) -> int:
    """The seed a check uses when it runs in the student's own notebook."""
    if not hidden:
        return public_seed(check_name)
    fixed = os.environ.get(FIXED_SEED_ENV)
    return int(fixed) if fixed else fresh_seed()
