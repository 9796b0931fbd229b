"""The student distribution: the labs and the library students need, not the answers.

``coursekit bundle DIR`` writes a folder to hand out (zip it, or push it to the class's own
repository):

* ``notebooks/``: the released labs, as ``coursekit release`` made them;
* ``coursekit/``: the library, where each lab not yet revealed (``reveal_after`` in the
  manifest) has its ``reveals`` replaced by stubs that say when they arrive
  (:mod:`autograder.publish.unrevealed`), and its check program stripped of the reference functions,
  its visible checks answered from recorded expectations (:mod:`autograder.publish.recorded`);
* nothing of ``autograder/``, the instructor's side: what students run (``validate``, ``fetch``,
  their JupyterLab's Validate and Assignment List) is in ``coursekit`` (:mod:`coursekit.student`);
* ``course/student/``: the student's Jupyter configuration (``make lab`` uses it);
* ``course/course.toml``: the labs, their limits and reveal dates (no secret);
* ``README.md``, ``Makefile`` (``make setup``, ``make lab``) and ``pyproject.toml``.

No solutions, hidden tests, secret, demo class or gradebook are copied, and the built folder is
scanned for them (:func:`scan`) before the command reports success.
"""
from __future__ import annotations

import ast
import json
import re
import shutil
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from coursekit.course import Course, Lab, reveal_entry

# Text files, scanned whole. ``.js``: the student's JupyterLab progress extension, which
# ships in coursekit (coursekit/student/labextension).
SOURCE_SUFFIXES = {".py", ".ipynb", ".md", ".toml", ".txt", ".json", ".cfg", ".html", ".css",
                   ".js", ".sh", ".c", ""}
# Binary package data the library ships (a model the course trained): not text, so only
# searched for the secret.
DATA_SUFFIXES = {".pt", ".npz"}
HIDDEN_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
HIDDEN_CALL = re.compile(r"grade\([^()\n]*hidden\s*=\s*True")
class BundleError(RuntimeError):
    """The bundle cannot be built, or the built one holds something students must not get."""


@dataclass
class Built:
    out: Path
    labs: list[str]
    revealed: list[str]
    stubbed: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    held_back: dict[str, list[str]] = field(default_factory=dict)  # lab: unrevealed labs it needs

    def summary(self) -> str:
        lines = [f"student bundle in {self.out}: {len(self.labs)} lab(s) "
                 f"({', '.join(self.labs)})",
                 f"  revealed (reference code included): {', '.join(self.revealed) or 'none'}",
                 f"  stubbed until revealed: {', '.join(self.stubbed) or 'nothing'}",
                 f"  visible checks answered from recorded expectations: "
                 f"{', '.join(self.recorded) or 'none'}",
                 *(f"  held back: {lab} (builds on {', '.join(needs)}, not revealed yet)"
                   for lab, needs in self.held_back.items()),
                 "  scanned: no solutions, hidden tests, secret or unrevealed references",
                 f"students run: cd {self.out.name} && make setup && make lab"]
        return "\n".join(lines)


# --------------------------------------------------------------------------- reveal

def set_reveal_date(course: Course, lab: Lab, day: date) -> None:
    """Write ``reveal_after = "<day>"`` into the lab's block of ``course/course.toml``."""
    path = course.course_dir / "course.toml"
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"(?m)^(?=\[\[lab\]\])", text)
    for i, block in enumerate(blocks):
        if re.search(rf'(?m)^id\s*=\s*"{re.escape(lab.id)}"\s*$', block):
            line = f'reveal_after = "{day.isoformat()}"'
            if re.search(r"(?m)^reveal_after\s*=.*$", block):
                block = re.sub(r"(?m)^reveal_after\s*=.*$", line, block)
            else:
                block = block.rstrip("\n") + "\n" + line + "\n" + ("\n" if i < len(blocks) - 1 else "")
            blocks[i] = block
            path.write_text("".join(blocks), encoding="utf-8")
            return
    raise BundleError(f"no [[lab]] block with id = {lab.id!r} in {path}")


# --------------------------------------------------------------------------- check programs

