"""An exercise's property table: what its text promises, and the check case that tests it.

A check module lists, per check, one :class:`Property` for every promise the exercise text
makes, every parameter of the graded function's signature and every edge the text names
(``PROPERTIES = {"lab06.save_for_deployment": (Property(...), ...)}``). Each row names the
case that tests it by a part of the case's label (or of ``"label: item"`` for a case whose
result has named items), or the capability the check forbids. A test
(``tests/labs/test_property_tables.py``) fails when a row names no case, a case the program
does not yield, or a parameter the signature does not have, and when a parameter has no row:
a property nobody tests is then a failing test, not a survivor found later.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(enum.Enum):
    PROMISE = "promise"      # something the text says the answer does
    PARAMETER = "parameter"  # a parameter of the signature (``what`` is its name)
    EDGE = "edge"            # a boundary or special input the text names


@dataclass(frozen=True)
class Property:
    """One row: ``kind``, ``what`` the text says, and ``case``, a part of the label of the case
    that tests it, or ``forbidden``, the capability the check forbids for it."""

    kind: Kind
    what: str
    case: str = ""
    forbidden: str = ""


def promise(what: str, case: str = "", forbidden: str = "") -> Property:
    return Property(Kind.PROMISE, what, case, forbidden)


def parameter(name: str, case: str) -> Property:
    return Property(Kind.PARAMETER, name, case)


def edge(what: str, case: str) -> Property:
    return Property(Kind.EDGE, what, case)
