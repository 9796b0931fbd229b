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

Beside nbgrader's pages, "Download grades" (in every page's menu) gives the Canvas or
Moodle file ``coursekit export --format canvas|moodle`` writes (:class:`DownloadGradesHandler`),
and each graded submission shows its lateness (:mod:`autograder.publish.lateness`): in the
list a label "late −1.00" with how late and the policy, on its graded page the raw score,
the penalty and the score after it.

The formgrader's lists come from coursekit's tables: a student has submitted a lab when
coursekit graded it (``coursekit_outcome`` has their row: missing and corrupt hand-ins are
graded outcomes, score 0 with the reason) or their entry in ``course/submitted/`` (folder or
zip, any layout) holds a notebook of that lab; a graded submission shows what coursekit
found (a flag for a TA, a missing or corrupt hand-in) in the list and on its graded page,
which also shows each check's points and message (written into the notebook by
:mod:`.annotate`); MathJax comes from the server (jupyter_server_mathjax), not from a CDN.
Every button shows what runs, and for how long, while it runs (``templates/
static/coursekit.js``). Release and Collect are nbgrader's exchange.

The student's Assignment List (nbgrader's) works in this server's root folder, where the
student works (``work/`` under ``make lab``): see :class:`StudentAssignmentList`.

How it plugs in: every formgrader handler is subclassed with :class:`CoursekitHandler`, whose
``api`` is :class:`CoursekitAPI` (a subclass of nbgrader's ``NbGraderAPI``), and the subclasses
are routed ahead of nbgrader's own. Enable it with
``c.ServerApp.jpserver_extensions = {"autograder.ui.formgrader": True}``
(``course/jupyter_server_config.py`` does, for ``make grade-ui``).
"""
from __future__ import annotations

import asyncio
import io
import json
import os
import re
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from datetime import timezone

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
from nbgrader.apps.api import NbGraderAPI
from nbgrader.server_extensions.formgrader import apihandlers, handlers
from nbgrader.server_extensions.formgrader.base import check_notebook_dir, check_xsrf
from nbgrader.utils import as_timezone
from tornado import web

from autograder.isolation.validation import SandboxPlace
from autograder.publish.feedback import EXCHANGE_FILES
from coursekit.course import Course, ManifestError, find_root, load_course
from coursekit.student import server as student_server
from coursekit.student.server import ValidateHandler

TEMPLATES = Path(__file__).parent / "templates"
STATIC = TEMPLATES / "static"   # coursekit.js, served at /formgrader/coursekit/
# The configuration jupyter_server_mathjax ships (it has no TeX-AMS_CHTML-full, the CDN's).
MATHJAX = "static/jupyter_server_mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"


def _result(success: bool, log: str, error: str = "") -> dict:
    """The shape nbgrader's API methods return and its formgrader JavaScript shows."""
    result = {"success": success, "log": log}
    if error:
        result["error"] = error
    return result


class CoursekitAPI(NbGraderAPI):
    """nbgrader's formgrader API with coursekit's course, pipeline and tables behind it.

    One instance answers one request (the handlers make a new one each time), so what it
    reads from the gradebook and the class folder is kept for the rest of that request."""

    def __init__(self, coursedir=None, authenticator=None, exchange=None, **kwargs):
        _ensure_exchange(kwargs.get("parent"), kwargs.get("config"))
        super().__init__(coursedir, authenticator, exchange, **kwargs)
        self._outcomes_of: dict[str, dict] = {}
        self._lateness_of: dict[str, dict] = {}
        self._handed_in: dict[str, set[str]] | None = None

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

    def get_assignment(self, assignment_id, released=None):
        """nbgrader's row of Manage Assignments, its due date read from ``course/course.toml``:
        coursekit's lateness reads it there (and extensions from ``course/extensions.toml``),
        never from the gradebook, so the page shows that one. ``coursekit_due`` says where it
        comes from and the late policy, for the page's tooltip (``coursekit.js``)."""
        found = super().get_assignment(assignment_id, released)
        if found is None:
            return None
        try:
            lab = self.course.lab(assignment_id)
        except ManifestError:
            return found
        due = None
        if lab.due is not None:
            due = as_timezone(lab.due.replace(tzinfo=timezone.utc), self.timezone)
        found.update(duedate=due.isoformat() if due else None,
                     display_duedate=due.strftime(self.timestamp_format) if due else None,
                     duedate_notimezone=due.replace(tzinfo=None).isoformat() if due else None,
                     coursekit_due={"late": lab.late.describe() if due else "no due date"})
        return found

    def outcomes(self, lab: str) -> dict:
        """``{student: StoredOutcome}`` of one lab, as ``coursekit export`` reads them."""
        if lab not in self._outcomes_of:
            from autograder.pipeline import gradebook as gb
            gradebook = gb.open_gradebook(self.coursedir.db_url)
            try:
                self._outcomes_of[lab] = {o.student: o
                                          for o in gb.load_outcomes(gradebook, labs=[lab])}
            finally:
                gradebook.close()
        return self._outcomes_of[lab]

    def graded(self, lab: str | None = None) -> set[str]:
        """The students coursekit has an outcome for, of ``lab`` (or of any lab)."""
        from sqlalchemy import select

        from autograder.pipeline import gradebook as gb
        query = select(gb.OutcomeRow.student)
        if lab is not None:
            query = query.where(gb.OutcomeRow.lab == lab)
        gradebook = gb.open_gradebook(self.coursedir.db_url)
        try:
            return set(gradebook.db.execute(query).scalars())
        finally:
            gradebook.close()

    def outcome(self, student: str, lab: str):
        """coursekit's stored outcome of one submission (None before it is graded)."""
        return self.outcomes(lab).get(student)

    def lateness(self, student: str, lab: str):
        """The submission's :class:`~autograder.publish.lateness.Lateness` (None before it
        is graded); a malformed ``course/extensions.toml`` raises its ManifestError."""
        if lab not in self._lateness_of:
            from autograder.publish.lateness import lateness_of_all
            self._lateness_of[lab] = lateness_of_all(self.course,
                                                     list(self.outcomes(lab).values()))
        return self._lateness_of[lab].get((student, lab))

    def handed_in(self, lab: str) -> set[str]:
        """Students whose entry in ``course/submitted/`` holds a notebook of ``lab`` (found as
        grading finds it, by its cell ids, nothing unpacked), or a folder ``<lab>/`` that
        the exchange collected. Read once per request for every lab of the course."""
        if self._handed_in is None:
            from autograder.pipeline.collect import labs_handed_in, student_entries
            course = self.course
            labs = [lab for lab in course.labs if course.source_notebook(lab).is_file()]
            ids = {lab.id: _identifying_ids(course.source_notebook(lab)) for lab in labs}
            found: dict[str, set[str]] = {lab.id: set() for lab in course.labs}
            for student, entry in student_entries(course.submitted_dir).students.items():
                held = labs_handed_in(entry, labs, ids)
                held |= {lab.id for lab in course.labs if _is_folder(entry / lab.id)}
                for lab_id in held:
                    found[lab_id].add(student)
            self._handed_in = found
        return self._handed_in.get(lab, set())

    def get_submitted_students(self, assignment_id: str) -> set[str]:
        """Every student who handed ``assignment_id`` in (:meth:`handed_in`) or whom coursekit
        graded for it (a missing or corrupt hand-in included, as ``coursekit export`` lists
        it). ``*``: every student with a hand-in or an outcome at all."""
        if assignment_id == "*":
            from autograder.pipeline.collect import student_entries
            return set(student_entries(self.course.submitted_dir).students) | self.graded()
        return self.graded(assignment_id) | self.handed_in(assignment_id)

    def get_autograded_students(self, assignment_id: str) -> set[str]:
        """Students with a stored coursekit outcome for the lab (missing and corrupt
        hand-ins included: they are graded, with score 0 and the reason), unless the
        exchange collected a newer hand-in since (as nbgrader: its ``timestamp.txt`` is not
        the one the gradebook holds), which then needs autograding again."""
        from nbgrader.api import Student, SubmittedAssignment

        from autograder.pipeline.collect import submitted_at
        graded = self.graded(assignment_id)
        with self.gradebook as gb:
            stamps = dict(gb.db.query(Student.id, SubmittedAssignment.timestamp)
                          .join(SubmittedAssignment)
                          .filter(SubmittedAssignment.name == assignment_id).all())
        submitted_dir = self.course.submitted_dir
        return {student for student in graded
                if stamps.get(student) is None
                or submitted_at(submitted_dir, student, assignment_id) in (None,
                                                                           stamps[student])}

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
        return self._found(super().get_submission(assignment_id, student_id, ungraded,
                                                  students))

    def get_submissions(self, assignment_id):
        return [self._found(s) for s in super().get_submissions(assignment_id)]

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

    def _found(self, row: dict | None) -> dict | None:
        """A submission as the formgrader lists it, with what coursekit found under
        ``coursekit``: its status (graded, flagged, missing, corrupt, error), the flag for a
        TA, the reasons, and whether a written answer still waits for a TA (nbgrader's
        ``needs_manual_grade`` is also set by a flag, so it cannot tell)."""
        row = self._named(row)
        if row is None or not row.get("autograded"):
            return row
        found = self.outcome(row["student"], row["name"])
        if found is not None:
            row["coursekit"] = {
                "status": found.status, "flagged": bool(found.flagged),
                "reasons": found.reasons,
                "written_to_grade": bool(found.notebook_file) and any(
                    c.kind == "written" and c.cell not in found.manual_scores
                    for c in found.checks),
                "late": self._late_row(found)}
        return row

    def _late_row(self, found) -> dict:
        """Lateness as the submission list shows it: a label and its tooltip."""
        try:
            late = self.lateness(found.student, found.lab)
        except ManifestError as error:
            return {"status": "error", "said": str(error), "penalty": 0.0}
        if late is None:
            return {"status": "", "said": "", "penalty": 0.0}
        return {"status": late.status, "said": f"{late.describe()}; {late.policy}",
                "penalty": round(late.penalty, 4)}

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
        from autograder.publish.release import (
            ReleaseError,
            check_release,
            write_release,
        )
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
        from autograder.pipeline.autograde import autograde
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

    def collect(self, assignment_id) -> dict:
        """Collect (nbgrader's exchange), with a first line that says what came in."""
        result = super().collect(assignment_id)
        if not result.get("success"):
            return result
        log = result.get("log", "")
        came = re.findall(r"(?:Collecting|Updating) submission: (\S+) ", log)
        where = self.course.submitted_dir.relative_to(self.course.root)
        if came:
            head = (f"collected {len(came)} hand-in(s) of {assignment_id} into {where}/: "
                    f"{', '.join(came)}; grade them with ⚡ Autograde (Manage Submissions) or "
                    f"`coursekit autograde --lab {assignment_id}`")
        elif "No newer submission" in log:
            head = f"nothing new to collect: every hand-in of {assignment_id} is in {where}/"
        else:
            head = f"no student has submitted {assignment_id} through the exchange yet"
        return _result(True, _wrapped(head) + "\n\n" + log)

    def generate_feedback(self, assignment_id, student_id=None, force=True) -> dict:
        """Generate Feedback = ``coursekit feedback``: one page per student from the stored
        verdicts (check names, points, messages), never from the executed notebook."""
        from autograder.publish.feedback import write_feedback
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
        handed in through it. A student without a page, or whose hand-in did not come
        through the exchange (no ``submission_secret.txt``), is named with what to do; when
        nobody at all received a page, the button reports a failure, not a success."""
        course = self.course
        root = course.feedback_dir
        where = root.relative_to(course.root)
        if student_id:
            folders = [root / student_id / assignment_id]
        else:
            folders = sorted(root.glob(f"*/{assignment_id}"))
        released, no_page, elsewhere, logs = [], [], [], []
        for folder in folders:
            student = folder.parent.name
            if not (folder / f"{assignment_id}.html").is_file():
                no_page.append(student)
                continue
            if not all((folder / name).is_file() for name in EXCHANGE_FILES):
                elsewhere.append(student)
                continue
            result = super().release_feedback(assignment_id, student)
            logs.append(result.get("log", ""))
            if not result.get("success"):
                return _result(False, "\n".join(logs), result.get("error", ""))
            released.append(student)
        lines = []
        if released:
            lines.append(f"released the feedback on {assignment_id} to {len(released)} "
                         f"student(s) through the exchange: {', '.join(released)} (they get "
                         f"it with Fetch Feedback in Assignment List)")
        if no_page:
            lines.append(f"no feedback page on {assignment_id} yet for {', '.join(no_page)}: "
                         f"Generate Feedback first")
        if elsewhere:
            lines.append(f"not handed in through the exchange, which therefore cannot hand "
                         f"them a page: {', '.join(elsewhere)}; give them theirs from "
                         f"{where}/<student>/{assignment_id}/ yourself")
        if not folders:
            lines.append(f"no feedback for {assignment_id} under {where}/ yet: generate it "
                         f"first")
        if not released:
            lines[0] = "nothing was released: " + lines[0]
        text = "\n".join(_wrapped(line) for line in lines)
        if not released:
            return _result(False, "", text)
        return _result(True, "\n".join([text] + logs))


def _identifying_ids(source: Path, _cache: dict = {}) -> set[str]:  # noqa: B006 — the cache
    """The lab's identifying cell ids, read again only when its solution notebook changes."""
    from coursekit.notebook import cells as lab_cells
    key = (str(source), source.stat().st_mtime_ns)
    if key not in _cache:
        _cache[key] = lab_cells.load(source).identifying_ids
    return _cache[key]


def _is_folder(path: Path) -> bool:
    """A folder itself, not a link to one (hand-ins are untrusted)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


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


def _ensure_exchange(parent, config=None) -> None:
    """Create the configured exchange folder (``course/exchange`` on one machine), writable by
    every user as nbgrader's exchange needs; nbgrader itself only reports it missing."""
    from nbgrader.exchange.default import Exchange
    root = Path((Exchange(parent=parent) if parent is not None else Exchange(config=config)).root)
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
        """nbgrader's page templates, where ``templates/`` overrides some: those
        extend nbgrader's own as ``nbgrader/<name>`` (base.tpl adds coursekit.js to every
        page)."""
        env = self.settings.get("coursekit_jinja2_env")
        if env is None:
            nbgrader_env = self.settings["nbgrader_jinja2_env"]
            env = Environment(loader=ChoiceLoader([
                FileSystemLoader(str(TEMPLATES)), nbgrader_env.loader,
                PrefixLoader({"nbgrader": nbgrader_env.loader})]))
            self.settings["coursekit_jinja2_env"] = env
        if name == "formgrade_404.tpl":  # a graded submission with no notebook: say why
            resources = ns["resources"]
            api = self.api
            ns["outcome"] = api.outcome(resources["student"], resources["assignment_id"])
            ns["late"] = _lateness_or_none(api, resources["student"],
                                           resources["assignment_id"])
        return env.get_template(name).render(**ns)

    @property
    def exporter(self):
        """The graded notebook view: nbgrader's template, with MathJax from this server and
        coursekit's outcome of the submission (a flag, the reasons) above the notebook."""
        exporter = self.settings.get("coursekit_exporter")
        if exporter is None:
            from jupyter_server.utils import url_path_join
            from nbconvert.exporters import HTMLExporter
            from traitlets.config import Config
            config = Config(self.settings["nbgrader_exporter"].config)
            config.HTMLExporter.template_name = "coursekit_formgrade"
            config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES),
                                                           handlers.template_path]
            # where 'formgrade/index.html.j2', which ours extends, and our macros are found
            config.HTMLExporter.extra_template_paths = [handlers.template_path,
                                                        str(TEMPLATES)]
            config.HTMLExporter.mathjax_url = url_path_join(self.base_url or "/", MATHJAX)
            exporter = HTMLExporter(config=config)
            self.settings["coursekit_exporter"] = exporter
        return _WithOutcome(exporter, self.api)


