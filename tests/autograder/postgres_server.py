"""A throw-away PostgreSQL server for tests: ``initdb`` + ``pg_ctl`` on a free localhost port.

The server runs from a temporary data folder and is stopped and removed afterwards. PostgreSQL
refuses to run as root, so under root the commands run as the ``postgres`` user (Debian's
package creates it). Where the server binaries are missing, :func:`missing` says why, for a
skip whose reason the test summary prints.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from machine_load import scaled

BINARIES = ("initdb", "pg_ctl")


def _bin_dir() -> Path | None:
    """Where ``initdb`` lives: on PATH, else Debian's versioned folder."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


def missing() -> str | None:
    """Why no server can be started here, or None."""
    folder = _bin_dir()
    if folder is None or not all((folder / name).exists() for name in BINARIES):
        return ("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's "
                "'postgresql' package (make test's setup does, as root)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    folder: Path
    port: int
    user: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database on this server; its SQLAlchemy URL."""
        from sqlalchemy import create_engine, text
        engine = create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
        finally:
            engine.dispose()
        return self.url(name)


def _run_as(user: str | None, args: list[str], **kwargs) -> subprocess.CompletedProcess:
    if user is not None:
        args = ["runuser", "-u", user, "--", *args]
    return subprocess.run(args, capture_output=True, text=True, check=True, **kwargs)


def start() -> Server:
    """Start a server on a free port; stop it with :func:`stop`."""
    folder = Path(tempfile.mkdtemp(prefix="coursekit-pg-"))
    bin_dir = _bin_dir()
    as_user = "postgres" if os.geteuid() == 0 else None
    if as_user is not None:
        entry = pwd.getpwnam(as_user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    db_user = as_user or pwd.getpwuid(os.geteuid()).pw_name
    data = folder / "data"
    _run_as(as_user, [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", db_user,
                      "--no-sync", "-E", "UTF8"], timeout=scaled(120))
    port = _free_port()
    # Sockets in the data folder, not /var/run/postgresql, which may not exist or be writable.
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
    _run_as(as_user, [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-t", "60",
                      "-l", str(folder / "server.log"), "start"], timeout=scaled(120))
    server = Server(folder, port, db_user)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if time.monotonic() > deadline:
                stop(server)
                raise RuntimeError(f"PostgreSQL did not listen on port {port}; see "
                                   f"{folder / 'server.log'}") from None
            time.sleep(0.2)


def stop(server: Server) -> None:
    as_user = "postgres" if os.geteuid() == 0 else None
    try:
        _run_as(as_user, [str(_bin_dir() / "pg_ctl"), "-D", str(server.folder / "data"), "-m",
                          "immediate", "-w", "stop"], timeout=scaled(60))
    except subprocess.CalledProcessError:
        pass
    shutil.rmtree(server.folder, ignore_errors=True)


def running():
    """A pytest fixture's body: a started server, stopped afterwards, or a skip that says why
    (``server = pytest.fixture(scope="module")(postgres_server.running)``)."""
    import pytest
    why = missing()
    if why:
        pytest.skip(why)
    server = start()
    yield server
    stop(server)
