"""Drive: the grader runs each check against the student's kernel, one request per call.

After a checks cell has run (its ``grade(...)`` calls only registered the student's objects,
see :mod:`coursekit.grading.oracle`), the grader, for each call in the instructor's source:

1. draws the seed (public for visible checks, fresh for hidden ones: :mod:`~coursekit.grading.seeds`),
   runs the program on the reference with a recording generator, and so has both the expected
   values and the tape of inputs (:func:`coursekit.grading.verdict.reference_run`);
2. sends the kernel the tape only, as one execute request, and collects the observations the
   kernel publishes for that request's ticket, until the kernel is idle again or the time is up;
3. keeps ``(label, decoded value)`` pairs, never anything else the kernel says, for
   :mod:`.score` to judge.

The request's start and end are recorded: the monitor in the kernel reports delegation with
timestamps, and :mod:`.score` charges it to the check that was being driven at that time.
"""
from __future__ import annotations

import asyncio
import json
import queue
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from collections.abc import Mapping
from typing import Any, Callable, NamedTuple

from coursekit.caps import MAX_OBSERVATIONS, MAX_PAYLOAD_CHARS, MAX_PRINTED
from coursekit.grading import tape as tapes
from coursekit.grading.encoding import MIME_TYPE, Opaque, decode
from coursekit.grading.monitor import REPORT_S
from coursekit.grading.program import STOPPED
from coursekit.grading.verdict import reference_run
from coursekit.status import Status

from .cells import GradeCall
from .execute import INTERRUPT_GRACE_S, exit_detail, kill

# Quiet time around every driven call: the monitor reports a repeated call at most every
# REPORT_S, so a gap of twice that keeps the first forbidden call inside a check reported, and
# calls made by the next cell out of the check's window (see coursekit.notebook.monitoring).
GAP_S = 2 * REPORT_S
POLL_S = 1.0

class DriveStatus(Status):
    """How a driven call ended (``Drive.status``)."""

    DONE = "done"
    MISSING = "missing"
    STOPPED_EARLY = "stopped"
    TIMEOUT = "timeout"
    DEAD = "dead"
    BROKEN = "broken"


@dataclass
class Drive:
    """One ``grade(...)`` call, driven: what the kernel observed and what was expected."""

    call: GradeCall
    seed: int
    expected: list[tuple[Any, Any]] = field(default_factory=list)
    observed: list[tuple[str, Any]] = field(default_factory=list)
    status: DriveStatus = DriveStatus.MISSING
    note: str = ""
    started: float = 0.0
    ended: float = 0.0
    printed: dict[str, str] = field(default_factory=dict)  # stdout/stderr during the call
    tape: list = field(default_factory=list, repr=False)   # the inputs, until they are sent

    @property
    def check(self) -> str:
        return self.call.check

    @property
    def hidden(self) -> bool:
        return self.call.hidden


_REFERENCES = ThreadPoolExecutor(max_workers=1, thread_name_prefix="coursekit-reference")


@lru_cache(maxsize=256)
def _public_reference(check: str, seed: int) -> tuple[list, list]:
    """Visible checks have the same inputs for every student: run their reference once."""
    return reference_run(check, seed)


def prepare(call: GradeCall, seed: int) -> Drive:
    """The reference's side of one call: expected values and the tape (see module docstring)."""
    expected, tape = (_public_reference(call.check, seed) if not call.hidden
                      else reference_run(call.check, seed))
    return Drive(call, seed, expected=list(expected), tape=list(tape))


def request_code(drive: Drive, from_end: int, ticket: str) -> str:
    message = json.dumps({"ticket": ticket, "check": drive.check, "hidden": drive.hidden,
                          "from_end": from_end, "tape": tapes.dump(drive.tape)})
    return f"__import__('coursekit.grading.oracle', fromlist=['drive']).drive({message!r})"


