"""A term on a real JupyterHub on localhost (tests/hub/hub.py): an instructor, a TA and three
students, each a Unix user with a server of their own, one exchange.

The instructor releases two labs. Each student logs in through the hub's login page in
Chromium and works in JupyterLab's Assignment List, with its buttons: Ann fetches, validates
and submits both labs; Bob submits labfx twice (a partial answer, then the whole); Cat hands
labfx in after its due date; neither hands in labfy. (Answers are saved through each server's
contents API, as JupyterLab saves.) The TA collects, ``coursekit autograde`` grades as root in
the sandbox, the TA logs in too and grades Ann's written answer by hand in the formgrader,
imports the roster and downloads the Canvas file, which is ``coursekit export``'s; then
generates and releases the feedback, and each student fetches it and sees their own score:
the late one with the penalty, Ann with her written answer's point.

On the way: a student cannot read another's files, the exchange's inbound folder, the other
students' feedback or the gradebook, and a student's token opens neither the TA's server nor
its grades download.
"""
from __future__ import annotations

import csv
import json
import re
import secrets
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from hub import hub as hub_module
from machine_load import scaled
from ui.conftest import artifacts, browser, chromium_path  # noqa: F401 — fixtures
from ui.test_browser import GRADES_LOADED, close_dialog, dialog_text, open_assignment_list

pytestmark = [pytest.mark.slow, pytest.mark.browser]

COURSE = hub_module.EXCHANGE_COURSE
LABS = ("labfx", "labfy")
STARTUP_S = scaled(240)          # a user's server: ~15 s idle; on a busy machine longer
GRADING_S = scaled(600)
COURSEKIT = [sys.executable, "-m", "coursekit.cli"]


@pytest.fixture(scope="module")
def hub(artifacts):  # noqa: F811 — the ui fixture of that name
    why = hub_module.missing_parts()
    if why is None and chromium_path() is None:
        why = "no Chromium on PATH (`apt-get install chromium`)"
    if why:
        pytest.skip(f"hub test skipped: {why}")
    tag = secrets.token_hex(2)
    started = hub_module.start(tag, artifacts / "hub.log", STARTUP_S)
    try:
        yield started
    finally:
        hub_module.stop(started, started.base, tag, started.made_users)


# --------------------------------------------------------------------------- answers

def answers(course_tree: Path, lab_id: str) -> dict[str, dict]:
    """``{"full": notebook, "partial": notebook}`` of ``lab_id``, as JSON for the contents
    API: the demo class's full-marks hand-in and its one-wrong-answer one."""
    from autograder.demo import demo_class
    from coursekit.course import load_course
    course = load_course(course_tree)
    demo = demo_class.demo_lab(course, course.lab(lab_id))
    found = {}
    with tempfile.TemporaryDirectory() as scratch:
        for kind, build in (("full", demo_class._full), ("partial", demo_class._partial)):
            build(demo, Path(scratch) / kind)
            found[kind] = json.loads((Path(scratch) / kind / lab_id / f"{lab_id}.ipynb")
                                     .read_text())
    return found


def save(hub, user, lab_id: str, notebook: dict) -> None:
    """Save ``notebook`` as ``user``'s copy of the lab, through their server (as JupyterLab
    saves: the server writes it, as the user)."""
    hub.json("PUT", f"/user/{user.name}/api/contents/{lab_id}/{lab_id}.ipynb",
             {"type": "notebook", "format": "json", "content": notebook})


def act(hub, user, action: str, lab_id: str):
    """An Assignment List button (fetch, submit, fetch_feedback) through ``user``'s server."""
    reply = hub.json("POST", f"/user/{user.name}/assignments/{action}",
                     {"course_id": COURSE, "assignment_id": lab_id}, timeout=GRADING_S)
    assert reply.get("success"), reply
    return reply["value"]


def validate(hub, user, lab_id: str) -> str:
    reply = hub.json("POST", f"/user/{user.name}/assignments/validate",
                     {"path": f"{lab_id}/{lab_id}.ipynb"}, timeout=GRADING_S)
    assert reply["success"] and isinstance(reply["value"], dict), reply
    return reply["value"]["failed"][0]["source"]


def formgrader(hub, user, path: str) -> str:
    """A formgrader button through ``user``'s (a staff member's) server; its log."""
    reply = hub.json("POST", f"/user/{user.name}/formgrader/api/{path}", timeout=GRADING_S)
    assert reply.get("success"), reply
    return reply.get("log", "")


