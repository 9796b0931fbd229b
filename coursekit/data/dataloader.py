"""The DataLoader: connects a dataset, a sampler, a collate function and workers.

Data flows one way::

    sampler ──indices──▶ BatchSampler ──[i, j, ...]──▶ fetch (dataset[i] or
    dataset.__getitems__) ──samples──▶ collate_fn ──batch──▶ (pin_memory) ──▶ you

With ``num_workers=0`` that chain runs in the main process, one batch per
``next()``. With ``num_workers=N`` the main process only runs the samplers: it
hands each batch's indices to a worker process (round robin, at most
``prefetch_factor`` batches ahead per worker), and yields the collated batches
in sampler order however the workers' finishing order turns out.

NOTE [Dead and stuck workers]
    The main process never waits on a worker blindly: it waits on all result
    pipes *and* on every worker's process sentinel at once, so a worker that is
    killed (the out-of-memory killer's SIGKILL, ``os._exit``, a segfault in a C
    extension) is noticed the moment it dies and reported as a
    :class:`~coursekit.data.worker.WorkerDiedError` naming the batch it owed.
    ``timeout`` additionally bounds how long one batch may take.
"""

from __future__ import annotations

import math
import multiprocessing
import numbers
import signal
import sys
import time
import warnings
import weakref
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for_ready
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import describe_failure, make_fetcher
from .generator import Randomness, resolve_generator
from .pin_memory import PinMemoryWarning, pin_memory, pinning_available
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import DataLoaderTimeoutError, WorkerDiedError, load_message, worker_loop

__all__ = ["DataLoader"]

T_co = TypeVar("T_co", covariant=True)

# How long the main process sleeps between liveness checks while it waits (seconds).
_POLL_INTERVAL = 1.0
# How long shutdown waits for workers to leave on their own before terminating them.
_SHUTDOWN_GRACE = 1.0
# Kernel buffer asked for each result pipe (Linux caps it at /proc/sys/fs/pipe-max-size).
_RESULT_PIPE_BYTES = 1 << 20
# Attributes that decide what an epoch yields; changing them after construction
# would silently disagree with the samplers already built (PyTorch forbids it too).
_FROZEN_AFTER_INIT = ("dataset", "batch_size", "batch_sampler", "sampler", "drop_last", "persistent_workers")


