"""Similarity: answers that match a classmate's or the reference code, flagged for a TA.

For one lab, every student's answer cells (found as grading finds them: :mod:`.collect`,
:mod:`.cells`) are rewritten in one layout (:func:`canonical`: a reformatter's parentheses,
quotes and line breaks vanish) and fingerprinted with ``copydetect``, which tokenizes the code
(names become one token, comments vanish) and keeps a winnowed sample of its k-gram hashes, as
MOSS does. So renamed variables, reordered functions, new comments and reformatted code keep
their fingerprints. Code the release itself holds (stubs, docstrings, given helpers) is base
code: its k-grams are removed before anything is compared.

Each exercise (answer cell) is compared separately, student with student and student with each
reference source (the labs' ``reveals`` and the check programs). A pair's similarity is the
share of the smaller answer's fingerprints found in the other; a pair is flagged
when it reaches ``threshold`` (``reference_threshold`` against a reference) on an exercise
whose smaller answer has at least ``min_tokens`` tokens of its own, since a few lines that
everyone writes alike prove nothing. Flags go to the gradebook for a TA
(:func:`autograder.pipeline.gradebook.record_similarity`); scores are never changed here.

A pair's similarity is MOSS's measure: the share of the smaller answer's fingerprints that the
other holds. A sparse product of the fingerprint sets counts it for every pair at once, so a
class of 200 takes seconds; copydetect locates the matched code only for the pairs the
report shows.

The k-gram hashes are ours, not copydetect's. copydetect hashes each k-gram with Python's
built-in ``hash()``, which is salted per process (``PYTHONHASHSEED``): winnowing keeps the
smallest hash of each window, so a different salt keeps different k-grams and a pair's score
moved by a few points from one run to the next, flipping pairs near a threshold. Here every
k-gram gets a Karp-Rabin hash (the rolling hash of the winnowing paper) computed the same way
in every process: two polynomial hashes modulo primes below 2**31, joined into one 62-bit
value, for all k-grams of a document at once with numpy. copydetect still tokenizes and
filters the code (:func:`copydetect.utils.filter_code`), winnows the hashes
(:func:`copydetect.utils.winnow`), counts token coverage and locates matched code for the
report (:func:`copydetect.compare_files` reads :class:`Fingerprint` like its own
``CodeFingerprint``). Base code is removed wherever it occurs in the winnowed list.
"""
from __future__ import annotations

import ast
import html
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograder.pipeline.collect import SubmissionStatus, collect
from coursekit.course import Course, Lab, reveal_entry
from coursekit.notebook import cells as lab_cells
from coursekit.notebook.cells import ANSWER

K = 25                # tokens per k-gram (copydetect's default noise threshold)
WINDOW = 6            # winnowing window: any match of K + WINDOW - 1 tokens is always seen
# Share of the smaller answer's fingerprints found in a classmate's. Measured on the planted
# classes (tests/autograder/test_similarity.py): independent honest answers reach 0.40 at most
# (one-liners everybody writes alike), disguised copies 0.63 at least, short reordered
# one-liner functions (lab00 roofline, 0.43) aside: they are as alike as honest ones.
THRESHOLD = 0.5
# Against the reference a higher bar: an honest answer and the library share the idioms of
# the API both use (a torch Function's ctx.save_for_backward ...), a pasted one nearly all.
# Measured: honest answers 0.73 at most (a torch Function written the natural way, lab03
# my_relu), pasted references 0.89 at least (lab03 ck_sigmoid).
REFERENCE_THRESHOLD = 0.85
MIN_TOKENS = 50       # answers with fewer tokens of their own never flag: short ones look alike
REPORT_PAIRS = 30     # closest unflagged pairs shown in the report
REPORT_FLAGGED = 200  # flagged pairs shown side by side (all are listed in the table)
REFERENCE = "reference:"  # prefix of a reference source's name in results


@dataclass
class Document:
    """One fingerprinted piece of code: a student's answer cell, or a reference source."""

    owner: str            # student id, or "reference:<path>"
    exercise: str         # the answer cell's grade id ("" for a reference)
    code: str
    fingerprint: object = field(repr=False, default=None)


