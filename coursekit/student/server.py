"""The student's JupyterLab, run through coursekit (a Jupyter server extension): the notebook
toolbar's Validate, and nbgrader's Assignment List working where the student works.

Validate runs ``coursekit validate`` and shows its per-check report (nbgrader's own shows
tracebacks). The Assignment List is nbgrader's (fetch, submit, fetch feedback), in the folder
the server serves (:class:`StudentAssignmentList`). Enable it with
``c.ServerApp.jpserver_extensions = {"coursekit.student.server": True}``
(``course/student/jupyter_server_config.py`` does, for ``make lab``). The instructor's
formgrader extension (``autograder.ui.formgrader``) builds on this one.
"""
from __future__ import annotations

import asyncio
import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from html import escape
from pathlib import Path

from jupyter_server.base.handlers import JupyterHandler
from nbgrader.server_extensions.assignment_list import handlers as assignment_list
from tornado import web
from tornado.routing import HostMatches, Rule
from tornado.web import _ApplicationRouter

from ..course import Course, ManifestError, load_course
from ..notebook.validate import KernelPlace, KernelUnavailable, validate

LABEXTENSIONS = Path(__file__).parent / "labextension"   # the progress panel


# --------------------------------------------------------------------------- Assignment List

class StudentAssignmentList(assignment_list.AssignmentList):
    """nbgrader's Assignment List (fetch, submit, fetch feedback), in the folder the student
    works in.

    nbgrader keeps a student's copies in ``c.Exchange.assignment_dir``, by default the folder
    the server was *started* in. ``make lab`` starts JupyterLab in the checkout and serves
    ``work/``: Fetch wrote beside ``work/``, outside what JupyterLab shows (its links and
    "view feedback" led nowhere, Validate refused the path), and Submit handed in that
    untouched copy, never the notebook the student had edited. Here the default is the
    server's root folder (``work/``; a configured ``assignment_dir`` is kept). What Fetch
    copies is recorded as the release in ``work/.fetched.json``, as ``coursekit fetch``
    records its own copies, and Submit refuses a notebook that is still the release as
    fetched (an edit not saved yet), saying so.
    """

    def load_config(self):
        config = super().load_config()
        if "assignment_dir" not in config.Exchange:
            config.Exchange.assignment_dir = str(Path(self.root_dir).resolve())
        return config

    def fetch_assignment(self, course_id, assignment_id):
        result = super().fetch_assignment(course_id, assignment_id)
        if result.get("success"):
            self._record_fetched(assignment_id)
        return result

    def submit_assignment(self, course_id, assignment_id):
        unchanged = self._unchanged(course_id, assignment_id)
        if unchanged:
            folder = Path(self.load_config().Exchange.assignment_dir) / assignment_id
            shown = os.path.relpath(folder, self.root_dir)
            return {"success": False, "value": (
                f"{', '.join(unchanged)} in {shown}/ is still the lab as it was released: "
                f"none of your answers are in the file. Submit hands in what is saved in "
                f"{shown}/, so if you edited the notebook in JupyterLab, save it first "
                f"(File → Save Notebook, Ctrl+S), then Submit again.")}
        return super().submit_assignment(course_id, assignment_id)

    def _record_fetched(self, assignment_id: str) -> None:
        """Under ``make lab`` (the root is a course's ``work/``), record the fetched files
        as the release (:func:`coursekit.student.fetch.record_fetched`)."""
        from coursekit.student.fetch import WORK, record_fetched
        root = Path(self.root_dir).resolve()
        if root.name != WORK or not (root.parent / "course" / "course.toml").is_file():
            return
        try:
            course = load_course(root.parent)
            record_fetched(course, course.lab(assignment_id))
        except (ManifestError, OSError) as error:
            self.log.warning("coursekit: %s fetched, but not recorded in %s/.fetched.json: %s",
                             assignment_id, WORK, error)

    def _unchanged(self, course_id: str, assignment_id: str) -> list[str]:
        """The lab's notebooks in the student's folder, when every one of them still has the
        cells of the release in the exchange (outputs aside); empty when any differs."""
        from nbgrader.exchange.default import Exchange
        config = self.load_config()
        released = Path(Exchange(config=config).root) / course_id / "outbound" / assignment_id
        folder = Path(config.Exchange.assignment_dir) / assignment_id
        same = []
        for release in sorted(released.glob("*.ipynb")):
            mine = folder / release.name
            if not mine.is_file():
                continue   # nbgrader's Submit says what is missing
            if _cell_sources(mine) != _cell_sources(release):
                return []
            same.append(release.name)
        return same