def _default_mp_context() -> Any:
    # fork on Linux: workers start in milliseconds and inherit datasets and
    # functions defined in a notebook, which spawn could not import. Elsewhere
    # (macOS, Windows) fork is unsafe or absent, so the platform default is used.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _is_iterable_dataset(dataset: Any) -> bool:
    """A coursekit IterableDataset, or torch's (which a coursekit loader also reads).

    A torch IterableDataset that shards with ``torch.utils.data.get_worker_info()``
    does not shard in coursekit workers (that function only knows torch's
    workers); use :func:`coursekit.data.get_worker_info` there.
    """
    if isinstance(dataset, IterableDataset):
        return True
    torch_data = sys.modules.get("torch.utils.data")
    return torch_data is not None and isinstance(dataset, torch_data.IterableDataset)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class DataLoader(Generic[T_co]):
    """Iterates over a dataset in batches.

    Args:
        dataset: a map-style dataset (``__getitem__`` and ``__len__``, e.g. a
            :class:`~coursekit.data.TensorDataset`) or an
            :class:`~coursekit.data.IterableDataset`.
        batch_size: samples per batch; ``None`` turns batching off (each
            sample passes through ``collate_fn`` alone).
        shuffle: a new random order each epoch (map-style datasets only).
        sampler: the order of sample indices, instead of ``shuffle``.
        batch_sampler: yields whole lists of indices; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers: worker processes; ``0`` loads in the main process. Each
            worker holds its own copy of the dataset; an IterableDataset must
            shard itself with :func:`~coursekit.data.get_worker_info`, or every
            sample arrives once per worker (as in PyTorch).
        collate_fn: turns a list of samples into a batch
            (:func:`~coursekit.data.default_collate` by default).
        pin_memory: put torch tensors of each batch in pinned memory (only
            with CUDA; otherwise a no-op, said once with a
            :class:`~coursekit.data.pin_memory.PinMemoryWarning`).
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        timeout: seconds to wait for one batch from the workers; ``0`` waits as
            long as the workers are alive.
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker,
            after it is seeded.
        multiprocessing_context: a start method name (``"fork"``, ``"spawn"``,
            ``"forkserver"``) or a ``multiprocessing`` context; fork on Linux by
            default.
        generator: ``None``, an int seed, a ``numpy.random.Generator`` or a
            ``torch.Generator``; drives shuffling and the workers' base seed.
            With a ``torch.Generator`` the order equals
            ``torch.utils.data.DataLoader``'s for the same generator state.
        prefetch_factor: batches loaded ahead per worker (2 by default; only
            with workers).
        persistent_workers: keep the workers alive between epochs (only with
            workers).

    Raises:
        ValueError: for an invalid argument or a combination PyTorch also
            refuses; the message names what was given and what is allowed.

    While iterating, an exception raised by the dataset or ``collate_fn`` reaches
    you with its own type and message, plus a note naming the worker (or the
    main process), the batch and the sample index, and, from a worker, the
    worker's traceback as its ``__cause__``. A worker that dies raises
    :class:`~coursekit.data.WorkerDiedError`; a batch slower than ``timeout``
    raises :class:`~coursekit.data.DataLoaderTimeoutError`.

    Example:
        >>> import numpy as np
        >>> from coursekit.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
        >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
    ) -> None:
        # --- workers -----------------------------------------------------------
        if not _is_int(num_workers) or num_workers < 0:
            raise ValueError(
                f"DataLoader: num_workers should be a non-negative integer (0 loads in the main process), "
                f"got num_workers={num_workers!r}"
            )
        if not isinstance(timeout, numbers.Real) or isinstance(timeout, bool) or timeout < 0:
            raise ValueError(f"DataLoader: timeout should be a non-negative number of seconds, got timeout={timeout!r}")
        if timeout > 0 and num_workers == 0:
            raise ValueError(
                f"DataLoader: timeout bounds the wait for worker processes, so it needs num_workers > 0; "
                f"got timeout={timeout!r} with num_workers=0"
            )
        if prefetch_factor is not None:
            if num_workers == 0:
                raise ValueError(
                    f"DataLoader: prefetch_factor is the number of batches each worker loads ahead, so it needs "
                    f"num_workers > 0; got prefetch_factor={prefetch_factor!r} with num_workers=0 (leave it None)"
                )
            if not _is_int(prefetch_factor) or prefetch_factor < 1:
                raise ValueError(f"DataLoader: prefetch_factor should be a positive integer, got {prefetch_factor!r}")
        elif num_workers > 0:
            prefetch_factor = 2
        if not _is_bool(persistent_workers):
            raise ValueError(f"DataLoader: persistent_workers should be True or False, got {persistent_workers!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError(
                "DataLoader: persistent_workers=True keeps worker processes alive between epochs, so it needs "
                "num_workers > 0; got num_workers=0"
            )
        if multiprocessing_context is not None:
            if num_workers == 0:
                raise ValueError(
                    f"DataLoader: multiprocessing_context only matters with worker processes; got "
                    f"multiprocessing_context={multiprocessing_context!r} with num_workers=0"
                )
            if isinstance(multiprocessing_context, str):
                methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in methods:
                    raise ValueError(
                        f"DataLoader: multiprocessing_context should be one of {methods}, got {multiprocessing_context!r}"
                    )
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            elif not hasattr(multiprocessing_context, "Process"):
                raise ValueError(
                    "DataLoader: multiprocessing_context should be a start method name or a multiprocessing "
                    f"context, got {type(multiprocessing_context).__name__}"
                )
        for name, fn in (("collate_fn", collate_fn), ("worker_init_fn", worker_init_fn)):
            if fn is not None and not callable(fn):
                raise ValueError(f"DataLoader: {name} should be callable or None, got {type(fn).__name__} {fn!r}")
        if not _is_bool(pin_memory):
            raise ValueError(f"DataLoader: pin_memory should be True or False, got {pin_memory!r}")
        if not _is_bool(drop_last):
            raise ValueError(f"DataLoader: drop_last should be True or False, got {drop_last!r}")
        if shuffle is not None and not _is_bool(shuffle):
            raise ValueError(f"DataLoader: shuffle should be True, False or None, got {shuffle!r}")
        if batch_size is not None and (not _is_int(batch_size) or batch_size <= 0):
            raise ValueError(
                f"DataLoader: batch_size should be a positive integer, or None to turn batching off; "
                f"got batch_size={batch_size!r}"
            )
        generator = resolve_generator(generator, "DataLoader: generator")

        # --- dataset style and samplers ---------------------------------------
        iterable = _is_iterable_dataset(dataset)
        if iterable:
            # A stream has no indices, so nothing can reorder or pick from it.
            if shuffle:
                raise ValueError(
                    "DataLoader: an IterableDataset decides its own order, so shuffle must be left unset; "
                    f"got shuffle={shuffle!r} (shuffle inside the dataset's __iter__ instead)"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader: an IterableDataset has no indices for a sampler; got sampler={sampler!r}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    f"DataLoader: an IterableDataset has no indices for a batch_sampler; got batch_sampler={batch_sampler!r}"
                )
        elif not hasattr(dataset, "__getitem__"):
            raise ValueError(
                f"DataLoader: expected a map-style dataset (with __getitem__ and __len__) or an IterableDataset, "
                f"got {type(dataset).__name__}; wrap a stream in an IterableDataset subclass"
            )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError(
                "DataLoader: sampler and shuffle=True both choose the order; pass one of them "
                "(e.g. RandomSampler(dataset) as the sampler)"
            )
        if batch_sampler is not None:
            given = [f"{n}={v!r}" for n, v, default in (("batch_size", batch_size, 1), ("shuffle", shuffle, False),
                     ("sampler", sampler, None), ("drop_last", drop_last, False)) if v != default]
            if given:
                raise ValueError(
                    "DataLoader: batch_sampler already decides the batches, so batch_size, shuffle, sampler and "
                    f"drop_last must keep their defaults; got {', '.join(given)}"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None turns batching off, so there is no last batch to drop; "
                "got drop_last=True"
            )
        if not iterable:
            if sampler is None and batch_sampler is None and not hasattr(dataset, "__len__"):
                raise ValueError(
                    f"DataLoader: the default sampler needs len(dataset), but {type(dataset).__name__} has no "
                    "__len__; define it, pass a sampler, or make the dataset an IterableDataset"
                )
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = int(num_workers)
        self.collate_fn = collate_fn or (default_collate if batch_size is not None or batch_sampler is not None else default_convert)
        self.pin_memory = bool(pin_memory)
        self.drop_last = bool(drop_last)
        self.timeout = float(timeout)
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = bool(persistent_workers)
        self._iterable = iterable
        self._auto_collation = batch_size is not None if iterable else batch_sampler is not None
        self._iterator: _MultiProcessIter | None = None
        self._pin_warned = False
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FROZEN_AFTER_INIT and self.__dict__.get("_initialized", False):
            raise ValueError(
                f"DataLoader: {name} cannot change after the DataLoader is built (its samplers depend on it); "
                "build a new DataLoader instead"
            )
        super().__setattr__(name, value)

    @property
    def _index_sampler(self) -> Any:
        # What the iterator draws requests from: whole batches when batching,
        # single indices when batch_size=None.
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        """Batches per epoch (for an IterableDataset, from ``len(dataset)``)."""
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self._index_sampler)

    def _pin(self) -> bool:
        if not self.pin_memory:
            return False
        if pinning_available():
            return True
        if not self._pin_warned:
            self._pin_warned = True
            reason = "torch is not loaded" if "torch" not in sys.modules else "torch sees no CUDA device"
            warnings.warn(
                f"pin_memory=True has no effect here: {reason}. Pinned memory only speeds up copies from the "
                "host to a GPU, so batches stay in ordinary memory.",
                PinMemoryWarning,
                stacklevel=3,
            )
        return False

    def __iter__(self) -> Iterator[Any]:
        pin = self._pin()
        if self.num_workers == 0:
            return _SingleProcessIter(self, pin)
        if self.persistent_workers:
            if self._iterator is None or self._iterator.closed:
                self._iterator = _MultiProcessIter(self, pin)
            else:
                self._iterator.next_epoch()
            return self._iterator
        return _MultiProcessIter(self, pin)


class _BaseIter:
    """What both iterators share: the epoch's index stream and the worker seed."""

    def __init__(self, loader: DataLoader, pin: bool) -> None:
        self._loader = loader
        self._pin = pin
        # The base seed is drawn before the sampler's first draw, as in PyTorch,
        # so that the same torch.Generator gives the same order in both.
        self._base_seed = Randomness(loader.generator).seed()
        self._requests = None if loader._iterable else iter(loader._index_sampler)

    def __iter__(self) -> "_BaseIter":
        return self

    def __len__(self) -> int:
        return len(self._loader)


