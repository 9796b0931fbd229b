"""The demo class: realistic submissions, generated from the current release of a lab.

Every student starts from the release notebook (so the class follows the lab when it changes)
and the instructor's solutions, then makes one small edit that shows one behaviour of the
grader: full marks, partial credit, the untouched release, a syntax error, an infinite loop,
a kernel crash, a memory bomb, an edited and a deleted test cell, a renamed and a duplicated
notebook, a zip, corrupt JSON, a missing notebook, warnings on stderr, and the cheats the
grader must defeat (input transformer, patched NumPy, patched ``AssertionError``, an
always-equal object, reading the gradebook and ``solutions/``, importing the reference).

Each student carries the outcome it must get (:class:`Expect`), derived from the lab's
structure, so the demo checks itself and the tests assert the same.
"""
from __future__ import annotations

import ast
import copy
import importlib.util
import os
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from coursekit.grading.program import get_check

from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import ANSWER, CHECKS, LabCell, LabNotebook
from coursekit.course import Course, Lab
from autograder.publish.release import release_notebook


EPS = 1e-6


@dataclass
class Expect:
    """What a demo student's outcome must be."""

    score: float | None = None      # exact
    at_most: float | None = None
    at_least: float | None = None
    reason: str = ""                # must appear (case-insensitively) in a reason or message
    status: str = "graded"
    flagged: bool = False

    def problems(self, outcome) -> list[str]:
        """Why ``outcome`` (Outcome or StoredOutcome) does not match; empty when it does."""
        found = []
        if self.score is not None and abs(outcome.score - self.score) > EPS:
            found.append(f"score {outcome.score:.3f}, expected {self.score:.3f}")
        if self.at_most is not None and outcome.score > self.at_most + EPS:
            found.append(f"score {outcome.score:.3f}, expected at most {self.at_most:.3f}")
        if self.at_least is not None and outcome.score < self.at_least - EPS:
            found.append(f"score {outcome.score:.3f}, expected at least {self.at_least:.3f}")
        if outcome.status != self.status:
            found.append(f"status {outcome.status}, expected {self.status}")
        if bool(outcome.flagged) != self.flagged:
            found.append(f"flagged={outcome.flagged}, expected {self.flagged}")
        if self.reason and self.reason.lower() not in _all_text(outcome).lower():
            found.append(f"no reason mentions {self.reason!r}")
        return found

    def describe(self) -> str:
        if self.score is not None:
            points = f"= {self.score:g}"
        else:
            bounds = [f"≥ {self.at_least:g}" if self.at_least is not None else "",
                      f"≤ {self.at_most:g}" if self.at_most is not None else ""]
            points = " and ".join(b for b in bounds if b)
        return f"{points}" + (f", '{self.reason}'" if self.reason else "")


def _all_text(outcome) -> str:
    parts = list(outcome.reasons)
    for cell in getattr(outcome, "cells", []):
        parts += [c.message for c in cell.checks]
    for check in getattr(outcome, "checks", []):
        parts.append(check.message)
    return "\n".join(parts)


# --------------------------------------------------------------------------- the lab, as data