def _checks_module(course: Course, lab: Lab) -> Path:
    return course.root / "coursekit" / "grading" / "checks" / f"{lab.id.split('_')[0]}.py"


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_check(decorator: ast.AST) -> bool:
    return (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
            and decorator.func.id == "check")


def reference_definitions(source: str) -> dict[str, str]:
    """``{name: source}`` of the top-level definitions only the checks' ``reference=`` use:
    the reference functions, and helpers no program needs."""
    tree = ast.parse(source)
    defined = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = node

    def closure(roots: set[str]) -> set[str]:
        seen, todo = set(), list(roots)
        while todo:
            name = todo.pop()
            if name in seen or name not in defined:
                continue
            seen.add(name)
            todo += _names(defined[name]) - seen
        return seen

    def references(node: ast.AST) -> list[ast.AST]:
        return [kw.value for d in getattr(node, "decorator_list", []) if _is_check(d)
                for kw in d.keywords if kw.arg == "reference"]

    # Roots first: a reference function is usually defined above the check naming it.
    roots = {name for node in tree.body for ref in references(node) for name in _names(ref)}
    others: set[str] = set()
    for node in tree.body:
        refs = references(node)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in roots:
            continue
        body = ast.Module(body=[node], type_ignores=[])
        # Everything else a module statement touches, the reference= expressions aside.
        used = _names(body) - {n for ref in refs for n in _names(ref)}
        if not (isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign))
                and (getattr(node, "name", None) in roots)):
            others |= used - ({node.name} if hasattr(node, "name") else set())
    keep = closure({n for n in others if n not in roots})
    remove = closure(roots) - keep
    return {name: ast.get_source_segment(source, defined[name]) or "" for name in sorted(remove)}


def strip_references(source: str, expected_file: str) -> str:
    """The check program without its reference functions, registered with recorded
    expectations (:func:`autograder.publish.recorded.recorded_check`)."""
    tree = ast.parse(source)
    removed = set(reference_definitions(source))
    body = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in removed:
            continue
        if isinstance(node, ast.Assign) and all(getattr(t, "id", None) in removed
                                                for t in node.targets):
            continue
        for decorator in getattr(node, "decorator_list", []):
            if _is_check(decorator):
                decorator.func = ast.Name("_recorded_check", ast.Load())
                decorator.keywords = [kw for kw in decorator.keywords if kw.arg != "reference"]
                decorator.keywords.append(ast.keyword("expected_file", ast.parse(
                    f"_Path(__file__).with_name({expected_file!r})", mode="eval").body))
        body.append(node)
    header = ast.parse("from pathlib import Path as _Path\n"
                       "from coursekit._recorded import recorded_check as _recorded_check\n").body
    # After the docstring and `from __future__` imports, which must come first.
    first = 0
    while first < len(body) and (
            (first == 0 and isinstance(body[0], ast.Expr)
             and isinstance(getattr(body[0], "value", None), ast.Constant))
            or (isinstance(body[first], ast.ImportFrom) and body[first].module == "__future__")):
        first += 1
    tree.body = body[:first] + header + body[first:]
    note = ("# Student build: generated by `coursekit bundle` from the grader's check program.\n"
            "# The reference implementations are left out until the lab is revealed; the\n"
            "# visible checks compare with their recorded results on the visible inputs.\n")
    return note + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _record_lab(course: Course, lab: Lab, source: str) -> dict:
    from autograder.publish.recorded import record
    from coursekit.grading.program import _REGISTRY, get_check
    course.enable_checks()
    names = re.findall(r'@check\(\s*"([^"]+)"', source)
    for name in names:
        get_check(name)
    return {name: record(name) for name in names if name in _REGISTRY}


# --------------------------------------------------------------------------- stubs

def _stub_module(module: str, lab: Lab) -> str:
    when = _when(lab)
    return (f'"""{module}: the reference answer of {lab.id}, left out of the student build '
            f'{when}."""\n'
            f"from coursekit._unrevealed import NotRevealedError, module_getattr\n\n"
            f"__getattr__ = module_getattr({module!r}, {lab.id!r}, {when!r})\n")


