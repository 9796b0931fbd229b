"""``coursekit.distributed.launch`` leaves nothing behind, whatever the ranks do: a rank that
raises, dies, hangs or deadlocks, an interrupt of the launcher, a launcher that is killed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

from coursekit.distributed import RankFailed, launch
from machine_load import scaled


def _children() -> set[int]:
    """This process's live child processes (zombies count: they were never reaped)."""
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.add(int(entry.name))
    return found


@pytest.fixture
def nothing_left(tmp_path, monkeypatch):
    """No child process and no rendezvous folder outlives the test."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where launch makes its folder
    before = _children()
    yield
    assert _children() - before == set()
    assert list(tmp_path.glob("coursekit-ranks-*")) == []


def _rank_and_size(scale):
    tensor = torch.full((2,), float(dist.get_rank() + 1))
    dist.all_reduce(tensor)
    print("hello from", dist.get_rank())
    return dist.get_rank(), dist.get_world_size(), tensor * scale


def test_every_rank_returns_in_rank_order(nothing_left, capsys):
    results = launch(_rank_and_size, 3, 2.0)
    assert [(r, w) for r, w, _ in results] == [(0, 3), (1, 3), (2, 3)]
    assert all(t.tolist() == [12.0, 12.0] for _, _, t in results)
    assert "[rank 2] hello from 2" in capsys.readouterr().out


def _one_raises():
    if dist.get_rank() == 1:
        raise ValueError("bad shard")
    dist.recv(torch.zeros(1), src=1)  # waits for the rank that failed


def test_a_rank_that_raises_is_named_and_its_peers_stopped(nothing_left):
    timeout = scaled(60)   # longer on a busy machine, where the ranks start slowly
    start = time.monotonic()
    with pytest.raises(RankFailed, match=r"rank 1 of 2: ValueError: bad shard"):
        launch(_one_raises, 2, timeout=timeout)
    assert time.monotonic() - start < timeout / 2  # not the timeout: the failure stops the others


def _one_dies():
    if dist.get_rank() == 0:
        os._exit(3)
    dist.recv(torch.zeros(1), src=0)


def test_a_rank_that_dies_is_reported(nothing_left):
    with pytest.raises(RankFailed, match="rank 0 of 2: the process died"):
        launch(_one_dies, 2, timeout=60)


def _deadlock():
    dist.recv(torch.zeros(1), src=1 - dist.get_rank())


def _spins():
    while True:
        pass


@pytest.mark.parametrize("fn", [_deadlock, _spins])
def test_a_hang_ends_at_the_timeout(nothing_left, fn):
    with pytest.raises(RankFailed, match="did not finish within 2s"):
        launch(fn, 2, timeout=2)


def _spins_once_running(folder):
    Path(folder, f"rank-{os.getpid()}").touch()
    _spins()


def test_an_interrupt_of_the_launcher_kills_every_rank(nothing_left, tmp_path):
    # The interrupt comes once every rank runs: sent after a fixed second, on a busy machine
    # it landed while the launcher was still importing, and was lost there.
    running = tmp_path / "running"
    running.mkdir()
    launcher = os.getpid()

    def interrupt_once_every_rank_runs():
        deadline = time.monotonic() + scaled(120)
        while len(list(running.iterdir())) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(launcher, signal.SIGINT)

    threading.Thread(target=interrupt_once_every_rank_runs, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        launch(_spins_once_running, 3, str(running), timeout=scaled(300))


def test_a_stub_raises_not_implemented_error(nothing_left):
    def stub():
        raise NotImplementedError("exercise: replace this line with your implementation")

    with pytest.raises(NotImplementedError, match="rank 0 of 2: exercise: replace this line"):
        launch(stub, 2)


def test_ranks_end_when_the_launching_process_is_killed(tmp_path):
    script = tmp_path / "launcher.py"
    script.write_text(textwrap.dedent('''
        import os, sys, time
        import torch.distributed as dist
        from coursekit.distributed import launch

        def spin(path):
            with open(path + "." + str(dist.get_rank()), "w") as out:
                out.write(str(os.getpid()))
            while True:
                time.sleep(0.05)

        launch(spin, 2, sys.argv[1], timeout=600)
    '''))
    marker = str(tmp_path / "rank")
    launcher = subprocess.Popen([sys.executable, str(script), marker],
                                env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.monotonic() + scaled(120)
    pids = []
    while time.monotonic() < deadline and len(pids) < 2:
        pids = [int(p.read_text()) for p in tmp_path.glob("rank.*") if p.read_text()]
        time.sleep(0.1)
    assert len(pids) == 2, "the ranks did not start"
    launcher.kill()
    launcher.wait()
    deadline = time.monotonic() + scaled(30)
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
        time.sleep(0.1)
    alive = [pid for pid in pids if Path(f"/proc/{pid}/stat").exists()
             and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    assert alive == [], "ranks outlived their launcher"
