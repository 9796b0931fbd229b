"""No hand-in stops the class or loses a grade: hypothesis corrupts notebooks, JSON and zips.

Hypothesis starts from an honest notebook of the fixture lab and corrupts it: nbformat fields
of the wrong type or missing, cells that are not cells, keys of the wrong type, mangled
metadata (nbgrader's included), huge strings, odd Unicode (lone surrogates, NULs, control
characters, BOMs); then the JSON text (truncated, deeply nested, invalid UTF-8); then the
zip it may travel in (unknown compression methods, truncation, a moderate zip bomb, folders
nested deep, odd member names). Each example goes through every step that runs in the
grading process without a kernel — collect, assemble, writing the graded notebook, scoring,
recording into a real SQLite gradebook, the feedback page and the exports — next to an honest
classmate, while another student's grade is already stored. It must come out as an outcome
with a reason a TA can read, the classmate must be collected as usual, and the stored grade
must stay as it was. The last test grades a small class for real, kernels and all.
"""
from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from autograder.demo import demo_class
from autograder.isolation.sandbox import probe
from autograder.pipeline import collect
from autograder.pipeline import gradebook as gb
from autograder.pipeline.grader import Grader, prepare_lab
from autograder.pipeline.collect import SubmissionStatus
from autograder.publish import export, feedback
from coursekit.grading.seeds import public_seed
from coursekit.notebook.assemble import assemble
from coursekit.notebook.score import score_notebook

FUZZ_SETTINGS = settings(max_examples=120, deadline=None,
                         suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                HealthCheck.too_slow,
                                                HealthCheck.data_too_large,
                                                HealthCheck.large_base_example])
BOMB_LIMIT = 2 * 2**20   # the fuzz's zip bombs are moderate: over this, not over 512 MB
ODD = ["\ud800", "\udfff", "\udcff", "\ud83d", "\x00", "\x07", "\x1b[31m", "\x7f", "\x85",
       "\u2028", "\ufeff", "\u202e", "\U0001f600", "\r", "é", "\ufffd", "</pre><script>"]


def _seed(check: str, hidden: bool) -> int:
    return public_seed(check)


# --------------------------------------------------------------------------- the setting

@dataclasses.dataclass
class Setting:
    course: object
    demo: demo_class.DemoLab
    context: object
    grader: Grader
    gradebook: object
    honest: bytes
    bystander: gb.StoredOutcome
    scratch: Path

    def _repr_pretty_(self, printer, cycle):
        printer.text("Setting(...)")  # a failing example prints the hand-in, not the course


@pytest.fixture
def setting(fixture_course, tmp_path, monkeypatch):
    """One course, one gradebook with a stored grade (``zed``), shared by a test's examples."""
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    context = prepare_lab(course, lab)
    gradebook = gb.open_gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}")
    gb.register_lab(gradebook, lab, context.source)
    gb.record(gradebook, _full_marks(context, "zed"))
    (bystander,) = gb.load_outcomes(gradebook, students=["zed"])
    grader = Grader(course, probe(course, disabled=True))
    monkeypatch.setattr(collect, "MAX_UNPACKED_BYTES", BOMB_LIMIT)
    yield Setting(course, demo, context, grader, gradebook,
                  nbformat.writes(demo.notebook()).encode(), bystander, tmp_path / "scratch")
    gradebook.close()


def _full_marks(context, student: str) -> gb.Outcome:
    cells = score_notebook(context.source, None, None, seed_of=_seed, zero_reason="-")
    cells = [dataclasses.replace(c, score=None if c.score is None else c.max_score,
                                 checks=[dataclasses.replace(k, score=k.max_score,
                                                             message="all cases passed")
                                         for k in c.checks]) for c in cells]
    return gb.Outcome(student, context.lab.id, "graded", context.source.max_score,
                      context.source.auto_max_score, cells, ["graded before the fuzz"],
                      sandbox="bubblewrap (fuzz)")


def grade_in_process(s: Setting, sub: collect.Submission) -> gb.Outcome:
    """What the grader does with one submission, minus the kernel: a found notebook is
    assembled, written as the graded notebook would be, and scored as not run; any other
    submission goes through :meth:`Grader.grade` itself (it starts no kernel for those)."""
    if sub.status != SubmissionStatus.FOUND:
        return asyncio.run(s.grader.grade(sub, s.context))
    assembled = assemble(s.context.source, s.context.release, sub.nb)
    nbformat.writes(assembled.nb).encode("utf-8")  # the graded notebook can be written
    assembled.student_code(s.context.release_sources)
    assembled.exploration_cells(s.context.release_ids)
    return gb.Outcome(sub.student, sub.lab, "graded", s.context.source.max_score,
                      s.context.source.auto_max_score,
                      cells=tuple(score_notebook(s.context.source, assembled, None,
                                                 seed_of=_seed, zero_reason="not run: the "
                                                 "fuzz test starts no kernel")),
                      reasons=(*sub.notes, *assembled.notes), sandbox="none (fuzz)")


