"""Execute: run a notebook's code cells one by one in a kernel, keeping every output.

nbclient does the messaging; this step owns the clock and the failure modes, because for
grading they are outcomes, not errors:

* a cell that runs over its timeout (or over what is left of the notebook's time limit) is
  interrupted; if the kernel does not answer the interrupt, it is killed and the remaining
  cells are not run — "infinite loop? cell N ran over Xs";
* a kernel that dies (``os._exit``, a segfault, the CPU limit) stops the run — every output
  produced so far is kept, and nothing on disk is deleted;
* a cell that raises is recorded (``ename``/``evalue``, never the traceback: that stays in the
  notebook for the TA) and the run goes on, as in JupyterLab's "run all" with errors allowed.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import zmq
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from coursekit.caps import (MAX_DISPLAY_CHARS, MAX_ERROR_CHARS, MAX_MESSAGE_BYTES,
                            MAX_NOTEBOOK_CHARS, MAX_OUTPUTS_PER_CELL, MAX_PAYLOAD_CHARS,
                            MAX_STREAM_CHARS, MAX_TRACEBACK_LINES, SHOWN_ERROR_CHARS)
from coursekit.grading.encoding import MIME_TYPE
from coursekit.grading.kernel import EXIT_KEYRINGS_KEPT
from coursekit.grading.monitor import EXIT_CHANNEL_TAMPERED
from coursekit.status import Status

INTERRUPT_GRACE_S = 5.0
STARTUP_TIMEOUT_S = 120
RECONNECT_PAUSE_S = 0.2   # after a disconnection, time for a dead kernel's end to be seen

# NOTE [capped before decoded]: the output caps (coursekit.caps) apply to messages jupyter_client has already
# received and decoded, so one 1 GB display would cost the grader gigabytes before it was
# dropped. So every socket to a kernel is made with ZMQ_MAXMSGSIZE (libzmq reads a part's
# length first and refuses a longer one unread) and ZMQ_RCVHWM (a kernel that sends faster
# than the grader reads waits, or loses its own messages, instead of queueing them in the
# grader): the sockets' context sets both (sandbox.SandboxedKernelManager). libzmq ends a
# connection that sent an oversized part for good; _Reconnect connects again and counts it,
# and the cell it happened in says so.

class CellStatus(Status):
    """How a code cell's run ended (``CellRun.status``)."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    KILLED = "killed"      # over its time, it ignored the interrupt: the kernel was stopped
    DEAD = "dead"          # its kernel died
    NOT_RUN = "not run"    # a later cell, after the kernel was stopped or died
    SKIPPED = "skipped"    # a cell the caller asked not to run (the exploration cells)


@dataclass
class CellRun:
    """What happened to one code cell."""

    index: int
    status: CellStatus
    seconds: float = 0.0
    ename: str = ""
    evalue: str = ""
    note: str = ""
    label: str = ""

    @property
    def raised(self) -> str:
        """How a report line says what the cell raised: ``NameError: name 'x' is not
        defined``, the message cut at SHOWN_ERROR_CHARS."""
        evalue = (self.evalue if len(self.evalue) <= SHOWN_ERROR_CHARS
                  else self.evalue[:SHOWN_ERROR_CHARS] + "…")
        return f"{self.ename}: {evalue}" if evalue else self.ename


@dataclass
class Execution:
    """The run of one notebook: per-cell records and, if it stopped early, why."""

    cells: dict[int, CellRun] = field(default_factory=dict)
    stopped: str = ""
    seconds: float = 0.0
    drives: dict[str, list] = field(default_factory=dict)  # checks cell's key -> driven calls

    def problems(self) -> list[str]:
        """Notes worth telling the student, in cell order (timeouts, memory, the stop)."""
        notes = [run.note for run in sorted(self.cells.values(), key=lambda r: r.index)
                 if run.note]
        return notes + ([self.stopped] if self.stopped and self.stopped not in notes else [])


