"""Receipts of the exchange's collector: when a collected hand-in's files last changed.

:class:`autograder.pipeline.verified_collect.VerifiedCollect` writes one per hand-in it
collects, in the course folder (``exchange_receipts/<student>/<lab>``, which students cannot
write): the kernel's latest change time of the hand-in's entries, and a digest of its
``submission_secret.txt``, so that a receipt never times another hand-in copied there later.
:func:`autograder.pipeline.collect.submitted_at` reads it (this module imports nothing of
nbgrader's exchange, which every grading would otherwise load).
"""
from __future__ import annotations

import hashlib
import os
from datetime import datetime, timedelta
from pathlib import Path

from autograder.isolation import untrusted_tree

RECEIPTS = "exchange_receipts"   # beside submitted/ in the course folder
# nbgrader's submit takes its time, then copies the files and writes timestamp.txt: an honest
# hand-in's files change a few seconds after its stated time at most.
SLACK = timedelta(seconds=15)
RECEIPT_BYTES = 200
SECRET = "submission_secret.txt"   # nbgrader's submit writes a fresh one into each hand-in
FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def receipt_path(course_dir: Path, student: str, lab: str) -> Path:
    return course_dir / RECEIPTS / student / lab


def digest(secret: bytes | None) -> str:
    return hashlib.sha256(secret or b"").hexdigest()


def read_receipt(course_dir: Path, submitted_dir: Path, student: str,
                 lab: str) -> datetime | None:
    """The receipt's time, or None: a hand-in that came without the exchange's collector
    (copied into submitted/ by hand, the demo class), or not the one the receipt is for."""
    try:
        root = untrusted_tree.open_folder(course_dir / RECEIPTS)
    except OSError:
        return None
    try:
        when, written_for = untrusted_tree.read_file(root, f"{student}/{lab}", RECEIPT_BYTES
                                                     ).decode("ascii").strip().rsplit(" ", 1)
    except (OSError, ValueError):   # UnicodeDecodeError is a ValueError
        return None
    finally:
        os.close(root)
    try:
        handed_in = untrusted_tree.open_folder(submitted_dir)
    except OSError:
        return None
    try:
        secret = untrusted_tree.read_file(handed_in, f"{student}/{lab}/{SECRET}", 1024)
    except OSError:
        secret = None
    finally:
        os.close(handed_in)
    if digest(secret) != written_for:
        return None
    try:
        return datetime.strptime(when, FORMAT)
    except ValueError:
        return None