def feedback_page(hub, user, lab_id: str) -> str:
    """The feedback page ``user`` fetched, read through their server."""
    listing = hub.json("GET", f"/user/{user.name}/api/contents/{lab_id}/feedback")["content"]
    (stamp,) = [entry["name"] for entry in listing]   # "2026-11-28 01:10:00.123 UTC"
    return hub.json("GET", f"/user/{user.name}/api/contents/{lab_id}/feedback/{quote(stamp)}/"
                    f"{lab_id}.html?type=file&format=text")["content"]


def refused(user, *command: str) -> bool:
    """Whether ``command`` run as ``user`` is refused by the operating system."""
    done = user.run(*command, check=False)
    return done.returncode != 0 and "Permission denied" in done.stderr


def log_in(browser, hub, user, contexts: list):  # noqa: F811 — the ui fixture's name
    """A page of ``user`` logged in through the hub's login page, on their server."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    contexts.append(context)
    context.set_default_timeout(scaled(120) * 1000)
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user.name)
    page.fill("#password_input", hub.password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user.name}/**")
    return page


def student_page(browser, hub, user, contexts: list):  # noqa: F811
    """``user`` logged in, in JupyterLab's Assignment List."""
    page = log_in(browser, hub, user, contexts)
    page.wait_for_url(f"**/user/{user.name}/lab**")
    open_assignment_list(page)
    return page


def fetch_button(page, lab_id: str) -> None:
    page.locator("#released_assignments_list .list_item", has_text=lab_id
                 ).get_by_role("button", name="Fetch").click()
    page.locator("#fetched_assignments_list .list_item", has_text=lab_id).first.wait_for()


def validate_button(page, lab_id: str) -> str:
    """The Validate button of ``lab_id``'s notebook; the dialog's text."""
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=lab_id).first
    notebook = page.locator("#fetched_assignments_list .nested_list_item").first
    if not notebook.is_visible():
        fetched.locator("a.assignment-notebooks-link").click()
    notebook.get_by_role("button", name="Validate").click()
    report = dialog_text(page, "ready to submit", timeout=scaled(300) * 1000)
    close_dialog(page)
    return report


def submit_button(page, lab_id: str, listed: int) -> None:
    """The Submit button of ``lab_id``; waits until the Submitted list holds ``listed``
    hand-ins in all (one timestamp row each, under its lab's row)."""
    page.locator("#fetched_assignments_list .list_item", has_text=lab_id
                 ).first.get_by_role("button", name="Submit").click()
    page.locator("#submitted_assignments_list .list_item", has_text=lab_id).first.wait_for()
    expect(page.locator("#submitted_assignments_list .nested_list_item")
           ).to_have_count(listed, timeout=scaled(120) * 1000)


def set_due(course_tree: Path, lab_id: str, due: datetime) -> None:
    """Give ``lab_id`` a due date (now, for the late student) and 10% per started day."""
    toml = course_tree / "course" / "course.toml"
    text = toml.read_text()
    line = f'id = "{lab_id}"\n'
    toml.write_text(text.replace(line, line + f"due = {due.isoformat()}\n"
                                             f"late = {{ per_day = 0.1 }}\n", 1))


# --------------------------------------------------------------------------- the term

