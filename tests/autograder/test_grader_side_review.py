"""A second attacker's review of the grader's own side, after issue 22's fix.

Each test is one attempt by a student who has read every line of the grader, run for real
(nbgrader, the bubblewrap sandbox with its uids and cgroups, kernels fresh or forked, the
SQLite gradebook, the instructor's JupyterLab). An attempt the grader stops is a plain test;
one that gets through is ``xfail(strict=True)`` with the mechanism in its reason, so that the
fix turns it into a failure here ("XPASS(strict)") until the marker is removed.

Tests that spoil a uid's keyrings use uids of their own (``private_uids``), far from the
ones the grader and other test runs lease, and give the keyrings back afterwards.
"""
from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from coursekit.grading.kernel import EXIT_KEYRINGS_KEPT
from conftest import make_fixture_course
from grader_processes import hand_in as _hand_in
from nbformat.v4 import new_code_cell

from autograder.demo import demo_class
from autograder.isolation import leases, sandbox
from autograder.pipeline.autograde import autograde
from autograder.pipeline.collect import collect, student_entries
from autograder.pipeline.gradebook import load_outcomes, open_gradebook
from autograder.publish.feedback import write_feedback

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
MACHINE = os.uname().machine
KEYCTL = {"x86_64": 250, "aarch64": 219}.get(MACHINE)
ADD_KEY = {"x86_64": 248, "aarch64": 217}.get(MACHINE)


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path):
    yield
    subprocess.run(["rm", "-rf", "--", str(tmp_path)], check=False)


@pytest.fixture
def sandboxed(fixture_course) -> sandbox.SandboxStatus:
    status = sandbox.probe(fixture_course)
    if not status.sandboxed or not status.enforcement.drop_uid:
        pytest.skip("needs a root grader whose kernels run sandboxed on uids of their own "
                    f"({status.warning or 'not root'})")
    return status


@pytest.fixture
def canary(tmp_path) -> Path:
    """A root-only file outside the course that no student may read or change."""
    path = tmp_path / "root-only" / "canary.txt"
    path.parent.mkdir()
    path.write_text("root's secret: the grader never reads this for a student")
    path.chmod(0o600)
    return path


def _outcomes(course) -> dict:
    gradebook = open_gradebook(course.default_db_url)
    try:
        return {o.student: o for o in load_outcomes(gradebook)}
    finally:
        gradebook.close()


def _grade(course, limits, **options):
    return autograde(course, overrides=limits, progress=False, log=lambda m: None, **options)


# ------------------------------------------------------------------ keyrings

def _unwatched(code: str) -> str:
    """A cell that runs ``code`` where the grading monitor is not: in a new interpreter
    started by multiprocessing's spawn, which the monitor flags for a TA but lets start
    (coursekit/grading/monitor.py: "not refused, but never unnoticed"). The kernel's own
    ctypes calls are refused; the new interpreter's are not."""
    return ("import multiprocessing\n"
            f"child = multiprocessing.get_context('spawn').Process(target=exec, "
            f"args=({code!r}, {{}}))\n"
            "child.start()\n"
            "child.join()\n")


KEYS = '''
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
KEYCTL, ADD_KEY = {keyctl}, {add_key}
def keyctl(*args):
    return _libc.syscall(KEYCTL, *(a if isinstance(a, bytes) else ctypes.c_long(a) for a in args))
def add_key(description, data, keyring):
    return _libc.syscall(ADD_KEY, b"user", description, data, ctypes.c_long(len(data)),
                         ctypes.c_long(keyring))
def read_key(keyring, description):
    """The data of the user key ``description`` found from ``keyring``, or 'nothing'."""
    key = keyctl(10, keyring, b"user", description, 0)     # KEYCTL_SEARCH
    if key < 0:
        return "nothing"
    buffer = ctypes.create_string_buffer(256)
    size = _libc.syscall(KEYCTL, ctypes.c_long(11), ctypes.c_long(key), buffer,
                         ctypes.c_long(256))                 # KEYCTL_READ
    return buffer.raw[:size].decode() if size >= 0 else "nothing"
'''

