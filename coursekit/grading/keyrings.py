"""Clear the calling uid's user keyrings: keys outlive the processes that added them.

A job slot's uid is handed to one student after another (fresh kernels reuse a freed uid;
a forked kernel's slot keeps its own), and the kernel's key store is per uid: a key that
student A adds to ``@u`` would be readable by student B. So a uid's keyrings are emptied
before the next student's code runs as it: by the zygote's cleaner between two students of a
slot (:mod:`coursekit.grading.zygote`), and by a fresh grading kernel itself, before its
monitor, when the grader sets ``CLEAR_ENV`` (:mod:`coursekit.grading.kernel`). Standard
library only.
"""
import ctypes
import os

# libc has no keyctl(); the system call's number differs between architectures.
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
USER_KEYRINGS = (-4, -5)   # KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING
PROCESS_KEYRING = -2
EOPNOTSUPP = 95
CLEAR_ENV = "COURSEKIT_CLEAR_KEYRINGS"   # set by the grader for a kernel of a sandbox uid


def _keyctl(*args) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(SYS_KEYCTL, *(ctypes.c_long(a) for a in args))


def clear() -> bool:
    """Empty the user keyrings and the persistent keyring (which any process of the uid
    may ask for, and which lives for days) of this process's uid; True when all were
    emptied, or a kernel without persistent keyrings has none."""
    cleared = all(_keyctl(KEYCTL_CLEAR, keyring) == 0 for keyring in USER_KEYRINGS)
    persistent = _keyctl(KEYCTL_GET_PERSISTENT, -1, PROCESS_KEYRING)
    if persistent < 0:
        return cleared and ctypes.get_errno() == EOPNOTSUPP
    return cleared and _keyctl(KEYCTL_CLEAR, persistent) == 0


def join_new_session() -> bool:
    """Leave the session keyring this process inherited (its parent's, or the grader's)
    for a new, empty one of its own."""
    return _keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0) >= 0
