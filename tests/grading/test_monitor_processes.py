"""The grading monitor and processes: a process that library code forks stays watched (its
reports reach the grader's pipe, with its own pid), student code cannot fork or start a
process, and a multiprocessing spawn from student code is reported.

Each case runs in a fresh interpreter with the monitor installed, as a grading kernel has it;
the "student's" code is compiled under a file name outside the installation.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from machine_load import scaled

pytest.importorskip("torch")

HARNESS = textwrap.dedent('''
    import json, os, sys, threading, time

    if __name__ == "__main__":  # a spawned child imports this file again
        fifo = sys.argv[1]
        lines = []

        def read():
            with open(fifo, "rb") as pipe:
                for line in pipe:
                    lines.append(json.loads(line))

        threading.Thread(target=read, daemon=True).start()
        from coursekit.grading import monitor
        from coursekit.grading.targets import for_patterns
        monitor.install(fifo, for_patterns(["torch.distributed.all_reduce"]))
        student = open(sys.argv[2]).read()
        exec(compile(student, "/home/student/lab10.py", "exec"), {"__name__": "__main__"})
        time.sleep(float(sys.argv[3]))   # for the reader to take the last reports
        print("REPORTS", json.dumps([[l["kind"], l["what"], l["pid"]] for l in lines]))
        print("KERNEL", os.getpid())
''')


def _run(tmp_path, student: str) -> tuple[list, int, str]:
    fifo = tmp_path / "monitor"
    os.mkfifo(fifo)
    (tmp_path / "harness.py").write_text(HARNESS)
    (tmp_path / "student.py").write_text(textwrap.dedent(student))
    done = subprocess.run([sys.executable, str(tmp_path / "harness.py"), str(fifo),
                           str(tmp_path / "student.py"), str(scaled(0.5))],
                          capture_output=True, text=True, timeout=scaled(300),
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    reports = json.loads(done.stdout.split("REPORTS ", 1)[1].splitlines()[0])
    kernel = int(done.stdout.split("KERNEL ", 1)[1].split()[0])
    return reports, kernel, done.stdout


def test_a_forbidden_call_inside_a_forked_rank_is_reported_from_that_rank(tmp_path):
    reports, kernel, _ = _run(tmp_path, '''
        import torch
        import torch.distributed as dist
        from coursekit.distributed import launch

        def cheat():
            tensor = torch.ones(3)
            dist.all_reduce(tensor)
            return tensor

        launch(cheat, 2)
    ''')
    calls = [(what, pid) for kind, what, pid in reports if kind == "call"]
    assert {what for what, _ in calls} == {"torch.distributed.all_reduce from /home/student/lab10.py"}
    pids = {pid for _, pid in calls}
    assert len(pids) == 2 and kernel not in pids  # one report from each rank, none from here


def test_library_forks_are_allowed_and_not_reported(tmp_path):
    reports, _, stdout = _run(tmp_path, '''
        import torch
        import torch.distributed as dist
        from coursekit.distributed import launch

        def honest():
            return dist.get_rank()

        print("RANKS", launch(honest, 2))
    ''')
    assert "RANKS [0, 1]" in stdout
    assert [r for r in reports if r[0] in ("call", "tamper", "refused")] == []


def test_student_code_cannot_fork(tmp_path):
    reports, _, stdout = _run(tmp_path, '''
        import os
        import multiprocessing

        for start in (os.fork,
                      lambda: multiprocessing.get_context("fork").Process(target=print).start()):
            try:
                if start() == 0:
                    os._exit(0)
                print("STARTED")
            except RuntimeError as error:
                print("REFUSED", error)
    ''')
    assert "STARTED" not in stdout and stdout.count("REFUSED coursekit: os.fork") == 2
    assert ["tamper", "os.fork from student code"] in [r[:2] for r in reports]


def test_a_spawn_start_from_student_code_is_reported(tmp_path):
    reports, _, stdout = _run(tmp_path, '''
        import multiprocessing

        process = multiprocessing.get_context("spawn").Process(target=print)
        process.start()
        process.join()
        print("EXIT", process.exitcode)
    ''')
    assert "EXIT 0" in stdout
    assert any(kind == "tamper" and "monitor cannot follow" in what for kind, what, _ in reports)


def test_a_shell_escape_from_student_code_is_refused(tmp_path):
    """`!cmd`, `%%bash` and `get_ipython().system` start a program through IPython's own
    code (and pexpect's): the student typed them, so they are the student's, and refused."""
    reports, _, stdout = _run(tmp_path, '''
        from IPython.core.interactiveshell import InteractiveShell

        shell = InteractiveShell.instance()
        for escape in (lambda: shell.system("echo STARTED"),          # what !cmd runs
                       lambda: shell.system_raw("echo STARTED"),
                       lambda: shell.getoutput("echo STARTED"),       # what !!cmd runs
                       lambda: shell.run_cell_magic("bash", "", "echo STARTED")):
            try:
                print("OUTPUT", escape())
            except RuntimeError as error:
                print("REFUSED", error)
    ''')
    assert "STARTED" not in stdout, stdout
    assert stdout.count("REFUSED coursekit:") == 4, stdout
    assert any(kind == "tamper" and "from student code" in what for kind, what, _ in reports)


def test_a_program_started_from_a_thread_running_only_the_standard_library_is_refused(tmp_path):
    """A thread whose target is subprocess.run has no student frame on its stack; the
    student started it all the same."""
    reports, _, stdout = _run(tmp_path, '''
        import concurrent.futures, subprocess, sys, threading

        def report(future):
            try:
                print("OUTPUT", future.result())
            except RuntimeError as error:
                print("REFUSED", error)

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            report(pool.submit(subprocess.run, [sys.executable, "-c", "print('STARTED')"]))
        thread = threading.Thread(target=subprocess.run, args=(["echo", "STARTED"],))
        thread.start()
        thread.join()
    ''')
    assert "STARTED" not in stdout, stdout
    assert "REFUSED coursekit:" in stdout, stdout
    assert sum(kind == "tamper" and "from student code" in what
               for kind, what, _ in reports) == 2, reports