class _BoundedClient(NotebookClient):
    """nbclient with a cap on how much output one cell, and one notebook, may keep.

    Whatever a kernel sends passes through here before the grader keeps it, so these caps
    bound the grader's memory (and the graded notebook on disk) for each kernel it drives:
    at most MAX_NOTEBOOK_CHARS characters of output per notebook, however many cells,
    outputs or display updates carry them. What goes over is replaced by a short note.
    Widget messages are ignored: grading needs no widget, and their state would be kept
    outside every cap.
    """

    kept_chars: int = 0          # characters of output kept so far in this notebook
    notebook_cap_noted: bool = False

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        is_payload = MIME_TYPE in content.get("data", {})
        if len(outs) >= MAX_OUTPUTS_PER_CELL and not is_payload:
            return None
        data = content.get("data")
        if isinstance(data, dict):
            size = _size(data)
            if size > (MAX_PAYLOAD_CHARS if is_payload else MAX_DISPLAY_CHARS):
                # Kept, it would fill the grader's memory and the graded notebook on disk.
                content["data"] = {"text/plain": f"[an output of {size:,} characters was "
                                                 f"dropped: too large to grade or store]"}
                content["metadata"] = {}
        if msg.get("msg_type") == "stream":
            used = sum(len(o.get("text", "")) for o in outs if o.get("output_type") == "stream")
            if used >= MAX_STREAM_CHARS:
                return None
            text = content.get("text", "")
            if used + len(text) > MAX_STREAM_CHARS:
                content["text"] = text[:MAX_STREAM_CHARS - used] + "\n[… output truncated]\n"
        if msg.get("msg_type") == "error":
            # An error is kept whatever the caps (it says the cell failed), but not its size.
            content["evalue"] = _clip(str(content.get("evalue", "")), MAX_ERROR_CHARS)
            content["ename"] = _clip(str(content.get("ename", "")), 200)
            traceback = [_clip(str(line), MAX_ERROR_CHARS) for line in
                         (content.get("traceback") or [])[-MAX_TRACEBACK_LINES:]]
            content["traceback"] = traceback
        size = _size(content.get("data", {})) + len(str(content.get("text", ""))) + sum(
            len(line) for line in content.get("traceback", []))
        if self.kept_chars + size > MAX_NOTEBOOK_CHARS and msg.get("msg_type") == "error":
            if any(o.get("output_type") == "error" for o in outs):
                return None
            content["traceback"], content["evalue"] = [], _clip(content["evalue"], 200)
            size = len(content["evalue"])
        elif self.kept_chars + size > MAX_NOTEBOOK_CHARS:
            if self.notebook_cap_noted:
                return None
            self.notebook_cap_noted = True
            note = (f"[output limit reached: a notebook keeps at most {MAX_NOTEBOOK_CHARS:,} "
                    f"characters of output; this output and every later one were dropped]")
            # As a display, whatever the message was: nbclient reads the type from the header.
            msg = {**msg, "header": {**msg.get("header", {}), "msg_type": "display_data"},
                   "msg_type": "display_data",
                   "content": {"data": {"text/plain": note}, "metadata": {}}}
            size = len(note)
        self.kept_chars += size
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id, msg):
        # update_display_data replaces an output kept earlier: the same caps apply to it.
        data = msg.get("content", {}).get("data")
        if isinstance(data, dict):
            size = _size(data)
            if size > MAX_DISPLAY_CHARS or self.kept_chars + size > MAX_NOTEBOOK_CHARS:
                msg["content"]["data"] = {"text/plain": f"[a display update of {size:,} "
                                                        f"characters was dropped]"}
                msg["content"]["metadata"] = {}
            else:
                self.kept_chars += size
        return super()._update_display_id(display_id, msg)

    def handle_comm_msg(self, outs, msg, cell_index):
        return None