def _module_name(path: Path, package_root: Path) -> str:
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _when(lab: Lab) -> str:
    return (f"until {lab.reveal_after.isoformat()}" if lab.reveal_after
            else "until your instructor reveals it")


def _stub_tree(target: Path, package_root: Path, lab: Lab) -> list[str]:
    """Replace every module under ``target`` (a folder or one file) by a stub."""
    files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
    for path in files:
        path.write_text(_stub_module(_module_name(path, package_root), lab), encoding="utf-8")
    return [str(target.relative_to(package_root.parent))]


def top_level_definition(source: str, name: str) -> ast.AST | None:
    """The top-level ``def`` or ``class`` called ``name`` in ``source``."""
    return next((node for node in ast.parse(source).body
                 if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name), None)


def _stub_definition(path: Path, name: str, package_root: Path, lab: Lab) -> list[str]:
    """Replace one top-level definition of the module ``path`` by a stand-in; the module's
    other code (what the labs use as given) stays."""
    source = path.read_text(encoding="utf-8")
    node = top_level_definition(source, name)
    if node is None:
        raise BundleError(f"{lab.id}: reveals {path.name}:{name}, but {path} defines no "
                          f"top-level {name}")
    lines = source.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    qualified = f"{_module_name(path, package_root)}.{name}"
    stand_in = (f"from coursekit._unrevealed import stand_in as _stand_in\n"
                f"{name} = _stand_in({qualified!r}, {lab.id!r}, {_when(lab)!r})\n")
    path.write_text("".join(lines[:first]) + stand_in + "".join(lines[node.end_lineno:]),
                    encoding="utf-8")
    return [f"{path.relative_to(package_root.parent)}:{name}"]


# --------------------------------------------------------------------------- build

def _ignore(directory: str, names: list[str]) -> set[str]:
    """Build products: bytecode, and the monitor's fast paths compiled in place by an editable
    install (the student build installs without them)."""
    return {n for n in names if n in ("__pycache__", ".ipynb_checkpoints")
            or n.endswith((".pyc", ".so"))}


def _manifest_text(course: Course, labs: list[Lab]) -> str:
    extra = course.extra
    lines = ["# The labs of this course (coursekit validate reads their limits).", "",
             "[course]", f"name = {json.dumps(course.name)}"]
    for key in ("default_cell_timeout_s", "default_time_limit_s", "default_memory_mb"):
        if key in extra:
            lines.append(f"{key} = {extra[key]}")
    for lab in labs:
        lines += ["", "[[lab]]", f"id = {json.dumps(lab.id)}", f"title = {json.dumps(lab.title)}",
                  f"points = {lab.points:g}", f"cell_timeout_s = {lab.cell_timeout_s:g}",
                  f"time_limit_s = {lab.time_limit_s:g}", f"memory_mb = {lab.memory_mb}"]
        if lab.reveal_after:
            lines.append(f'reveal_after = "{lab.reveal_after.isoformat()}"')
    return "\n".join(lines) + "\n"


