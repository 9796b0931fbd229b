"""``python -m coursekit.grading.kernel -f CONNECTION_FILE``: the kernel grading starts.

It is ipykernel with the grading monitor (:mod:`.monitor`) installed first, so the monitor is
in place before any student code runs. Without the grader's environment it is plain ipykernel.
"""
from coursekit.grading import monitor

if __name__ == "__main__":
    monitor.install_from_env()
    from ipykernel import kernelapp
    kernelapp.launch_new_instance()