def check_class(s: Setting, classdir: Path) -> None:
    """Collect ``classdir`` (the fuzzed hand-in next to honest ``ann``), grade and record
    each submission, and check what the gradebook, feedback and exports hold."""
    lab = s.context.lab
    submissions = collect.collect(s.course, [lab], {lab.id: s.context.identifying_ids},
                                  classdir)
    by_student = {sub.student: sub for sub in submissions}
    assert by_student["ann"].status == SubmissionStatus.FOUND, by_student["ann"].notes
    for sub in submissions:
        # "error" would be collect's catch-all: a shape it does not check for yet.
        assert sub.status in (SubmissionStatus.FOUND, SubmissionStatus.MISSING, SubmissionStatus.CORRUPT), sub.notes
        if sub.status != SubmissionStatus.FOUND:
            assert sub.notes and sub.notes[0].strip()
        if sub.student != "ann":
            event(f"{sub.status}: " + " ".join(
                (sub.notes[0] if sub.notes else "").split(": ")[1:2])[:40])
        gb.record(s.gradebook, grade_in_process(s, sub))
    for stored in gb.load_outcomes(s.gradebook, students=list(by_student)):
        assert stored.status in ("graded", SubmissionStatus.MISSING, SubmissionStatus.CORRUPT)
        if stored.status != "graded":
            reason = stored.reasons[0]
            assert reason and len(reason) <= gb.REASON_CHARS and "Traceback" not in reason
            assert all(c.score == 0 for c in stored.checks if c.kind == "checks")
        for text in [*stored.reasons, *(c.message for c in stored.checks)]:
            text.encode("utf-8")   # strict: what was stored is encodable
        feedback.render(stored, "fuzz").encode("utf-8")
        json.dumps(export.results_json(stored), ensure_ascii=False).encode("utf-8")
        for row in export.csv_rows([stored]):
            for value in row.values():
                value.encode("utf-8")
    (bystander,) = gb.load_outcomes(s.gradebook, students=["zed"])
    assert bystander == s.bystander


# --------------------------------------------------------------------------- strategies

odd_text = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(ODD)), max_size=5).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | odd_text,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(odd_text, children, max_size=3),
    max_leaves=8)
DEEP = "@@deep@@"   # replaced in the JSON text: the test's own json.dumps could not nest it


def _cell_index(draw, nb) -> int | None:
    cells = nb.get("cells")
    if not isinstance(cells, list) or not cells:
        return None
    return draw(st.integers(0, len(cells) - 1))


def _set_or_delete(draw, container: dict, key: str) -> None:
    if draw(st.booleans()):
        container.pop(key, None)
    else:
        container[key] = draw(json_values)


def _top_field(draw, nb):
    _set_or_delete(draw, nb, draw(st.sampled_from(["nbformat", "nbformat_minor", "cells",
                                                   "metadata"])))


def _cell_field(draw, nb):
    index = _cell_index(draw, nb)
    if index is not None and isinstance(nb["cells"][index], dict):
        _set_or_delete(draw, nb["cells"][index], draw(st.sampled_from(
            ["cell_type", "source", "metadata", "id", "outputs", "execution_count",
             "attachments"])))


def _cell_replaced(draw, nb):
    index = _cell_index(draw, nb)
    if index is not None:
        nb["cells"][index] = draw(json_values)


def _metadata_mangled(draw, nb):
    index = _cell_index(draw, nb)
    target = nb.get("metadata") if index is None else nb["cells"][index]
    if not isinstance(target, dict):
        return
    meta = target.get("metadata") if index is not None else target
    if not isinstance(meta, dict):
        return
    key = draw(st.sampled_from(["nbgrader", "tags", "execution", "jupyter", "kernelspec",
                                "language_info", "widgets", "trusted"]))
    if key == "nbgrader" and draw(st.booleans()):
        ids = sorted(collect.lab_cells.nbgrader_meta(c).get("grade_id") or "x"
                     for c in nb["cells"] if isinstance(c, dict)) or ["x"]
        meta[key] = {"grade_id": draw(st.sampled_from(ids) | json_values),
                     "grade": draw(json_values), "solution": draw(json_values),
                     "locked": draw(json_values), "points": draw(json_values)}
    else:
        meta[key] = draw(json_values)