def build_bundle(course: Course, out: Path, *, labs: list[Lab] | None = None,
                 today: date | None = None) -> Built:
    """Write the student distribution to ``out`` (see the module docstring)."""
    today = today or date.today()
    labs = labs or list(course.labs)
    out = Path(out).resolve()
    if out.exists():
        if not (out / "course" / "course.toml").exists() or (out / "solutions").exists():
            raise BundleError(f"{out} exists and is not an earlier student bundle: "
                              f"give an empty or new folder")
        shutil.rmtree(out)
    missing = [lab.id for lab in labs if not course.release_notebook(lab).exists()]
    if missing:
        raise BundleError(f"no release of {', '.join(missing)}: run `coursekit release` first")
    out.mkdir(parents=True)
    revealed = [lab for lab in course.labs if lab.revealed(today)]
    open_ids = {lab.id for lab in revealed}
    held_back = {lab.id: [need for need in lab.builds_on if need not in open_ids]
                 for lab in labs}
    held_back = {lab: needs for lab, needs in held_back.items() if needs}
    labs = [lab for lab in labs if lab.id not in held_back]
    built = Built(out, [lab.id for lab in labs], [lab.id for lab in revealed],
                  held_back=held_back)

    for lab in labs:
        shutil.copytree(course.release_dir / lab.id, out / "notebooks" / lab.id, ignore=_ignore)
    package = out / "coursekit"
    shutil.copytree(course.root / "coursekit", package, ignore=_ignore)
    shutil.copy(Path(__file__).with_name("unrevealed.py"), package / "_unrevealed.py")
    shutil.copy(Path(__file__).with_name("recorded.py"), package / "_recorded.py")

    for lab in course.labs:
        if lab in revealed:
            continue
        for entry in lab.reveals:
            path, name = reveal_entry(entry)
            target = out / path
            if not target.exists():
                continue
            built.stubbed += (_stub_tree(target, package, lab) if name is None
                              else _stub_definition(target, name, package, lab))
        checks = _checks_module(course, lab)
        if checks.exists():
            source = checks.read_text(encoding="utf-8")
            expected = f"{checks.stem}.expected.json"
            (package / "grading" / "checks" / checks.name).write_text(
                strip_references(source, expected), encoding="utf-8")
            (package / "grading" / "checks" / expected).write_text(
                json.dumps(_record_lab(course, lab, source)), encoding="utf-8")
            built.recorded.append(lab.id)

    (out / "course").mkdir()
    (out / "course" / "course.toml").write_text(_manifest_text(course, labs), encoding="utf-8")
    shutil.copytree(course.course_dir / "student", out / "course" / "student", ignore=_ignore)
    _write_project_files(course, out, labs, revealed, held_back)
    hits = scan(out, course, today)
    if hits:
        raise BundleError("the student bundle would leak:\n  " + "\n  ".join(hits[:20]))
    return built


