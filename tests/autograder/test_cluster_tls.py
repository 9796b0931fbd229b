"""``coursekit autograde --cluster tls://…``: a cluster that crosses machines, encrypted and
mutually authenticated with Dask's TLS, as the README configures it.

Real ``dask scheduler`` and ``dask worker`` processes on localhost speak only TLS, with
certificates from a throw-away CA made by ``openssl``. The grader, configured through Dask's
own settings (``DASK_DISTRIBUTED__COMM__TLS__…``), grades through it. A grader without the
certificates, with another CA's, or speaking plain TCP is refused with a clear message and
exit 3, and nothing is stored.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import make_fixture_course
from autograder.demo import demo_class
from test_cluster import _free_port, _stored
from machine_load import scaled

pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                          "(pip install -e '.[scale]')")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("openssl") is None,
                                 reason="needs the openssl command to make test certificates")]


def _certificates(folder) -> dict[str, str]:
    """A CA, and one certificate it signed for 127.0.0.1 (scheduler, worker and grader)."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=coursekit test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
            "-subj", "/CN=127.0.0.1")
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "node.pem", "-days", "2", "-extfile", "san.cnf")
    return {name: str(folder / f"{name}") for name in ("ca.pem", "node.pem", "node.key")}


def _grade(course, address: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "coursekit.cli", "autograde", "--root", str(course.root),
         "--no-progress", "--cluster", address, "--student", "ada_full"],
        env=env, capture_output=True, text=True, timeout=scaled(600))


def test_a_tls_cluster_grades_and_refuses_a_grader_without_its_certificates(tmp_path):
    course = make_fixture_course(tmp_path / "course_tree")
    demo_class.build_class(demo_class.demo_lab(course, course.labs[0]), course.submitted_dir)
    certs = tmp_path / "certs"
    certs.mkdir()
    files = _certificates(certs)
    tls = ["--tls-ca-file", files["ca.pem"], "--tls-cert", files["node.pem"],
           "--tls-key", files["node.key"]]
    port = _free_port()
    address = f"tls://127.0.0.1:{port}"
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    env = {key: value for key, value in os.environ.items() if not key.startswith("DASK_")}
    env["OMP_NUM_THREADS"] = "1"
    scheduler = subprocess.Popen([dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1",
                                  "--port", str(port), "--no-dashboard", *tls], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "1",
                               "--no-dashboard", *tls], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)  # the scheduler's port opens; a grader that comes early waits for it
        plain = _grade(course, f"tcp://127.0.0.1:{port}", env)
        assert plain.returncode == 3, plain.stderr[-2000:]
        assert "cannot reach the Dask scheduler" in plain.stderr
        assert "Traceback" not in plain.stderr

        uncertified = _grade(course, address, env)
        assert uncertified.returncode == 3, uncertified.stderr[-2000:]
        assert "Traceback" not in uncertified.stderr
        assert "TLS" in uncertified.stderr
        assert _stored(course) == 0

        stranger = tmp_path / "stranger"  # certificates of another CA: not this course's
        stranger.mkdir()
        theirs = _certificates(stranger)
        forged = _grade(course, address, {
            **env,
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": theirs["ca.pem"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": theirs["node.pem"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": theirs["node.key"]})
        assert forged.returncode == 3, forged.stderr[-2000:]
        assert "cannot reach the Dask scheduler" in forged.stderr
        assert "Traceback" not in forged.stderr
        assert _stored(course) == 0

        graded = _grade(course, address, {
            **env,
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": files["ca.pem"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": files["node.pem"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": files["node.key"]})
        assert graded.returncode == 0, graded.stderr[-3000:]
        assert _stored(course) == 1
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
