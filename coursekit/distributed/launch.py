"""``launch(fn, world_size)``: run ``fn`` on several CPU processes joined in one gloo group.

Every rank is a ``fork`` of the calling process. Fork, not spawn, because:

* a function defined in a notebook reaches the ranks as it is (spawn pickles it by name, and
  a notebook's functions have no importable name);
* torch is already imported, so a rank starts in milliseconds;
* in a grading kernel the ranks inherit the grading monitor (its audit hook, its profile
  function and the pipe it reports through), so what the student's code does in a rank is
  watched as it is in the kernel.

NOTE [Cleaning up, whatever the ranks do]
    The ranks rendezvous through a ``FileStore`` in a fresh temporary folder, removed when
    ``launch`` ends: no port to find or to free, and no server thread in this process (see the
    next note). gloo itself connects the ranks over the loopback device, on ports the
    operating system picks, closed when the ranks end. Every rendezvous and collective times
    out after ``timeout`` seconds. This process waits on every rank's result pipe at once, with a
    deadline: as soon as one rank fails or dies, or the deadline passes, every rank still
    running is killed (SIGKILL) and reaped before ``launch`` returns or raises, an interrupt
    (KeyboardInterrupt) included. A rank also ends by itself when this process dies: it
    watches a pipe whose only writer is this process. Nothing is left in shared memory:
    results travel through pipes, pickled.

NOTE [Forking a process that has threads]
    A kernel has threads (ipykernel's, torch's thread pools). After a fork only the forking
    thread exists, and a lock another thread held at that moment stays locked forever in the
    child. So this process starts no thread of its own before forking (a ``TCPStore`` server
    here, busy with the first ranks while the last one is forked, deadlocked that rank now
    and then), and a rank never relies on another thread's state: it sets torch to one
    thread before touching a tensor (an OpenMP pool inherited from the parent must not be
    used), writes its prints into a buffer that travels back with its result (never to the
    kernel's output streams, whose sender thread is gone), restores the default signal
    handlers, and leaves with ``os._exit`` so that no exit handler of the parent runs.
"""
from __future__ import annotations

import functools
import io
import os
import pickle
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

DEFAULT_TIMEOUT_S = 30.0
_EXIT_ORPHANED = 70
_GRACE_S = 0.5  # after one rank failed, how long the others may take to report theirs


class RankFailed(RuntimeError):
    """A rank raised, died or hung; the message names the rank and what happened."""


@dataclass
class RankResult:
    """What one rank handed back: its return value or its error, and what it printed."""

    rank: int
    value: Any = None
    error: str = ""        # "TypeError: ..." when the rank raised
    details: str = ""      # the rank's traceback
    printed: str = ""


def launch(fn: Callable[..., Any], world_size: int, *args: Any,
           timeout: float = DEFAULT_TIMEOUT_S, echo: bool = True, op_timeout: float | None = None,
           **kwargs: Any) -> list[Any]:
    """Run ``fn(*args, **kwargs)`` on ``world_size`` processes in a gloo process group.

    Inside ``fn``, ``torch.distributed`` is initialised: ``dist.get_rank()`` is this process's
    rank and ``dist.get_world_size()`` is ``world_size``.

    Args:
        timeout: seconds for the whole run, and for every rendezvous and collective.
        echo: print what the ranks printed, each line prefixed with ``[rank r]``.
        op_timeout: seconds one send, recv or collective may wait for the other ranks (by
            default ``timeout``): shorter, a deadlock is found sooner than the whole run's end.

    Returns:
        each rank's return value, in rank order.

    Raises:
        RankFailed: a rank raised (its error and traceback are in the message), died, or did
            not finish within ``timeout``.
        NotImplementedError: a rank ran an exercise's stub.
    """
    results = run_ranks(fn, world_size, args, kwargs, timeout=timeout, op_timeout=op_timeout)
    if echo:
        for result in results:
            for line in result.printed.splitlines():
                print(f"[rank {result.rank}] {line}")
    failed = [r for r in results if r.error]
    if failed:
        first = min(failed, key=_secondary)  # the rank that failed first, not its peers
        if first.error.startswith("NotImplementedError:"):
            # An exercise not written yet: said as the notebook's stubs say it.
            raise NotImplementedError(f"rank {first.rank} of {world_size}: "
                                      f"{first.error.split(': ', 1)[1]}")
        raise RankFailed(f"rank {first.rank} of {world_size}: {first.error}"
                         + (f"\n{first.details}" if first.details else ""))
    return [r.value for r in results]


# Errors a rank gets because *another* rank failed: its peer closed the connection.
_SECONDARY = ("Connection closed by peer", "Connection reset by peer", "another rank failed")


def _secondary(result: RankResult) -> bool:
    return any(marker in result.error for marker in _SECONDARY)


