"""``python -m coursekit.grading.kernel -f CONNECTION_FILE``: the kernel grading starts.

It is ipykernel with the grading monitor (:mod:`.monitor`) installed first, so the monitor is
in place before any student code runs. Without the grader's environment it is plain ipykernel.

Before the monitor, it runs the lab's setup imports (``COURSEKIT_PRELOAD``: the instructor's
setup cell up to its last import, from the source notebook, never from a hand-in), then
imports the check modules of the lab's checks (``COURSEKIT_PRELOAD_CHECKS``) and runs the
``warm_up()`` of each that has one (:mod:`.warm`). The
monitor's profile function sees every Python call, so an import under it costs 2× (torch) to
5× (TensorFlow) as much; imported here, the setup cell later finds the modules loaded. Nothing
of the student's has run yet, so nothing is left unwatched, as long as the imports started no
thread (a thread started before the monitor would run without its profile function): then the
kernel refuses to start rather than grade unwatched.
"""
import contextlib
import io
import os
import sys
import threading

from coursekit.grading import keyrings, monitor
from coursekit.grading.program import get_check
from coursekit.grading.warm import warm_up_for

PRELOAD_ENV = "COURSEKIT_PRELOAD"
PRELOAD_CHECKS_ENV = "COURSEKIT_PRELOAD_CHECKS"
EXIT_PRELOAD_THREADS = 87
EXIT_KEYRINGS_KEPT = 88


def preload(source: str, checks: list[str] = ()) -> None:
    """Run ``source`` (trusted setup code) in a namespace of its own, then the warm-ups of the
    modules that hold ``checks``, quietly: a failure here is the setup cell's or the check's,
    which report it where it is seen."""
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        try:
            exec(compile(source, "<coursekit preload>", "exec"), {"__name__": "__preload__"})
        except Exception:  # noqa: BLE001 — the setup cell will raise it where it is seen
            pass
        for name in checks:
            try:
                check = get_check(name)
                if monitor.ENGINE_TARGET in check.forbid:
                    import torch  # noqa: F401 — the monitor watches its engine from install on
                warm_up_for(check)
            except Exception:  # noqa: BLE001 — the check itself will fail where it is seen
                pass


def threads_started() -> list[str]:
    """Python threads other than the main one: code they run would escape the monitor."""
    return [t.name for t in threading.enumerate() if t is not threading.main_thread()]


def preload_from_env() -> None:
    """The grader's preload (``COURSEKIT_PRELOAD``, ``COURSEKIT_PRELOAD_CHECKS``), if any;
    the variables are removed, so student code does not see the setup source."""
    source = os.environ.pop(PRELOAD_ENV, "")
    checks = [name for name in os.environ.pop(PRELOAD_CHECKS_ENV, "").split(",") if name]
    if source or checks:
        preload(source, checks)


def start() -> None:
    """Install the monitor (when the grader asked for one), then run ipykernel."""
    monitor.install_from_env()
    from ipykernel import kernelapp
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    # A sandbox uid served other students before: what they left in its keyrings goes
    # first, and the session keyring this process inherited (the grader's, where a service
    # manager or a login gave it one) is left for an empty one of its own.
    if os.environ.pop(keyrings.CLEAR_ENV, "") and not (keyrings.join_new_session()
                                                        and keyrings.clear()):
        sys.stderr.write("coursekit: the sandbox uid's keyrings could not be emptied; not "
                         "running a kernel that could read another student's keys\n")
        os._exit(EXIT_KEYRINGS_KEPT)
    if os.environ.get(monitor.FIFO_ENV):
        preload_from_env()
        extra = threads_started()
        if extra:
            sys.stderr.write(f"coursekit: the lab's setup imports started threads {extra} "
                             f"before the grading monitor; not grading unwatched\n")
            os._exit(EXIT_PRELOAD_THREADS)
    start()
