"""The planted-copy class: proof that `coursekit similarity` catches disguised copies and spares
honest work.

For one lab it writes a class folder (one ``<student>/<lab>.ipynb`` each, from the release)
whose students are known:

* ``original``: the instructor's solution, the student everybody copies from;
* ``copy_renamed``, ``copy_reordered``, ``copy_comments``, ``copy_reformatted`` and
  ``copy_disguised`` (all four at once): the original's answers, disguised as copiers do;
* ``copy_reference``: answers pasted from the library's reference source (where the lab has one);
* ``honest_<n>``: a right answer written differently (``ALTERNATIVES`` in
  ``tests/mutants/<lab>.py``) in one exercise, the stub elsewhere.

Unlike the demo class (:mod:`.demo_class`) nothing here is graded: similarity reads answer cells
only, so this class spans every lab and stays out of the demo's graded run.
"""
from __future__ import annotations

import ast
import copy
import io
import textwrap
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tooling.mutants import load_mutants, mutants_path
from coursekit.course import Course, Lab
from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import ANSWER

DISGUISES = ("renamed", "reordered", "comments", "reformatted", "disguised")

# Answers pasted from the reference source: (lab, exercise) -> (file, top-level names, the name
# the exercise asks for). A copier renames the class to what the lab expects.
REFERENCE_COPIES: dict[tuple[str, str], tuple[str, tuple[str, ...], str]] = {
    ("lab02_autograd", "engine"): ("coursekit/autograd/engine.py", ("toposort", "backward"), ""),
    ("lab03_functions", "ck_sigmoid"): ("coursekit/autograd/ops/activation.py", ("Sigmoid",),
                                        "CkSigmoid"),
    ("lab04_modules", "module"): ("coursekit/nn/module.py", ("Module",), ""),
    ("lab04_modules", "sgd"): ("coursekit/optim/sgd.py", ("SGD",), ""),
    ("lab04_modules", "adam"): ("coursekit/optim/adam.py", ("Adam",), ""),
    ("lab05_data", "batch_sampler"): ("coursekit/data/sampler.py", ("BatchSampler",),
                                      "MyBatchSampler"),
    ("lab05_data", "collate"): ("coursekit/data/collate.py", ("default_collate",), "my_collate"),
    ("lab05_data", "concat"): ("coursekit/data/dataset.py", ("ConcatDataset",), "MyConcatDataset"),
}


@dataclass
class PlantedClass:
    lab: str
    folder: Path
    answers: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> exercise -> code
    honest: dict[str, tuple[str, str, bool]] = field(default_factory=dict)  # student -> (exercise, name, independent)


# --------------------------------------------------------------------------- disguises

