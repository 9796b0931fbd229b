"""``python -m coursekit.grading.zygote SOCKET UID``: a pre-warmed parent of grading kernels.

It runs inside a job slot's sandbox (``autograder.isolation.forked``), imports the lab's setup imports
and check modules once, exactly as a grading kernel would before its monitor
(:func:`coursekit.grading.kernel.preload_from_env`), and then forks one grading kernel per
submission, so no submission pays the interpreter's start and the frameworks' imports again.
It never runs student code itself, and it never computes: only imports and warm-ups.

Protocol, one submission at a time. The grader's proxy (``autograder.isolation.kernel_proxy``), running
as root outside the sandbox, connects to SOCKET (mode 0600, owned by root: the kernel's uid
cannot connect) and sends one JSON line: the kernel's environment, working folder, connection
file, rlimits and the path of its hand-off socket. The zygote forks; the child connects to
the hand-off socket, where the proxy reads its host pid (``SO_PEERCRED``), moves it into the
submission's cgroup and passes it stdin, stdout and stderr. Only then does the child become
the slot's uid, take its rlimits, install the monitor and start ipykernel.

When the kernel exits, or the proxy goes away (the grader killed it), the zygote kills every
process of the slot's uid in the sandbox, deletes what that uid left in ``/tmp``,
``/dev/shm`` and ``/dev/mqueue``, its System V IPC objects and its keys, and only then
reports the kernel's exit status and takes the next request. Nothing one student's kernel
made survives into the next one's. The grader's own ``{"sync": true}`` request is answered
in the same order, so its answer says that all of this is done. The work grows with what the
student left (200,000 empty files in ``/tmp`` take 3 s to delete on a quiet machine), so
while the cleaner runs the zygote says ``{"cleaning": SECONDS}`` on stdout every
``BEAT_S``: the grader waits for the answer as long as it hears these.

The first line on stdout says whether the zygote can fork at all: a fork keeps only the
forking thread, so imports that left any thread running (Python's or native, such as a
framework's thread pool) make it refuse, and the grader starts fresh kernels for that lab.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time

from coursekit.caps import MAX_REQUEST
from coursekit.grading import kernel, keyrings

WIPED = ("/tmp", "/dev/shm", "/dev/mqueue")   # the last: POSIX message queues
KILL_WAIT_S = 10.0
BEAT_S = 1.0   # how often the zygote says it is still cleaning
EXIT_CLEANUP_FAILED = 3
PR_SET_DUMPABLE = 4
# libc has no capset(); the system call's number differs between architectures.
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}[os.uname().machine]
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_LIBC = ctypes.CDLL(None, use_errno=True)
RLIMITS = {"cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS,
           "nproc": resource.RLIMIT_NPROC, "fsize": resource.RLIMIT_FSIZE}


def native_threads() -> int:
    """Threads of this process, native ones included (a framework's pool is not in
    ``threading.enumerate()``)."""
    return len(os.listdir("/proc/self/task"))


def _say(**message) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _read_request(conn: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the proxy closed before its request was complete")
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ConnectionError("request too large")
    return json.loads(data)


def _become_kernel(request: dict, uid: int) -> None:
    """In the forked child: hand-off, then the slot's uid, limits and environment, then the
    grading kernel. Never returns."""
    code = 1
    try:
        os.setsid()
        handoff = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        handoff.connect(request["handoff"])
        # The proxy answers once this process is in the submission's cgroup.
        message, fds, _, _ = socket.recv_fds(handoff, 16, 3)
        if message != b"go" or len(fds) != 3:
            raise ConnectionError("the grader's proxy went away before the hand-off")
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        handoff.close()
        _become(uid)
        if not keyrings.join_new_session():   # never the session keyring of the grader
            raise OSError("no session keyring of its own")
        # A uid change without exec leaves the process undumpable (its /proc files root's);
        # a fresh kernel, exec'd after setpriv, is dumpable again: so is this one.
        _LIBC.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
        for name, value in request["limits"].items():
            resource.setrlimit(RLIMITS[name], (value, value))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # As bubblewrap's --setenv gives a fresh kernel (autograder.isolation.sandbox.bwrap_command).
        os.environ.update(HOME="/tmp", USER="student", LOGNAME="student", JPY_PARENT_PID="1")
        for name in (kernel.PRELOAD_ENV, kernel.PRELOAD_CHECKS_ENV):
            os.environ.pop(name, None)
        sys.argv = ["coursekit.grading.kernel", *request["argv"]]
        kernel.start()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException as error:  # noqa: BLE001 — told on the kernel's stderr, then exit
        try:
            sys.stderr.write(f"coursekit: the forked kernel could not start: {error!r}\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 — stderr may be gone; the exit status says it
            pass
    finally:
        os._exit(code)


def _clean(uid: int) -> bool:
    """Kill every process of ``uid`` in this sandbox and delete what it left; True when
    nothing of it is left."""
    pid = os.fork()
    if pid == 0:
        code = EXIT_CLEANUP_FAILED
        try:
            _become(uid)
            deadline = time.monotonic() + KILL_WAIT_S
            while True:
                try:  # every process this uid may signal, except this one
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                if not running_as(uid):
                    break
                if time.monotonic() > deadline:
                    os._exit(EXIT_CLEANUP_FAILED)
                time.sleep(0.005)
            # chmod first: a student may have taken the write permission off its folders.
            if not keyrings.clear():
                os._exit(EXIT_CLEANUP_FAILED)
            # -xdev: the folders bound below /tmp (the slot's, the course's checks) are
            # another file system, and nothing there is this tmpfs's to wipe.
            script = (f'for d in {" ".join(WIPED)}; do '
                      f'find "$d" -xdev -mindepth 1 -maxdepth 1 -user {uid} '
                      '-exec chmod -R u+rwx {} + -exec rm -rf {} + ; done 2>/dev/null; '
                      'ipcrm --all >/dev/null 2>&1; '
                      f'for d in {" ".join(WIPED)}; do test -z "$(find "$d" -xdev -mindepth 1 '
                      f'-user {uid} -print -quit 2>/dev/null)" || exit 1; done')
            os.execv("/bin/sh", ["/bin/sh", "-c", script])
        except BaseException:  # noqa: BLE001 — the child reaches os._exit whatever happened
            pass
        os._exit(code)
    return _wait_saying_so(pid) == 0


def _wait_saying_so(pid: int) -> int:
    """The exit code of the cleaner ``pid``, once it ends; meanwhile, every BEAT_S, a line on
    stdout that says it still runs (none for a cleaner that ends within the first BEAT_S)."""
    started = time.monotonic()
    beat = started + BEAT_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= beat:
            _say(cleaning=round(time.monotonic() - started, 1))
            beat = time.monotonic() + BEAT_S
        time.sleep(0.01)


def _become(uid: int) -> None:
    """Become ``uid``: no groups, and no capability left in any set (setuid() empties the
    permitted and effective ones; the inheritable set is emptied here, as setpriv's
    ``--inh-caps=-all`` does for a fresh kernel)."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()   # effective, permitted, inheritable, twice: all empty
    if _LIBC.syscall(SYS_CAPSET, header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def running_as(uid: int) -> list[int]:
    """Processes of ``uid`` that still run (in this sandbox, or on the host), but this one. A zombie runs
    nothing (it only waits for its parent), and a process that changed its uid is owned by
    root in ``/proc``, so ``status`` is read rather than the folder's owner."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        uids = fields.get("Uid", "").split()
        if str(uid) in uids and fields.get("State", "").split()[:1] not in (["Z"], ["X"]):
            found.append(int(name))
    return found


def _exit_code(status: int) -> int:
    """A wait status as Popen reports it: the code, or minus the signal."""
    return os.waitstatus_to_exitcode(status)


def serve(path: str, uid: int) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    listener.bind(path)
    os.umask(old)
    listener.listen(4)
    # The uid may have served a student before (a slot of an earlier run): its keys go
    # before the first kernel, as they go between any two.
    if not _clean(uid):
        _say(ready=False, spoiled=True,
             reason="the slot's uid holds keys or files that could not be cleared")
        sys.exit(EXIT_CLEANUP_FAILED)
    _say(ready=True, pid=os.getpid())
    while True:
        conn, _ = listener.accept()
        with conn:
            try:
                if _peer_uid(conn) != os.getuid():
                    continue
                request = _read_request(conn)
                if request.get("sync"):
                    # Requests are served in order: when this one is answered, the kernel
                    # before it has ended and its uid's processes and files are gone.
                    conn.sendall(b'{"idle": true}\n')
                    continue
            except (OSError, ValueError):
                continue
            child = os.fork()
            if child == 0:
                # The student's process must hold neither socket: one forks kernels, the
                # other tells the proxy how the kernel ended.
                listener.close()
                conn.close()
                _become_kernel(request, uid)
            status = _watch(conn, child)
            clean = _clean(uid)
            if status is None:  # the proxy went away first; the cleaner killed the kernel
                status = _exit_code(os.waitpid(child, 0)[1])
            try:
                conn.sendall(json.dumps({"exit": status, "clean": clean}).encode() + b"\n")
            except OSError:
                pass
        if not clean:
            sys.exit(EXIT_CLEANUP_FAILED)   # the pool starts a fresh sandbox for the slot


def _watch(conn: socket.socket, child: int) -> int | None:
    """The child's exit code once it exits, or None as soon as the proxy goes away first
    (the grader killed the kernel; the zygote, root without CAP_KILL, cannot kill it, but
    the cleaner can, as the child's uid)."""
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            return _exit_code(status)
        readable, _, _ = select.select([conn], [], [], 0.05)
        if readable:
            try:
                gone = not conn.recv(1 << 10)
            except OSError:
                gone = True
            if gone:
                return None


def main(argv: list[str]) -> None:
    path, uid = argv[0], int(argv[1])
    kernel.preload_from_env()
    from ipykernel import kernelapp  # noqa: F401 — imported once here, not per kernel
    threads = native_threads()
    python_threads = kernel.threads_started()
    if threads != 1 or python_threads:
        _say(ready=False, reason=f"the lab's imports left {threads - 1} threads running "
                                 f"({', '.join(python_threads) or 'native'}), and a forked "
                                 f"kernel would keep none of them")
        return
    serve(path, uid)


if __name__ == "__main__":
    main(sys.argv[1:])
