"""Worker processes: what runs inside one, and how its results and errors travel.

A worker is a process holding its own copy of the dataset. It waits for
requests ``("task", epoch, batch_index, indices)`` on its task pipe, fetches and
collates that batch, and sends ``(epoch, batch_index, status, payload)`` back on
its result pipe, where ``status`` is ``"ok"`` (payload: the batch), ``"error"``
(payload: a :class:`WorkerFailure`) or ``"exhausted"`` (an iterable dataset's
stream has ended in this worker). ``None`` on the task pipe ends the worker.

NOTE [Seeding workers]
    With the fork start method every worker starts as a copy of the main process,
    *including the state of every random generator*. Left alone, all workers
    would draw the same "random" crops and noise. Each worker therefore seeds
    Python's ``random`` and torch (when loaded) with ``base_seed + worker_id`` and
    NumPy's global generator from ``SeedSequence([worker_id, base_seed])``;
    ``base_seed`` is drawn from the DataLoader's generator once per iterator, so
    a seeded DataLoader seeds its workers reproducibly.

NOTE [Threads in workers]
    A worker limits torch to one intra-op thread (PyTorch's workers do the same):
    with several workers the cores are already busy, more threads per worker only
    oversubscribe them, and GNU OpenMP's thread pool does not survive ``fork``.
"""

from __future__ import annotations

import io
import os
import pickle
import random
import signal
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .fetch import describe_failure, make_fetcher

__all__ = [
    "WorkerInfo",
    "get_worker_info",
    "WorkerFailure",
    "WorkerTraceback",
    "WorkerDiedError",
    "DataLoaderTimeoutError",
]

# How often an idle worker checks that the main process still exists (seconds).
_PARENT_CHECK_INTERVAL = 1.0


class WorkerInfo:
    """What a worker knows about itself; see :func:`get_worker_info`.

    Attributes:
        id: this worker's number, ``0 <= id < num_workers``.
        num_workers: how many workers the DataLoader started.
        seed: the seed this worker's generators were seeded with.
        dataset: this worker's copy of the dataset.
    """

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id: int, num_workers: int, seed: int, dataset: Any) -> None:
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"WorkerInfo is read-only; cannot set {name!r}")

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, dataset={type(self.dataset).__name__})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's :class:`WorkerInfo`, or ``None`` in the main process.

    Call it in an :class:`~coursekit.data.IterableDataset`'s ``__iter__`` to give
    each worker its own share of the stream, or in a ``worker_init_fn``.
    """
    return _worker_info


class WorkerTraceback(Exception):
    """The traceback text of an exception raised in a worker process.

    Attached as ``__cause__`` of the re-raised exception, so the worker's
    traceback is printed above the main process's one.
    """

    def __str__(self) -> str:
        return "\n" + self.args[0]


class WorkerDiedError(RuntimeError):
    """A worker process ended while the DataLoader still needed it."""


class DataLoaderTimeoutError(RuntimeError):
    """No batch arrived from the workers within the DataLoader's ``timeout``."""


@dataclass
class WorkerFailure:
    """An exception raised in a worker, packed to cross to the main process.

    The exception itself travels pickled when it can; its traceback cannot, so it
    travels as text. :meth:`reraise` rebuilds it in the main process.
    """

    worker_id: int
    pid: int
    where: str
    type_name: str
    message: str
    exception_bytes: bytes | None
    traceback_text: str

    @classmethod
    def capture(cls, exc: BaseException, worker_id: int, where: str) -> "WorkerFailure":
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        try:
            packed: bytes | None = pickle.dumps(exc)
            pickle.loads(packed)  # some exceptions pickle but cannot be rebuilt
        except Exception:  # noqa: BLE001 — then the main process gets the text alone
            packed = None
        return cls(worker_id, os.getpid(), where, type(exc).__qualname__, str(exc), packed, text)

    def reraise(self) -> None:
        """Raise the worker's exception here: same type and message, plus where it happened."""
        exc: BaseException | None = None
        if self.exception_bytes is not None:
            try:
                exc = pickle.loads(self.exception_bytes)
            except Exception:  # noqa: BLE001 — rebuilt from the text below instead
                exc = None
        if not isinstance(exc, Exception) or isinstance(exc, StopIteration):
            # Unpicklable; SystemExit / KeyboardInterrupt, which must not end the
            # main process; or StopIteration, which would silently end the epoch.
            exc = RuntimeError(f"{self.type_name}: {self.message}")
        exc.add_note(f"DataLoader worker {self.worker_id} (pid {self.pid}) raised this {self.where}.")
        cause = WorkerTraceback(f"Traceback in DataLoader worker {self.worker_id} (pid {self.pid}):\n{self.traceback_text}")
        raise exc from cause


# --- moving batches between processes ------------------------------------------


