"""``python -m autograder.isolation.kernel_proxy ZYGOTE HANDOFF [--procs FILE]... --limits JSON -- KERNEL ARGS``

The process a kernel manager starts for a forked kernel (:mod:`autograder.isolation.forked`). It stands
in for the kernel, which is the zygote's child inside the slot's sandbox, not this process's:

* it asks the zygote (:mod:`coursekit.grading.zygote`) for a kernel, sending this process's
  environment, working folder and the kernel's arguments;
* the child connects to the hand-off socket; its host pid comes with the connection
  (``SO_PEERCRED``), and this process writes it into the submission's cgroup (``--procs``)
  before the child may go on, so nothing the student runs is ever outside the group;
* it passes the child its stdin, stdout and stderr, so the kernel's own output goes where a
  fresh kernel's would;
* it lives as long as the kernel and ends as the kernel ended (the same exit code, or the
  same signal), so the kernel manager's liveness checks and the grader's "the kernel died
  (exit code 86 …)" work unchanged. Killed, it closes its connection, and the zygote kills
  the kernel.

It imports nothing but the standard library: it starts once per submission.
"""
from __future__ import annotations

import json
import os
import resource
import select
import signal
import socket
import struct
import sys

HANDOFF_TIMEOUT_S = 60.0
EXIT_NO_ZYGOTE = 120


def _fail(message: str) -> None:
    sys.stderr.write(f"coursekit: {message}\n")
    sys.exit(EXIT_NO_ZYGOTE)


def _parse(argv: list[str]) -> tuple[str, str, list[str], dict, list[str]]:
    zygote, handoff, rest = argv[0], argv[1], argv[2:]
    procs, limits = [], {}
    while rest and rest[0] != "--":
        option, value, rest = rest[0], rest[1], rest[2:]
        if option == "--procs":
            procs.append(value)
        elif option == "--limits":
            limits = json.loads(value)
    return zygote, handoff, procs, limits, rest[1:]


def _lines(conn: socket.socket):
    data = b""
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return
        data += chunk
        while b"\n" in data:
            line, data = data.split(b"\n", 1)
            yield json.loads(line)


def main(argv: list[str]) -> None:
    zygote_path, handoff_path, procs, limits, kernel_argv = _parse(argv)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)   # only root, as the child still is before the hand-off, connects
    try:
        listener.bind(handoff_path)
    finally:
        os.umask(old)
    listener.listen(1)
    zygote = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        zygote.connect(zygote_path)
    except OSError as error:
        _fail(f"the slot's pre-warmed kernel process is gone ({error})")
    request = {"env": dict(os.environ), "cwd": os.getcwd(), "argv": kernel_argv,
               "limits": limits, "handoff": handoff_path}
    zygote.sendall(json.dumps(request).encode() + b"\n")
    readable, _, _ = select.select([listener, zygote], [], [], HANDOFF_TIMEOUT_S)
    if listener not in readable:
        _fail("the pre-warmed kernel process did not fork a kernel")
    child, _ = listener.accept()
    listener.close()
    os.unlink(handoff_path)
    creds = child.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid = struct.unpack("3i", creds)[0]
    for path in procs:
        with open(path, "w") as group:
            group.write(str(pid))
    socket.send_fds(child, [b"go"], [0, 1, 2])
    child.close()
    outcome = next(_lines(zygote), None)
    if outcome is None:
        _fail("the pre-warmed kernel process ended without saying how the kernel ended")
    code = int(outcome["exit"])
    if code < 0:   # end as the kernel ended: the same signal
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if -code not in (signal.SIGKILL, signal.SIGSTOP):   # these two cannot be caught
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