@dataclass
class Match:
    """One compared pair on one exercise."""

    exercise: str
    student: str
    other: str
    similarity: float     # share of the smaller side found in the other
    shared: int           # fingerprints the two have in common
    flagged: bool
    _pair: tuple = field(default=(), repr=False)

    def highlighted(self) -> tuple[str, str]:
        """Both sides as HTML in the layout they were compared in (:func:`canonical`), the
        matched code marked (copydetect's slices)."""
        from copydetect import compare_files
        left, right = self._pair
        _, _, slices = compare_files(left.fingerprint, right.fingerprint)
        return (_highlight(left.fingerprint.raw_code, slices[0]),
                _highlight(right.fingerprint.raw_code, slices[1]))


@dataclass
class SimilarityRun:
    lab: str
    threshold: float
    reference_threshold: float
    min_tokens: int
    students: int
    matches: list[Match]
    report: Path | None = None
    seconds: float = 0.0

    @property
    def flagged(self) -> list[Match]:
        return [m for m in self.matches if m.flagged]


# --------------------------------------------------------------------------- fingerprints

# Karp-Rabin: two polynomial hashes of a k-gram's code points, each modulo a prime below 2**31
# (so every product fits in 64 bits), joined into one 62-bit hash. Fixed constants: the same
# hash in every process, on every machine.
_MODULI = (2_147_483_647, 2_147_483_629)
_BASES = (1_000_003, 911_382_323)


def kgram_hashes(text: str, k: int = K) -> np.ndarray:
    """The hash of every ``k``-character substring of ``text``, in order (int64, stable)."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.array([], dtype=np.int64)
    joined = np.zeros(n, dtype=np.uint64)
    for modulus, base in zip(_MODULI, _BASES):
        h = np.zeros(n, dtype=np.uint64)
        for j in range(k):
            h = (h * np.uint64(base) + codes[j:j + n]) % np.uint64(modulus)
        joined = (joined << np.uint64(31)) | h
    return joined.astype(np.int64)


class Fingerprint:
    """A winnowed fingerprint with :class:`copydetect.CodeFingerprint`'s attributes (those
    :func:`copydetect.compare_files` reads), from stable k-gram hashes."""

    def __init__(self, code: str, k: int, window: int, boilerplate: np.ndarray):
        """``boilerplate``: sorted k-gram hashes (:func:`base_hashes`), removed wherever they
        are among the winnowed ones."""
        from copydetect.utils import filter_code, get_token_coverage, winnow
        self.filename = "answer.py"
        self.raw_code = code
        self.filtered_code, self.offsets = filter_code(code, self.filename, "python")
        self.k = k
        hashes, idx = winnow(kgram_hashes(self.filtered_code, k), window,
                             remove_duplicates=False)
        if len(boilerplate) and len(hashes):  # boilerplate: sorted (base_hashes)
            at = np.minimum(np.searchsorted(boilerplate, hashes), len(boilerplate) - 1)
            own = boilerplate[at] != hashes
            hashes, idx = hashes[own], idx[own]
        self.hash_idx: dict[int, list[int]] = {}
        for h, i in zip(hashes.tolist(), np.asarray(idx).tolist()):
            self.hash_idx.setdefault(h, []).append(i)
        self.hashes = set(self.hash_idx)
        self.token_coverage = get_token_coverage(self.hash_idx, k, len(self.filtered_code))


def canonical(code: str) -> str:
    """``code`` in one layout (:func:`ast.unparse`): a reformatter's choices (parentheses
    around a tuple, quotes, line breaks) would otherwise change the token stream. Code that
    does not parse (an IPython magic, a syntax error) stays as written."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.unparse(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError):
        return code


def _fingerprint(code: str, boilerplate: np.ndarray, window: int = WINDOW) -> Fingerprint:
    return Fingerprint(canonical(code), K, window, boilerplate)


def base_hashes(code: str) -> np.ndarray:
    """Every k-gram hash of ``code`` (no winnowing: all of the base code is excluded)."""
    from copydetect.utils import filter_code
    return np.unique(kgram_hashes(filter_code(canonical(code), "base.py", "python")[0], K))


def release_base(course: Course, lab: Lab) -> np.ndarray:
    """The release's own code: every code cell of the student notebook as handed out."""
    nb = lab_cells.read_notebook(course.release_notebook(lab))
    return base_hashes("\n\n".join(canonical(c.source) for c in nb.cells if c.cell_type == "code"))