def _cell_sources(path: Path) -> list[tuple[str, str]] | None:
    """Each cell's type and source (outputs, counts and metadata aside); None when the file
    is not a notebook."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list)
                 else c["source"]) for c in cells]
    except (OSError, ValueError, KeyError, TypeError):
        return None


class _StudentManager:
    """Mixed in front of nbgrader's Assignment List handlers: coursekit's manager."""

    @property
    def manager(self):
        return self.settings["coursekit_assignment_list"]


# --------------------------------------------------------------------------- validate

class ValidateHandler(JupyterHandler):
    """The notebook toolbar's Validate (and the Assignment List's): ``coursekit validate``,
    in this server, as its user (the student's own JupyterLab).

    nbgrader's dialog shows a list of failed cells; the whole per-check report is sent as the
    one entry of that list, with a style that hides the list's generic heading. The
    instructor's server validates with another :meth:`where` (``autograder.ui.formgrader``).
    """

    def where(self, root: Path) -> tuple[Course | None, KernelPlace | None]:
        """The course to judge in and the place to run the kernel (None: the notebook's
        own course, and here)."""
        return None, None

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
        course, place = self.where(root)
        self.finish(json.dumps(await asyncio.to_thread(validation_reply, target, course, place)))


# nbgrader's dialog puts a "The following cell failed:" line and the cell's source before the
# text it is sent; the report says everything itself, so those two are hidden.
# Its text box does not wrap lines; the report's long messages are wrapped.
_HIDE_GENERIC = ("<style>#validation-message > div:first-child, #validation-message > "
                 "div:nth-child(2) { display: none; } "
                 "#validation-message pre { white-space: pre-wrap; }</style>")


def validation_reply(notebook: Path, course: Course | None = None,
                     place: KernelPlace | None = None) -> dict:
    """``coursekit validate``'s report in the shape nbgrader's Validate dialog shows (see
    :func:`coursekit.notebook.validate.validate` for ``course`` and ``place``)."""
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            result = validate(notebook, course=course, place=place)
    except KernelUnavailable as error:
        return {"success": False, "value": f"Not validated: {error}"}
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

def routes(serverapp, validate_handler: type = ValidateHandler) -> list[tuple]:
    """Validate's route, and the Assignment List's where nbgrader's is on."""
    from jupyter_server.utils import url_path_join
    base_url = serverapp.web_app.settings["base_url"]
    found = [(url_path_join(base_url, "assignments/validate"), validate_handler)]
    if serverapp.jpserver_extensions.get("nbgrader.server_extensions.assignment_list"):
        manager = StudentAssignmentList(parent=serverapp)
        manager.root_dir = serverapp.root_dir
        serverapp.web_app.settings["coursekit_assignment_list"] = manager
        for pattern, handler in assignment_list.default_handlers:
            found.append((url_path_join(base_url, pattern.lstrip("/")),
                          type(f"Coursekit{handler.__name__}", (_StudentManager, handler), {})))
    return found


def route_first(serverapp, found: list[tuple]) -> None:
    """Tornado tries host rules in order: these go first, so nbgrader's handlers (loaded
    before or after this extension) answer only what is not overridden here."""
    webapp = serverapp.web_app
    webapp.default_router.rules.insert(
        0, Rule(HostMatches(".*$"), _ApplicationRouter(webapp, found)))


def _jupyter_server_extension_points():
    return [{"module": "coursekit.student.server"}]


def _load_jupyter_server_extension(serverapp) -> None:
    route_first(serverapp, routes(serverapp))
    serverapp.log.info("coursekit: Validate and the Assignment List run coursekit's pipeline")
