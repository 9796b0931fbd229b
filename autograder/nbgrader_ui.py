"""nbgrader's JupyterLab buttons, run through coursekit's pipeline (a Jupyter server extension).

nbgrader's formgrader and its notebook toolbar ship with buttons that run nbgrader's own
converters: its Autograde deletes ``course/autograded/<student>/<lab>`` and fails on
coursekit's restored cells, its Generate writes ``{exercise}`` stubs over the release, its
feedback is the executed notebook (hidden tests included), and its Validate shows tracebacks.
This extension keeps nbgrader's pages and JavaScript as they are and answers their requests
with coursekit instead:

==========================  =====================================================
button (request)            what runs
==========================  =====================================================
Generate (``assign``)       ``coursekit release LAB``, then ``release --check``
Autograde                   ``coursekit autograde --lab LAB --student ID``
Generate Feedback           ``coursekit feedback`` (the checks' names, points and
                            messages; never hidden source or tracebacks)
Release Feedback            nbgrader's exchange, on coursekit's feedback pages
Validate (notebook toolbar  ``coursekit validate``: every visible check with its
and Assignment List)        points and message
==========================  =====================================================

and the formgrader's lists come from coursekit's tables: a student is submitted when
``course/submitted/`` holds an entry for them (folder or zip, any layout), and autograded when
``coursekit_outcome`` has their row, so missing and corrupt hand-ins are graded outcomes (score
0, with the reason) rather than "needs autograding"; the graded notebook view shows each
check's points and message (written into the notebook by :mod:`.annotate`); MathJax comes
from the server (jupyter_server_mathjax), not from a CDN. Release, Collect and the student's
Assignment List are nbgrader's exchange, unchanged.

How it plugs in: every formgrader handler is subclassed with :class:`CoursekitHandler`, whose
``api`` is :class:`CoursekitAPI` (a subclass of nbgrader's ``NbGraderAPI``), and the subclasses
are routed ahead of nbgrader's own. Enable it with
``c.ServerApp.jpserver_extensions = {"autograder.nbgrader_ui": True}``
(``course/jupyter_server_config.py`` does, for ``make grade-ui``).
"""
from __future__ import annotations

import asyncio
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from html import escape
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader
from jupyter_server.base.handlers import JupyterHandler
from nbgrader.apps.api import NbGraderAPI
from nbgrader.server_extensions.formgrader import apihandlers, handlers
from nbgrader.server_extensions.formgrader.base import check_notebook_dir, check_xsrf
from tornado import web
from tornado.routing import HostMatches, Rule
from tornado.web import _ApplicationRouter

from .feedback import EXCHANGE_FILES
from .manifest import Course, ManifestError, find_root, load_course

TEMPLATES = Path(__file__).parent / "nbgrader_templates"
MATHJAX = "static/jupyter_server_mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
# Files nbgrader's exchange writes next to a submission; releasing feedback needs both.


def _result(success: bool, log: str, error: str = "") -> dict:
    """The shape nbgrader's API methods return and its formgrader JavaScript shows."""
    result = {"success": success, "log": log}
    if error:
        result["error"] = error
    return result


