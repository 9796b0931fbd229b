"""Grading on a Dask cluster: ``coursekit autograde --cluster tcp://HOST:8786``.

The instructor's process stays what it is in a local run: it collects the class, judges
nothing remotely that it could not judge locally, and is the only writer of the gradebook.
Each submission becomes one Dask task that carries everything a worker needs and nothing more:

* the hand-in itself (the collected notebook and the bytes of the files beside it);
* the lab's context (source and release notebooks, monitor targets), sent once per lab;
* the course's manifest entries and limits, whether the sandbox is switched off, and the
  course's own check packages where it has some (sent once).

Never the course secret, the gradebook, ``solutions/`` or another student's work. The worker
grades in its own scratch course folder, with the same :class:`autograder.pipeline.grader.Grader`,
sandbox and limits as a local run, and sends back the outcome and the graded notebook; this
process writes that notebook under ``course/autograded/`` and stores the outcome. No shared
filesystem is assumed. Workers need this project installed (the same version) and, to be
sandboxed, bubblewrap; a worker without it grades unsandboxed and every such outcome says so,
as a local run's would.

Faults: a worker that dies mid-task has its task rerun on another worker by Dask's scheduler;
every attempt logs an event, so the outcome that arrives names the attempts that were lost, and
it is stored once. An unreachable or dead scheduler ends the run with a clear message; what
finished before is already stored.
"""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import io
import logging
import os
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.isolation import graded_folder, sandbox, untrusted_tree
from autograder.pipeline.collect import Submission
from autograder.pipeline.gradebook import Outcome, OutcomeStatus
from coursekit.course import Course
from coursekit.notebook import kernels

ATTEMPT_TOPIC = "coursekit-attempt"
CONNECT_TIMEOUT_S = 20
# A task whose worker dies is rerun; after this many lost workers it fails (Dask's
# "allowed-failures"), and the submission is stored as a grader error to regrade.
ALLOWED_FAILURES = 3


class ClusterError(RuntimeError):
    """The cluster cannot be reached or went away; the message says what to do."""


@dataclass
class Job:
    """One submission, as it travels to a worker."""

    key: str                      # "<student>/<lab>"
    student: str
    lab: str
    status: str
    notes: list[str]
    notebook: str | None          # the collected notebook (nbformat JSON)
    notebook_name: str | None
    files: bytes                  # a zip of the files handed in beside the notebook


@dataclass
class Result:
    outcome: Outcome
    graded_notebook: bytes | None
    grader_error: bytes | None
    worker: str
    lost_attempts: list[str] = dataclasses.field(default_factory=list)  # workers that died


