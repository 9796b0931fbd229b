"""A JupyterHub on localhost for one test module: local Unix users, a course, one exchange.

What it sets up, as root, under one folder of its own (mode 755) in /tmp:

* users made with ``useradd`` (an instructor, a TA, students), each with a home of mode
  700, and a group of the course staff (instructor and TA);
* ``course_tree/``: the fixture course (``course/``, ``solutions/``, ``notebooks/``), owned
  by the instructor and the staff group, mode 2770: students cannot enter it;
* ``exchange/``: nbgrader's exchange, mode 1777 as nbgrader asks (nbgrader gives the
  course's ``inbound/`` 733 and ``outbound/`` 755 itself);
* ``student_config/``: ``course/student/`` with the exchange's folder: the students'
  Jupyter configuration (the staff's is the course's ``course/``);
* ``python/``: the course's environment for the users. Here the project's interpreter lives
  under /root (mode 700), which no user may enter, so the users run the system's Python 3.11
  with the project's virtual environment's packages added (a ``.pth`` file): the same
  packages, another interpreter of the same minor version;
* ``hub/`` (mode 700): jupyterhub_config.py (:data:`CONFIG`, shown in the README), its
  database and secrets. DummyAuthenticator with one password, LocalProcessSpawner (each
  user's server runs as that user), a service token for the test's REST calls.

Everything is removed at the end: the hub and the servers it started stopped by process id,
the users (and their homes) deleted, the folder removed.
"""
from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
EXCHANGE_COURSE = "deep-learning-software"
SYSTEM_PYTHON = "/usr/bin/python3.11"
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"   # root's PATH, not the users'   # the project's minor version, outside /root

# The hub's configuration: the README's JupyterHub section shows this text. {...} are filled
# in by :func:`hub_config`.
CONFIG = '''\
c = get_config()  # noqa: F821

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.JupyterHub.db_url = "sqlite:///{hub_dir}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{hub_dir}/jupyterhub_cookie_secret"

# Log in with the user's name and one password (the test's); PAM in production.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = "{password}"
c.Authenticator.allowed_users = {users!r}

# Each user's server runs as that Unix user, from the course's environment.
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = ["{python_bin}/python", "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {start_timeout}
c.Spawner.http_timeout = {start_timeout}

STAFF = {staff!r}


def course_configuration(spawner):
    """The staff's servers open the course tree with the course's Jupyter configuration
    (the formgrader); a student's opens their home with course/student/'s (Assignment List
    and Validate, no formgrader)."""
    staff = spawner.user.name in STAFF
    spawner.environment.update({{
        "JUPYTER_CONFIG_PATH": ("{course_tree}/course" if staff else "{student_config}")
                               + ":{venv}/etc/jupyter",
        # the course environment's JupyterLab, extensions and kernel (see the README)
        "JUPYTER_PATH": "{venv}/share/jupyter",
        "JUPYTERLAB_DIR": "{venv}/share/jupyter/lab",
        "PATH": "{python_bin}:/usr/local/bin:/usr/bin:/bin",
    }})
    spawner.notebook_dir = "{course_tree}" if staff else "~"


c.Spawner.pre_spawn_hook = course_configuration

# The test's own REST calls: start servers, act in them.
c.JupyterHub.services = [{{"name": "term", "api_token": "{service_token}"}}]
c.JupyterHub.load_roles = [{{"name": "term", "services": ["term"],
                            "scopes": ["admin:users", "admin:servers", "access:servers",
                                       "tokens"]}}]
'''


# Added to the staff's and the students' nbgrader_config.py: the one exchange, shared by the
# staff group (nbgrader then makes its folders group-writable and set-group-id).
EXCHANGE_CONFIG = """
c.Exchange.root = "{exchange}"
c.CourseDirectory.groupshared = True
"""