# The first student of a uid leaves a key in the uid's user keyring and takes the write
# permission off that keyring (its owner may: KEYCTL_SETPERM), so KEYCTL_CLEAR fails for
# every later process of the uid. setattr stays, so the test can give the keyring back.
POISON = KEYS + '''
keyctl(8, -4, -3)            # KEYCTL_LINK @u into @s: possessed, its keys may be set up
key = add_key(b"left-by-aa", b"answers of aa", -4)
keyctl(5, key, 0x3f3f0000)   # KEYCTL_SETPERM: the uid itself may read the key, possessor or not
keyctl(5, -4, 0x2b2b0000)    # and @u: view, read, search, setattr; no write
'''

READ_LEFT_KEY = KEYS + '''
open("found.txt", "w").write(read_key(-4, b"left-by-aa"))
'''

READ_GRADER_SESSION = KEYS + '''
open("found.txt", "w").write(read_key(-3, b"grader-secret"))
'''

GIVE_BACK = KEYS + '''
keyctl(5, -4, 0x3f3f0000)    # the owner's setattr is left: all permissions back
keyctl(7, -4)                # KEYCTL_CLEAR
'''


@pytest.fixture
def private_uids(tmp_path, monkeypatch, fixture_course):
    """Uids of this test alone, leased as every grader leases (the machine's run folder:
    a private one would make this grader take other graders' live slots for stale); their
    keyrings and lease files are given back afterwards (a uid's user keyring outlives its
    processes: the kernel keeps it until reboot)."""
    if KEYCTL is None:
        pytest.skip(f"no keyctl numbers for {MACHINE}")
    # Above every uid a grader of the machine's range hands out: that grader reads the shared
    # counter this test moves, and would go on from it into these uids.
    first = leases.FIRST_UID + leases.UIDS + secrets.randbelow(100_000) * 8
    monkeypatch.setattr(leases, "FIRST_UID", first)
    yield first
    for uid in range(first, first + 8):
        _run_as(fixture_course, tmp_path, uid, GIVE_BACK.format(keyctl=KEYCTL, add_key=ADD_KEY))
        if not leases.is_leased(uid):
            (leases.run_dir() / f"uid-{uid}").unlink(missing_ok=True)


def _run_as(course, tmp_path, uid: int, script: str) -> subprocess.CompletedProcess:
    """Run ``script`` as ``uid`` in the grading sandbox (the uid cannot reach this Python
    outside it)."""
    work, runtime = tmp_path / f"as-{uid}" / "w", tmp_path / f"as-{uid}" / "r"
    work.mkdir(parents=True)
    runtime.mkdir()
    for folder in (work, runtime):
        os.chown(folder, uid, uid)
    command = (sandbox.bwrap_command(course, workdir=work, runtime_dir=runtime, drop_uid=True)
               + ["--"] + sandbox.drop_uid_command(uid) + [sys.executable, "-c", script])
    return subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("uids", [None, 2], ids=["a range of uids", "two uids: one comes back"])
def test_a_student_who_spoils_its_uids_keyrings_never_zeroes_the_next_students(
        fixture_course, sandboxed, private_uids, test_limits, monkeypatch, uids):
    """With two uids the spoiled one comes back to the third student, whose kernel refuses
    to run there: the grader marks it spoiled and runs that student on the other uid. (With
    a range, another grader's lease moving the shared counter can bring it back too.)"""
    if uids is not None:
        monkeypatch.setattr(leases, "UIDS", uids)
    course = fixture_course
    demo = demo_class.demo_lab(course, course.labs[0])
    spoiler = demo.notebook()
    spoiler.cells.append(new_code_cell(_unwatched(POISON.format(keyctl=KEYCTL,
                                                                add_key=ADD_KEY))))
    _hand_in(course, "aa_spoiler", spoiler)       # graded first: students go in name order
    _hand_in(course, "ada", demo.notebook())
    _hand_in(course, "bob", demo.notebook())
    _grade(course, test_limits, jobs=1, fork_kernels=False)
    outcomes = _outcomes(course)
    for honest in ("ada", "bob"):
        assert outcomes[honest].score == pytest.approx(demo.max_score), \
            (honest, outcomes[honest].reasons)