class _SingleProcessIter(_BaseIter):
    """Loads each batch in the main process when ``next()`` asks for it."""

    def __init__(self, loader: DataLoader, pin: bool) -> None:
        super().__init__(loader, pin)
        self._fetcher = make_fetcher(loader._iterable, loader.dataset, loader._auto_collation,
                                     loader.collate_fn, loader.batch_size, loader.drop_last)
        self._batch_index = 0

    def __next__(self) -> Any:
        request = None if self._requests is None else next(self._requests)
        try:
            batch = self._fetcher.fetch(request)
        except StopIteration as exc:
            if self._requests is None:  # the end of a stream
                raise
            # From a map-style dataset it is a bug; let it through and the epoch
            # would end early without a word (PEP 479 makes the same choice).
            raise RuntimeError(
                f"dataset raised StopIteration {describe_failure(self._fetcher, self._batch_index, request)}; "
                "a map-style dataset should raise IndexError for an index it does not have"
            ) from exc
        except Exception as exc:
            exc.add_note(f"DataLoader (main process) raised this {describe_failure(self._fetcher, self._batch_index, request)}.")
            raise
        self._batch_index += 1
        return pin_memory(batch) if self._pin else batch


@dataclass
class _Worker:
    id: int
    process: Any
    task_conn: Any  # main → worker
    result_conn: Any  # worker → main


