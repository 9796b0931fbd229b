"""CSV cells a spreadsheet opens as text: the one place every exported CSV is written.

Grades leave as CSV files that TAs open in Excel, LibreOffice or Google Sheets, or upload
to an LMS. A cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage
return, which some spreadsheets skip before looking) is a formula there: a message quoting
student code, a name on the roster or a student id (``-x`` and ``@x`` are valid ids) could
run one on the TA's machine (OWASP's "CSV injection"). Such a cell is written with a
leading ``'``, which spreadsheets show as text and do not display. Numbers the exporter
formats itself are written as they are (a score is never negative). Quoting (commas, quotes,
newlines inside a cell) is the csv module's, RFC 4180.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from coursekit.notebook.safe_text import printable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: object) -> str:
    """``value`` as a CSV cell no spreadsheet runs: printable, a formula start neutralised."""
    text = printable(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def number_cell(value: float, decimals: int = 4) -> str:
    """A score: at most ``decimals`` decimals, no trailing zeros (``12.5``, ``0``)."""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    """The CSV file of ``header`` and ``rows`` (cells already made by the two helpers)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([text_cell(name) for name in header])
    writer.writerows(rows)
    return out.getvalue()


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(csv_text(header, rows), encoding="utf-8", newline="")
    return path