@dataclass
class DemoLab:
    """What the student builders need to know about the lab."""

    course: Course
    lab: Lab
    source: LabNotebook
    release: NotebookNode
    sandboxed: bool = True
    mutants: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @property
    def answers(self) -> list[LabCell]:
        return self.source.with_role(ANSWER)

    @property
    def checks(self) -> list[LabCell]:
        return self.source.with_role(CHECKS)

    @property
    def max_score(self) -> float:
        return self.source.auto_max_score

    def solution(self, gid: str) -> str:
        lines = self.source.by_id()[gid].source.splitlines()
        return "\n".join(line for line in lines
                         if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)

    def checks_of(self, answer: LabCell) -> LabCell:
        """The checks cell that covers ``answer``."""
        for cell in self.checks:
            if answer in self.source.covered_answers(cell):
                return cell
        raise LookupError(f"no checks cell covers {answer.grade_id}")

    def points_of(self, answer: LabCell) -> float:
        return self.checks_of(answer).points

    def impl_name(self, answer: LabCell) -> str | None:
        """The name the checks cell passes to ``grade`` for this answer, if a plain name that
        the answer cell defines as a function."""
        tree = ast.parse(self.checks_of(answer).source)
        names = [node.args[1].id for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and getattr(node.func, "id", getattr(node.func, "attr", None)) == "grade"
                 and len(node.args) > 1 and isinstance(node.args[1], ast.Name)]
        defined = {node.name for node in ast.walk(ast.parse(self.solution(answer.grade_id)))
                   if isinstance(node, ast.FunctionDef)}
        return next((n for n in names if n in defined), None)

    def function_answers(self) -> list[tuple[LabCell, str]]:
        return [(a, name) for a in self.answers if (name := self.impl_name(a))]

    # ------------------------------------------------------------------ notebooks
    def notebook(self, answers: dict[str, str] | None = None, *, solved: bool = True) -> NotebookNode:
        """The release with the answer cells filled in (solutions unless given)."""
        nb = copy.deepcopy(self.release)
        answers = dict(answers or {})
        for cell in nb.cells:
            gid = lab_cells.nbgrader_meta(cell).get("grade_id")
            if gid in answers:
                cell.source = answers[gid]
            elif solved and lab_cells.role_of(cell) == ANSWER:
                cell.source = self.solution(gid)
        return nb


def _index(nb: NotebookNode, gid: str) -> int:
    for index, cell in enumerate(nb.cells):
        if lab_cells.nbgrader_meta(cell).get("grade_id") == gid:
            return index
    raise LookupError(gid)


def _insert_after(nb: NotebookNode, gid: str, source: str) -> NotebookNode:
    cell = new_code_cell(source)
    nb.cells.insert(_index(nb, gid) + 1, cell)
    return nb


def _load_mutants(course: Course, lab: Lab) -> dict:
    path = course.root / "tests" / "mutants" / f"{lab.id}.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"_demo_mutants_{lab.id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, "MUTANTS", {})


def demo_lab(course: Course, lab: Lab, *, sandboxed: bool = True) -> DemoLab:
    course.enable_checks()
    source = lab_cells.load(course.source_notebook(lab))
    return DemoLab(course, lab, source, release_notebook(course, lab, source.nb), sandboxed,
                   _load_mutants(course, lab))


# --------------------------------------------------------------------------- students

@dataclass
class DemoStudent:
    id: str
    shows: str
    build: Callable[[DemoLab, Path], None]      # writes the hand-in at the given path
    expect: Callable[[DemoLab], Expect]
    as_zip: bool = False


def _write(nb: NotebookNode, folder: Path, name: str, mtime: float | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nb, str(path))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def _default(d: DemoLab, folder: Path, nb: NotebookNode) -> None:
    _write(nb, folder / d.lab.id, d.lab.notebook)


def _full(d, folder):
    _default(d, folder, d.notebook())


def _partial(d, folder):
    last = d.answers[-1]
    mutants = d.mutants.get(last.grade_id, [])
    wrong = mutants[0][1] if mutants else d.release.cells[_index(d.release, last.grade_id)].source
    _default(d, folder, d.notebook({last.grade_id: wrong}))


def _untouched(d, folder):
    _default(d, folder, copy.deepcopy(d.release))


def _syntax(d, folder):
    first = d.answers[0]
    _default(d, folder, d.notebook({first.grade_id: d.solution(first.grade_id)
                                    + "\n\nresult = (1 +\n"}))


def _looping_answer(d: DemoLab) -> tuple[LabCell, str]:
    return d.function_answers()[-1]


def _loop(d, folder):
    answer, name = _looping_answer(d)
    looping = (d.solution(answer.grade_id)
               + f"\n\n\ndef {name}(*args, **kwargs):  # a bug: waits for a condition that "
                 f"never comes\n    done = False\n    while not done:\n        pass\n")
    _default(d, folder, d.notebook({answer.grade_id: looping}))


def _loop_expect(d):
    answer, _ = _looping_answer(d)
    lost = d.points_of(answer)
    last = answer.grade_id == d.answers[-1].grade_id
    return Expect(score=d.max_score - lost if last else None,
                  at_most=None if last else d.max_score - lost, reason="infinite loop?")