class CoursekitAPI(NbGraderAPI):
    """nbgrader's formgrader API with coursekit's course, pipeline and tables behind it."""

    def __init__(self, coursedir=None, authenticator=None, exchange=None, **kwargs):
        _ensure_exchange(kwargs.get("parent"))
        super().__init__(coursedir, authenticator, exchange, **kwargs)

    @property
    def course(self) -> Course:
        # coursedir.root is course/; the course tree (solutions/, notebooks/) is its parent.
        return load_course(Path(self.coursedir.root).resolve().parent)

    # ------------------------------------------------------------------ what the lists show
    def get_source_assignments(self) -> set[str]:
        """The labs of ``course/course.toml`` (not every folder of solutions/)."""
        try:
            return {lab.id for lab in self.course.labs}
        except ManifestError:
            return set()

    def _outcome_students(self, lab: str) -> set[str]:
        from . import gradebook as gb
        if lab == "*":
            return {o.student for o in self._outcomes()}
        return {o.student for o in self._outcomes() if o.lab == lab}

    def _outcomes(self):
        from . import gradebook as gb
        gradebook = gb.open_gradebook(self.coursedir.db_url)
        try:
            return gb.load_outcomes(gradebook)
        finally:
            gradebook.close()

    def get_submitted_students(self, assignment_id: str) -> set[str]:
        """Every student with an entry in ``course/submitted/`` (as ``coursekit autograde``
        collects them: a folder or a zip, notebooks anywhere in it), and every student
        graded already."""
        from .collect import student_entries
        return set(student_entries(self.course.submitted_dir).students) | \
            self._outcome_students(assignment_id)

    def get_autograded_students(self, assignment_id: str) -> set[str]:
        """Students with a stored coursekit outcome for the lab (missing and corrupt
        hand-ins included: they are graded, with score 0 and the reason)."""
        return self._outcome_students(assignment_id)

    def _filter_existing_notebooks(self, assignment_id, notebooks):
        """Every graded submission counts (as in ``coursekit export``), with or without a
        graded notebook to show: a missing or corrupt hand-in has none, and its page says why."""
        return sorted(notebooks, key=lambda x: x.id)

    def get_students(self) -> list[dict]:
        return [self._named(student) for student in super().get_students()]

    def get_student(self, student_id, submitted=None):
        student = super().get_student(student_id, submitted)
        return None if student is None else self._named(student)

    def get_submission(self, assignment_id, student_id, ungraded=None, students=None):
        return self._named(super().get_submission(assignment_id, student_id, ungraded, students))

    def get_submissions(self, assignment_id):
        return [self._named(s) for s in super().get_submissions(assignment_id)]

    def get_notebook_submissions(self, assignment_id, notebook_id):
        return [self._named(s) for s in super().get_notebook_submissions(assignment_id,
                                                                          notebook_id)]

    def get_student_notebook_submissions(self, student_id, assignment_id):
        """Every graded notebook of the submission, with its id: a missing or corrupt one
        opens a page that says why it has nothing to show."""
        from nbgrader.api import MissingEntry
        with self.gradebook as gb:
            try:
                submission = gb.find_submission(assignment_id, student_id)
            except MissingEntry:
                return []
            return sorted((self._named(nb.to_dict()) for nb in submission.notebooks),
                          key=lambda x: x["name"])

    def outcome(self, student: str, lab: str):
        """coursekit's stored outcome of one submission (None before it is graded)."""
        from . import gradebook as gb
        gradebook = gb.open_gradebook(self.coursedir.db_url)
        try:
            found = gb.load_outcomes(gradebook, students=[student], labs=[lab])
        finally:
            gradebook.close()
        return found[0] if found else None

    @staticmethod
    def _named(row: dict | None) -> dict | None:
        """A student without a name in the gradebook is shown by their id (the formgrader
        would print "None, None"). Names come from ``nbgrader db student import`` or the
        formgrader's Manage Students page."""
        if row is None:
            return row
        student = row.get("student", row.get("id"))
        if row.get("last_name") is None and row.get("first_name") is None:
            row["last_name"], row["first_name"] = student, "(no name on file)"
        return row

    # ------------------------------------------------------------------ what the buttons run
    def generate_assignment(self, assignment_id, force=True, create=True) -> dict:
        """Generate = ``coursekit release LAB``: the stubs name their exercise, hidden tests
        are stripped, the files are byte-stable; then the release is checked."""
        from .release import ReleaseError, check_release, write_release
        try:
            course = self.course
            lab = course.lab(assignment_id)
            changed = write_release(course, lab)
            differences = check_release(course, lab)
        except (ManifestError, ReleaseError) as error:
            return _result(False, "", f"coursekit release {assignment_id}: {error}")
        what = ", ".join(str(p.relative_to(course.root)) for p in changed) or "already up to date"
        if differences:
            return _result(False, f"coursekit release {lab.id}: {what}",
                           "coursekit release --check still differs:\n" + "\n".join(differences))
        return _result(True, f"coursekit release {lab.id}: {what}; `coursekit release --check` "
                             f"passes")

    def autograde(self, assignment_id, student_id, force=True, create=True) -> dict:
        """Autograde = ``coursekit autograde --lab LAB --student ID`` into the gradebook the
        formgrader shows."""
        from .autograde import autograde
        lines: list[str] = []
        try:
            course = self.course
            course.lab(assignment_id)
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                run = autograde(course, labs=[assignment_id], students=[student_id],
                                db_url=self.coursedir.db_url, progress=False, log=lines.append)
        except ManifestError as error:
            return _result(False, "", str(error))
        if not run.outcomes:
            return _result(False, "\n".join(lines),
                           f"coursekit autograde found no hand-in of {student_id} in "
                           f"{course.submitted_dir.relative_to(course.root)}/")
        failed = [o for o in run.outcomes if o.status == "error"]
        log = "\n".join([f"coursekit autograde --lab {assignment_id} --student {student_id}"]
                        + [_wrapped(_outcome_line(o)) for o in run.outcomes]
                        + [_wrapped(line) for line in lines if line.strip()])
        if failed:
            return _result(False, log, "\n".join(_wrapped(r) for r in failed[0].reasons))
        return _result(True, log)

    def generate_feedback(self, assignment_id, student_id=None, force=True) -> dict:
        """Generate Feedback = ``coursekit feedback``: one page per student from the stored
        verdicts (check names, points, messages), never from the executed notebook."""
        from .feedback import write_feedback
        course = self.course
        students = [student_id] if student_id else None
        paths = write_feedback(course, self.coursedir.db_url, students=students,
                               labs=[assignment_id])
        where = course.feedback_dir.relative_to(course.root)
        if not paths:
            return _result(False, "", f"no graded submission of {assignment_id}"
                           + (f" by {student_id}" if student_id else "")
                           + ": autograde it first")
        return _result(True, f"coursekit feedback: {len(paths)} page(s) under {where}/")

    def release_feedback(self, assignment_id, student_id=None) -> dict:
        """Release Feedback: nbgrader's exchange copies coursekit's pages to the students who
        handed in through it; a hand-in that did not come through the exchange (no
        ``submission_secret.txt``) is named, with the page to hand over instead."""
        course = self.course
        root = course.feedback_dir
        folders = [root / student_id / assignment_id] if student_id else \
            sorted(root.glob(f"*/{assignment_id}"))
        released, skipped, logs = [], [], []
        for folder in folders:
            student = folder.parent.name
            if not all((folder / name).is_file() for name in EXCHANGE_FILES):
                skipped.append(student)
                continue
            result = super().release_feedback(assignment_id, student)
            logs.append(result.get("log", ""))
            if not result.get("success"):
                return _result(False, "\n".join(logs), result.get("error", ""))
            released.append(student)
        if not folders:
            return _result(False, "", f"no feedback for {assignment_id} yet: generate it first")
        log = (f"released feedback of {assignment_id} to {len(released)} student(s) "
               f"through the exchange")
        if skipped:
            where = course.feedback_dir.relative_to(course.root)
            log += (f"\n{len(skipped)} did not hand in through the exchange; hand them their "
                    f"page from {where}/<student>/{assignment_id}/ yourself: "
                    + ", ".join(skipped))
        return _result(True, _wrapped("\n".join([log] + logs)))