async def drive_call(client, km, drive: Drive, from_end: int, timeout: float) -> Drive:
    """Send one call's request and collect its observations (see module docstring).

    ``from_end`` picks the object the kernel registered for this check: 1 is the latest.

    On a timeout the kernel is interrupted, and killed if it does not answer: status
    ``timeout`` (the kernel can go on) or ``dead``.
    """
    kc = client.kc
    ticket = secrets.token_hex(8)
    drive.started = time.monotonic()
    msg_id = kc.execute(request_code(drive, from_end, ticket), silent=False,
                        store_history=False, allow_stdin=False, stop_on_error=False)
    drive.tape = []  # the kernel has it now; a graded notebook's drives keep no inputs
    size = 0
    deadline = drive.started + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            drive.ended = time.monotonic()
            alive = await _interrupt(km, kc, msg_id)
            drive.status = DriveStatus.TIMEOUT if alive else DriveStatus.DEAD
            drive.note = (f"infinite loop? the check ran over {timeout:g}s and was stopped"
                          + ("" if alive else "; the kernel ignored the interrupt and was killed"))
            return drive
        try:
            msg = await kc.get_iopub_msg(timeout=min(POLL_S, remaining))
        except queue.Empty:
            if not await km.is_alive():
                drive.ended = time.monotonic()
                drive.status = DriveStatus.DEAD
                drive.note = f"the kernel died while this check ran{exit_detail(km)}"
                return drive
            continue
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = msg.get("msg_type"), msg.get("content", {})
        if kind == "status" and content.get("execution_state") == "idle":
            break
        if kind == "stream":
            name = str(content.get("name", "stdout"))
            text = drive.printed.get(name, "")
            if len(text) < MAX_PRINTED:
                drive.printed[name] = text + str(content.get("text", ""))[:MAX_PRINTED]
            continue
        if kind == "error" and drive.status == DriveStatus.MISSING:
            drive.status = DriveStatus.BROKEN
            drive.note = (f"the grading request failed in the kernel "
                          f"({str(content.get('ename', ''))[:100]}): was grading code replaced?")
        if kind != "display_data":
            continue
        item = content.get("data", {}).get(MIME_TYPE)
        if not isinstance(item, dict) or item.get("ticket") != ticket:
            continue
        if item.get("missing"):
            drive.status = DriveStatus.MISSING
        elif item.get("done"):
            drive.status = DriveStatus.DONE
        elif isinstance(item.get("label"), str) and len(drive.observed) < MAX_OBSERVATIONS:
            size += len(json.dumps(item.get("value")))
            value = _decode(item.get("value")) if size <= MAX_PAYLOAD_CHARS else Opaque(
                "value dropped: this check's observations are over the size limit")
            drive.observed.append((item["label"], value))
    drive.ended = time.monotonic()
    if drive.status not in (DriveStatus.DONE, DriveStatus.MISSING, DriveStatus.BROKEN):
        drive.status = DriveStatus.STOPPED_EARLY
        drive.note = "the check stopped before its last case"
    if drive.status == DriveStatus.BROKEN and drive.observed:
        drive.status = DriveStatus.STOPPED_EARLY
    if any(label == STOPPED for label, _ in drive.observed):
        drive.status = DriveStatus.STOPPED_EARLY
    return drive


async def _interrupt(km, kc, msg_id: str) -> bool:
    """Interrupt the request; kill the kernel if it is not idle within the grace period.
    Returns whether the kernel can take the next request."""
    try:
        await km.interrupt_kernel()
    except Exception:  # noqa: BLE001 — a dead kernel cannot be interrupted
        return False
    deadline = time.monotonic() + INTERRUPT_GRACE_S
    while time.monotonic() < deadline:
        try:
            msg = await kc.get_iopub_msg(timeout=max(0.05, deadline - time.monotonic()))
        except queue.Empty:
            break
        if (msg.get("parent_header", {}).get("msg_id") == msg_id and msg.get("msg_type") == "status"
                and msg.get("content", {}).get("execution_state") == "idle"):
            return True
    await kill(km)
    return False


def from_end(calls: list[GradeCall], call: GradeCall) -> int:
    """Which of the objects registered for ``call``'s check it drives, counted from the
    latest (1): the checks cell's calls of one check register in order."""
    same_key = [c for c in calls if c.key == call.key]
    return len(same_key) - same_key.index(call)


async def drive_cell(client, km, calls: list[GradeCall], seed_of: Callable[[str, bool], int],
                     per_call: float, remaining: float) -> list[Drive]:
    """Drive every call of one checks cell, in order, right after the cell ran.

    Each call may take ``per_call`` seconds (the cell timeout), all of them together what is
    left of the notebook's time. Stops at a call that left the kernel dead or used up the
    time: the rest are not driven (scored with the reason the cell gives).
    """
    deadline = time.monotonic() + remaining
    drives: list[Drive] = []
    for call in calls:
        await asyncio.sleep(GAP_S)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            # Off the event loop, which meanwhile reads every other kernel's messages (a
            # kernel whose messages wait unread past the socket's queue loses them), one
            # reference at a time: check programs were written for one thread.
            drive = await asyncio.get_running_loop().run_in_executor(
                _REFERENCES, prepare, call, seed_of(call.check, call.hidden))
        except Exception:  # noqa: BLE001 — a broken check: the scorer reports it, others go on
            continue
        drive = await drive_call(client, km, drive, from_end(calls, call), min(per_call, left))
        drives.append(drive)
        if drive.status == DriveStatus.DEAD:
            break
    await asyncio.sleep(GAP_S)
    return drives


class ChecksToDrive(NamedTuple):
    """A checks cell's calls to drive once it has run, and the key its drives are kept under
    (``Execution.drives``): its grade id."""

    key: str
    calls: tuple[GradeCall, ...]


def checks_driver(checks_at: Mapping[int, ChecksToDrive], seed_of: Callable[[str, bool], int],
                  per_call: float):
    """The ``after_cell`` hook of :func:`coursekit.notebook.execute.run_notebook`: after each
    checks cell (``checks_at``: cell index -> its calls, read from the instructor's source),
    drive that cell's calls."""

    async def after_cell(client, km, index: int, remaining: float):
        if index not in checks_at:
            return None, [], ""
        key, calls = checks_at[index]
        drives = await drive_cell(client, km, list(calls), seed_of, per_call, remaining)
        dead = next((d.note for d in drives if d.status == DriveStatus.DEAD), "")
        return key, drives, dead
    return after_cell


def _decode(value: Any) -> Any:
    """Decode one untrusted observation; anything malformed is an opaque value, not a crash."""
    try:
        return decode(value)
    except Exception:  # noqa: BLE001 — forged or corrupt data compares unequal, nothing more
        return Opaque("malformed observation")