def _shutdown_workers(workers: list[_Worker]) -> None:
    """Ask every worker to leave, then make sure it has (a module function: see weakref.finalize)."""
    for w in workers:
        try:
            w.task_conn.send(None)
        except (OSError, ValueError):
            pass
    # Closing our ends makes a worker blocked on sending a result fail and exit.
    for w in workers:
        for conn in (w.task_conn, w.result_conn):
            try:
                conn.close()
            except OSError:
                pass
    deadline = time.monotonic() + _SHUTDOWN_GRACE
    for w in workers:
        w.process.join(max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.process.is_alive():  # still busy in a slow __getitem__
            w.process.terminate()
            w.process.join(_SHUTDOWN_GRACE)


def _widen_pipe(conn: Any) -> None:
    """Give a result pipe room for several batches (Linux only; best effort).

    A pipe holds 64 KiB by default, less than one batch of 64 x 256 float32, so a
    worker would stall on every send until the main process drains it; on a busy
    machine each stall costs a scheduler time slice.
    """
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, _RESULT_PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def _exit_description(exitcode: int | None) -> str:
    if exitcode is None:
        return "exit code unknown"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}"
    return f"exit code {exitcode}"


class _MultiProcessIter(_BaseIter):
    """Hands batches to worker processes and yields their results in order."""

    def __init__(self, loader: DataLoader, pin: bool) -> None:
        super().__init__(loader, pin)
        ctx = loader.multiprocessing_context or _default_mp_context()
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers  # type: ignore[operator]
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._workers: list[_Worker] = []
        self.closed = False
        self._failure: str | None = None
        self._shutdown = weakref.finalize(self, _shutdown_workers, self._workers)
        for wid in range(self._num_workers):
            task_reader, task_writer = ctx.Pipe(duplex=False)
            result_reader, result_writer = ctx.Pipe(duplex=False)
            _widen_pipe(result_writer)
            process = ctx.Process(
                target=worker_loop,
                args=(loader.dataset, loader._iterable, loader._auto_collation, loader.collate_fn, loader.batch_size,
                      loader.drop_last, self._base_seed, wid, self._num_workers, loader.worker_init_fn,
                      task_reader, result_writer),
                name=f"coursekit-DataLoader-worker-{wid}",
                daemon=True,  # never outlive the main process
            )
            process.start()
            # The worker owns these ends now; closing ours means its death
            # shows up as end-of-file on the result pipe as well.
            task_reader.close()
            result_writer.close()
            self._workers.append(_Worker(wid, process, task_writer, result_reader))
        # What the main process waits on: every result pipe and every process
        # sentinel (see NOTE [Dead and stuck workers]).
        self._by_handle: dict[Any, tuple[str, _Worker]] = {}
        for w in self._workers:
            self._by_handle[w.result_conn] = ("result", w)
            self._by_handle[w.process.sentinel] = ("exit", w)
        self._handles = list(self._by_handle)
        self._epoch = 0
        self._start_epoch()

    # --- epochs ------------------------------------------------------------

    def _start_epoch(self) -> None:
        self._send_idx = 0  # next batch index to hand out
        self._rcvd_idx = 0  # next batch index to yield
        self._owner: dict[int, int] = {}  # batch index -> worker id, until yielded
        self._sent: dict[int, Any] = {}  # batch index -> its request, for error messages
        self._results: dict[int, tuple[str, Any]] = {}  # arrived, not yet yielded
        self._active = [True] * self._num_workers  # iterable: this worker's stream still runs
        self._next_worker = 0
        self._requests_done = False
        for _ in range(self._prefetch):
            self._dispatch()

    def next_epoch(self) -> None:
        """Start another epoch on the same (persistent) workers."""
        self._epoch += 1
        loader = self._loader
        if loader._iterable:
            for w in self._workers:
                w.task_conn.send(("reset", self._epoch))
        else:
            self._requests = iter(loader._index_sampler)
        self._start_epoch()

    def _end_epoch(self) -> None:
        if not self._persistent:
            self.close()

    def close(self) -> None:
        """Shut the workers down (idempotent)."""
        self.closed = True
        self._shutdown()

    # --- handing out and collecting batches -----------------------------

    def _dispatch(self) -> None:
        """Send the next batch's request to the next worker in turn, if there is one."""
        if self._requests_done:
            return
        if self._requests is None:  # iterable: the request is "your next batch"
            request = None
        else:
            try:
                request = next(self._requests)
            except StopIteration:
                self._requests_done = True
                return
        for _ in range(self._num_workers):
            wid = self._next_worker
            self._next_worker = (wid + 1) % self._num_workers
            if self._active[wid]:
                break
        else:
            self._requests_done = True  # every stream has ended
            return
        idx = self._send_idx
        self._workers[wid].task_conn.send(("task", self._epoch, idx, request))
        self._owner[idx] = wid
        self._sent[idx] = request
        self._send_idx += 1

    def __next__(self) -> Any:
        if self.closed:
            if self._failure is not None:
                raise RuntimeError(f"This DataLoader iterator stopped after an earlier error: {self._failure}")
            raise StopIteration
        while True:
            if self._rcvd_idx >= self._send_idx:
                self._end_epoch()
                raise StopIteration
            idx = self._rcvd_idx
            status, payload = self._wait_for(idx)
            self._rcvd_idx += 1
            del self._owner[idx], self._sent[idx]
            self._dispatch()  # keep prefetch batches in flight
            if status == "exhausted":
                continue
            if status == "error":
                payload.reraise()
            return pin_memory(payload) if self._pin else payload

    def _wait_for(self, idx: int) -> tuple[str, Any]:
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while idx not in self._results:
            wait = _POLL_INTERVAL
            if deadline is not None:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    self._raise_timeout(idx)
                wait = min(wait, _POLL_INTERVAL)
            for handle in wait_for_ready(self._handles, wait):
                what, w = self._by_handle[handle]
                if what == "result":
                    self._receive(w)
                else:
                    self._died(w)
        return self._results.pop(idx)

    def _receive(self, w: _Worker) -> None:
        try:
            data = w.result_conn.recv_bytes()
        except (EOFError, OSError):
            self._died(w)
            return
        epoch, idx, status, payload = load_message(data)
        if epoch != self._epoch:  # left over from an epoch that was abandoned
            return
        if status == "exhausted":
            self._active[w.id] = False
        self._results[idx] = (status, payload)

    def _died(self, w: _Worker) -> None:
        # Whatever it sent before dying is still valid.
        try:
            while w.result_conn.poll(0):
                data = w.result_conn.recv_bytes()
                epoch, idx, status, payload = load_message(data)
                if epoch == self._epoch:
                    self._results[idx] = (status, payload)
        except (EOFError, OSError):
            pass
        w.process.join(1.0)
        owed = sorted(i for i, owner in self._owner.items() if owner == w.id and i not in self._results)
        if owed:
            request = self._sent[owed[0]]
            what = f"while it was loading batch {owed[0]}"
            if isinstance(request, list):
                what += f" (sample indices {request[:16]}{' ...' if len(request) > 16 else ''})"
        else:
            what = "while it had no batch to load"
        how = _exit_description(w.process.exitcode)
        hint = ""
        if w.process.exitcode == -signal.SIGKILL:
            hint = (" SIGKILL often means the operating system ran out of memory and killed the process; "
                    "try fewer workers or smaller batches.")
        self._failure = f"DataLoader worker {w.id} (pid {w.process.pid}) exited unexpectedly ({how}) {what}."
        self.close()
        raise WorkerDiedError(
            f"{self._failure}{hint} All workers of this iterator have been shut down; start a new epoch "
            "with iter(loader)."
        )

    def _raise_timeout(self, idx: int) -> None:
        wid = self._owner[idx]
        request = self._sent[idx]
        shown = f" (sample indices {request[:16]})" if isinstance(request, list) else ""
        raise DataLoaderTimeoutError(
            f"DataLoader timed out: batch {idx}{shown} did not arrive from worker {wid} within "
            f"timeout={self._timeout:g} s. Loading one batch takes longer than that, or the worker is stuck."
        )
