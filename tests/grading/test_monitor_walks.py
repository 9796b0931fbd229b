"""The grading monitor remembers, for each running frame, whether student code is above it (a
walk up the stack it would otherwise repeat for every call deep inside a library). What it
remembers must never hide a student's call: a library generator first advanced with no
student code above it, then resumed by student code, is reported from the student's file.

Each case runs in a fresh interpreter with the monitor installed, as a grading kernel has it;
the "library" is a module in a folder named site-packages on ``sys.path`` (trusted, as the
environment's packages are), the "student's" code is compiled under a file name outside it. Each case fails if the monitor
kept a frame's answer past a yield.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from machine_load import scaled

HARNESS = textwrap.dedent('''
    import json, sys, threading, time

    fifo, library, student, pause = sys.argv[1:4] + [float(sys.argv[4])]
    lines = []

    def read():
        with open(fifo, "rb") as pipe:
            for line in pipe:
                lines.append(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    sys.path.insert(0, library)
    from coursekit.grading import monitor
    from coursekit.grading.targets import for_patterns
    monitor.install(fifo, for_patterns(["libgen.forbidden"]))
    exec(compile(open(student).read(), "/home/student/lab.py", "exec"), {"__name__": "__main__"})
    time.sleep(pause)   # for the reader to take the last reports
    print("REPORTS", json.dumps([[l["kind"], l["what"]] for l in lines]))
''')

LIBRARY = textwrap.dedent('''
    def forbidden():
        return 1

    def steps():
        while True:
            forbidden()
            yield

    ADVANCED = steps()
''')


def _reports(tmp_path, student: str) -> list[str]:
    fifo = tmp_path / "monitor"
    os.mkfifo(fifo)
    library = tmp_path / "site-packages"
    library.mkdir()
    # A module that an import statement of its own package's code imports does its own work:
    # what its body runs is not the student's, even with student code above (which called
    # ``first_use``). The name is a constant of the library's code (a name handed to
    # importlib.import_module would be the student's choice).
    (library / "libgen").mkdir()
    (library / "libgen" / "__init__.py").write_text(
        LIBRARY + "\n\ndef first_use(name):\n    if name == 'advance':\n"
                  "        import libgen.advance\n    else:\n        import libgen.resume\n")
    (library / "libgen" / "advance.py").write_text("import libgen\nnext(libgen.ADVANCED)\n")
    (library / "libgen" / "resume.py").write_text("import libgen\nnext(libgen.SHARED)\n")
    (tmp_path / "harness.py").write_text(HARNESS)
    (tmp_path / "student.py").write_text(textwrap.dedent(student))
    done = subprocess.run([sys.executable, str(tmp_path / "harness.py"), str(fifo), str(library),
                           str(tmp_path / "student.py"), str(scaled(0.3))],
                          capture_output=True, text=True, timeout=scaled(120),
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    reports = json.loads(done.stdout.split("REPORTS ", 1)[1].splitlines()[0])
    return [what for kind, what in reports if kind == "call"]


def test_a_library_generator_resumed_by_student_code_is_reported_from_the_student(tmp_path):
    calls = _reports(tmp_path, '''
        import time, libgen
        libgen.first_use("advance")  # the library advances it first, as its own work
        time.sleep(0.01)
        import libgen
        next(libgen.ADVANCED)
    ''')
    assert calls == ["libgen.forbidden from /home/student/lab.py"]


def test_a_library_generator_advanced_by_student_code_then_by_the_library_is_charged_once(
        tmp_path):
    # The student's next() is reported; the library's own, later (the body of a module that
    # library code imports), is not charged to the student.
    calls = _reports(tmp_path, '''
        import time
        import libgen
        libgen.SHARED = libgen.steps()
        next(libgen.SHARED)
        time.sleep(0.01)  # past the monitor's once-per-5-ms limit on repeated reports
        libgen.first_use("resume")
    ''')
    assert calls == ["libgen.forbidden from /home/student/lab.py"]


def test_a_librarys_own_import_stays_its_own_with_a_builtin_that_ipykernel_swaps(tmp_path):
    # A grading kernel is ipykernel's, which sets builtins.input to its own bound method for
    # every cell it runs (the grader's drive included): a rule that wanted the builtins as they
    # were at install charged every library's own lazy import to the student (red team 13b).
    calls = _reports(tmp_path, '''
        import builtins, time

        class Kernel:                     # as ipykernel's IPythonKernel._forward_input does
            def raw_input(self, prompt=""):
                raise RuntimeError("no stdin")

        builtins.input = Kernel().raw_input
        import libgen
        libgen.SHARED = libgen.steps()
        next(libgen.SHARED)
        time.sleep(0.01)  # past the monitor's once-per-5-ms limit on repeated reports
        libgen.first_use("resume")
    ''')
    assert calls == ["libgen.forbidden from /home/student/lab.py"]
