"""Clear the calling uid's user keyrings: keys outlive the processes that added them.

A job slot's uid is handed to one student after another (fresh kernels reuse a freed uid;
a forked kernel's slot keeps its own), and the kernel's key store is per uid: a key that
student A adds to ``@u`` would be readable by student B. The grader runs this as the uid
between two students (:mod:`coursekit.grading.zygote`, ``autograder.sandbox``). Standard
library only, and runnable as a script (``python -I -S keyrings.py``) as that uid.
"""
import ctypes
import os

# libc has no keyctl(); the system call's number differs between architectures.
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
KEYCTL_CLEAR = 7
USER_KEYRINGS = (-4, -5)   # KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING


def clear() -> bool:
    """Empty both user keyrings of this process's uid; True when both were emptied."""
    libc = ctypes.CDLL(None, use_errno=True)
    return all(libc.syscall(SYS_KEYCTL, KEYCTL_CLEAR, keyring) == 0
               for keyring in USER_KEYRINGS)


if __name__ == "__main__":
    raise SystemExit(0 if clear() else 1)