class _WithOutcome:
    """The exporter, handed coursekit's outcome of the submission it renders as
    ``resources.coursekit`` (nbgrader's SubmissionHandler builds the resources)."""

    def __init__(self, exporter, api: CoursekitAPI):
        self.exporter, self.api = exporter, api

    def from_filename(self, filename, resources=None, **kwargs):
        resources = dict(resources or {})
        student, lab = resources.get("student"), resources.get("assignment_id")
        resources["coursekit"] = self.api.outcome(student, lab)
        resources["coursekit_late"] = _lateness_or_none(self.api, student, lab)
        return self.exporter.from_filename(filename, resources=resources, **kwargs)


def _lateness_or_none(api: CoursekitAPI, student: str, lab: str):
    """The page still opens with a malformed extensions file; the list's label says why."""
    try:
        return api.lateness(student, lab)
    except ManifestError:
        return None


class DownloadGradesHandler(CoursekitHandler, handlers.BaseHandler):
    """``GET formgrader/coursekit-grades/<canvas|moodle>.csv``: the file ``coursekit export
    --format`` writes, made from the gradebook now. A roster that cannot name a graded
    student answers 409 with what to do, as the command says it."""

    @web.authenticated
    @check_notebook_dir
    def get(self, fmt: str):
        from autograder.publish.lms import RosterError, lms_table
        from autograder.publish.spreadsheet import csv_text
        try:
            header, rows = lms_table(self.api.course, fmt, self.coursedir.db_url)
        except (RosterError, ManifestError) as error:
            self.set_status(409)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(str(error))
            return
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="{fmt}.csv"')
        self.finish(csv_text(header, rows))


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

