"""Seeds for checks: fixed for visible checks, secret for hidden ones.

Visible checks use a public seed derived from the check's name, so a student sees the same
inputs on every run. Hidden checks at grade time use a seed derived from a secret that only
the grader knows (passed to the kernel in ``COURSEKIT_GRADE_SECRET`` when it starts), the
student's id and the check's name: hard-coding outputs is useless, and two students never
share inputs. Outside grading (a solution run by nbval, say), hidden checks draw a fresh seed
each run, printed so a failure can be reproduced with ``COURSEKIT_SEED``.
"""
from __future__ import annotations

import hashlib
import os
import secrets

SECRET_ENV = "COURSEKIT_GRADE_SECRET"
STUDENT_ENV = "COURSEKIT_STUDENT"
FIXED_SEED_ENV = "COURSEKIT_SEED"


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:4], "little")


def public_seed(check_name: str) -> int:
    return _digest("public", check_name)


def hidden_seed(check_name: str, secret: str, student: str = "") -> int:
    return _digest("hidden", secret, student, check_name)


def seed_for(check_name: str, hidden: bool) -> int:
    """The seed a check uses in this process (see module docstring)."""
    if not hidden:
        return public_seed(check_name)
    secret = os.environ.get(SECRET_ENV)
    if secret:
        return hidden_seed(check_name, secret, os.environ.get(STUDENT_ENV, ""))
    fixed = os.environ.get(FIXED_SEED_ENV)
    return int(fixed) if fixed else secrets.randbelow(2**32)