def test_student_code_that_exits_as_a_refused_kernel_is_not_run_again(
        fixture_course, sandboxed, private_uids, test_limits):
    """A kernel refused on a spoiled uid is started again; a hand-in that exits with that code
    itself after its cells ran is not: a second run would meet the same hidden inputs, which
    the first could have written down (and answered with what the checks forbid). The grader
    asks that no cell ran; the sandbox does not mark a uid spoiled for a kernel that dies
    mid-run either, so this holds on both counts."""
    course = fixture_course
    demo = demo_class.demo_lab(course, course.labs[0])
    nb = demo.notebook()
    nb.cells.append(new_code_cell("open('runs.txt', 'a').write('run\\n')\n"
                                  f"import os\nos._exit({EXIT_KEYRINGS_KEPT})"))
    _hand_in(course, "ada", nb)
    _grade(course, test_limits, jobs=1, fork_kernels=False)
    runs = course.autograded_dir / "ada" / course.labs[0].id / "runs.txt"
    assert runs.read_text() == "run\n", "the hand-in's code ran more than once"


def test_a_key_left_by_one_student_never_reaches_the_next_forked_kernel(
        fixture_course, sandboxed, private_uids, test_limits):
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    spoiler = demo.notebook()
    spoiler.cells.append(new_code_cell(_unwatched(POISON.format(keyctl=KEYCTL,
                                                                add_key=ADD_KEY))))
    _hand_in(course, "aa_spoiler", spoiler)
    reader = demo.notebook()
    reader.cells.append(new_code_cell(_unwatched(READ_LEFT_KEY.format(keyctl=KEYCTL,
                                                                     add_key=ADD_KEY))))
    _hand_in(course, "ada", reader)
    run = _grade(course, test_limits, jobs=1, fork_kernels=True)
    if "fresh" in run.kernels and "forked" not in run.kernels:
        pytest.skip(f"kernels did not fork here: {run.kernels}")
    assert _outcomes(course)["ada"].score == pytest.approx(demo.max_score)
    found = (course.autograded_dir / "ada" / lab.id / "found.txt").read_text()
    assert found == "nothing", f"ada's forked kernel read aa's key: {found!r}"


GRADE_IN_A_SESSION = '''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
KEYCTL, ADD_KEY = {keyctl}, {add_key}
# A grader started as a systemd service, or from a login shell or sudo (pam_keyinit), has a
# session keyring of its own; here one with a key of root's in it.
assert libc.syscall(KEYCTL, ctypes.c_long(1), b"grader-session") > 0      # JOIN_SESSION
assert libc.syscall(ADD_KEY, b"user", b"grader-secret", b"root's key", ctypes.c_long(10),
                    ctypes.c_long(-3)) > 0
from coursekit import course as manifest
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
course = manifest.load_course(sys.argv[1])
autograde(course, jobs=1, overrides=Overrides(10, 120, 2048), progress=False,
          log=lambda m: None, fork_kernels=sys.argv[2] == "forked")
'''


@pytest.mark.parametrize("kernels", [
    "fresh", "forked"])