def reference_sources(course: Course) -> dict[str, str]:
    """``{"reference:<path>": source}``: every lab's ``reveals`` and the check programs, which
    hold the grader's reference functions."""
    paths: set[Path] = set()
    for lab in course.labs:
        for entry in lab.reveals:
            target = course.root / reveal_entry(entry)[0]
            paths.update(target.rglob("*.py") if target.is_dir() else [target])
        checks = course.root / "coursekit" / "grading" / "checks" / f"{lab.id.split('_')[0]}.py"
        if checks.exists():
            paths.add(checks)
    return {f"{REFERENCE}{p.relative_to(course.root).as_posix()}": p.read_text(encoding="utf-8")
            for p in sorted(paths) if p.is_file()}


def answers_of(course: Course, lab: Lab, submitted_dir: Path | None = None
               ) -> dict[str, dict[str, str]]:
    """``{student: {answer grade id: code}}`` for every student who handed the lab in."""
    source = lab_cells.load(course.source_notebook(lab))
    exercises = {c.grade_id for c in source.with_role(ANSWER) if c.grade_id}
    found: dict[str, dict[str, str]] = {}
    for sub in collect(course, [lab], {lab.id: source.identifying_ids}, submitted_dir):
        if sub.status != SubmissionStatus.FOUND or sub.nb is None:
            continue
        cells = lab_cells.split(sub.nb).with_role(ANSWER)
        found[sub.student] = {c.grade_id: c.source for c in cells
                              if c.grade_id in exercises and isinstance(c.source, str)}
    return found


# --------------------------------------------------------------------------- comparison

def compare_answers(answers: dict[str, dict[str, str]], base: np.ndarray,
                    references: dict[str, str], *, threshold: float = THRESHOLD,
                    reference_threshold: float = REFERENCE_THRESHOLD,
                    min_tokens: int = MIN_TOKENS, keep: int = REPORT_PAIRS) -> list[Match]:
    """Every flagged pair, plus the ``keep`` closest others (for the report), closest first.

    Args:
        answers: ``{student: {exercise: code}}``.
        base: k-gram hashes of the release's own code (:func:`release_base`).
        references: ``{"reference:<path>": source}`` (:func:`reference_sources`).
    """
    from scipy import sparse

    base = np.unique(np.asarray(base, dtype=np.int64))
    refs = [Document(name, "", code, _fingerprint(code, base)) for name, code in references.items()]
    matches: list[Match] = []
    exercises = sorted({e for per in answers.values() for e in per})
    for exercise in exercises:
        docs = [Document(student, exercise, per[exercise], _fingerprint(per[exercise], base))
                for student, per in sorted(answers.items()) if per.get(exercise, "").strip()]
        everything = docs + refs
        # Shared hashes of every pair at once: a sparse 0/1 matrix times its transpose.
        vocabulary: dict[int, int] = {}
        rows, cols = [], []
        for row, doc in enumerate(everything):
            for h in doc.fingerprint.hashes:
                rows.append(row)
                cols.append(vocabulary.setdefault(int(h), len(vocabulary)))
        if not vocabulary:
            continue
        matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)),
                                   shape=(len(everything), len(vocabulary)))
        shared = (matrix[:len(docs)] @ matrix.T).tocoo()
        sizes = np.asarray(matrix.sum(axis=1)).ravel()
        for i, j, count in zip(shared.row, shared.col, shared.data):
            if j <= i and j < len(docs):
                continue  # each student pair once; never a document with itself
            left, right = everything[i], everything[j]
            # Against a reference, only the student's share counts (a reference file is long).
            against_reference = right.owner.startswith(REFERENCE)
            smaller = sizes[i] if against_reference else min(sizes[i], sizes[j])
            similarity = float(count) / max(float(smaller), 1.0)
            own = (left.fingerprint.token_coverage if against_reference else
                   min(left.fingerprint.token_coverage, right.fingerprint.token_coverage))
            flagged = (own >= min_tokens and similarity >=
                       (reference_threshold if against_reference else threshold))
            matches.append(Match(exercise, left.owner, right.owner, similarity, int(count),
                                 flagged, _pair=(left, right)))
    matches.sort(key=lambda m: (not m.flagged, -m.similarity))
    return [m for m in matches if m.flagged] + [m for m in matches if not m.flagged][:keep]