def missing_parts() -> str | None:
    """Why the hub test cannot run on this machine, or None."""
    if os.geteuid() != 0:
        return "the hub test makes Unix users and spawns their servers: it needs root"
    for tool, how in (("useradd", "the 'passwd' package"), ("runuser", "util-linux"),
                      ("configurable-http-proxy", "`bash autograder/install_hub.sh` (npm)")):
        if shutil.which(tool) is None:
            return f"{tool} is missing: install {how}"
    if not (VENV_BIN / "jupyterhub").exists():
        return "jupyterhub is missing: `pip install -e '.[dev]'` (the dev extra pins it)"
    if sys.version_info[:2] != (3, 11) or not Path(SYSTEM_PYTHON).exists():
        return (f"the users' servers run {SYSTEM_PYTHON} with this environment's packages: "
                f"it needs that interpreter and a Python 3.11 environment")
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class User:
    name: str
    home: Path

    @property
    def uid(self) -> int:
        return pwd.getpwnam(self.name).pw_uid

    def run(self, *command: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        """``command`` as this user (runuser), with the course's environment on PATH."""
        python_bin = self.home.parent.parent / "python" / "bin"   # see make_users_python
        env = {"PATH": f"{python_bin}:/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8"}
        return subprocess.run([RUNUSER, "-u", self.name, "--", *command], check=check,
                              capture_output=True, text=True, env=env, **kwargs)


@dataclass
class Hub:
    base: Path
    url: str
    password: str
    token: str
    instructor: User
    ta: User
    students: list[User]
    staff_group: str
    process: subprocess.Popen | None = None
    log: Path | None = None
    made_users: list[str] = field(default_factory=list)

    @property
    def course_tree(self) -> Path:
        return self.base / "course_tree"

    @property
    def exchange(self) -> Path:
        return self.base / "exchange"

    def api(self, method: str, path: str, body: dict | None = None, *,
            token: str | None = None, timeout: float = 120) -> tuple[int, bytes]:
        """``(status, body)`` of a request to the hub (``/hub/api/...``) or, through its
        proxy, to a user's server (``/user/<name>/...``), with the service token."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"token {token or self.token}",
            "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        except (urllib.error.URLError, OSError) as error:   # not listening (yet)
            return 0, str(error).encode()

    def json(self, method: str, path: str, body: dict | None = None, **kwargs):
        status, data = self.api(method, path, body, **kwargs)
        assert 200 <= status < 300, (method, path, status, data[:2000])
        return json.loads(data) if data else None

    def start_server(self, user: User, deadline_s: float) -> None:
        """Spawn ``user``'s server through the hub's REST API and wait until it answers."""
        status, data = self.api("POST", f"/hub/api/users/{user.name}/server")
        assert status in (201, 202, 400), (status, data)   # 400: already running
        wait_until(lambda: self.api("GET", f"/user/{user.name}/api/status")[0] == 200,
                   f"{user.name}'s server to answer", deadline_s)


def wait_until(condition, what: str, deadline_s: float, every_s: float = 0.5):
    """Poll ``condition()`` until it is true; fail saying ``what`` after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {deadline_s:.0f} s for {what}")
        time.sleep(every_s)


# --------------------------------------------------------------------------- set-up

def make_users(tag: str, base: Path, made: list[str]) -> tuple[User, User, list[User], str,
                                                                 list[str]]:
    """The instructor, the TA, three students and the staff group, named ``ck<tag>...``;
    each user's name goes into ``made`` as soon as it exists (for the clean-up)."""
    homes = base / "home"
    homes.mkdir(mode=0o755)
    staff_group = f"ck{tag}staff"
    subprocess.run(["groupadd", staff_group], check=True)

    def user(role: str, staff: bool = False) -> User:
        # The staff's own group is the course's: what the instructor releases and the TA
        # collects into the exchange is the staff's (nbgrader's CourseDirectory.groupshared).
        name = f"ck{tag}{role}"
        group = ["--gid", staff_group] if staff else ["--user-group"]
        subprocess.run(["useradd", "--create-home", "--home-dir", str(homes / name),
                        "--shell", "/usr/sbin/nologin", *group, name], check=True)
        made.append(name)
        (homes / name).chmod(0o700)   # no user reads another's files
        return User(name, homes / name)

    instructor = user("inst", staff=True)
    ta = user("ta", staff=True)
    students = [user(f"s{i}") for i in (1, 2, 3)]
    return instructor, ta, students, staff_group, made


def make_users_python(base: Path) -> Path:
    """``base/python``: a virtual environment of the system's Python whose one ``.pth`` file
    adds the project's environment's packages (editable coursekit included).

    That environment was resolved for the project's interpreter (pyenv's, under /root, which
    the users cannot enter), a newer patch release than the system's: a package whose
    ``Requires-Python`` leaves the system's out (soupsieve 4.1.3 needs 3.11.5, and broke the
    formgrader's graded page on Debian's 3.11.2) gets the newest release that supports it,
    in the users' own site-packages, ahead of the shared ones. That is what pip would have
    chosen for that interpreter."""
    folder = base / "python"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(folder)], check=True)
    own = folder / "lib" / "python3.11" / "site-packages"
    version = subprocess.run([SYSTEM_PYTHON, "-c", "import platform; print(platform."
                              "python_version())"], capture_output=True, text=True,
                             check=True).stdout.strip()
    too_new = packages_too_new_for(version)
    if too_new:
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                               "--only-binary=:all:", "--python-version", version,
                               "--target", str(own), *too_new],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, (f"the users' Python {version} needs other releases of "
                                      f"{', '.join(too_new)}; pip could not get them:\n"
                                      f"{done.stderr[-2000:]}")
    site = Path(sysconfig.get_paths()["purelib"])
    (own / "course_environment.pth").write_text(f"import site; site.addsitedir({str(site)!r})\n")
    subprocess.run(["chmod", "-R", "a+rX", str(folder)], check=True)
    return folder / "bin"