class InstructorValidateHandler(ValidateHandler):
    """Validate in the instructor's server: a notebook here may be anybody's, a student's
    hand-in above all, and the server runs with the instructor's rights. So it runs in the
    grading sandbox of the course this server serves (never a course a hand-in carries, whose
    check packages would be the hand-in's own code), on a copy, as grading does; or not at all
    where the machine has no sandbox (:mod:`autograder.isolation.validation`)."""

    def where(self, root: Path):
        return load_course(find_root(root)), SandboxPlace()


# --------------------------------------------------------------------------- the extension

def _jupyter_server_extension_points():
    return [{"module": "autograder.ui.formgrader"}]


def _load_jupyter_server_extension(serverapp) -> None:
    webapp = serverapp.web_app
    base_url = webapp.settings["base_url"]
    from jupyter_server.utils import url_path_join
    found = []
    for spec in handlers.default_handlers + apihandlers.default_handlers:
        pattern, handler, *rest = spec
        if issubclass(handler, handlers.BaseHandler):
            handler = _subclass(handler)
        found.append((url_path_join(base_url, pattern.lstrip("/")), handler, *rest))
    found.append((url_path_join(base_url, r"formgrader/coursekit-grades/(canvas|moodle)\.csv"),
                  DownloadGradesHandler))
    found.append((url_path_join(base_url, "formgrader/coursekit/(.*)"), web.StaticFileHandler,
                  {"path": str(STATIC)}))
    found += student_server.routes(serverapp, InstructorValidateHandler)
    student_server.route_first(serverapp, found)
    serverapp.log.info("coursekit: nbgrader's formgrader and Validate run coursekit's pipeline "
                       "(Validate in the grading sandbox)")