def _highlight(code: str, slices) -> str:
    from copydetect.utils import highlight_overlap
    if len(slices) == 0 or len(slices[0]) == 0:
        return html.escape(code)
    highlighted, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return highlighted


# --------------------------------------------------------------------------- the command's work

def similarity(course: Course, lab: Lab, *, submitted_dir: Path | None = None,
               threshold: float = THRESHOLD, reference_threshold: float = REFERENCE_THRESHOLD,
               min_tokens: int = MIN_TOKENS, report: Path | None = None,
               db_url: str | None = None) -> SimilarityRun:
    """Compare the lab's hand-ins, write the HTML report, record flags in the gradebook."""
    import time
    started = time.perf_counter()
    answers = answers_of(course, lab, submitted_dir)
    matches = compare_answers(answers, release_base(course, lab), reference_sources(course),
                              threshold=threshold, reference_threshold=reference_threshold,
                              min_tokens=min_tokens)
    run = SimilarityRun(lab.id, threshold, reference_threshold, min_tokens, len(answers), matches)
    run.report = report or course.course_dir / "similarity" / f"{lab.id}.html"
    write_report(run, run.report)
    from autograder.pipeline.gradebook import open_gradebook, record_similarity
    gradebook = open_gradebook(db_url or course.default_db_url)
    try:
        record_similarity(gradebook, lab.id, run.flagged, report=str(run.report))
    finally:
        gradebook.close()
    run.seconds = time.perf_counter() - started
    return run


STYLE = """body{font-family:sans-serif;margin:1.5em}table.pair{width:100%;border-collapse:collapse;
table-layout:fixed}td{vertical-align:top;border:1px solid #ccc;padding:.4em}pre{white-space:pre-wrap;
font-size:12px;margin:0}mark{background:#ffd54f}.flag{color:#b00020;font-weight:bold}
.summary td{border:none;padding:.1em .6em}"""


def write_report(run: SimilarityRun, path: Path) -> Path:
    """One HTML page: the closest pairs, the matched code highlighted side by side."""
    path.parent.mkdir(parents=True, exist_ok=True)
    esc = html.escape
    parts = [f"<!doctype html><meta charset='utf-8'><title>similarity {esc(run.lab)}</title>",
             f"<style>{STYLE}</style><h1>Similarity — {esc(run.lab)}</h1>",
             f"<p>{run.students} students. A pair is flagged for a TA when the share of one "
             f"answer found in a classmate's reaches {run.threshold:.0%} ({run.reference_threshold:.0%} "
             f"in a reference source), for answers of at least {run.min_tokens} tokens of "
             f"their own. Code the release hands out is ignored; answers are shown as compared, in "
             f"one layout with comments removed, and matched code is highlighted. "
             f"Flags are for a person to judge: no score was changed.</p>",
             "<table class='summary'><tr><th>#</th><th>exercise</th><th>student</th>"
             "<th>other</th><th>similarity</th><th>fingerprints in common</th><th></th></tr>"]
    shown = [m for m in run.matches if m.flagged][:REPORT_FLAGGED] + [
        m for m in run.matches if not m.flagged]
    for n, m in enumerate(run.matches, start=1):
        flag = "<span class='flag'>flagged</span>" if m.flagged else ""
        link = f"<a href='#p{n}'>{n}</a>" if m in shown else str(n)
        parts.append(f"<tr><td>{link}</td><td>{esc(m.exercise)}</td>"
                     f"<td>{esc(m.student)}</td><td>{esc(m.other)}</td>"
                     f"<td>{m.similarity:.0%}</td><td>{m.shared}</td><td>{flag}</td></tr>")
    parts.append("</table>")
    for n, m in enumerate(run.matches, start=1):
        if m not in shown:
            continue
        left, right = m.highlighted()
        parts.append(f"<h2 id='p{n}'>{n}. {esc(m.exercise)}: {esc(m.student)} ↔ {esc(m.other)} "
                     f"({m.similarity:.0%}, {m.shared} fingerprints in common)</h2>"
                     f"<table class='pair'><tr><th>{esc(m.student)}</th><th>{esc(m.other)}</th>"
                     f"</tr><tr><td><pre>{left}</pre></td><td><pre>{right}</pre>"
                     f"</td></tr></table>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
