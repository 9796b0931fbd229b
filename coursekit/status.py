"""The base of the grading's status enums (:class:`~coursekit.notebook.execute.CellStatus`,
:class:`~coursekit.notebook.drive.DriveStatus`, the grader's submission and outcome statuses).

A status's value is the text that is stored and shown: in the gradebook, ``results.json``,
messages and the hash that decides whether a hand-in is graded again. So each member is that
text (a ``str``), compares equal to it, and formats as it in f-strings, ``%s`` and ``str()``
on every Python the course supports (``enum.StrEnum`` is 3.11's, the course runs on 3.10).
"""
from enum import Enum


class Status(str, Enum):
    __str__ = str.__str__