def _crash(d, folder):
    nb = _insert_after(d.notebook(), d.checks[0].grade_id,
                       "import os\nos._exit(1)  # 'restart the kernel', badly")
    _default(d, folder, nb)


def _memory(d, folder):
    # After the last checks cell: the bomb leaves the kernel with almost no address space,
    # and whether a later check still finds room for a thread or a library is luck.
    # bytearray's pages are reserved, not written: the address-space limit stops the loop at
    # once. Writing gigabytes took longer than a 10 s cell limit on a loaded machine, and the
    # bomb was reported as an infinite loop (a CI failure).
    nb = _insert_after(d.notebook(), d.checks[-1].grade_id,
                       "hog = []\nwhile True:  # keeps every intermediate result\n"
                       "    hog.append(bytearray(2**28))")
    _default(d, folder, nb)


def _edited(d, folder):
    nb = d.notebook()
    nb.cells[_index(nb, d.checks[0].grade_id)].source = "print('all checks passed!')  # edited"
    _default(d, folder, nb)


def _deleted(d, folder):
    nb = d.notebook()
    del nb.cells[_index(nb, d.checks[0].grade_id)]
    _default(d, folder, nb)


def _renamed(d, folder):
    _write(d.notebook(), folder, f"{d.lab.id} (1).ipynb")


def _duplicated(d, folder):
    _write(copy.deepcopy(d.release), folder, d.lab.notebook, mtime=1_700_000_000)
    _write(d.notebook(), folder, f"Copy of {d.lab.notebook}", mtime=1_700_086_400)


def _zipped(d, folder):
    _default(d, folder, d.notebook())


def _corrupt(d, folder):
    path = _write(d.notebook(), folder / d.lab.id, d.lab.notebook)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])  # the upload was cut off half way