def _bound_names(tree: ast.AST, keep: set[str]) -> set[str]:
    """Names the code binds (arguments, local variables, nested helpers), minus ``keep``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node not in tree.body:
            names.add(node.name)
    return names - keep - {"self", "cls", "ctx"}


def rename_variables(code: str) -> str:
    """Every local name and argument renamed; layout and comments kept."""
    tree = ast.parse(code)
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    mapping = {name: f"v{i}_{name[::-1]}" for i, name in enumerate(sorted(_bound_names(tree, top)))}
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    lines = code.splitlines(keepends=True)
    for index in range(len(tokens) - 1, -1, -1):
        tok = tokens[index]
        after_dot = index > 0 and tokens[index - 1].string == "."
        if tok.type == tokenize.NAME and tok.string in mapping and not after_dot:
            row, col = tok.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + mapping[tok.string] + line[tok.end[1]:]
    return "".join(lines)


def reorder_functions(code: str) -> str:
    """Top-level functions and classes in reverse order; the other statements stay first."""
    tree = ast.parse(code)
    lines = code.splitlines()
    blocks, rest = [], []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[start - 1:node.end_lineno])
        (blocks if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else rest).append(text)
    return "\n\n\n".join(rest + blocks[::-1]) + "\n"


def change_comments(code: str) -> str:
    """Comments dropped and others written in: every third line gets one."""
    kept = [tok for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type != tokenize.COMMENT]
    bare = tokenize.untokenize(kept)
    out = []
    for number, line in enumerate(bare.splitlines(), start=1):
        stripped = line.rstrip()
        out.append(stripped + (f"  # my step {number}" if number % 3 == 0 and stripped
                               and not stripped.endswith(("\\", ",", "(")) else ""))
    return "\n".join(out) + "\n"


def reformat(code: str) -> str:
    """Another layout: normalised by ``ast.unparse``, two-space indents, blank lines added."""
    out = []
    for line in ast.unparse(ast.parse(code)).splitlines():
        body = line.lstrip(" ")
        depth = (len(line) - len(body)) // 4
        out.append("  " * depth + body)
        if body.startswith(("return", "def ", "class ")):
            out.append("")
    return "\n".join(out) + "\n"


def disguise(code: str, how: str) -> str:
    if how == "renamed":
        return rename_variables(code)
    if how == "reordered":
        return reorder_functions(code)
    if how == "comments":
        return change_comments(code)
    if how == "reformatted":
        return reformat(code)
    return reformat(change_comments(reorder_functions(rename_variables(code))))


def reference_copy(course: Course, lab: str, exercise: str) -> str | None:
    """The answer a student pasted from the reference source (None: the lab has none)."""
    if (lab, exercise) not in REFERENCE_COPIES:
        return None
    path, names, rename = REFERENCE_COPIES[(lab, exercise)]
    source = (course.root / path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    parts = [ast.get_source_segment(source, node, padded=True) for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names]
    code = "import numpy as np\n\n\n" + "\n\n\n".join(textwrap.dedent(p) for p in parts) + "\n"
    return code.replace(f"class {names[0]}(", f"class {rename}(") if rename else code


# --------------------------------------------------------------------------- the class

def _alternatives(course: Course, lab: Lab) -> list[tuple[str, str, str, bool]]:
    """``(exercise, name, code, independent)``: independent unless built by editing the
    solution (``_edit(...)`` in the mutant file), which shares the rest of the cell with it."""
    path = mutants_path(course, lab)
    items = load_mutants(path, "ALTERNATIVES")
    edited: set[tuple[str, int]] = set()
    if path.exists():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ALTERNATIVES"
                                                    for t in node.targets):
                for key, value in zip(node.value.keys, node.value.values):
                    for i, entry in enumerate(getattr(value, "elts", [])):
                        expr = entry.elts[1] if isinstance(entry, ast.Tuple) else None
                        if isinstance(expr, ast.Call) and "_edit" in ast.unparse(expr.func):
                            edited.add((key.value, i))
    return [(exercise, name, code, (exercise, i) not in edited)
            for exercise, entries in items.items() for i, (name, code) in enumerate(entries)]


def write_notebook(course: Course, lab: Lab, answers: dict[str, str], target: Path) -> None:
    """The release with ``answers`` (exercise -> code) in its answer cells."""
    nb = copy.deepcopy(lab_cells.read_notebook(course.release_notebook(lab)))
    for cell in nb.cells:
        grade_id = lab_cells.nbgrader_meta(cell).get("grade_id")
        if lab_cells.role_of(cell) == ANSWER and grade_id in answers:
            cell.source = answers[grade_id]
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))


def planted_class(course: Course, lab: Lab, folder: Path) -> PlantedClass:
    """Write the planted class of ``lab`` under ``folder`` (see the module docstring)."""
    source = lab_cells.load(course.source_notebook(lab))
    solution = {c.grade_id: c.source for c in source.with_role(ANSWER) if c.grade_id}
    stubs = {c.grade_id: c.source
             for c in lab_cells.load(course.release_notebook(lab)).with_role(ANSWER) if c.grade_id}
    planted = PlantedClass(lab.id, folder)
    planted.answers["original"] = dict(solution)
    for how in DISGUISES:
        planted.answers[f"copy_{how}"] = {e: disguise(code, how) for e, code in solution.items()}
    pasted = {e: reference_copy(course, lab.id, e) for e in solution}
    if any(pasted.values()):
        planted.answers["copy_reference"] = {e: code or stubs[e] for e, code in pasted.items()}
    for n, (exercise, name, code, independent) in enumerate(_alternatives(course, lab), start=1):
        student = f"honest_{n}"
        planted.answers[student] = {**stubs, exercise: code}
        planted.honest[student] = (exercise, name, independent)
    for student, answers in planted.answers.items():
        write_notebook(course, lab, answers, folder / student / lab.notebook)
    return planted
