"""Safe text: what the pipeline writes (gradebook, feedback HTML, exports) is always encodable.

Much of what grading reports quotes a submission: file names, exception messages, cell
text. Those can hold characters no UTF-8 file or database accepts. A lone surrogate
(``"\\ud800"``) comes from a JSON escape or from a file name whose bytes are not UTF-8
(Python decodes them to ``"\\udcff"``); a NUL or another control character comes from any
string a student writes. Writing one of them would stop the class's run, so they are replaced
with U+FFFD (``�``), which says "a character was here" without crashing anything.

Three helpers, for three places:

* :func:`printable` for every text the pipeline itself writes (reasons, messages, names);
* :func:`without_surrogates` for a submitted notebook, right after it is read: surrogates
  are replaced everywhere in it, so the notebook can be run, written and quoted. Control
  characters are left alone there — they are the student's code, and the kernel judges them;
* :func:`failure` for an exception the grader hit on one submission: one short line, never
  a traceback from deep inside.
"""
from __future__ import annotations

import re
import traceback
from pathlib import PurePath

REPLACEMENT = "\ufffd"
# Surrogates (never encodable on their own), C0 controls but tab, newline and carriage
# return, DEL and the C1 controls (invalid in HTML, and invisible where a TA reads).
_UNPRINTABLE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: object, limit: int | None = None) -> str:
    """``text`` as a string that UTF-8, SQL and HTML accept, cut to ``limit`` characters."""
    text = text if isinstance(text, str) else str(text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _UNPRINTABLE.sub(REPLACEMENT, text)


def without_surrogates(value):
    """``(value, n)``: a JSON value with every surrogate in its strings (keys included)
    replaced, and how many strings were changed. Walks without recursion, so depth alone
    cannot stop it; lists and dicts are changed in place."""
    changed = 0

    def fix(text: str) -> str:
        nonlocal changed
        if _SURROGATES.search(text) is None:
            return text
        changed += 1
        return _SURROGATES.sub(REPLACEMENT, text)

    if isinstance(value, str):
        return fix(value), changed
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            for index, element in enumerate(item):
                if isinstance(element, str):
                    item[index] = fix(element)
                elif isinstance(element, (list, dict)):
                    stack.append(element)
        elif isinstance(item, dict):
            for key in list(item):
                element = item[key]
                if isinstance(key, str) and _SURROGATES.search(key):
                    del item[key]
                    key = fix(key)
                    item[key] = element
                if isinstance(element, str):
                    item[key] = fix(element)
                elif isinstance(element, (list, dict)):
                    stack.append(element)
    return value, changed


_PROJECT = str(PurePath(__file__).parents[1])


def failure(error: BaseException, limit: int = 240) -> str:
    """An exception as one printable line a TA can quote or report: its type, where in
    coursekit it happened and its message, cut short — never a traceback (that goes to a
    log or a file). "Where" is the innermost frame of the project's own code, which says more
    than a line deep inside the standard library."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f.filename.startswith(_PROJECT)
            and "site-packages" not in f.filename]
    frame = (ours or frames or [None])[-1]
    where = (f" in {PurePath(frame.filename).name}:{frame.lineno} ({frame.name})"
             if frame is not None else "")
    message = str(error)
    return printable(f"{type(error).__name__}{where}" + (f": {message}" if message else ""),
                     limit)