def packages_too_new_for(version: str) -> list[str]:
    """The distributions of this environment whose ``Requires-Python`` excludes ``version``."""
    from importlib.metadata import distributions

    from packaging.specifiers import SpecifierSet
    return sorted({found.metadata["Name"] for found in distributions()
                   if found.metadata.get("Requires-Python")
                   and version not in SpecifierSet(found.metadata["Requires-Python"])})


def make_course(base: Path, instructor: User, staff_group: str) -> None:
    """The fixture course with two labs (labfx, and labfy, its copy under other ids), the
    staff's and the students' configuration pointing at one exchange."""
    sys.path.insert(0, str(REPO / "tests" / "autograder"))
    sys.path.insert(0, str(REPO / "tests"))
    from ui.conftest import add_a_lab_nobody_handed_in, pipeline_module
    fixtures = pipeline_module("pipeline_fixtures", "conftest.py")
    tree = base / "course_tree"
    fixtures.make_fixture_course(tree)
    add_a_lab_nobody_handed_in(tree)
    from autograder.publish.release import write_release
    from coursekit.course import load_course
    course = load_course(tree)
    for lab in course.labs:
        write_release(course, lab)
    # the gradebook exists before the TA's Collect adds students to it (nbgrader would run
    # the `alembic` command to make it, which is not on the users' PATH)
    from autograder.pipeline import gradebook as gb
    gb.open_gradebook(course.default_db_url).close()
    shutil.copy(REPO / "course" / "jupyter_server_config.py", tree / "course")
    exchange = base / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    students = base / "student_config"
    shutil.copytree(REPO / "course" / "student", students)
    for config in (tree / "course" / "nbgrader_config.py", students / "nbgrader_config.py"):
        with open(config, "a", encoding="utf-8") as handle:
            handle.write(EXCHANGE_CONFIG.format(exchange=exchange))
    subprocess.run(["chown", "-R", f"{instructor.name}:{staff_group}", str(tree)], check=True)
    subprocess.run(["chmod", "-R", "u+rwX,g+rwX,o-rwx", str(tree)], check=True)
    subprocess.run(["find", str(tree), "-type", "d", "-exec", "chmod", "g+s", "{}", "+"],
                   check=True)
    subprocess.run(["chmod", "-R", "a+rX", str(students)], check=True)
    # The course's student side above the students' homes, where Validate looks for the
    # course a notebook belongs to (the nearest folder holding course/course.toml): the
    # manifest, the visible checks' programs and the release, as the student bundle
    # (`coursekit bundle`) lays them out. Nothing of it is secret.
    public = base / "home"
    (public / "course").mkdir()
    shutil.copy(tree / "course" / "course.toml", public / "course")
    shutil.copytree(tree / "course" / "checks", public / "course" / "checks")
    shutil.copytree(tree / "notebooks", public / "notebooks")
    subprocess.run(["chmod", "-R", "a+rX", str(public / "course"), str(public / "notebooks")],
                   check=True)
    # The grader's kernels run as an unprivileged uid per job, which cannot enter the course
    # tree: they import the check programs from that public copy (as the real course's live
    # in the installed coursekit package, readable by all). The secret stays in course/.
    toml = tree / "course" / "course.toml"
    toml.write_text(toml.read_text().replace('check_path = ["checks"]',
                                             f'check_path = ["{public / "course" / "checks"}"]'))