class _Reconnect:
    """Connect again each of a kernel client's sockets that libzmq disconnected for an
    oversized message part (see NOTE [capped before decoded]), and count how often."""

    def __init__(self, kc, km) -> None:
        self.resets = 0
        self._km = km
        self._tasks = [asyncio.ensure_future(self._watch(channel.socket, kc._make_url(name)))
                       for name, channel in (("iopub", kc.iopub_channel),
                                             ("shell", kc.shell_channel))]

    async def _watch(self, socket, url: str) -> None:
        monitor = socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        try:
            while True:
                await monitor.recv_multipart()
                # A kernel that died disconnects too: its sockets are left alone (libzmq
                # aborted the grader, now and then, when they were connected again while
                # the kernel's end was being noticed).
                await asyncio.sleep(RECONNECT_PAUSE_S)
                if not await self._km.is_alive():
                    return
                self.resets += 1
                socket.disconnect(url)
                socket.connect(url)   # a SUB socket subscribes again by itself
        except (asyncio.CancelledError, zmq.ZMQError):
            pass
        finally:
            try:
                socket.disable_monitor()
            except zmq.ZMQError:
                pass
            monitor.close(linger=0)

    async def close(self) -> None:
        """Stop watching, and wait until each monitor socket is detached and closed: libzmq
        aborts the whole process when a monitored socket or its context is closed while the
        monitor is still attached (the kernel client's sockets are closed right after)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _size(data) -> int:
    if not isinstance(data, dict):
        return len(str(data))
    return sum(len(v) if isinstance(v, str) else len(str(v)) for v in data.values())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit:,} more]"


def cell_label(cell: NotebookNode, index: int) -> str:
    """A cell as a student finds it in JupyterLab, which numbers no cells: its nbgrader name,
    else its first line."""
    meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
    name = meta.get("grade_id") if isinstance(meta, dict) else None
    if isinstance(name, str) and name:
        return f"the cell '{name}'"
    lines = [line.strip() for line in str(cell.get("source", "")).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return f"the cell starting `{first[:40]}{'…' if len(first) > 40 else ''}`" if first \
        else f"cell {index + 1}"


async def run_notebook(nb: NotebookNode, km, *, cwd: Path, env: dict[str, str],
                       cell_timeout: float, time_limit: float, memory_mb: int | None = None,
                       skip: set[int] = frozenset(), on_cell=None,
                       after_cell=None) -> Execution:
    """Execute ``nb``'s code cells in place with kernel manager ``km`` (not yet started).

    Args:
        skip: indices of cells not to run (recorded as skipped).
        cell_timeout: seconds one cell may run before it is interrupted.
        time_limit: seconds the whole notebook may run (kernel start included).
        memory_mb: the kernel's memory limit, only to explain a ``MemoryError``.
        on_cell: optional callback ``(index)`` before each cell (progress, tests).
        after_cell: optional coroutine ``(client, km, index, seconds left)`` awaited after
            each cell the kernel survived (the grader drives the checks of a checks cell
            there). It returns ``(key, drives, note)``: drives, if ``key`` is not None, are
            kept in ``Execution.drives[key]``; a note says the kernel died meanwhile.
    """
    started = time.monotonic()
    execution = Execution()
    client = _BoundedClient(nb, km=km, timeout=None, allow_errors=True,
                            startup_timeout=STARTUP_TIMEOUT_S, record_timing=False,
                            iopub_timeout=10)
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()
                  and i not in skip]
    for index in skip:
        execution.cells[index] = CellRun(index, CellStatus.SKIPPED)
    reconnect = None
    try:
        try:
            await asyncio.wait_for(client.async_start_new_kernel(cwd=str(cwd), env=env),
                                   timeout=STARTUP_TIMEOUT_S)
            await client.async_start_new_kernel_client()
            reconnect = _Reconnect(client.kc, km)
        except Exception as error:  # noqa: BLE001 — a kernel that cannot start is an outcome
            execution.stopped = f"the kernel did not start: {error}"
            for index in code_cells:
                execution.cells[index] = CellRun(index, CellStatus.NOT_RUN)
            return execution
        for position, index in enumerate(code_cells):
            remaining = time_limit - (time.monotonic() - started)
            if remaining <= 0:
                execution.stopped = (f"the notebook ran over its time limit of {time_limit:g}s; "
                                     f"{cell_label(nb.cells[index], index)} and later cells did "
                                     f"not run")
                for rest in code_cells[position:]:
                    execution.cells[rest] = CellRun(rest, CellStatus.NOT_RUN)
                break
            if on_cell is not None:
                on_cell(index)
            resets = reconnect.resets
            run = await _run_cell(client, km, nb.cells[index], index,
                                  min(cell_timeout, remaining), cell_timeout <= remaining,
                                  time_limit, memory_mb)
            execution.cells[index] = run
            if run.status not in (CellStatus.KILLED, CellStatus.DEAD) and after_cell is not None:
                key, drives, note = await after_cell(client, km, index,
                                                     time_limit - (time.monotonic() - started))
                if key is not None:
                    execution.drives[key] = drives
                if note:
                    run.status, run.note = CellStatus.DEAD, note
            if reconnect.resets > resets and run.status not in (CellStatus.KILLED, CellStatus.DEAD):
                run.note = ((run.note + "; ") if run.note else "") + (
                    f"{run.label or cell_label(nb.cells[index], index)} sent the grader a "
                    f"message over {MAX_MESSAGE_BYTES // 2**20} MB: it was refused unread, "
                    f"and what the kernel sent while the grader connected again was lost")
            if run.status in (CellStatus.KILLED, CellStatus.DEAD):
                execution.stopped = run.note
                for rest in code_cells[position + 1:]:
                    execution.cells[rest] = CellRun(rest, CellStatus.NOT_RUN)
                break
    finally:
        if reconnect is not None:
            await reconnect.close()
        await _shutdown(client, km)
        execution.seconds = time.monotonic() - started
        for index, run in execution.cells.items():
            run.label = cell_label(nb.cells[index], index)
    return execution


async def _run_cell(client: NotebookClient, km, cell: NotebookNode, index: int, timeout: float,
                    per_cell: bool, time_limit: float, memory_mb: int | None) -> CellRun:
    began = time.monotonic()
    label = cell_label(cell, index)
    over = (f"infinite loop? {label} ran over {timeout:g}s" if per_cell else
            f"{label} ran into the notebook's time limit of {time_limit:g}s")
    task = asyncio.ensure_future(client.async_execute_cell(cell, index))
    done, _ = await asyncio.wait({task}, timeout=timeout)
    timed_out = not done
    if timed_out:
        try:
            await km.interrupt_kernel()
        except Exception:  # noqa: BLE001 — a dead kernel cannot be interrupted; handled below
            pass
        done, _ = await asyncio.wait({task}, timeout=INTERRUPT_GRACE_S)
        if not done:
            await kill(km)
            done, _ = await asyncio.wait({task}, timeout=INTERRUPT_GRACE_S)
            if not done:
                task.cancel()
            _consume(task)
            return CellRun(index, CellStatus.KILLED, time.monotonic() - began,
                           note=f"{over}; the kernel ignored the interrupt and was stopped, "
                                f"so later cells did not run")
    try:
        task.result()
    except DeadKernelError:
        return CellRun(index, CellStatus.DEAD, time.monotonic() - began,
                       note=f"the kernel died in {label}{exit_detail(km)}; "
                            f"checks after it could not run")
    except Exception as error:  # noqa: BLE001 — nbclient failures on this cell
        return CellRun(index, CellStatus.ERROR, time.monotonic() - began, type(error).__name__, str(error),
                       note=f"{label} could not be run: {error}")
    run = CellRun(index, CellStatus.OK, time.monotonic() - began)
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            run.status, run.ename, run.evalue = CellStatus.ERROR, output.get("ename", ""), output.get("evalue", "")
    if timed_out:
        run.status, run.note = CellStatus.TIMEOUT, f"{over} and was interrupted"
    elif run.ename == "MemoryError":
        limit = f" (limit {memory_mb} MB)" if memory_mb else ""
        run.note = f"{label} ran out of memory{limit}"
    return run


def exit_detail(km) -> str:
    process = getattr(getattr(km, "provisioner", None), "process", None)
    code = process.poll() if process is not None else None
    if code is None:
        return ""
    signals = {-9: "killed (SIGKILL: memory or CPU limit?)", -24: "CPU time limit (SIGXCPU)",
               -11: "segmentation fault", -6: "aborted"}
    if code < 0:
        return f" ({signals.get(code, f'signal {-code}')})"
    if code == EXIT_CHANNEL_TAMPERED:
        return f" (exit code {code}: the grading monitor stopped it, its pipe was replaced)"
    if code == EXIT_KEYRINGS_KEPT:
        return (f" (exit code {code}: its sandbox uid held keys that could not be cleared; "
                f"that uid is not used again, regrade this submission)")
    return f" (exit code {code})"


def _consume(task: asyncio.Task) -> None:
    """Retrieve a finished task's exception so asyncio does not log it as never retrieved."""
    if task.done() and not task.cancelled():
        task.exception()


async def kill(km) -> None:
    try:
        await km.shutdown_kernel(now=True)
    except Exception:  # noqa: BLE001 — already gone
        pass


async def _shutdown(client: NotebookClient, km) -> None:
    try:
        if client.kc is not None:
            client.kc.stop_channels()
    except Exception:  # noqa: BLE001 — clean-up of a kernel that may be dead
        pass
    try:
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
    except Exception:  # noqa: BLE001 — a dead kernel has nothing to shut down
        pass
    try:
        await km.cleanup_resources()
    except Exception:  # noqa: BLE001 — clean-up of a kernel that may be dead
        pass