def _outcome_line(outcome) -> str:
    """One graded submission in words, with the reasons coursekit stored."""
    line = (f"{outcome.student} · {outcome.lab}: {outcome.score:.2f} / "
            f"{outcome.auto_max_score:g} autograded points ({outcome.status})")
    return "\n".join([line] + [f"  - {reason}" for reason in outcome.reasons])


def _wrapped(text: str, width: int = 76) -> str:
    """``text`` in lines that fit the formgrader's log box (it does not wrap them)."""
    import textwrap
    return "\n".join(textwrap.fill(line, width, subsequent_indent="    ")
                     for line in text.splitlines())


def _ensure_exchange(parent) -> None:
    """Create the configured exchange folder (``course/exchange`` on one machine), writable by
    every user as nbgrader's exchange needs; nbgrader itself only reports it missing."""
    from nbgrader.exchange.default import Exchange
    root = Path(Exchange(parent=parent).root)
    if root.exists():
        return
    try:
        root.mkdir(parents=True)
        root.chmod(0o1777)  # everyone writes; only the owner of an entry removes it
    except OSError:
        pass  # the formgrader says the exchange is missing, with nbgrader's instructions


# --------------------------------------------------------------------------- handlers

class CoursekitHandler:
    """Mixed in front of each formgrader handler: coursekit's API, templates and exporter."""

    @property
    def api(self) -> CoursekitAPI:
        self.coursedir.parent.load_config_file()
        api = CoursekitAPI(self.coursedir, self.authenticator, parent=self.coursedir.parent)
        api.log_level = self.log.level
        return api

    def render(self, name, **ns):
        env = self.settings.get("coursekit_jinja2_env")
        if env is None:
            nbgrader_env = self.settings["nbgrader_jinja2_env"]
            env = Environment(loader=ChoiceLoader([FileSystemLoader(str(TEMPLATES)),
                                                   nbgrader_env.loader]))
            self.settings["coursekit_jinja2_env"] = env
        if name == "formgrade_404.tpl":  # a graded submission with no notebook: say why
            resources = ns["resources"]
            ns["outcome"] = self.api.outcome(resources["student"], resources["assignment_id"])
        return env.get_template(name).render(**ns)

    @property
    def exporter(self):
        """The graded notebook view: nbgrader's template, with MathJax from this server."""
        exporter = self.settings.get("coursekit_exporter")
        if exporter is None:
            from jupyter_server.utils import url_path_join
            from nbconvert.exporters import HTMLExporter
            from traitlets.config import Config
            config = Config(self.settings["nbgrader_exporter"].config)
            config.HTMLExporter.template_name = "coursekit_formgrade"
            config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES),
                                                           handlers.template_path]
            # where 'formgrade/index.html.j2', which ours extends, is found
            config.HTMLExporter.extra_template_paths = [handlers.template_path]
            config.HTMLExporter.mathjax_url = url_path_join(self.base_url or "/", MATHJAX)
            exporter = HTMLExporter(config=config)
            self.settings["coursekit_exporter"] = exporter
        return exporter