def hub_config(hub: Hub, ports: dict[str, int], start_timeout: int) -> str:
    users = {hub.instructor.name, hub.ta.name, *(s.name for s in hub.students)}
    return CONFIG.format(
        **ports, hub_dir=hub.base / "hub", password=hub.password, users=users,
        python_bin=hub.base / "python" / "bin", venv=VENV_BIN.parent, start_timeout=start_timeout,
        staff={hub.instructor.name, hub.ta.name}, course_tree=hub.course_tree,
        student_config=hub.base / "student_config", service_token=hub.token)


def start(tag: str, log: Path, startup_s: float) -> Hub:
    base = Path(tempfile.mkdtemp(prefix=f"coursekit-hub-{tag}-", dir="/tmp"))
    base.chmod(0o755)
    hub = None
    made: list[str] = []
    try:
        instructor, ta, students, staff_group, made = make_users(tag, base, made)
        make_course(base, instructor, staff_group)
        make_users_python(base)
        port = free_port()
        hub = Hub(base, f"http://127.0.0.1:{port}", secrets.token_hex(8),
                  secrets.token_hex(32), instructor, ta, students, staff_group,
                  made_users=made, log=log)
        (base / "hub").mkdir(mode=0o700)
        config = base / "hub" / "jupyterhub_config.py"
        config.write_text(hub_config(hub, {"port": port, "hub_port": free_port(),
                                           "proxy_api_port": free_port()}, int(startup_s)))
        env = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        with open(log, "wb") as out:
            hub.process = subprocess.Popen(
                [str(VENV_BIN / "jupyterhub"), "-f", str(config)], cwd=base / "hub", env=env,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

        def up() -> bool:
            if hub.process.poll() is not None:
                raise AssertionError(f"jupyterhub exited with {hub.process.returncode}:\n"
                                     + log.read_text(errors="replace")[-3000:])
            return hub.api("GET", "/hub/api/")[0] == 200
        wait_until(up, "the hub to answer", startup_s)
        return hub
    except BaseException:
        stop(hub, base, tag, made)
        raise


def stop(hub: Hub | None, base: Path, tag: str, made: list[str]) -> None:
    """Stop the hub (it stops the servers it spawned), then any process left of the users
    this module made (by process id, found by their uids), delete the users, the staff
    group and the folder."""
    if hub is not None and hub.process is not None:
        for user in [hub.instructor, hub.ta, *hub.students]:
            hub.api("DELETE", f"/hub/api/users/{user.name}/server", timeout=30)
        from ui.conftest import stop_group
        stop_group(hub.process, grace_s=30)   # the hub stops every user's server first
        _stop_proxy(base / "hub" / "jupyterhub-proxy.pid")
    uids = set()
    for name in made:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            pass
    _kill_processes_of(uids)
    for name in made:
        subprocess.run(["userdel", "--remove", name], capture_output=True)
    subprocess.run(["groupdel", f"ck{tag}staff"], capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


def _stop_proxy(pid_file: Path) -> None:
    """The proxy the hub started runs in a session of its own: stopped by the id the hub
    wrote, if the hub's own shutdown left it running."""
    try:
        pid = int(pid_file.read_text().strip())
        if "configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
            os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        pass


def _kill_processes_of(uids: set[int]) -> None:
    """SIGKILL each process whose owner is one of ``uids`` (users this module made, so
    processes it started), found by id in /proc."""
    if not uids:
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid in uids:
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue
