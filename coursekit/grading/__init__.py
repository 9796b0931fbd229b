"""Grading helpers: checks that compare a student's implementation with the reference.

Test cells call :func:`grade`; checks are defined with :func:`check` in
``coursekit/grading/checks/<lab>.py``. See :mod:`.program` for how a check is written and
:mod:`.grade` for how the verdict stays out of the student's reach.
"""
from .grade import CheckFailed, grade, grading_mode
from .program import Case, Check, check, get_check, run_program
from .verdict import CaseResult, CheckResult, judge

__all__ = ["Case", "CaseResult", "Check", "CheckFailed", "CheckResult", "check", "get_check",
           "grade", "grading_mode", "judge", "run_program"]