def _write_project_files(course: Course, out: Path, labs: list[Lab], revealed: list[Lab],
                         held_back: dict[str, list[str]]) -> None:
    import tomllib
    project = tomllib.loads((course.root / "pyproject.toml").read_text(encoding="utf-8"))
    deps = [d for d in project["project"]["dependencies"] if not d.startswith(("nbval",))]
    (out / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "coursekit"\nversion = "0.1.0"\n'
        'description = "Deep Learning Software: the student build of coursekit"\n'
        'requires-python = ">=3.10"\n'
        f"dependencies = {json.dumps(deps, indent=4)}\n\n"
        '[project.scripts]\ncoursekit = "coursekit.cli:main"\n\n'
        '[tool.setuptools.packages.find]\ninclude = ["coursekit*"]\n\n'
        '[tool.setuptools.package-data]\n"*" = ["*.json", "*.toml", "*.html", "*.css", "*.pt", '
        '"*.npz", "*.js"]\n', encoding="utf-8")
    (out / "Makefile").write_text(
        "# make setup: a virtual environment with coursekit and everything the labs use\n"
        "# make lab:   copy released labs into work/ (never over your edits), open JupyterLab there\n"
        "PYTHON ?= python3\n\n.PHONY: setup lab\n\n"
        "setup:\n\t$(PYTHON) -m venv .venv\n\t.venv/bin/python -m pip install --upgrade pip\n"
        "\t.venv/bin/python -m pip install -e .\n\t.venv/bin/coursekit doctor || true\n\n"
        "lab:\n\t.venv/bin/coursekit fetch --all\n"
        "\tJUPYTER_CONFIG_PATH=$(CURDIR)/course/student .venv/bin/jupyter lab work/\n",
        encoding="utf-8")
    # work/ is the students' own (coursekit fetch): a class repository must never track it.
    (out / ".gitignore").write_text("/work/\n.venv/\n__pycache__/\n*.egg-info/\n"
                                    ".ipynb_checkpoints/\n", encoding="utf-8")
    rows = "\n".join(f"| `{lab.id}` | {lab.title} | {lab.points:g} | "
                     f"{'yes' if lab in revealed else (lab.reveal_after.isoformat() if lab.reveal_after else 'later')} |"
                     for lab in labs)
    rows += "".join(f"\n| `{lab}` | arrives once {', '.join(needs)} is revealed: it builds on "
                    f"that lab's answer | | |" for lab, needs in held_back.items())
    (out / "README.md").write_text(f"""# {course.name} — the labs

Set up once (Linux, or macOS on Apple silicon; Python ≥ 3.10), then open the labs:

```bash
make setup    # .venv with coursekit, PyTorch, JupyterLab ...; ends with `coursekit doctor`
make lab      # copies new labs into work/, then JupyterLab on work/
```

While you work (after `source .venv/bin/activate`):

```bash
coursekit doctor                                   # is this machine ready for the course?
coursekit fetch lab01_graphs                       # copy a lab into work/ (make lab does it)
coursekit validate work/lab01_graphs/lab01_graphs.ipynb   # the visible checks, as graded
```

`validate` runs your notebook like the grader and lists every visible check with its points;
hidden checks run the same programs on other inputs when you are graded.

**Where you work.** `notebooks/` holds the labs as released; work in your copy under `work/`
(git ignores it), never in `notebooks/`. When a lab is released again, `git pull` (or the new
build) updates `notebooks/`, and `make lab` (or `coursekit fetch --all`) brings the new
version into `work/` without touching what you changed: a file you edited stays as it is,
and the new release goes beside it, in `work/<lab>.release-<day>/`, with a message that says
what to do.

| lab | what it is about | points | reference code readable |
| --- | --- | --- | --- |
{rows}

**Reference code.** `coursekit` holds the course's own autograd engine, `nn`, `optim` and
`data`, written to be read next to PyTorch. Parts of it are the answers of labs: each arrives
in this build once its lab is revealed (the last column). Until then its names exist but raise
`NotRevealedError`, saying when it comes. A lab that builds on an earlier lab's answer (lab03's
coursekit Function runs on lab02's engine) arrives in this build once that earlier lab is
revealed; get the updated build from your instructor then. Visible checks of labs not yet revealed compare
with the reference's recorded results on the visible inputs.

**Your own work.** Hand-ins are compared with each other and with the reference code; answers
that match are shown to a TA.
""", encoding="utf-8")


# --------------------------------------------------------------------------- scan

def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# Solution blocks shorter than this are not searched for: one-liners (``return numel``) also
# occur in given code and in the checks' programs.
MIN_SOLUTION_TEXT = 40


def _revealed_text(course: Course, lab: Lab) -> str:
    """The lab's reference sources as students of a revealed lab read them (normalised)."""
    paths = [_checks_module(course, lab)]
    for entry in lab.reveals:
        target = course.root / reveal_entry(entry)[0]
        paths += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    return "\n".join(_normal(p.read_text(encoding="utf-8")) for p in paths if p.is_file())


def forbidden_texts(course: Course, today: date) -> dict[str, str]:
    """``{what: text}`` that must appear in no file of a student bundle."""
    found: dict[str, str] = {}
    secret = course.course_dir / ".secret"
    if secret.exists() and secret.read_text().strip():
        found["the course secret"] = secret.read_text().strip()
    for lab in course.labs:
        notebook = course.source_notebook(lab)
        # A revealed lab's reference code may hold a line of its solution: that is readable now.
        readable = _revealed_text(course, lab) if lab.revealed(today) else ""
        if notebook.exists():
            from coursekit.notebook import cells as lab_cells
            blocks = [block for cell in lab_cells.read_notebook(notebook).cells
                      for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION",
                                              cell.source, flags=re.S)]
            for n, block in enumerate(blocks):
                text = _normal(block)
                if len(text) >= MIN_SOLUTION_TEXT and text not in readable:
                    found[f"solution text of {lab.id} ({n})"] = text
        if lab.revealed(today):
            continue
        checks = _checks_module(course, lab)
        if checks.exists():
            for name, text in reference_definitions(checks.read_text(encoding="utf-8")).items():
                if len(_normal(text)) >= 60:
                    found[f"reference {name} of {lab.id}"] = _normal(text)
        for entry in lab.reveals:
            relative, name = reveal_entry(entry)
            target = course.root / relative
            for path in (sorted(target.rglob("*.py")) if target.is_dir() else [target]):
                source = path.read_text(encoding="utf-8")
                for node in ast.parse(source).body:
                    if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (
                            name is None or node.name == name):
                        text = _normal(ast.get_source_segment(source, node) or "")
                        if len(text) >= 60:
                            found[f"reference {entry}:{node.name} of {lab.id}"] = text
    return found