def _slow(method_name: str):
    """A POST handler that runs ``api.<method_name>(*args)`` in a thread: grading and
    releasing take seconds, and the server must keep serving meanwhile."""
    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    async def post(self, *args):
        api = self.api
        result = await asyncio.to_thread(getattr(api, method_name), *args)
        self.write(json.dumps(result))
    return post


SLOW = {
    apihandlers.AssignHandler: "generate_assignment",
    apihandlers.AutogradeHandler: "autograde",
    apihandlers.GenerateAllFeedbackHandler: "generate_feedback",
    apihandlers.GenerateFeedbackHandler: "generate_feedback",
    apihandlers.ReleaseAllFeedbackHandler: "release_feedback",
    apihandlers.ReleaseFeedbackHandler: "release_feedback",
}


def _subclass(handler: type) -> type:
    namespace = {"post": _slow(SLOW[handler])} if handler in SLOW else {}
    return type(f"Coursekit{handler.__name__}", (CoursekitHandler, handler), namespace)


# --------------------------------------------------------------------------- validate

INSTRUCTOR_SETTING = "coursekit_instructor_server"


class ValidateHandler(JupyterHandler):
    """The notebook toolbar's Validate (and the Assignment List's): ``coursekit validate``.

    nbgrader's dialog shows a list of failed cells; the whole per-check report is sent as the
    one entry of that list, with a style that hides the list's generic heading.

    In the instructor's server (``course/jupyter_server_config.py`` sets
    ``INSTRUCTOR_SETTING``) a notebook may be anybody's, a student's hand-in above all, and
    this server runs with the instructor's rights: there Validate runs it in the grading
    sandbox, on a copy, as grading does, or refuses where the machine has no sandbox.
    """

    @web.authenticated
    async def post(self):
        try:
            path = self.get_argument("path")
        except web.MissingArgumentError:
            path = (self.get_json_body() or {}).get("path", "")
        root = Path(self.settings["server_root_dir"]).resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root) or target.suffix != ".ipynb":
            raise web.HTTPError(403, "Validate checks notebooks inside this server's folder")
        # The instructor's course is the one this server serves, never one a hand-in holds.
        course = load_course(find_root(root)) if self.settings.get(INSTRUCTOR_SETTING) else None
        self.finish(json.dumps(await asyncio.to_thread(validation_reply, target, course)))