def _torch_from_numpy(array: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(array)


class _BatchPickler(pickle.Pickler):
    """A pickler that sends CPU torch tensors as NumPy arrays.

    NOTE [Sending torch tensors]
        Plain pickling serialises a torch tensor's *whole* storage through
        ``torch.save`` (slow, and a row of a big tensor drags the big tensor
        along); ``multiprocessing``'s pickler moves it into shared memory and
        passes a file descriptor (fast for large tensors, slow for the small
        ones a batch is made of). A batch is small and about to be used once,
        so it goes as a NumPy view of exactly its own bytes and comes back with
        ``torch.from_numpy``, no extra copy. Anything NumPy cannot view (bfloat16,
        tensors that require grad, non-CPU tensors) falls back to torch's own
        pickling.
    """

    def reducer_override(self, obj: Any) -> Any:
        torch = sys.modules.get("torch")
        if torch is not None and type(obj) is torch.Tensor:
            if obj.device.type == "cpu" and obj.layout == torch.strided and not obj.requires_grad:
                try:
                    return _torch_from_numpy, (obj.numpy(),)
                except (TypeError, RuntimeError):
                    return NotImplemented
        return NotImplemented


def dump_message(message: Any) -> bytes:
    """Pickle a worker's message (see :class:`_BatchPickler`)."""
    buffer = io.BytesIO()
    _BatchPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
    return buffer.getvalue()


def load_message(data: bytes) -> Any:
    """Unpickle a worker's message."""
    return pickle.loads(data)


# --- the worker process ----------------------------------------------------------


def _seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed this worker's generators; see NOTE [Seeding workers]."""
    seed = base_seed + worker_id
    random.seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return seed


def worker_loop(
    dataset: Any,
    iterable: bool,
    auto_collation: bool,
    collate_fn: Callable[[Any], Any],
    batch_size: int | None,
    drop_last: bool,
    base_seed: int,
    worker_id: int,
    num_workers: int,
    worker_init_fn: Callable[[int], None] | None,
    task_conn: Any,
    result_conn: Any,
) -> None:
    """The body of a worker process (see the module docstring for the protocol)."""
    global _worker_info
    # Whoever started us (the main process, or forkserver's server); if it goes
    # away we are re-parented, and nobody will ask for batches any more.
    parent_pid = os.getppid()
    # Ctrl-C reaches the whole process group; the main process handles it and
    # shuts the workers down, so a worker should not print its own traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)  # NOTE [Threads in workers]
    seed = _seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

    def new_fetcher() -> Any:
        return make_fetcher(iterable, dataset, auto_collation, collate_fn, batch_size, drop_last)

    fetcher = None
    start_failure: WorkerFailure | None = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        fetcher = new_fetcher()
    except BaseException as exc:  # noqa: BLE001 — reported with the first batch this worker owes
        start_failure = WorkerFailure.capture(exc, worker_id, "while starting (worker_init_fn or iter(dataset))")

    def send(message: tuple[Any, ...]) -> None:
        try:
            data = dump_message(message)
        except Exception as exc:  # noqa: BLE001 — an unpicklable batch is that batch's error
            epoch, batch_index = message[0], message[1]
            failure = WorkerFailure.capture(exc, worker_id, f"while sending batch {batch_index} to the main process")
            data = dump_message((epoch, batch_index, "error", failure))
        result_conn.send_bytes(data)

    try:
        while True:
            if not task_conn.poll(_PARENT_CHECK_INTERVAL):
                if os.getppid() != parent_pid:  # our parent is gone
                    return
                continue
            message = task_conn.recv()
            if message is None:
                return
            if message[0] == "reset":  # a new epoch of an iterable dataset (persistent workers)
                if start_failure is None:
                    try:
                        fetcher = new_fetcher()
                    except BaseException as exc:  # noqa: BLE001 — reported with the next batch
                        start_failure = WorkerFailure.capture(exc, worker_id, "while starting a new epoch (iter(dataset))")
                continue
            _, epoch, batch_index, request = message
            if start_failure is not None:
                send((epoch, batch_index, "error", start_failure))
                continue
            try:
                batch = fetcher.fetch(request)  # type: ignore[union-attr]
            except StopIteration:
                if iterable:
                    send((epoch, batch_index, "exhausted", None))
                    continue
                # Sent as an error: a StopIteration re-raised in the main process
                # would end the epoch early without a word.
                bug = StopIteration("the dataset raised StopIteration; a map-style dataset should raise IndexError "
                                    "for an index it does not have")
                failure = WorkerFailure.capture(bug, worker_id, describe_failure(fetcher, batch_index, request))  # type: ignore[arg-type]
                send((epoch, batch_index, "error", failure))
                continue
            except BaseException as exc:  # noqa: BLE001 — the main process re-raises it
                failure = WorkerFailure.capture(exc, worker_id, describe_failure(fetcher, batch_index, request))  # type: ignore[arg-type]
                send((epoch, batch_index, "error", failure))
                continue
            send((epoch, batch_index, "ok", batch))
            del batch
    except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
        return  # the main process closed the pipes: nothing left to do
    finally:
        task_conn.close()
        result_conn.close()