def job_of(sub: Submission) -> Job:
    files = io.BytesIO()
    with zipfile.ZipFile(files, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, blocks in graded_folder.handed_in_files(sub.folder, sub.path):
            member = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            with archive.open(member, "w", force_zip64=True) as out:
                for block in blocks:
                    out.write(block)
    return Job(f"{sub.student}/{sub.lab}", sub.student, sub.lab, sub.status, list(sub.notes),
               nbformat.writes(sub.nb) if sub.nb is not None else None,
               sub.path.name if sub.path is not None else None, files.getvalue())


# --------------------------------------------------------------------------- worker side

_SCRATCH: dict[str, Path] = {}
_POOLS: dict[str, tuple] = {}   # course name -> (event loop, zygote pool), per worker process
_POOLS_LOCK = threading.Lock()


def _scratch(course_name: str) -> Path:
    """One scratch course root per worker process, so the sandbox probe runs once."""
    if course_name not in _SCRATCH:
        _SCRATCH[course_name] = Path(tempfile.mkdtemp(prefix="coursekit-worker-"))
    return _SCRATCH[course_name]


def pack_check_path(course: Course) -> bytes:
    """The course's own check packages (``check_path``), zipped: folder ``i`` as ``i/``."""
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for index, folder in enumerate(course.check_path):
            for path in sorted(Path(folder).rglob("*.py")):
                archive.write(path, f"{index}/{path.relative_to(folder).as_posix()}")
    return packed.getvalue()


def _unpack_check_path(root: Path, packed: bytes, count: int) -> tuple[Path, ...]:
    digest = hashlib.sha256(packed).hexdigest()[:16]
    target = root / "checks" / digest
    if not target.exists():
        # One staging folder per thread: a worker's threads may unpack the same packages.
        staging = root / "checks" / f".{digest}.{os.getpid()}.{threading.get_ident()}"
        staging.mkdir(parents=True, exist_ok=True)   # a course without packages unpacks none
        with zipfile.ZipFile(io.BytesIO(packed)) as archive:
            archive.extractall(staging)
        for index in range(count):
            (staging / str(index)).mkdir(parents=True, exist_ok=True)
        try:
            os.replace(staging, target)
        except OSError:   # another thread's copy is in place already
            if not target.exists():
                raise
            kernels.remove_tree(staging)
    return tuple(target / str(index) for index in range(count))


@functools.lru_cache(maxsize=None)
def _resolved_targets(checks: tuple[str, ...]) -> list[dict]:
    from coursekit.notebook import monitoring
    return monitoring.targets(list(checks))


def _targets(context) -> list[dict]:
    from coursekit.notebook.cells import CHECKS
    checks = tuple(call.check for cell in context.source.with_role(CHECKS) for call in cell.calls)
    return _resolved_targets(checks)


def _zygotes(here: Course, status, worker) -> tuple[asyncio.AbstractEventLoop, object]:
    """The worker process's pre-warmed kernels for ``here``: one pool, with two labs' worth
    of slots for the worker's threads, in one event loop that lives as long as the worker, so
    each lab's imports are paid once per slot and not once per task."""
    with _POOLS_LOCK:   # a worker runs tasks in several threads
        if here.name not in _POOLS:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="coursekit-zygotes",
                             daemon=True).start()
            slots = 2 * max(1, getattr(getattr(worker, "state", None), "nthreads", 1))
            pool = asyncio.run_coroutine_threadsafe(_pool(here, status, slots), loop).result()
            _POOLS[here.name] = (loop, pool)
        return _POOLS[here.name]


async def _pool(here: Course, status, slots: int):
    from autograder.isolation.forked import ZygotePool
    return ZygotePool(here, status, slots)   # made in its loop: its lock belongs there


def grade_job(job: Job, context, course: Course, checks: bytes, overrides, all_cells: bool,
              no_sandbox: bool, fork_kernels: bool = False) -> Result:
    """Run on a worker: grade one submission in a scratch copy of the course."""
    from distributed import get_client, get_worker

    from autograder.pipeline.grader import Grader

    name, lost = f"pid {os.getpid()}", []
    try:
        worker = get_worker()
    except ValueError:   # not on a worker (a test calling it directly)
        worker = None
    if worker is not None:
        # Earlier attempts at this submission logged themselves before they were lost; asked
        # here, not by the instructor's process, so none is missed by a race with the result.
        name = f"{worker.address} (pid {os.getpid()})"
        lost = [event["grader"] for _, event in get_client().get_events(ATTEMPT_TOPIC)
                if isinstance(event, dict) and event.get("key") == job.key]
        worker.log_event(ATTEMPT_TOPIC, {"key": job.key, "grader": name})
    root = _scratch(course.name)
    here = dataclasses.replace(course, root=root, check_path=_unpack_check_path(
        root, checks, len(course.check_path)))
    here.enable_checks()
    folder = here.submitted_dir / job.student / job.lab
    kernels.remove_tree(folder)
    folder.mkdir(parents=True)
    with zipfile.ZipFile(io.BytesIO(job.files)) as archive:
        for member in archive.infolist():
            target = (folder / member.filename).resolve()
            if folder.resolve() in target.parents:   # names were made by us; still, stay inside
                archive.extract(member, folder)
    path = None
    if job.notebook is not None:
        path = folder / (job.notebook_name or f"{job.lab}.ipynb")
        path.write_text(job.notebook, encoding="utf-8")
    sub = Submission(job.student, job.lab, job.status, folder, path,
                     nbformat.reads(job.notebook, as_version=4) if job.notebook else None,
                     list(job.notes))
    # The monitor's targets are files of this machine's installation, not the instructor's.
    context = dataclasses.replace(context, targets=_targets(context))
    status = sandbox.probe(here, disabled=no_sandbox)
    grader = Grader(here, status, overrides, all_cells)
    if fork_kernels:
        loop, grader.zygotes = _zygotes(here, status, worker)
        outcome = asyncio.run_coroutine_threadsafe(grader.grade(sub, context), loop).result()
    else:
        outcome = asyncio.run(grader.grade(sub, context))
    # Read as the grader placed them: the graded notebook, never through what the student
    # left in the folder, and the error details from the grader's own folder.
    graded, error = None, graded_folder.error_details(here.autograded_dir, job.student, job.lab)
    if outcome.notebook_file:
        workdir = here.autograded_dir / job.student / job.lab
        try:
            root = untrusted_tree.open_folder(workdir)
            try:
                graded = untrusted_tree.read_file(root, context.lab.notebook, 2**31)
            finally:
                os.close(root)
        except OSError:
            graded = None
    result = Result(outcome, graded, error.read_bytes() if error.is_file() else None, name,
                    lost)
    error.unlink(missing_ok=True)
    for scratch in (here.autograded_dir / job.student / job.lab, folder):
        try:
            kernels.remove_tree(scratch)
        except OSError:
            pass   # the next job of this student removes it before it starts
    return result