def test_a_term_on_a_jupyterhub(hub, browser, artifacts):  # noqa: F811
    inst, ta = hub.instructor, hub.ta
    ann, bob, cat = hub.students          # both labs; labfx twice; labfx late
    for user in (inst, ta, bob, cat):     # ann's server starts when she logs in
        hub.api("POST", f"/hub/api/users/{user.name}/server", timeout=30)
    for user in (inst, ta, bob, cat):
        hub.start_server(user, STARTUP_S)
    work = {lab_id: answers(hub.course_tree, lab_id) for lab_id in LABS}
    contexts: list = []

    # 1. The instructor releases both labs.
    for lab_id in LABS:
        assert "Released as" in formgrader(hub, inst, f"assignment/{lab_id}/release")

    try:
        # 2. Ann logs in through the hub's page and, in JupyterLab's Assignment List, fetches
        #    both labs, validates and submits them (her answers saved through her server).
        page = student_page(browser, hub, ann, contexts)
        for lab_id in LABS:
            fetch_button(page, lab_id)
            save(hub, ann, lab_id, work[lab_id]["full"])
        page.screenshot(path=artifacts / "hub-01-ann-fetched.png")
        assert "Ready to submit" in validate(hub, ann, "labfx")   # the same as the button:
        report = validate_button(page, "labfx")
        assert "Ready to submit" in report and "Not ready" not in report, report
        for listed, lab_id in enumerate(LABS, start=1):
            submit_button(page, lab_id, listed)
        page.screenshot(path=artifacts / "hub-02-ann-submitted.png")

        # 3. Bob submits labfx twice: a partial answer first, then the whole one.
        bob_page = student_page(browser, hub, bob, contexts)
        fetch_button(bob_page, "labfx")
        save(hub, bob, "labfx", work["labfx"]["partial"])
        assert "Not ready to submit" in validate_button(bob_page, "labfx")
        submit_button(bob_page, "labfx", 1)
        save(hub, bob, "labfx", work["labfx"]["full"])
        report = validate_button(bob_page, "labfx")
        assert "Ready to submit" in report and "Not ready" not in report, report
        submit_button(bob_page, "labfx", 2)
        bob_page.screenshot(path=artifacts / "hub-03-bob-submitted-twice.png")

        # 4. labfx falls due now; Cat hands it in after that.
        due = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=1)
        set_due(hub.course_tree, "labfx", due)
        hub_module.wait_until(lambda: datetime.now(timezone.utc) > due, "the due date", 5)
        cat_page = student_page(browser, hub, cat, contexts)
        fetch_button(cat_page, "labfx")
        save(hub, cat, "labfx", work["labfx"]["full"])
        submit_button(cat_page, "labfx", 1)

        # 5. What a student cannot reach: another's files, the exchange's inbound folder,
        #    the gradebook, the course; nor, with her own token, the TA's server.
        inbound = hub.exchange / COURSE / "inbound"
        assert refused(ann, "cat", str(bob.home / "labfx" / "labfx.ipynb"))
        assert refused(ann, "ls", str(bob.home))
        assert refused(ann, "ls", str(inbound))
        assert refused(ann, "cat", str(hub.course_tree / "course" / "gradebook.db"))
        assert refused(ann, "ls", str(hub.course_tree / "course"))
        token = hub.json("POST", f"/hub/api/users/{ann.name}/tokens",
                         {"note": "the term test"})["token"]
        assert hub.api("GET", f"/user/{ann.name}/api/status", token=token)[0] == 200
        for path in ("api/status", "formgrader/api/assignments",
                     "formgrader/coursekit-grades/canvas.csv"):
            assert hub.api("GET", f"/user/{ta.name}/{path}", token=token)[0] in (403, 404)

        # 6. The TA collects both labs; coursekit grades them as root, in the sandbox; the
        #    grader hands the gradebook and the graded copies back to the staff group.
        collected = formgrader(hub, ta, "assignment/labfx/collect")
        assert "collected 3 hand-in(s) of labfx" in collected, collected
        assert "collected 1 hand-in(s) of labfy" in formgrader(hub, ta,
                                                                "assignment/labfy/collect")
        graded = subprocess.run(COURSEKIT + ["autograde", "--root", str(hub.course_tree),
                                             "--jobs", "2", "--no-progress"],
                                capture_output=True, text=True, timeout=GRADING_S)
        assert graded.returncode == 0, graded.stdout + graded.stderr
        course = hub.course_tree / "course"
        subprocess.run(["chown", "-R", f"{inst.name}:{hub.staff_group}",
                        str(course / "gradebook.db"), str(course / "autograded")], check=True)
        subprocess.run(["chmod", "-R", "g+rwX", str(course / "gradebook.db"),
                        str(course / "autograded")], check=True)

        # 7. The TA logs in and grades Ann's written answer by hand in the formgrader.
        ta_page = log_in(browser, hub, ta, contexts)
        formgrader_url = f"{hub.url}/user/{ta.name}/formgrader"
        ta_page.goto(f"{formgrader_url}/gradebook/labfx/labfx")
        link = ta_page.locator("a.name-shown", has_text=re.compile(rf"^\s*{ann.name},"))
        link.first.wait_for(state="attached")
        ta_page.goto(hub.url + link.first.get_attribute("href"))
        ta_page.locator("#coursekit-outcome").wait_for()
        # the grade boxes save only once nbgrader's page has loaded their grades
        ta_page.wait_for_function(GRADES_LOADED)
        with ta_page.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                     and r.request.method == "PUT" and r.ok):
            ta_page.locator("#why_sum").fill("1")
            ta_page.locator("#why_sum").press("Tab")
        ta_page.screenshot(path=artifacts / "hub-04-ta-grades-by-hand.png", full_page=True)

        # 8. The TA imports the roster (nbgrader's own command) and downloads the Canvas
        #    file: the very file `coursekit export --format canvas` writes.
        roster = "\n".join(["id,first_name,last_name,lms_user_id",
                            *(f"{s.name},{s.name.title()},Student,lms-{s.name}"
                              for s in hub.students)]) + "\n"
        ta.run("sh", "-c", f"cat > roster.csv << 'EOF'\n{roster}EOF", cwd=course)
        ta.run("python", "-m", "nbgrader", "db", "student", "import", "roster.csv", cwd=course)
        ta_page.goto(f"{formgrader_url}/manage_assignments")
        download = ta_page.locator("#coursekit-download-canvas")
        download.wait_for()
        with ta_page.expect_download() as started:
            download.click()
        downloaded = Path(started.value.path()).read_bytes()
        ta.run("python", "-m", "coursekit.cli", "export", "--format", "canvas", "--root",
               str(hub.course_tree), cwd=hub.course_tree)
        assert downloaded == (course / "exports" / "canvas.csv").read_bytes()
        header, _points, *rows = csv.reader(downloaded.decode("utf-8").splitlines())
        (column,) = [i for i, name in enumerate(header) if name.endswith("(labfx)")]
        labfx = {row[3]: row[column] for row in rows}           # by SIS Login ID
        assert labfx == {f"lms-{ann.name}": "6", f"lms-{bob.name}": "5",
                         f"lms-{cat.name}": "4.5"}, labfx   # Cat's after the penalty

        # 9. The TA generates and releases the feedback of both labs.
        for lab_id in LABS:
            formgrader(hub, ta, f"assignment/{lab_id}/generate_feedback")
            formgrader(hub, ta, f"assignment/{lab_id}/release_feedback")
        assert refused(ann, "ls", str(hub.exchange / COURSE / "feedback"))

        # 10. Each student fetches their own feedback in the Assignment List.
        for student in (page, bob_page, cat_page):
            student.locator("#refresh_assignments_list").click()
            submitted = student.locator("#submitted_assignments_list .list_item",
                                        has_text="labfx")
            submitted.first.get_by_role("button", name="Fetch Feedback").click()
            student.locator("#submitted_assignments_list a", has_text="view feedback"
                            ).first.wait_for()
        page.screenshot(path=artifacts / "hub-05-ann-feedback.png")
    except BaseException:
        for number, context in enumerate(contexts):
            for shown in context.pages:
                shown.screenshot(path=artifacts / f"hub-failure-{number}.png", full_page=True)
        raise
    finally:
        for context in contexts:
            context.close()
    act(hub, ann, "fetch_feedback", "labfy")
    pages = {student.name: feedback_page(hub, student, "labfx") for student in (ann, bob, cat)}
    for name, html in pages.items():
        assert f"Feedback for <b>{name}</b>" in html
        assert not [other for other in pages if other != name and other in html]
        total = html[html.index('<div class="total">'):][:160]
        assert "Autograded: <b>5.00 / 5</b>" in total, (name, total)   # bob's second counts
    assert "written answers: 1 / 1" in pages[ann.name]                  # graded by hand
    assert "written answers: 0 / 1 (not all graded yet)" in pages[bob.name]
    assert "on time" in pages[ann.name] and "on time" in pages[bob.name]
    assert "late by" in pages[cat.name] and "Late penalty: <b>−0.50</b>" in pages[cat.name]
    assert "score after the penalty: <b>4.50 / 6</b>" in pages[cat.name]
    assert f"Feedback for <b>{ann.name}</b>" in feedback_page(hub, ann, "labfy")
    # the exchange's timestamps reached the gradebook: Cat's is after the due date
    from autograder.pipeline import gradebook as gb
    book = gb.open_gradebook(f"sqlite:///{hub.course_tree / 'course' / 'gradebook.db'}")
    try:
        stamps = {(o.student, o.lab): o.submitted_at for o in gb.load_outcomes(book)}
    finally:
        book.close()
    assert stamps[(cat.name, "labfx")] > due.replace(tzinfo=None) >= stamps[(bob.name, "labfx")]
    assert stamps.get((bob.name, "labfy")) is None   # never handed in: no exchange time