def run_ranks(fn: Callable[..., Any], world_size: int, args: tuple = (), kwargs: dict | None = None,
              *, timeout: float = DEFAULT_TIMEOUT_S,
              op_timeout: float | None = None) -> list[RankResult]:
    """Like :func:`launch`, but returns every rank's :class:`RankResult`, failures included
    (a rank that did not report is an error of its own), and never raises for a rank."""
    if not hasattr(os, "fork"):
        raise RuntimeError("coursekit.distributed.launch forks its ranks, and this platform "
                           "has no fork (Windows): run the lab on Linux or macOS, or in WSL")
    if not 1 <= int(world_size) <= 16:
        raise ValueError(f"world_size must be between 1 and 16, got {world_size!r}")
    kwargs = kwargs or {}
    _import_lazy_modules()
    folder = tempfile.mkdtemp(prefix="coursekit-ranks-")
    store_path = os.path.join(folder, "store")
    lifeline_read, lifeline_write = os.pipe()
    children: dict[int, int] = {}   # rank -> pid
    pipes: dict[int, int] = {}      # read end -> rank
    try:
        for rank in range(world_size):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the rank: never returns
                os.close(read_end)
                os.close(lifeline_write)
                for other in pipes:
                    os.close(other)
                _rank_main(fn, args, kwargs, rank, world_size, store_path, timeout,
                           write_end, lifeline_read, op_timeout or timeout)
            os.close(write_end)
            children[rank] = pid
            pipes[read_end] = rank
        return _collect(children, pipes, timeout)
    finally:
        for pid in children.values():
            _kill_and_reap(pid)
        for fd in list(pipes) + [lifeline_read, lifeline_write]:
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(folder, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def _import_lazy_modules() -> None:
    """Import here, once, what torch imports on first use: a rank is a fork, and would import
    it anew in every rank of every launch. ``backward(gradient)`` is the costly one: its first
    call imports sympy and about 480 modules (seconds)."""
    import torch
    import torch.distributed  # every rank uses it

    with torch.enable_grad():
        leaf = torch.ones(1, requires_grad=True)
        (leaf * 2).backward(torch.ones(1))


def _collect(children: dict[int, int], pipes: dict[int, int], timeout: float) -> list[RankResult]:
    """Read every rank's result until all have reported, one failed, or the time is up."""
    received = {rank: b"" for rank in children}
    results: dict[int, RankResult] = {}
    open_pipes = dict(pipes)
    deadline = time.monotonic() + timeout
    while open_pipes:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if any(r.error for r in results.values()):
            # One rank failed: give the others a moment to report their own error (the
            # first cause may be theirs), then stop them.
            deadline = min(deadline, time.monotonic() + _GRACE_S)
        ready, _, _ = select.select(list(open_pipes), [], [], min(left, 0.5))
        for fd in ready:
            rank = open_pipes[fd]
            chunk = os.read(fd, 1 << 20)
            if chunk:
                received[rank] += chunk
                continue
            del open_pipes[fd]  # the rank closed its pipe: it is done (or dead)
            results[rank] = _decode(rank, received[rank], children[rank])
    for rank in children:
        if rank not in results:
            results[rank] = RankResult(rank, error=(
                "stopped because another rank failed" if any(r.error for r in results.values())
                else f"did not finish within {timeout:g}s and was stopped (an infinite loop? a "
                     f"recv that no rank sends to, or a collective that not every rank calls?)"))
    return [results[rank] for rank in sorted(results)]


def _decode(rank: int, payload: bytes, pid: int) -> RankResult:
    if payload:
        try:
            result = pickle.loads(payload)
            if isinstance(result, RankResult):
                return result
        except Exception as error:  # noqa: BLE001 — a value that does not unpickle is an outcome
            return RankResult(rank, error=f"its result could not be read back "
                                          f"({type(error).__name__}: {error})")
    code = _exit_code(pid)
    return RankResult(rank, error=f"the process died before it returned{code}")


def _exit_code(pid: int) -> str:
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return ""
    if not done:
        time.sleep(0.05)
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return ""
    if not done:
        return ""
    if os.WIFSIGNALED(status):
        return f" (killed by signal {os.WTERMSIG(status)})"
    return f" (exit code {os.WEXITSTATUS(status)})"


def _kill_and_reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _watch_lifeline(fd: int) -> None:
    """End this rank when the launching process is gone (the pipe's last writer closed)."""
    try:
        os.read(fd, 1)
    finally:
        os._exit(_EXIT_ORPHANED)


def _rank_main(fn, args, kwargs, rank: int, world_size: int, store_path: str, timeout: float,
               result_fd: int, lifeline_fd: int, op_timeout: float) -> None:
    """The body of one rank (see the notes in the module docstring). Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        threading.Thread(target=_watch_lifeline, args=(lifeline_fd,), daemon=True).start()
        printed = io.StringIO()
        sys.stdout = sys.stderr = printed
        result = RankResult(rank)
        try:
            import torch
            import torch.distributed as dist

            torch.set_num_threads(1)
            os.environ["GLOO_SOCKET_IFNAME"] = "lo"   # loopback only, also in the sandbox
            store = dist.FileStore(store_path, world_size)
            store.set_timeout(timedelta(seconds=timeout))
            dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                                    timeout=timedelta(seconds=op_timeout))
            try:
                result.value = fn(*args, **kwargs)
            finally:
                dist.destroy_process_group()
        except BaseException as error:  # noqa: BLE001 — every failure goes back to the launcher
            result.error = f"{type(error).__name__}: {error}"
            result.details = traceback.format_exc(limit=-4)
            result.value = None
        result.printed = printed.getvalue()[-20_000:]
        try:
            payload = pickle.dumps(result)
        except Exception as error:  # noqa: BLE001
            payload = pickle.dumps(RankResult(rank, error=f"it returned a value that cannot be "
                                                          f"sent back ({type(error).__name__})",
                                              printed=result.printed))
        view = memoryview(payload)
        while view:
            written = os.write(result_fd, view)
            view = view[written:]
        code = 0
    finally:
        os._exit(code)