# --------------------------------------------------------------------------- instructor side

def connect(address: str):
    """A Dask client of the scheduler at ``address``, or a ClusterError that says why not."""
    import dask
    from distributed import Client
    from distributed.security import Security
    dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES})
    security = Security()  # Dask's configuration: distributed.comm.tls.*
    if address.startswith("tls://") and not (security.tls_ca_file and security.tls_client_cert):
        raise ClusterError(
            f"the Dask scheduler at {address} speaks TLS, and this machine has no certificates "
            f"for it: set distributed.comm.tls.ca-file, .client.cert and .client.key in Dask's "
            f"configuration (or DASK_DISTRIBUTED__COMM__TLS__CA_FILE, __CLIENT__CERT and "
            f"__CLIENT__KEY). Nothing was graded.")
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {address} ({type(error).__name__}: {error}). "
            f"Is `dask scheduler` running there, and is its port open to this machine? "
            f"Nothing was graded.") from None


def _store_files(course: Course, result: Result) -> None:
    """Write what the worker sent back where a local run would have left it."""
    outcome = result.outcome
    folder = course.autograded_dir / outcome.student / outcome.lab
    if result.graded_notebook is not None and outcome.notebook_file:
        target = course.root / outcome.notebook_file
        target.parent.mkdir(parents=True, exist_ok=True)
        untrusted_tree.place(result.graded_notebook, target.parent, target.name,
                             staging=folder.parent)
    if result.grader_error is not None:
        graded_folder.write_error_details(course.autograded_dir, outcome.student, outcome.lab,
                                          result.grader_error.decode("utf-8", "replace"))


def _attempts(client, key: str) -> list[str]:
    return [event["grader"] for _, event in client.get_events(ATTEMPT_TOPIC)
            if isinstance(event, dict) and event.get("key") == key]


def _dashboard(client) -> str:
    try:
        return client.dashboard_link
    except (KeyError, AttributeError):  # a scheduler started without its dashboard
        return "none (the scheduler runs without one)"


def _same(value):
    return value


def grade_on_cluster(address: str, grader, submissions: list[Submission], contexts: dict,
                     *, on_done, no_sandbox: bool = False, log=print) -> list[Outcome]:
    """Grade ``submissions`` on the cluster at ``address``; ``on_done`` stores each outcome
    here as it arrives and returns it as stored (the same callback a local run uses)."""
    # Dask logs its own reconnect attempts with tracebacks; this process says what happened in
    # one message instead (ClusterError), so the instructor sees no wall of text.
    # Dask's configuration gives some of its loggers levels of their own, and its client
    # thread may still log after this returns: they stay quiet for the rest of the process.
    import distributed  # noqa: F401 — sets up its loggers first
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    return _grade_on_cluster(address, grader, submissions, contexts, on_done=on_done,
                             no_sandbox=no_sandbox, log=log)