def test_a_kernel_never_reads_the_graders_session_keyring(fixture_course, sandboxed,
                                                          test_limits, kernels):
    if KEYCTL is None:
        pytest.skip(f"no keyctl numbers for {MACHINE}")
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    snoop = demo.notebook()
    snoop.cells.append(new_code_cell(_unwatched(READ_GRADER_SESSION.format(
        keyctl=KEYCTL, add_key=ADD_KEY))))
    _hand_in(course, "eve", snoop)
    done = subprocess.run([sys.executable, "-c",
                           GRADE_IN_A_SESSION.format(keyctl=KEYCTL, add_key=ADD_KEY),
                           str(course.root), kernels],
                          check=False, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = _outcomes(course)["eve"]
    assert outcome.score == pytest.approx(demo.max_score), outcome.reasons
    found = (course.autograded_dir / "eve" / lab.id / "found.txt").read_text()
    assert found == "nothing", f"the student's kernel read the grader's key: {found!r}"


# ------------------------------------------------------------------ feedback

def test_feedback_never_copies_a_file_a_hand_in_links_to(fixture_course, sandboxed, canary,
                                                         test_limits):
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    notebook = _hand_in(course, "eve", demo.notebook())
    os.symlink(canary, notebook.parent / "timestamp.txt")
    (notebook.parent / "submission_secret.txt").write_text("from the exchange\n")
    _grade(course, test_limits, jobs=1, fork_kernels=False)
    assert _outcomes(course)["eve"].score == pytest.approx(demo.max_score)
    write_feedback(course)
    page = course.feedback_dir / "eve" / lab.id
    assert (page / f"{lab.id}.html").is_file()
    copied = page / "timestamp.txt"
    assert not (copied.exists() and "root's secret" in copied.read_text()), \
        "root's file was copied into the student's feedback"


# ------------------------------------------------------------------ the instructor's UI

def _jupyter_lab():
    path = REPO / "tests" / "ui" / "conftest.py"
    spec = importlib.util.spec_from_file_location("ui_servers", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module.jupyter_lab


EVIL_MANIFEST = '''
[course]
name = "a course of eve's own"
check_path = ["evil"]
check_packages = ["evilchecks"]

[[lab]]
id = "not_this_lab"
title = "so no release notebook is looked for"
points = 1
'''


def test_validate_in_the_instructors_server_never_takes_a_course_from_the_hand_in(
        fixture_course, sandboxed, tmp_path):
    course = fixture_course
    lab = course.labs[0]
    for name in ("jupyter_server_config.py", "nbgrader_config.py"):
        (course.course_dir / name).write_bytes((REPO / "course" / name).read_bytes())
    demo = demo_class.demo_lab(course, lab)
    hostile = demo.notebook()
    hostile.cells.insert(0, new_code_cell('grade("pwn.x")', metadata={"nbgrader": {
        "grade": True, "grade_id": "pwn", "points": 1, "solution": False, "locked": True,
        "schema_version": 3}}))
    notebook = _hand_in(course, "eve", hostile)
    own = notebook.parent / "course"
    (own / "evil" / "evilchecks").mkdir(parents=True)
    (own / "course.toml").write_text(EVIL_MANIFEST)
    (own / "evil" / "evilchecks" / "__init__.py").write_text("")
    marker = tmp_path / "ran-outside-the-sandbox.txt"
    (own / "evil" / "evilchecks" / "pwn.py").write_text(
        f"import os\nopen({str(marker)!r}, 'w').write(f'uid {{os.getuid()}} pid "
        f"{{os.getpid()}}')\n")
    with _jupyter_lab()(course.root, course.course_dir, tmp_path / "server.log",
                        tmp_path / "home") as server:
        request = urllib.request.Request(
            f"{server.url}/assignments/validate", method="POST",
            data=json.dumps({"path": str(notebook.relative_to(course.root))}).encode(),
            headers={"Authorization": f"token {server.token}",
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=900) as reply:
            answer = json.loads(reply.read())
    assert not marker.exists(), (f"the hand-in's module ran in the server: "
                                 f"{marker.read_text()} (server pid {server.pid}); "
                                 f"reply {answer}")


# ------------------------------------------------------------------ bounds on hand-in files

GRADE_WITH_A_DISK_LIMIT = '''
import json, resource, sys
# The disk is protected whatever the grader does: no file of it grows over 2 GB.
resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 2**30, 2 * 2**30))
from coursekit import course as manifest
from autograder.pipeline.autograde import autograde
from autograder.pipeline.grader import Overrides
course = manifest.load_course(sys.argv[1])
run = autograde(course, jobs=1, overrides=Overrides(10, 120, 2048), progress=False,
                log=lambda m: None, fork_kernels=False)
print(json.dumps({o.student: o.score for o in run.outcomes}))
'''


def test_one_hand_ins_huge_file_never_stops_the_class_run(fixture_course, sandboxed):
    course = fixture_course
    demo = demo_class.demo_lab(course, course.labs[0])
    _hand_in(course, "ada", demo.notebook())
    notebook = _hand_in(course, "mal", demo.notebook())
    with open(notebook.parent / "weights.bin", "wb") as handle:
        handle.truncate(2**40)          # sparse: 1 TB apparent, no block on the disk
    done = subprocess.run([sys.executable, "-c", GRADE_WITH_A_DISK_LIMIT, str(course.root)],
                          check=False, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    scores = json.loads(done.stdout.strip().splitlines()[-1])
    assert scores["ada"] == pytest.approx(demo.max_score)
    assert "mal" in scores


# ------------------------------------------------------------------ stopped attempts

def test_a_hand_in_that_links_to_a_classmates_notebook_hands_in_nothing(fixture_course,
                                                                         sandboxed):
    """A link (to a classmate's notebook, or to the course's secret) and a FIFO under the
    notebook's name are not read: the walk never follows a link, and a FIFO blocks
    nothing."""
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    victim = _hand_in(course, "ada", demo.notebook())
    copier = course.submitted_dir / "mal" / lab.id
    copier.mkdir(parents=True)
    os.symlink(victim, copier / lab.notebook)
    os.symlink(victim.parent, copier / "also")
    fifo = course.submitted_dir / "fay" / lab.id
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / lab.notebook)
    os.symlink(victim.parent.parent, course.submitted_dir / "ada_link")
    course.enable_checks()
    from autograder.pipeline.grader import prepare_lab
    context = prepare_lab(course, lab)
    subs = {s.student: s for s in collect(course, [lab], {lab.id: context.identifying_ids})}
    assert sorted(subs) == ["ada", "fay", "mal"]          # the linked entry is no hand-in
    assert subs["ada"].status == "found"
    assert subs["mal"].status == "missing" and subs["mal"].nb is None, subs["mal"].notes
    assert subs["fay"].status == "missing", subs["fay"].notes
    assert "ada_link" not in student_entries(course.submitted_dir).refused


def test_a_kernel_sees_no_lease_no_cgroup_knob_and_no_other_uids_files(
        fixture_course, sandboxed, test_limits):
    """What the new leases and cgroups rest on, from inside a kernel: the run folder with
    the lease files is not there, the cgroup file system is not there, and /proc shows
    only the kernel's own processes, all of its own uid."""
    course = fixture_course
    lab = course.labs[0]
    demo = demo_class.demo_lab(course, lab)
    look = demo.notebook()
    look.cells.append(new_code_cell(
        "import os, json\n"
        "uids = set()\n"
        "for p in os.listdir('/proc'):\n"
        "    try:\n"
        "        uids.add(open(f'/proc/{p}/status').read().split('Uid:')[1].split()[0])\n"
        "    except (OSError, IndexError):\n"
        "        pass\n"
        "seen = {'run': os.path.exists('/run/coursekit'),\n"
        "        'cgroup': os.path.exists('/sys/fs/cgroup'),\n"
        "        'uids': sorted(uids), 'me': str(os.getuid())}\n"
        "open('seen.json', 'w').write(json.dumps(seen))\n"))
    _hand_in(course, "eve", look)
    _grade(course, test_limits, jobs=1, fork_kernels=False)
    assert _outcomes(course)["eve"].score == pytest.approx(demo.max_score)
    seen = json.loads((course.autograded_dir / "eve" / lab.id / "seen.json").read_text())
    assert not seen["run"] and not seen["cgroup"], seen
    assert set(seen["uids"]) - {"0"} == {seen["me"]}, seen   # 0: bubblewrap's own init


STORM = '''
kernel = get_ipython().kernel
for _ in range(10):     # 10 parts of 65 MB each, one after the other: 10 refusals at most
    kernel.session.send(kernel.iopub_socket, "display_data",
                        {"data": {"text/plain": "x"}, "metadata": {}},
                        parent=kernel.get_parent(), buffers=[bytearray(65 * 2**20)])
'''


def test_a_storm_of_oversized_messages_neither_loops_the_grader_nor_loses_later_checks(
        fixture_course, sandboxed, test_limits):
    """_Reconnect after each refused message: the grader reconnects a bounded number of
    times, then reads the honest messages that follow (every later check is graded), and
    an honest classmate graded at the same time keeps full marks."""
    course = fixture_course
    demo = demo_class.demo_lab(course, course.labs[0])
    storm = demo.notebook()
    storm.cells.insert(2, new_code_cell(STORM))    # before every answer: later ones count
    _hand_in(course, "mal", storm)
    _hand_in(course, "ada", demo.notebook())
    _grade(course, test_limits, jobs=2, fork_kernels=False)
    outcomes = _outcomes(course)
    assert outcomes["ada"].score == pytest.approx(demo.max_score), outcomes["ada"].reasons
    assert outcomes["mal"].score == pytest.approx(demo.max_score), outcomes["mal"].reasons
    assert any("message over 64 MB" in r for r in outcomes["mal"].reasons), \
        outcomes["mal"].reasons


def test_a_stale_group_of_a_live_lease_is_kept_and_one_of_a_dead_lease_removed(
        fixture_course, sandboxed):
    """Another grader's start (cgroup.remove_stale) never removes the group of a kernel
    whose uid is leased, whatever pids the two graders have, and removes an empty one whose
    lease is gone. (The machine's own run folder: with a private one, this would take
    other graders' empty new groups for stale.)"""
    hierarchy = sandbox.enforcement().hierarchy
    if hierarchy is None:
        pytest.skip("no cgroup hierarchy here")
    from autograder.isolation import cgroup
    live, dead = leases.take_uid(), leases.take_uid()
    groups = [cgroup.Group.create(hierarchy, uid=lease.uid, memory_mb=64, nproc=8)
              for lease in (live, dead)]
    try:
        dead.release()
        cgroup.remove_stale(hierarchy)
        assert all(f.exists() for f in groups[0].folders)
        assert not any(f.exists() for f in groups[1].folders)
    finally:
        for group in groups:
            group.remove()
        live.release()


COLLECT_AND_MEASURE = '''
import json, resource, sys
from coursekit import course as manifest
from autograder.pipeline.grader import prepare_lab
from autograder.pipeline.collect import collect
course = manifest.load_course(sys.argv[1])
course.enable_checks()
lab = course.labs[0]
subs = collect(course, [lab], {lab.id: prepare_lab(course, lab).identifying_ids})
print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "status": {s.student: s.status for s in subs}}))
'''


def _collect_in_a_process(root: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", COLLECT_AND_MEASURE, str(root)],
                          check=False, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_collecting_one_hand_in_costs_the_grader_bounded_memory(tmp_path, fixture_course):
    import zipfile

    demo = demo_class.demo_lab(fixture_course, fixture_course.labs[0])
    honest = make_fixture_course(tmp_path / "honest")
    _hand_in(honest, "ada", demo.notebook())
    attack = make_fixture_course(tmp_path / "attack")
    _hand_in(attack, "ada", demo.notebook())
    heavy = json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": [],
                        "metadata": {"x": [[0]] * 1_900_000}})
    with zipfile.ZipFile(attack.submitted_dir / "mal.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for index in range(6):
            zf.writestr(f"notes/{index}.ipynb", heavy)
    calm, heavy_run = _collect_in_a_process(honest.root), _collect_in_a_process(attack.root)
    assert heavy_run["status"]["ada"] == "found"
    grown = heavy_run["peak_mb"] - calm["peak_mb"]
    assert grown < 700, (f"collecting one 54 MB hand-in grew the grader by {grown:.0f} MB "
                          f"({calm['peak_mb']:.0f} -> {heavy_run['peak_mb']:.0f} MB)")


DEEP_IN_A_RUNTIME_FOLDER = '''
import os, resource, sys
from pathlib import Path
from coursekit.notebook import kernels
# An instructor's machine: 1024 descriptors (the usual soft limit), some held by the grader
# (kernel sockets, the gradebook, monitor pipes): 100 here.
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
held = [os.open("/dev/null", os.O_RDONLY) for _ in range(100)]
kernels.remove_tree(Path(sys.argv[1]))
print("left" if Path(sys.argv[1]).exists() else "gone")
'''


def test_removing_a_deep_tree_a_kernel_left_never_leaves_it_behind(tmp_path):
    runtime = tmp_path / "ck-runtime"
    runtime.mkdir()
    fd = os.open(runtime, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1300):           # as a kernel's loop of mkdir and chdir makes it
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    done = subprocess.run([sys.executable, "-c", DEEP_IN_A_RUNTIME_FOLDER, str(runtime)],
                          check=False, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "gone"
