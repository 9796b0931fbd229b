"""How the grader waits for a slot's zygote between two students (NOTE [settling] in
:mod:`autograder.isolation.forked`): as long as the zygote says its cleaner runs, never longer than the
ceiling, and whatever comes of it, the outcome and the run's ``kernels:`` line say so.

The zygote here is a stand-in speaking the zygote's protocol (a socket that answers
``{"sync": true}``, ``{"cleaning": s}`` lines on stdout), so each case is exact and needs no
sandbox; ``test_forked_kernels`` stops a real zygote. The last test runs the real zygote's
wait for its cleaner.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.isolation import forked
from autograder.isolation import leases
from autograder.pipeline.autograde import _kernels_used
from coursekit.grading import zygote as zygote_module
from machine_load import scaled

# The stand-in: listen, say so (as the zygote says it is ready), take the sync request, then
# behave as told.
STAND_IN = r'''
import json, os, socket, sys, time
path, behaviour, keep_going = sys.argv[1:4]
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(4)
print(json.dumps({"ready": True}), flush=True)
conn, _ = listener.accept()
conn.recv(1 << 10)
if behaviour == "ends":
    sys.exit(0)
started = time.monotonic()
while behaviour == "quiet" or os.path.exists(keep_going):
    if behaviour != "quiet":
        print(json.dumps({"cleaning": round(time.monotonic() - started, 1)}), flush=True)
    time.sleep(0.05)
conn.sendall(b'{"idle": true}\n')
time.sleep(60)
'''



async def _stand_in(tmp_path: Path, behaviour: str) -> tuple[forked.Zygote, Path]:
    """A zygote whose process is the stand-in, and the file that keeps it cleaning."""
    work, runtime = tmp_path / "work", tmp_path / "runtime"
    work.mkdir()
    runtime.mkdir()
    keep_going = tmp_path / "keep-cleaning"
    keep_going.touch()
    socket_path = runtime / "zygote.sock"
    if behaviour == "no socket":
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(60)", stdout=subprocess.PIPE)
    else:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", STAND_IN, str(socket_path), behaviour, str(keep_going),
            stdout=subprocess.PIPE)
        assert json.loads(await process.stdout.readline()) == {"ready": True}
    # A uid of its own, leased as a real slot's is (stopping the stand-in releases it).
    return forked.Zygote(("labx", ()), leases.take_uid(), work, runtime, process), keep_going


def _pool() -> forked.ZygotePool:
    return forked.ZygotePool(course=None, status=None, capacity=1)


def _release(tmp_path: Path, behaviour: str, *, stop_cleaning_after: float | None = None):
    """Release a stand-in zygote to a pool of one; (the note, the pool, the zygote, whether
    the working folder was moved out)."""
    async def go():
        zygote, keep_going = await _stand_in(tmp_path, behaviour)
        pool = _pool()
        pool.zygotes.append(zygote)
        zygote.busy = True
        moved = []

        async def stop_cleaning():
            await asyncio.sleep(stop_cleaning_after)
            keep_going.unlink()

        async def move_out():   # the grader moves the folder out off its event loop
            moved.append(True)

        work = [pool.release(zygote, move_out)]
        if stop_cleaning_after is not None:
            work.append(stop_cleaning())
        try:
            note = (await asyncio.gather(*work))[0]
        finally:
            if zygote.alive:
                await zygote.kill()
        return note, pool, zygote, moved == [True]

    return asyncio.run(go())


def test_a_zygote_that_says_it_cleans_is_waited_for_past_the_quiet_time(tmp_path, monkeypatch):
    monkeypatch.setattr(forked, "SETTLE_QUIET_S", 3.0)
    note, pool, zygote, moved = _release(tmp_path, "beats", stop_cleaning_after=4.0)
    assert moved and not zygote.busy
    assert pool.zygotes == [zygote] and pool.stopped == [], pool.stopped
    assert len(pool.slow) == 1 and pool.slow[0] >= 4.0, pool.slow
    assert note.startswith("the slot's clean-up after this kernel took "), note
    assert "clean-up(s) between two students took over 3.0 s" in pool.troubles()


@pytest.mark.parametrize("behaviour, why", [
    ("quiet", "no answer and no sign of its clean-up for 1.0 s"),
    ("ends", "it ended while cleaning up"),
    ("no socket", "its socket did not answer (FileNotFoundError"),
])
def test_a_zygote_that_does_not_settle_is_stopped_and_said(tmp_path, monkeypatch, behaviour,
                                                           why):
    monkeypatch.setattr(forked, "SETTLE_QUIET_S", 1.0)
    note, pool, zygote, moved = _release(tmp_path, behaviour)
    assert moved and not zygote.alive and pool.zygotes == []
    assert not zygote.runtime_root.exists() and not zygote.work_root.exists()
    assert note.startswith("the slot's pre-warmed kernel process did not settle after this "
                           f"kernel ({why}"), note
    assert note.endswith(") and was stopped"), note
    assert len(pool.stopped) == 1 and pool.stopped[0].startswith(f"labx: {why}"), pool.stopped
    # The run's line says it too.
    grader = SimpleNamespace(zygotes=pool, fork_kernels=True)
    line = _kernels_used(grader, None)
    assert line.startswith("forked from a pre-warmed kernel per job slot; 1 pre-warmed kernel "
                           "process(es) did not settle after a kernel and were stopped (labx: "
                           f"{why}"), line


def test_a_zygote_is_never_waited_for_past_the_ceiling(tmp_path, monkeypatch):
    monkeypatch.setattr(forked, "SETTLE_QUIET_S", 3.0)
    monkeypatch.setattr(forked, "SETTLE_CEILING_S", 2.0)
    note, pool, zygote, moved = _release(tmp_path, "beats")   # it never stops cleaning
    assert moved and pool.zygotes == [] and not zygote.alive
    assert "(still cleaning up after 2.0 s, the most a clean-up is given)" in note, note


def test_a_run_whose_zygotes_all_settled_says_nothing_more(tmp_path):
    grader = SimpleNamespace(zygotes=_pool(), fork_kernels=True)
    assert _kernels_used(grader, None) == "forked from a pre-warmed kernel per job slot"


def test_the_zygote_says_its_cleaner_still_runs_every_beat(capsys):
    """The real zygote's wait for its cleaner: a line each BEAT_S while the cleaner runs,
    and the cleaner's exit code at the end."""
    runs_s = scaled(2.5 * zygote_module.BEAT_S)
    cleaner = subprocess.Popen(["sh", "-c", f"sleep {runs_s}; exit 3"])
    assert zygote_module._wait_saying_so(cleaner.pid) == 3
    said = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert said and all(set(line) == {"cleaning"} for line in said), said
    assert said[0]["cleaning"] >= zygote_module.BEAT_S, said