def _missing(d, folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("I could not get the notebook to save, sorry!\n")


def _stderr(d, folder):
    answers = {}
    for answer, name in d.function_answers():
        answers[answer.grade_id] = (
            d.solution(answer.grade_id) + "\n\nimport sys as _sys\nimport warnings as _warnings\n"
            f"_{name}_quiet = {name}\n\n\ndef {name}(*args, **kwargs):\n"
            f"    _warnings.warn('{name}: this warning must not cost points', UserWarning)\n"
            f"    print('debug: called {name}', file=_sys.stderr)\n"
            f"    return _{name}_quiet(*args, **kwargs)\n")
    _default(d, folder, d.notebook(answers))


# Where a check wants the answer itself to be a TorchScript function, nia's plain
# ``def f(*args, **kwargs)`` (TorchScript cannot script *args) takes its place, and the grader
# is right to say so: lab06's w2_model fails its two "compiled to TorchScript" cases, half of
# its points, while its loss and gradients still match. Keyed by (lab, answer): share lost.
STDERR_UNSCRIPTED = {("lab06_static_graphs", "w2_model"): 0.5}


def _stderr_expect(d):
    lost = sum(STDERR_UNSCRIPTED.get((d.lab.id, answer.grade_id), 0.0) * d.points_of(answer)
               for answer, _ in d.function_answers())
    return Expect(score=d.max_score - lost, reason="TorchScript" if lost else "")


def _transformer(d, folder):
    nb = _insert_after(copy.deepcopy(d.release), "setup",
                       "ip = get_ipython()\n"
                       "ip.input_transformers_cleanup.append(lambda lines: ['pass\\n'])")
    _default(d, folder, nb)


def _numpy_patch(d, folder):
    nb = _insert_after(copy.deepcopy(d.release), "setup",
                       "import numpy as np\n"
                       "np.allclose = lambda *args, **kwargs: True\n"
                       "np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, bool)\n"
                       "np.testing.assert_allclose = lambda *args, **kwargs: None\n"
                       "np.array_equal = lambda *args, **kwargs: True")
    _default(d, folder, nb)


def _assert_patch(d, folder):
    nb = _insert_after(copy.deepcopy(d.release), "setup",
                       "import builtins\n\nclass NeverRaised(Exception):\n    pass\n\n"
                       "builtins.AssertionError = NeverRaised  # asserts can no longer fail")
    _default(d, folder, nb)


def _always_equal(d, folder):
    # Only the first exercise: a check case that never looks at the result (say, "the inputs
    # were not modified") would pass for any object, and that says nothing about equality.
    answers = {}
    for answer, name in d.function_answers()[:1]:
        answers[answer.grade_id] = (
            "class Anything:\n    def __eq__(self, other):\n        return True\n\n"
            "    def __getitem__(self, index):\n        return self\n\n"
            "    def __array__(self, *args, **kwargs):\n        raise TypeError('no')\n\n\n"
            f"def {name}(*args, **kwargs):\n    return Anything()\n")
    _default(d, folder, d.notebook(answers, solved=False))


def _monitor_off(d, folder):
    nb = _insert_after(d.notebook(), "setup",
                       "import gc\n\ntry:  # find the grading monitor's state among all objects\n"
                       "    everything = gc.get_objects()\nexcept RuntimeError as error:\n"
                       "    print('refused:', error)")
    _default(d, folder, nb)


def _reads_private(d, folder):
    lab = d.lab.id
    probe = (
        "import os\n"
        "stolen = {}\n"
        "for path in ['../../../gradebook.db', '../../../.secret', '../../../course.toml',\n"
        f"             '../../../../solutions/{lab}/{lab}.ipynb', '../../../submitted']:\n"
        "    try:\n"
        "        if os.path.isdir(path):\n"
        "            stolen[path] = os.listdir(path)\n"
        "        else:\n"
        "            with open(path, 'rb') as handle:\n"
        "                stolen[path] = handle.read()\n"
        "        print('READ', path)\n"
        "    except OSError as error:\n"
        "        print('blocked:', path, '->', type(error).__name__)\n"
        f"key = '../../../../solutions/{lab}/{lab}.ipynb'\n"
        "if key in stolen:  # copy the instructor's answers into a module, then import them\n"
        "    import json\n"
        "    with open('stolen_answers.py', 'w') as out:\n"
        "        for cell in json.loads(stolen[key])['cells']:\n"
        "            if cell.get('metadata', {}).get('nbgrader', {}).get('solution') and "
        "cell['cell_type'] == 'code':\n"
        "                out.write(''.join(cell['source']) + '\\n')\n"
        "    from stolen_answers import *\n")
    nb = copy.deepcopy(d.release)
    nb.cells.append(new_code_cell("# (the stolen answers would be used from here on)"))
    for answer in d.answers:  # after each stub, try to replace it with the stolen answer
        nb = _insert_after(nb, answer.grade_id, probe)
    _default(d, folder, nb)


def _reference_import(d: DemoLab) -> tuple[LabCell, str, str, str]:
    answer, name = d.function_answers()[0]
    tree = ast.parse(d.checks_of(answer).source)
    check_name = next(node.args[0].value for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and len(node.args) > 1
                      and isinstance(node.args[0], ast.Constant))
    reference = get_check(check_name).reference
    return answer, name, reference.__module__, reference.__name__


def _imports_reference(d, folder):
    answer, name, module, function = _reference_import(d)
    code = (f"from {module} import {function} as _reference\n\n"
            f"{name} = _reference()  # the grader's own answer\n")
    _default(d, folder, d.notebook({answer.grade_id: code}))


def _imports_reference_expect(d):
    # The reference answers the first exercise: delegation costs its points, and importing
    # the grader's own code is flagged for a TA.
    answer, _, _, _ = _reference_import(d)
    return Expect(score=d.max_score - d.points_of(answer), status="flagged", flagged=True,
                  reason="grader's own code")


def _first_points(d: DemoLab) -> float:
    return d.checks[0].points


STUDENTS: list[DemoStudent] = [
    DemoStudent("ada_full", "full marks", _full, lambda d: Expect(score=d.max_score)),
    DemoStudent("ben_partial", "partial credit: the last exercise has a realistic bug",
                _partial, lambda d: Expect(at_least=d.max_score - d.points_of(d.answers[-1]),
                                           at_most=d.max_score - 0.01)),
    DemoStudent("cleo_untouched", "the untouched release", _untouched,
                lambda d: Expect(score=0.0, reason="NotImplementedError")),
    DemoStudent("dan_syntax", "a syntax error in the first answer", _syntax,
                lambda d: Expect(at_most=d.max_score - d.points_of(d.answers[0]),
                                 reason="SyntaxError")),
    DemoStudent("eve_loop", "an infinite loop: interrupted, the rest still graded", _loop,
                _loop_expect),
    DemoStudent("fay_crash", "os._exit after the first checks: those points are kept", _crash,
                lambda d: Expect(score=_first_points(d), reason="kernel died")),
    DemoStudent("gus_memory", "a memory bomb: MemoryError under the limit, work kept", _memory,
                lambda d: Expect(score=d.max_score, reason="ran out of memory")),
    DemoStudent("hal_edited_test", "an edited checks cell is restored", _edited,
                lambda d: Expect(score=d.max_score, reason="was edited")),
    DemoStudent("ida_deleted_test", "a deleted checks cell is put back", _deleted,
                lambda d: Expect(score=d.max_score, reason="was deleted")),
    DemoStudent("jon_renamed", "a renamed notebook is recognised", _renamed,
                lambda d: Expect(score=d.max_score, reason="renamed")),
    DemoStudent("kim_duplicate", "two copies handed in: the newest is graded", _duplicated,
                lambda d: Expect(score=d.max_score, reason="2 notebooks belong")),
    DemoStudent("lea_corrupt", "corrupt JSON", _corrupt,
                lambda d: Expect(score=0.0, status="corrupt", reason="not valid JSON")),
    DemoStudent("max_missing", "no notebook handed in", _missing,
                lambda d: Expect(score=0.0, status="missing", reason="no notebook")),
    DemoStudent("nia_stderr", "correct, but warns and prints on stderr", _stderr,
                _stderr_expect),
    DemoStudent("oli_zip", "handed in as a zip", _zipped,
                lambda d: Expect(score=d.max_score), as_zip=True),
    DemoStudent("pat_transformer", "cheat: input transformer turns the checks into `pass`",
                _transformer, lambda d: Expect(score=0.0, reason="grade() was not called")),
    DemoStudent("quinn_numpy", "cheat: patched numpy.allclose and friends", _numpy_patch,
                lambda d: Expect(score=0.0, reason="NotImplementedError")),
    DemoStudent("ray_assert", "cheat: patched AssertionError", _assert_patch,
                lambda d: Expect(score=0.0, reason="NotImplementedError")),
    DemoStudent("sam_always_equal", "cheat: an object equal to everything", _always_equal,
                lambda d: Expect(score=0.0, reason="object of type")),
    DemoStudent("tom_snoops", "cheat: reads the gradebook, secret and solutions/",
                _reads_private,
                lambda d: Expect(score=0.0, reason="NotImplementedError") if d.sandboxed
                else Expect(at_least=0.0)),
    DemoStudent("uma_reference", "cheat: imports the reference implementation",
                _imports_reference, _imports_reference_expect),
    DemoStudent("vic_monitor", "cheat: looks for the grading monitor (refused, flagged; "
                               "the honest answers keep their points)", _monitor_off,
                lambda d: Expect(score=d.max_score, status="flagged", flagged=True,
                                 reason="gc.get_objects")),
]


def build_class(demo: DemoLab, submitted_dir: Path) -> list[DemoStudent]:
    """Write every demo student's hand-in into ``submitted_dir`` (replacing earlier demo
    hand-ins, and only those); returns the students."""
    submitted_dir.mkdir(parents=True, exist_ok=True)
    for student in STUDENTS:
        folder = submitted_dir / student.id
        archive = submitted_dir / f"{student.id}.zip"
        for old in (folder, archive):
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
        student.build(demo, folder)
        if student.as_zip:
            with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in sorted(folder.rglob("*")):
                    if path.is_file():
                        zf.write(path, path.relative_to(folder).as_posix())
            shutil.rmtree(folder)
    return STUDENTS


def expectations(demo: DemoLab) -> dict[str, Expect]:
    return {student.id: student.expect(demo) for student in STUDENTS}