def _grade_on_cluster(address: str, grader, submissions: list[Submission], contexts: dict,
                      *, on_done, no_sandbox: bool, log) -> list[Outcome]:
    from distributed import as_completed
    from distributed.client import FutureCancelledError

    client = connect(address)
    outcomes: list[Outcome] = []
    try:
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
        log(f"cluster: {address}, {len(workers)} worker(s), "
            f"{sum(w.get('nthreads', 1) for w in workers.values())} thread(s); dashboard: "
            f"{_dashboard(client)}")
        # Sent once, as tasks that return them rather than scattered data: a scattered value
        # dies with the worker holding it, a task's result is recomputed from the scheduler.
        shared = {lab: client.submit(_same, context, pure=False)
                  for lab, context in contexts.items()}
        course, overrides = grader.course, grader.overrides
        checks = client.submit(_same, pack_check_path(course), pure=False)
        futures = {}
        per_worker: dict[str, int] = {}  # submissions graded (or given up) per worker
        retried = 0
        for sub in submissions:
            job = job_of(sub)
            future = client.submit(grade_job, job, shared[sub.lab], course, checks, overrides,
                                   grader.all_cells, no_sandbox, grader.fork_kernels,
                                   key=f"grade-{job.key}-"
                                   f"{os.urandom(4).hex()}", pure=False)
            futures[future] = (sub, job)
        try:
            for future in as_completed(futures, loop=client.loop):
                sub, job = futures[future]
                try:
                    result: Result = future.result()
                except (FutureCancelledError, asyncio.CancelledError) as error:
                    raise ClusterError(
                        f"the Dask scheduler at {address} went away ({error}); the "
                        f"{len(outcomes)} submission(s) graded so far are stored. Run the "
                        f"same command again: it grades only what is not graded yet.") from None
                except Exception as error:  # noqa: BLE001 — KilledWorker, a lost worker
                    result = _lost(grader, sub, contexts[sub.lab], error, client, job.key)
                outcome = result.outcome
                if result.lost_attempts:
                    outcome = outcome.with_reason(
                        f"graded on {result.worker} after {len(result.lost_attempts)} "
                        f"attempt(s) on {', '.join(result.lost_attempts)} were lost (the "
                        f"worker died); retried by the cluster")
                _store_files(course, result)
                outcomes.append(on_done(outcome))
                per_worker[result.worker] = per_worker.get(result.worker, 0) + 1
                retried += bool(result.lost_attempts)
        except OSError as error:
            raise ClusterError(f"lost the Dask scheduler at {address} ({error}); the "
                               f"{len(outcomes)} submission(s) graded so far are stored. Run "
                               f"the same command again: it grades only what is not graded "
                               f"yet.") from None
        log("cluster summary: " + ", ".join(f"{worker} {count}" for worker, count
                                            in sorted(per_worker.items()))
            + f"; {retried} submission(s) retried after a worker died")
    finally:
        try:
            client.close(timeout=10)
        except Exception:  # noqa: BLE001 — closing a client of a dead scheduler
            pass
    return outcomes


def _lost(grader, sub: Submission, context, error: Exception, client, key: str) -> Result:
    """The submission could not be graded on the cluster: a grader error, stored to regrade."""
    from coursekit.notebook.safe_text import failure
    from coursekit.notebook.score import score_notebook
    workers = _attempts(client, key)
    reason = (f"the cluster could not grade this submission ({failure(error)}; tried on "
              f"{', '.join(workers) or 'no worker'}): a problem of the grader, not of the work "
              f"handed in; regrade it with `coursekit autograde --student {sub.student} "
              f"--lab {sub.lab}`")
    import time
    outcome = grader._outcome(sub, context, OutcomeStatus.ERROR, reasons=(reason,),
                              cells=score_notebook(context.source, None, None,
                                                   seed_of=grader.seeds(), zero_reason=reason),
                              graded_at=time.time())
    return Result(outcome, None, None, workers[-1] if workers else "no worker")