def _huge(draw, nb):
    index = _cell_index(draw, nb)
    size = draw(st.sampled_from([10**4, 10**5, 10**6]))
    piece = draw(st.sampled_from(["x", "é", "\ud800", "\x00", "[", "{\"a\": "]))
    if index is not None and isinstance(nb["cells"][index], dict):
        nb["cells"][index]["source"] = piece * size
    else:
        nb["huge"] = piece * size


def _odd_unicode(draw, nb):
    index = _cell_index(draw, nb)
    if index is None or not isinstance(nb["cells"][index], dict):
        return
    cell = nb["cells"][index]
    key = draw(st.sampled_from(["source", "id", "cell_type"]))
    text = draw(odd_text)
    if key == "source" and isinstance(cell.get("source"), str):
        cell["source"] += text
    else:
        cell[key] = text
    meta = cell.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("nbgrader"), dict) and draw(st.booleans()):
        meta["nbgrader"]["grade_id"] = str(meta["nbgrader"].get("grade_id")) + text


def _deep(draw, nb):
    index = _cell_index(draw, nb)
    target = nb
    if index is not None and isinstance(nb["cells"][index], dict):
        target = nb["cells"][index]
        if isinstance(target.get("metadata"), dict):
            target = target["metadata"]
    target["deep"] = DEEP


def _cells_moved(draw, nb):
    cells = nb.get("cells")
    if isinstance(cells, list) and cells:
        index = draw(st.integers(0, len(cells) - 1))
        if draw(st.booleans()):
            cells.insert(draw(st.integers(0, len(cells))), json.loads(json.dumps(cells[index])))
        else:
            del cells[index]


def _old_format(draw, nb):
    nb["nbformat"] = draw(st.sampled_from([1, 2, 3, 5, 0, -1]))
    if draw(st.booleans()):
        nb["worksheets"] = [{"cells": nb.pop("cells", [])}]


# Mutations a notebook survives (it is still read and graded) weigh more: they reach assemble.
MUTATIONS = [_top_field, _cell_field, _cell_replaced, _deep, _old_format] + 3 * [
    _metadata_mangled, _huge, _odd_unicode, _cells_moved]


@st.composite
def notebook_bytes(draw, honest: bytes) -> bytes:
    """An honest notebook, corrupted as a structure, then as JSON text, then as bytes."""
    nb = json.loads(honest)
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=4)):
        mutation(draw, nb)
    ascii_only = draw(st.booleans())
    text = json.dumps(nb, ensure_ascii=ascii_only)
    depth = draw(st.sampled_from([10, 63, 64, 65, 200, 999, 1000, 5000, 100_000]))
    text = text.replace(f'"{DEEP}"', "[" * depth + "]" * depth)
    data = text.encode("utf-8", "surrogatepass")  # lone surrogates raw: not UTF-8
    corruption = draw(st.sampled_from(["none"] * 8 + ["truncated", "bytes", "bom", "nested",
                                                      "empty"]))
    if corruption == "truncated":
        data = data[:draw(st.integers(0, max(len(data) - 1, 0)))]
    elif corruption == "bytes":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    elif corruption == "bom":
        data = b"\xef\xbb\xbf" + data
    elif corruption == "nested":
        depth = draw(st.integers(1, 200_000))
        data = b"[" * depth + b"]" * draw(st.sampled_from([depth, 0, depth // 2]))
    elif corruption == "empty":
        data = b""
    return data


file_names = st.one_of(
    st.sampled_from(["labfx.ipynb", "labfx (1).ipynb", "Copy of labfx.ipynb", "x.ipynb",
                     "notes.txt"]),
    st.binary(min_size=1, max_size=40).map(
        lambda b: b.replace(b"/", b"_").replace(b"\x00", b"_") + b".ipynb"))
member_names = st.one_of(
    st.sampled_from(["labfx.ipynb", "sub/labfx.ipynb", "../labfx.ipynb", "/abs/labfx.ipynb",
                     "a\\b\\labfx.ipynb", "./labfx.ipynb", "labfx.ipynb/", "x" * 300 + ".ipynb",
                     "__MACOSX/labfx.ipynb", ".ipynb_checkpoints/labfx.ipynb"]),
    st.integers(1, 60).map(lambda n: "d/" * n + "labfx.ipynb"),
    # zipfile cuts a name at its first NUL: none here, or the test could not write the zip
    st.text(min_size=1, max_size=30).map(lambda t: t.replace("\x00", "") + ".ipynb"))
methods = st.sampled_from([1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 15, 16, 17, 18, 19, 95, 96, 97,
                           98, 99, 65535])


def _set_method(data: bytes, method: int, every: bool) -> bytes:
    """Rewrite the compression method in central directory headers (what zipfile reads)."""
    data = bytearray(data)
    at = data.find(b"PK\x01\x02")
    while at != -1:
        data[at + 10:at + 12] = method.to_bytes(2, "little")
        if not every:
            break
        at = data.find(b"PK\x01\x02", at + 4)
    return bytes(data)


@st.composite
def zip_bytes(draw, notebook: bytes) -> bytes:
    buffer = io.BytesIO()
    compression = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED,
                                        zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]))
    with zipfile.ZipFile(buffer, "w", compression) as zf:
        zf.writestr(draw(member_names), notebook)
        for name in draw(st.lists(member_names | st.sampled_from(["data.csv", "d/", "d"]),
                                  max_size=3)):
            zf.writestr(name, draw(st.binary(max_size=64)))
        if draw(st.integers(0, 9)) == 0:  # a moderate bomb: zeros that compress 1000:1
            zf.writestr(zipfile.ZipInfo("bomb.bin"), b"\0" * draw(st.sampled_from(
                [BOMB_LIMIT - 4096, BOMB_LIMIT + 1, 3 * BOMB_LIMIT])),
                compress_type=zipfile.ZIP_DEFLATED)
    data = buffer.getvalue()
    corruption = draw(st.sampled_from(["none", "none", "method", "method-all", "truncated",
                                       "flipped"]))
    if corruption.startswith("method"):
        data = _set_method(data, draw(methods), every=corruption == "method-all")
    elif corruption == "truncated":
        data = data[:draw(st.integers(0, len(data)))]
    elif corruption == "flipped":
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, len(data) - 1))
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    return data


