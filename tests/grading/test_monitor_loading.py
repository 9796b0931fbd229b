"""The grading monitor lets the import system load an installation's compiled modules (a .pyc
read and unmarshalled) and reports any other compiled code loaded: it judges what is
unmarshalled by the file its thread opened last. An installed course has .pyc files
everywhere, and a student's code runs subprocesses in threads (the hardware report's probes),
whose pipes are opened by fd: another thread's open between a .pyc's open and its loading is
not what the import loads.

Each case runs in a fresh interpreter with the monitor installed, as a grading kernel has it;
the "library" is a compiled module in a folder named site-packages on ``sys.path`` (trusted,
as the environment's packages are), the "student's" code is compiled under a file name
outside it.
"""
from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import textwrap

from machine_load import scaled

HARNESS = textwrap.dedent('''
    import json, sys, threading, time

    fifo, library, student = sys.argv[1:4]
    lines = []

    def read():
        with open(fifo, "rb") as pipe:
            for line in pipe:
                lines.append(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    sys.path.insert(0, library)
    import staging   # its audit hook, before the monitor's
    from coursekit.grading import monitor
    monitor.install(fifo, [])
    exec(compile(open(student).read(), "/home/student/lab.py", "exec"), {"__name__": "__main__"})
    time.sleep(0.3)   # for the reader to take the last reports
    print("REPORTS", json.dumps([[l["kind"], l["what"]] for l in lines]))
''')


def _reports(tmp_path, student: str) -> list:
    """What the monitor reported while ``student`` ran, with two compiled library modules:
    ``compiled_lib`` (whose ``load`` unmarshals the bytes it is given) and ``compiled_other``."""
    fifo = tmp_path / "monitor"
    os.mkfifo(fifo)
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "compiled_lib.py").write_text(
        "import marshal\nANSWER = 42\n\n\ndef load(data):\n    return marshal.loads(data)\n")
    (library / "compiled_other.py").write_text("OTHER = 1\n")
    # A library that calls back when a file is opened, to stage what another thread does
    # meanwhile: an audit hook of its own, added as the harness imports it before the
    # monitor (no code may add one under student code, a library's call included).
    (library / "staging.py").write_text(
        "import sys\n\n_ACTIONS = []\n\n\ndef _hook(event, args):\n"
        "    if event == 'open':\n"
        "        for suffix, action in list(_ACTIONS):\n"
        "            if str(args[0]).endswith(suffix):\n"
        "                action(args[0])\n\n\n"
        "sys.addaudithook(_hook)\n\n\n"
        "def when_opened(suffix, action):\n"
        "    _ACTIONS.append((suffix, action))\n")
    for module in ("compiled_lib", "compiled_other"):
        py_compile.compile(str(library / f"{module}.py"), doraise=True)
    (tmp_path / "harness.py").write_text(HARNESS)
    (tmp_path / "student.py").write_text(textwrap.dedent(student))
    done = subprocess.run([sys.executable, str(tmp_path / "harness.py"), str(fifo),
                           str(library), str(tmp_path / "student.py")],
                          capture_output=True, text=True, timeout=scaled(120), check=False)
    assert done.returncode == 0 and "REPORTS " in done.stdout, done.stdout + done.stderr
    return json.loads(done.stdout.split("REPORTS ", 1)[1].splitlines()[0])


def test_another_threads_open_does_not_make_an_installed_pyc_foreign(tmp_path):
    # The student's thread opens a pipe by fd (as subprocess does) right after the import
    # system opened the library's .pyc, before it is unmarshalled: an audit hook of the
    # student's makes that interleaving certain rather than a matter of thread scheduling.
    reports = _reports(tmp_path, """
        import os, threading
        import staging

        interleaved = []

        def open_a_pipe_meanwhile(path):
            if "compiled_lib" in str(path):
                worker = threading.Thread(target=lambda: open(os.dup(2), "wb").close())
                worker.start()
                worker.join()
                interleaved.append(path)

        staging.when_opened(".pyc", open_a_pipe_meanwhile)
        import compiled_lib
        assert compiled_lib.ANSWER == 42 and interleaved, interleaved
    """)
    assert ["open", "<int>"] in reports, reports   # the student's thread opened by fd
    assert [what for kind, what in reports if kind == "tamper"] == [], reports


def test_another_threads_pyc_does_not_make_foreign_code_installed(tmp_path):
    # A library function unmarshals the student's bytes in a thread whose last open was the
    # student's own file, while the main thread has just opened an installed .pyc.
    reports = _reports(tmp_path, """
        import marshal, sys, threading
        import compiled_lib

        data = marshal.dumps(compile("FOREIGN = 1", "mine.py", "exec"))
        opened, loaded, refused = threading.Event(), threading.Event(), []

        def unmarshal():
            open(sys.argv[3]).close()   # this file
            opened.set()
            loaded.wait()
            try:
                compiled_lib.load(data)
            except RuntimeError as error:
                refused.append(error)

        worker = threading.Thread(target=unmarshal)
        worker.start()
        opened.wait()
        import compiled_other
        loaded.set()
        worker.join()
        assert refused, "foreign compiled code was loaded"
    """)
    student_file = str(tmp_path / "student.py")
    assert [what for kind, what in reports if kind == "tamper"] == [
        f"loaded compiled code ({student_file[:80]})"], reports
