"""``python -m coursekit.grading.kernel -f CONNECTION_FILE``: the kernel grading starts.

It is ipykernel with the grading monitor (:mod:`.monitor`) installed first, so the monitor is
in place before any student code runs. Without the grader's environment it is plain ipykernel.

Before the monitor, it runs the lab's setup imports (``COURSEKIT_PRELOAD``: the instructor's
setup cell up to its last import, from the source notebook, never from a hand-in). The
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

from coursekit.grading import monitor

PRELOAD_ENV = "COURSEKIT_PRELOAD"
EXIT_PRELOAD_THREADS = 87


def preload(source: str) -> None:
    """Run ``source`` (trusted setup code) in a namespace of its own, quietly: a failure here
    is the setup cell's, which reports it in the notebook when it runs."""
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        try:
            exec(compile(source, "<coursekit preload>", "exec"), {"__name__": "__preload__"})
        except Exception:  # noqa: BLE001 — the setup cell will raise it where it is seen
            pass
    extra = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if extra:
        sys.stderr.write(f"coursekit: the lab's setup imports started threads {extra} before "
                         f"the grading monitor; not grading unwatched\n")
        os._exit(EXIT_PRELOAD_THREADS)


if __name__ == "__main__":
    if os.environ.get(monitor.FIFO_ENV) and os.environ.get(PRELOAD_ENV):
        preload(os.environ.pop(PRELOAD_ENV))
    monitor.install_from_env()
    from ipykernel import kernelapp
    kernelapp.launch_new_instance()