# nbgrader's dialog puts a "The following cell failed:" line and the cell's source before the
# text it is sent; the report says everything itself, so those two are hidden.
# Its text box does not wrap lines; the report's long messages are wrapped.
_HIDE_GENERIC = ("<style>#validation-message > div:first-child, #validation-message > "
                 "div:nth-child(2) { display: none; } "
                 "#validation-message pre { white-space: pre-wrap; }</style>")


def validation_reply(notebook: Path, sandboxed: Course | None = None) -> dict:
    """``coursekit validate``'s report in the shape nbgrader's Validate dialog shows; run in
    the sandbox of the course ``sandboxed`` where given (the instructor's server)."""
    from .validate import SandboxUnavailable, validate
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            result = validate(notebook, sandboxed=sandboxed)
    except SandboxUnavailable as error:
        return {"success": False,
                "value": f"Not validated: in the instructor's server, Validate runs a notebook "
                         f"only in the grading sandbox, as grading does, and here it cannot "
                         f"({error}). Grade a hand-in with ⚡ Autograde instead."}
    except Exception as error:  # noqa: BLE001 — an unreadable notebook: say so in the dialog
        return {"success": False,
                "value": f"coursekit validate cannot read {notebook.name}: "
                         f"{type(error).__name__}: {error}"}
    report = result.report()
    verdict = ("Ready to submit: every visible check passes." if result.ok
               else "Not ready to submit: see the checks marked ✗ below.")
    html = (f"{_HIDE_GENERIC}<b>{escape(verdict)}</b> The hidden checks run the same programs "
            f"on other inputs when you are graded.\n\n{escape(report)}")
    return {"success": True, "value": {"failed": [{"source": verdict, "error": html}]}}


# --------------------------------------------------------------------------- the extension

def _jupyter_server_extension_points():
    return [{"module": "autograder.nbgrader_ui"}]


def _load_jupyter_server_extension(serverapp) -> None:
    webapp = serverapp.web_app
    base_url = webapp.settings["base_url"]
    from jupyter_server.utils import url_path_join
    routes = []
    for spec in handlers.default_handlers + apihandlers.default_handlers:
        pattern, handler, *rest = spec
        if issubclass(handler, handlers.BaseHandler):
            handler = _subclass(handler)
        routes.append((url_path_join(base_url, pattern.lstrip("/")), handler, *rest))
    routes.append((url_path_join(base_url, "assignments/validate"), ValidateHandler))
    # Tornado tries host rules in order: ours go first, so nbgrader's (loaded before or after
    # this extension) answer only what is not overridden here.
    webapp.default_router.rules.insert(
        0, Rule(HostMatches(".*$"), _ApplicationRouter(webapp, routes)))
    serverapp.log.info("coursekit: nbgrader's formgrader and Validate run coursekit's pipeline")