# --------------------------------------------------------------------------- the fuzz tests

def _class_folder(s: Setting) -> Path:
    s.scratch.mkdir(exist_ok=True)
    classdir = Path(tempfile.mkdtemp(dir=s.scratch))
    (classdir / "ann").mkdir()
    (classdir / "ann" / "labfx.ipynb").write_bytes(s.honest)
    return classdir


@FUZZ_SETTINGS
@given(data=st.data())
def test_no_corrupted_notebook_stops_the_class_or_loses_a_grade(setting, data):
    s = setting
    notebook = data.draw(notebook_bytes(s.honest), label="notebook")
    classdir = _class_folder(s)
    try:
        folder = classdir / "sam" / data.draw(st.sampled_from(["", "labfx", "a/b/c"]))
        folder.mkdir(parents=True, exist_ok=True)
        name = data.draw(file_names, label="file name")
        (folder / os.fsdecode(name) if isinstance(name, bytes) else folder / name).write_bytes(
            notebook)
        check_class(s, classdir)
    finally:
        shutil.rmtree(classdir)


@FUZZ_SETTINGS
@given(data=st.data())
def test_no_corrupted_zip_stops_the_class_or_loses_a_grade(setting, data):
    s = setting
    notebook = data.draw(st.one_of(st.just(s.honest), notebook_bytes(s.honest)),
                         label="notebook")
    archive = data.draw(zip_bytes(notebook), label="zip")
    classdir = _class_folder(s)
    try:
        (classdir / "sam.zip").write_bytes(archive)
        check_class(s, classdir)
    finally:
        shutil.rmtree(classdir)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(student=st.sampled_from(["sam", "zoe"]), reasons=st.lists(odd_text, max_size=3),
       message=odd_text, huge=st.sampled_from([0, 10**5]), sandbox=odd_text, file=odd_text)
def test_any_text_is_stored_printable_and_shown_safely(setting, student, reasons, message,
                                                       huge, sandbox, file):
    s = setting
    outcome = _full_marks(s.context, student)
    outcome = dataclasses.replace(outcome, reasons=tuple(reasons) + (("\ud800" * huge,)
                                                                    if huge else ()),
                                  sandbox=sandbox, notebook_file=file)
    outcome.cells[0].checks[0].message = message + "\x00" * huge
    gb.record(s.gradebook, outcome)
    (stored,) = gb.load_outcomes(s.gradebook, students=[student])
    assert len(stored.reasons) == len(outcome.reasons)
    for text in [*stored.reasons, stored.sandbox, stored.notebook_file,
                 *(c.message for c in stored.checks)]:
        text.encode("utf-8")
        assert "\x00" not in text and not any("\ud800" <= ch <= "\udfff" for ch in text)
    page = feedback.render(stored, "fuzz")
    page.encode("utf-8")
    assert "<script>" not in page
    json.dumps(export.results_json(stored), ensure_ascii=False).encode("utf-8")
    (bystander,) = gb.load_outcomes(s.gradebook, students=["zed"])
    assert bystander == s.bystander