# A solution region is in a file of the build when this share of its fingerprints is there.
# Measured on this course (every solution region against every library file): the reference
# answers a lab's check program holds share 0.53 to 1.00 with their regions, lab10's
# model-parallel step 0.66 with coursekit/distributed; unrelated library code 0.40 at most.
ANSWER_SHARE = 0.5


def answer_fingerprints(course: Course, today: date) -> dict[str, object]:
    """``{what: fingerprint}`` of each solution region of every lab not yet revealed, as
    :mod:`.similarity` fingerprints answers (names, layout and comments do not count; the
    release's own code is left out): the content the build must not hold, whatever any lab
    declares."""
    from autograder.publish.similarity import MIN_TOKENS, _fingerprint, release_base
    from coursekit.notebook.cells import read_notebook
    found = {}
    for lab in course.labs:
        notebook = course.source_notebook(lab)
        if lab.revealed(today) or not notebook.exists() or not course.release_notebook(lab).exists():
            continue
        base = release_base(course, lab)
        blocks = [block for cell in read_notebook(notebook).cells if cell.cell_type == "code"
                  for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION",
                                          cell.source, flags=re.S)]
        for n, block in enumerate(blocks):
            print_ = _fingerprint(block, base)
            if print_.token_coverage >= MIN_TOKENS and print_.hashes:
                found[f"the answer of {lab.id} ({n}), by content"] = print_
    return found


def _code_of(path: Path, text: str) -> str:
    """The Python code a build file holds: a module's text, a notebook's code cells."""
    if path.suffix != ".ipynb":
        return text
    try:
        return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                            for c in json.loads(text)["cells"] if c.get("cell_type") == "code")
    except (ValueError, KeyError, TypeError):
        return text


def scan(out: Path, course: Course, today: date) -> list[str]:
    """Every leak in the built bundle: ``"<file>: <what>"`` (empty when clean)."""
    import numpy as np

    from autograder.publish.similarity import _fingerprint
    forbidden = forbidden_texts(course, today)
    answers = answer_fingerprints(course, today)
    hits = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = path.relative_to(out).as_posix()
        if path.suffix in DATA_SUFFIXES:
            secret = forbidden.get("the course secret")
            if secret and secret.encode() in path.read_bytes():
                hits.append(f"{name}: the course secret")
            continue
        if path.suffix not in SOURCE_SUFFIXES:
            hits.append(f"{name}: a file that cannot be scanned ({path.suffix})")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            try:
                text = "\n".join("".join(c["source"]) if isinstance(c["source"], list)
                                 else c["source"] for c in json.loads(text)["cells"])
            except (ValueError, KeyError, TypeError):
                pass
        hits += [f"{name}: hidden-test marker {m!r}" for m in HIDDEN_MARKERS if m in text]
        hits += [f"{name}: hidden grade call {m.group(0)!r}" for m in HIDDEN_CALL.finditer(text)]
        normal = _normal(text)
        hits += [f"{name}: {what}" for what, needle in forbidden.items() if needle in normal]
        if path.suffix in (".py", ".ipynb") and answers:
            held = _fingerprint(_code_of(path, text), np.array([], dtype=np.int64)).hashes
            for what, answer in answers.items():
                share = len(answer.hashes & held) / len(answer.hashes)
                if share >= ANSWER_SHARE:
                    hits.append(f"{name}: {what} ({share:.0%} of its fingerprints)")
    if (out / "solutions").exists() or (out / "course" / "gradebook.db").exists():
        hits.append("solutions/ or the gradebook was copied")
    return hits
