"""End to end in a real browser: JupyterLab as a TA and as a student use it.

Servers start as the Makefile starts them (``make grade-ui``, ``make lab``: same
configuration folders, same root folders, started in the course tree), and each is shared by
the steps of one journey rather than started per check.

TA: ``make grade-ui``'s JupyterLab on a copy of the demo class the pipeline tests grade
(tests/autograder/conftest.py, built once per run), plus a second lab nobody handed in. The
formgrader lists every student with the score ``coursekit export`` has, flags what the monitor
found, counts each lab's own hand-ins, explains missing and corrupt hand-ins and flagged
ones on their graded pages, regrades one student with ⚡ (a progress panel while it runs) to
the same score, and a written answer graded by hand shows up in ``coursekit export``.

The exchange, student and TA together on that class: the TA releases, the student fetches in
Assignment List (into ``work/``), edits an answer and a written answer (math and a table),
validates in the panel and submits; the TA collects, autogrades with ⚡ (the exchange's
timestamp kept), sees the written answer's math rendered, generates and releases the
feedback; the student fetches it and opens it. The hand-in carries the edit, and the score
is the one ``coursekit autograde`` gives.

Student: ``make lab``'s JupyterLab on working copies of lab01 and lab02: run all draws the
lab's graph, and Validate says it runs (coursekit-progress) and shows coursekit's per-check
report; on lab02, the backward stepper widget moves on, node by node, at each click.

TA on a shared PostgreSQL gradebook: the formgrader lists what coursekit graded into it.

Screenshots of every step go to tests/ui/artifacts/ (git-ignored).
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import (
    LAB,
    NOBODYS_LAB,
    REPO,
    Lab,
    add_a_lab_nobody_handed_in,
    grade_ui,
    graded_class_copy,
    make_lab,
    pipeline_module,
)

pytestmark = pytest.mark.browser

COURSEKIT = [sys.executable, "-m", "coursekit.cli"]
GRADING_S = 300_000       # ms: one autograde on a loaded two-core machine


@dataclass
class TA:
    root: Path
    lab: Lab


@pytest.fixture(scope="module")
def ta(tmp_path_factory, artifacts):
    """``make grade-ui`` on the graded demo class (and labfy), shared by this module's TA
    steps."""
    root = graded_class_copy(tmp_path_factory, "ta")
    add_a_lab_nobody_handed_in(root)
    with grade_ui(root, artifacts / "ta-jupyterlab.log", root.parent / "home") as lab:
        yield TA(root, lab)


def export_totals(root: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``coursekit export``'s total per student, as the formgrader prints scores."""
    out = root / "course" / "exports"
    subprocess.run(COURSEKIT + ["export", "--root", str(root)], check=True, cwd=root,
                   capture_output=True, env={**os.environ, **(env or {})})
    totals = {}
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            totals[row["student"]] = (f"{round(float(row['lab_total']), 2):g} / "
                                      f"{round(float(row['lab_max_score']), 2):g}")
    return totals


def stored_outcomes(root: Path) -> dict:
    """coursekit's stored outcomes of labfx, by student."""
    from autograder.pipeline.gradebook import load_outcomes, open_gradebook
    gradebook = open_gradebook("sqlite:///" + str(root / "course" / "gradebook.db"))
    try:
        return {o.student: o for o in load_outcomes(gradebook, labs=[LAB])}
    finally:
        gradebook.close()


def submission_rows(page) -> dict[str, dict[str, str]]:
    """Manage Submissions' rows, by student id."""
    page.wait_for_function("typeof models !== 'undefined' && models.loaded === true")
    rows = {}
    for row in page.locator("#main-table tr").all():
        student = row.locator("td.student-id").inner_text().strip() \
            if row.locator("td.student-id").count() else ""
        if not student:
            continue   # DataTables' "No data available in table"
        rows[student] = {"name": row.locator("td.student-name").inner_text().strip(),
                         "timestamp": row.locator("td.timestamp").inner_text().strip(),
                         "status": row.locator("td.status").inner_text().strip(),
                         "score": row.locator("td.score").inner_text().strip()}
    return rows


def assignment_row(page, lab: Lab, lab_id: str):
    """Manage Assignments, loaded, and the row of ``lab_id``."""
    page.goto(f"{lab.url}/formgrader/manage_assignments")
    page.wait_for_function("typeof models !== 'undefined' && models.loaded === true")
    return page.locator("#main-table tr", has=page.locator("td.name", has_text=lab_id))


def submission_row(page, student: str):
    return page.locator("#main-table tr", has=page.locator("td.student-id", has_text=student))


def result_of(page, click, timeout: int = 120_000) -> tuple[bool, str]:
    """Click, wait for the formgrader's result window, and read it: (success, text). The
    window is closed again."""
    click()
    modal = page.locator("#success-modal, #error-modal")
    modal.locator("button.btn-primary").wait_for(timeout=timeout)
    page.wait_for_timeout(500)   # the window fades in
    success, text = page.locator("#success-modal").count() > 0, modal.inner_text()
    return success, " ".join(text.split())   # the log's lines are wrapped to fit the box


# nbgrader's graded page saves a grade box only once it has loaded that page's grades
GRADES_LOADED = ("typeof formgrader !== 'undefined' && formgrader.grades "
                 "&& formgrader.grades.loaded")


def close_result(page) -> None:
    modal = page.locator("#success-modal, #error-modal")
    modal.locator("button.btn-primary").click()
    modal.wait_for(state="detached")


def graded_page(page, lab: Lab, student: str) -> int:
    """Open ``student``'s graded labfx from Manual Grading; the page's HTTP status."""
    page.goto(f"{lab.url}/formgrader/gradebook/{LAB}/{LAB}")
    link = page.locator("a.name-shown", has_text=re.compile(rf"^\s*{re.escape(student)},"))
    link.first.wait_for(state="attached")
    reply = page.goto(lab.url + link.first.get_attribute("href"))
    page.locator("#coursekit-outcome, #coursekit-no-notebook").first.wait_for()
    return reply.status


# --------------------------------------------------------------------------- the TA

def test_ta_formgrader_shows_flags_counts_regrades_and_overrides_what_coursekit_exports(
        ta, page, artifacts):
    lab, root = ta.lab, ta.root
    expected = export_totals(root)
    outcomes = stored_outcomes(root)
    flagged = {s for s, o in outcomes.items() if o.flagged}
    assert {"vic_monitor", "uma_reference"} <= flagged
    lab.log_in(page)

    # 1. Every student of the class, by id, with the score coursekit exports; flagged,
    #    missing and corrupt hand-ins say so.
    page.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
    rows = submission_rows(page)
    page.screenshot(path=artifacts / "ta-1-manage-submissions.png", full_page=True)
    assert {s: r["score"] for s, r in rows.items()} == expected
    assert not [s for s, r in rows.items() if "None" in r["name"]]
    assert not [s for s, r in rows.items() if "needs autograding" in r["status"]]
    assert {s for s, r in rows.items() if "flagged for a TA" in r["status"]} == flagged
    assert rows["max_missing"]["status"] == "missing"
    assert rows["lea_corrupt"]["status"] == "corrupt"
    assert rows["ada_full"]["status"] == "needs manual grading"   # the written answer

    page.goto(f"{lab.url}/formgrader/manage_students/vic_monitor")
    page.wait_for_function("typeof models !== 'undefined' && models.loaded === true")
    assert "flagged for a TA" in page.locator("#main-table").inner_text()

    # 2. Each lab counts its own hand-ins: labfx every graded student, labfy nobody.
    row = assignment_row(page, lab, LAB)
    page.screenshot(path=artifacts / "ta-2-manage-assignments.png", full_page=True)
    assert row.locator("td.num-submissions").inner_text().strip() == str(len(expected))
    assert assignment_row(page, lab, NOBODYS_LAB).locator(
        "td.num-submissions").inner_text().strip() == "0"
    page.goto(f"{lab.url}/formgrader/manage_submissions/{NOBODYS_LAB}")
    assert submission_rows(page) == {}

    # 3. ⚡ Autograde on one student runs coursekit: a progress panel says what runs while it
    #    runs, then the same score, the graded notebook kept.
    page.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
    submission_rows(page)
    student = "dan_syntax"   # a syntax error in the first answer: the rest still counts
    graded = root / "course" / "autograded" / student / LAB / f"{LAB}.ipynb"
    assert graded.is_file()
    progress = page.locator("#coursekit-progress")

    def autograde():
        submission_row(page, student).locator("td.autograde a").click()
        progress.get_by_text(f"Autograding {student}'s {LAB}").wait_for()
        page.wait_for_function("() => { const e = document.querySelector("
                               "'#coursekit-progress .coursekit-elapsed'); "
                               "return e && parseInt(e.innerText) >= 1; }", timeout=60_000)
        page.screenshot(path=artifacts / "ta-3-autograde-progress.png")

    success, message = result_of(page, autograde, timeout=GRADING_S)
    page.screenshot(path=artifacts / "ta-4-autograde-one-student.png")
    assert success, message
    assert f"{student} · {LAB}: 3.00 / 5 autograded points (graded)" in message
    assert "SyntaxError" in message
    assert progress.is_hidden()
    close_result(page)
    assert submission_rows(page)[student]["score"] == expected[student]
    assert export_totals(root)[student] == expected[student]
    assert graded.is_file()

    # 4. The graded notebook view: what grading found first (a flag and its reason), each
    #    check's points and message; a written answer graded by hand counts in export.
    assert graded_page(page, lab, "vic_monitor") == 200
    flag = page.locator("#coursekit-flag")
    assert flag.is_visible() and "Flagged for a TA" in flag.inner_text()
    assert "gc.get_objects" in page.locator("#coursekit-outcome").inner_text()
    page.screenshot(path=artifacts / "ta-5-flagged-graded-page.png")
    graded_page(page, lab, "ada_full")
    assert page.locator("#coursekit-flag").count() == 0
    text = page.locator("#notebook").first.inner_text()
    assert "coursekit: 2.00/2 points" in text and "labfx.relu (hidden)" in text
    # the grade boxes save only once nbgrader's page has loaded their grades
    page.wait_for_function(GRADES_LOADED)
    with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                              and r.request.method == "PUT"):
        page.locator("#why_sum").fill("1")
        page.locator("#why_sum").press("Tab")
    page.screenshot(path=artifacts / "ta-6-graded-notebook.png", full_page=True)
    assert export_totals(root)["ada_full"] == "6 / 6"

    # 5. Missing and corrupt hand-ins have no notebook to show: their page says why.
    for student, status, why in [("max_missing", "missing", "no notebook for labfx"),
                                 ("lea_corrupt", "corrupt", "not valid JSON")]:
        assert graded_page(page, lab, student) == 404
        explained = page.locator("#coursekit-no-notebook").inner_text()
        page.screenshot(path=artifacts / f"ta-7-{status}-hand-in.png")
        assert f"graded this hand-in as {status}: 0.00 / 5" in explained, explained
        assert why in explained and "coursekit autograde --student" in explained

    # 6. Release Feedback to a student who did not hand in through the exchange: it says
    #    so, and that nothing was released.
    page.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
    submission_rows(page)
    success, message = result_of(
        page, lambda: submission_row(page, "ada_full").locator("td.release-feedback a").click())
    page.screenshot(path=artifacts / "ta-8-release-feedback-to-nobody.png")
    assert not success, message
    assert "nothing was released" in message
    assert "not handed in through the exchange" in message and "ada_full" in message
    close_result(page)


# --------------------------------------------------------------------------- the exchange

RELU = 'def relu(x):\n    """Elementwise max(x, 0) of a NumPy array."""\n    return np.maximum(x, 0.0)'
WHY_SUM = ("Row $i$ adds $b$ once: $y_{ij} = \\sum_k x_{ik} w_{kj} + b_j$, so\n\n"
           "$$\\frac{\\partial L}{\\partial b_j} = \\sum_i g_{ij}$$\n\n"
           "| row | adds to the gradient of $b_j$ |\n|---|---|\n| 1 | $g_{1j}$ |\n"
           "| 2 | $g_{2j}$ |\n")


def _sources(path: Path) -> list[str]:
    """Each cell's source in the notebook at ``path``; none while it is being written."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError):
        return []
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells]


def _wait_for(condition, what: str, timeout_s: float = 120):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.5)
    pytest.fail(f"waited {timeout_s:.0f} s for {what}")


def _edit_cell(page, cell, text: str) -> None:
    """Replace the whole source of ``cell`` (its editor open) with ``text``."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)


def open_assignment_list(page) -> None:
    page.get_by_role("menuitem", name="Nbgrader").click()
    page.get_by_role("menuitem", name="Assignment List").click()
    page.locator("#released_assignments_list_loading").wait_for(state="hidden")


def dialog_text(page, contains: str, timeout: int = 60_000) -> str:
    """The text of JupyterLab's dialog once it shows ``contains``."""
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text(contains).filter(visible=True).first.wait_for(timeout=timeout)
    return dialog.inner_text()


def close_dialog(page) -> None:
    page.locator(".jp-Dialog button.jp-mod-accept").first.click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def test_student_and_ta_walk_the_exchange_from_release_to_feedback(ta, browser, artifacts):
    from nbgrader.api import Gradebook
    from nbgrader.utils import get_username, parse_utc
    lab, root = ta.lab, ta.root
    me = get_username()    # nbgrader's exchange names a student by their account
    work = root / "work"
    work.mkdir()           # the student's work/ holds no copy of labfx yet
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(60_000)
    teacher, student = context.new_page(), context.new_page()
    shot = iter(range(1, 100))

    def screenshot(page, name: str, **options) -> None:
        page.screenshot(path=artifacts / f"journey-{next(shot):02d}-{name}.png", **options)

    try:
        with make_lab(root, artifacts / "journey-student-jupyterlab.log",
                      root.parent / "student-home") as desk:
            # 1. The TA releases labfx (Manage Assignments → Release).
            lab.log_in(teacher)
            row = assignment_row(teacher, lab, LAB)
            success, message = result_of(teacher, lambda: row.locator("td.release a").click())
            screenshot(teacher, "ta-releases")
            assert success, message
            close_result(teacher)

            # 2. The student fetches it in Assignment List: it lands in work/, where
            #    JupyterLab works, and `coursekit fetch` takes it for the release.
            desk.log_in(student)
            student.goto(f"{desk.url}/lab")
            open_assignment_list(student)
            released = student.locator("#released_assignments_list .list_item",
                                       has_text=LAB)
            released.get_by_role("button", name="Fetch").click()
            fetched = student.locator("#fetched_assignments_list .list_item",
                                      has_text=LAB).first
            fetched.wait_for()
            screenshot(student, "student-fetches")
            notebook = work / LAB / f"{LAB}.ipynb"
            assert notebook.is_file() and not (root / LAB).exists()
            again = subprocess.run(COURSEKIT + ["fetch", "--all", "--root", str(root)],
                                   cwd=root, capture_output=True, text=True, check=True)
            assert "up to date with the release" in again.stdout, again.stdout
            assert not list(work.glob(f"{LAB}.release-*"))

            # 3. Submit before any answer is saved: refused, saying why.
            fetched.get_by_role("button", name="Submit").click()
            refused = dialog_text(student, "still the lab as it was released")
            screenshot(student, "student-submits-the-blank-release")
            assert "save it first" in refused
            close_dialog(student)

            # 4. The notebook's link opens it; the student answers relu and the written
            #    question (math and a table), and saves.
            fetched.locator("a.assignment-notebooks-link").click()
            student.locator("#fetched_assignments_list .nested_list_item a",
                            has_text=LAB).click()
            student.locator(".jp-NotebookPanel:visible .jp-Notebook").wait_for()
            _edit_cell(student, student.locator(".jp-CodeCell", has=student.locator(
                ".jp-InputArea-editor", has_text="def relu(x):")), RELU)
            written = student.locator(".jp-MarkdownCell", has_text="Write your answer here")
            written.dblclick()
            _edit_cell(student, written, WHY_SUM)
            student.keyboard.press("Control+Enter")
            student.keyboard.press("Control+s")
            _wait_for(lambda: RELU in _sources(notebook)
                      and WHY_SUM.strip() in [s.strip() for s in _sources(notebook)],
                      "the edited notebook saved in work/")
            screenshot(student, "student-edits-and-saves")

            # 5. Validate in the panel runs coursekit validate on that notebook; a panel at
            #    the top says so while it runs.
            student.locator(".lm-TabBar-tab", has_text="Assignments").click()
            student.locator("#fetched_assignments_list .nested_list_item").get_by_role(
                "button", name="Validate").click()
            student.locator("#coursekit-progress").get_by_text(
                f"Validating {LAB}/{LAB}.ipynb").wait_for()
            screenshot(student, "student-validates-progress")
            report = dialog_text(student, "ready to submit", timeout=GRADING_S)
            assert student.locator("#coursekit-progress").is_hidden()
            screenshot(student, "student-validates")
            assert "Not ready to submit" in report
            assert "✓ labfx.relu" in report and "✗ labfx.linear_grads" in report
            close_dialog(student)

            # 6. Submit hands in the notebook the student edited.
            fetched.get_by_role("button", name="Submit").click()
            student.locator("#submitted_assignments_list .list_item",
                            has_text=LAB).first.wait_for()
            screenshot(student, "student-submits")
            inbound = list((root / "course" / "exchange").glob(
                f"*/inbound/{me}+{LAB}+*/{LAB}.ipynb"))
            assert len(inbound) == 1 and RELU in _sources(inbound[0])

            # 7. The TA collects: the message says who came in, and the lab counts one more.
            counted = int(assignment_row(teacher, lab, LAB).locator(
                "td.num-submissions").inner_text())
            row = assignment_row(teacher, lab, LAB)
            success, message = result_of(teacher, lambda: row.locator("td.collect a").click())
            screenshot(teacher, "ta-collects")
            assert success, message
            assert f"collected 1 hand-in(s) of {LAB} into course/submitted/: {me}" in message
            close_result(teacher)
            assert int(assignment_row(teacher, lab, LAB).locator(
                "td.num-submissions").inner_text()) == counted + 1
            collected = root / "course" / "submitted" / me / LAB
            assert RELU in _sources(collected / f"{LAB}.ipynb")
            stamp = (collected / "timestamp.txt").read_text().strip()

            # 8. ⚡ Autograde: the submission keeps the exchange's timestamp.
            teacher.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
            before = submission_rows(teacher)[me]
            assert before["status"] == "needs autograding" and before["timestamp"] != "None"
            success, message = result_of(teacher, lambda: submission_row(
                teacher, me).locator("td.autograde a").click(), timeout=GRADING_S)
            screenshot(teacher, "ta-autogrades")
            assert success, message
            assert f"{me} · {LAB}: 2.00 / 5 autograded points (graded)" in message
            close_result(teacher)
            after = submission_rows(teacher)[me]
            assert after["timestamp"] == before["timestamp"]
            assert after["score"] == "2 / 6" and after["status"] == "needs manual grading"
            with Gradebook("sqlite:///" + str(root / "course" / "gradebook.db"),
                           "deep-learning-software") as gradebook:
                assert gradebook.find_submission(LAB, me).timestamp == parse_utc(stamp)

            # ... and the score is the one `coursekit autograde` gives that hand-in.
            cli = subprocess.run(COURSEKIT + ["autograde", "--root", str(root), "--lab", LAB,
                                              "--student", me, "--regrade", "--no-progress",
                                              "--cell-timeout", "20", "--memory-mb", "2048"],
                                 cwd=root, capture_output=True, text=True, check=False)
            assert cli.returncode == 0, cli.stdout + cli.stderr
            assert export_totals(root)[me] == after["score"]
            teacher.reload()
            assert submission_rows(teacher)[me]["score"] == after["score"]

            # 9. The graded page renders the written answer's math (MathJax from this
            #    server, no request refused) and its table.
            refused_requests = []
            teacher.on("response", lambda r: r.status >= 400 and "mathjax" in r.url.lower()
                       and refused_requests.append(f"{r.status} {r.url}"))
            graded_page(teacher, lab, me)
            answer = teacher.locator(".nbgrader_cell", has=teacher.locator("#why_sum"))
            answer.locator(".MathJax_Display, .MathJax").first.wait_for(timeout=120_000)
            assert answer.locator(".MathJax_Display").count() >= 1
            assert "\\frac" not in answer.locator(".rendered_html").inner_text()
            cell_padding = answer.locator(".rendered_html td").first.evaluate(
                "e => parseFloat(getComputedStyle(e).paddingLeft)")
            header_rule = answer.locator(".rendered_html thead").first.evaluate(
                "e => parseFloat(getComputedStyle(e).borderBottomWidth)")
            answer.scroll_into_view_if_needed()
            screenshot(teacher, "ta-sees-math-and-a-table")
            assert cell_padding > 0 and header_rule > 0
            assert refused_requests == []

            # 10. Generate and release the feedback (per student); the message names who.
            teacher.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
            submission_rows(teacher)
            success, message = result_of(teacher, lambda: submission_row(
                teacher, me).locator("td.generate-feedback a").click())
            assert success, message
            close_result(teacher)
            success, message = result_of(teacher, lambda: submission_row(
                teacher, me).locator("td.release-feedback a").click())
            screenshot(teacher, "ta-releases-feedback")
            assert success, message
            assert f"to 1 student(s) through the exchange: {me}" in message
            close_result(teacher)

            # 11. The student fetches the feedback and opens it: the score above.
            student.locator("#refresh_assignments_list").click()
            submitted = student.locator("#submitted_assignments_list .list_item",
                                        has_text=LAB).first
            submitted.get_by_role("button", name="Fetch Feedback").click()
            view = student.locator("#submitted_assignments_list a",
                                   has_text="view feedback")
            view.first.wait_for()
            screenshot(student, "student-fetches-feedback")
            view.first.click()
            page_file = student.locator(".jp-DirListing-item", has_text=f"{LAB}.html")
            page_file.wait_for()
            page_file.dblclick()
            shown = student.frame_locator(".jp-HTMLViewer iframe").locator("body")
            shown.get_by_text("Autograded").wait_for()
            screenshot(student, "student-opens-feedback")
            assert "Autograded: 2.00 / 5 points" in shown.inner_text()
            pages = list((work / LAB / "feedback").glob(f"*/{LAB}.html"))
            assert len(pages) == 1
    except BaseException:
        for who, page in (("ta", teacher), ("student", student)):
            page.screenshot(path=artifacts / f"journey-failure-{who}.png", full_page=True)
        raise
    finally:
        context.close()


# --------------------------------------------------------------------------- PostgreSQL

postgres = pytest.fixture(scope="module", name="postgres")(
    pipeline_module("postgres_server", "postgres_server.py").running)


def test_ta_formgrader_reads_a_shared_postgresql_gradebook(tmp_path_factory, postgres, page,
                                                             artifacts):
    """A team's gradebook on PostgreSQL ($COURSEKIT_DB): coursekit grades into it and the
    formgrader, configured by the same variable, lists exactly those grades."""
    root = graded_class_copy(tmp_path_factory, "postgresql")
    env = {"COURSEKIT_DB": postgres.create_database("formgrader")}
    students = ["ada_full", "dan_syntax"]
    graded = subprocess.run(COURSEKIT + ["autograde", "--root", str(root), "--no-progress",
                                         *[a for s in students for a in ("--student", s)]],
                            cwd=root, env={**os.environ, **env}, capture_output=True,
                            text=True)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "gradebook: postgresql" in graded.stdout, graded.stdout
    expected = export_totals(root, env)
    assert sorted(expected) == students
    with grade_ui(root, artifacts / "ta-postgresql.log", root.parent / "home",
                  extra_env=env) as lab:
        lab.log_in(page)
        page.goto(f"{lab.url}/formgrader/manage_submissions/{LAB}")
        rows = submission_rows(page)
        page.screenshot(path=artifacts / "ta-9-postgresql-gradebook.png", full_page=True)
    assert {s: rows[s]["score"] for s in students} == expected
    # The class's other hand-ins are on disk but not in this gradebook: listed as handed in
    # and not graded yet, without a score.
    others = {s: r for s, r in rows.items() if s not in students}
    assert others and not [s for s, r in others.items() if r["score"]]
    assert {r["status"] for r in others.values()} == {"needs autograding"}


# --------------------------------------------------------------------------- the student

@pytest.fixture(scope="module")
def student_desk(tmp_path_factory, artifacts):
    """``make lab`` on working copies of lab01 and lab02 (in a folder of their own: the
    repository's work/ is the developer's), shared by this module's student steps."""
    tree = tmp_path_factory.mktemp("student")
    for lab_id in ("lab01_graphs", "lab02_autograd"):
        shutil.copytree(REPO / "notebooks" / lab_id, tree / "work" / lab_id)
    with make_lab(tree, artifacts / "student-jupyterlab.log", tree / "home",
                  config_dir=REPO / "course" / "student") as lab:
        yield lab


def kernel_ready(page) -> None:
    """Wait until the open notebook's kernel is connected and idle, as the status bar says
    (before that, Run All runs nothing)."""
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").wait_for()
    page.locator(".jp-StatusBar-TextItem", has_text="| Idle").wait_for(timeout=240_000)


def shut_down_kernels(lab: Lab) -> None:
    """Stop the server's kernels (the next test's notebook starts its own)."""
    with urllib.request.urlopen(lab.at("/api/kernels"), timeout=30) as reply:
        kernels = json.load(reply)
    for kernel in kernels:
        request = urllib.request.Request(lab.at(f"/api/kernels/{kernel['id']}"),
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=60).close()


def test_student_runs_a_lab_and_validates_it(student_desk, page, artifacts):
    lab, lab_id = student_desk, "lab01_graphs"
    lab.log_in(page)
    try:
        page.goto(f"{lab.url}/lab/tree/{lab_id}/{lab_id}.ipynb")
        kernel_ready(page)
        # Run all: the cells before the first exercise run, and its failing check stops it.
        page.get_by_role("menuitem", name="Run").click()
        page.locator("li[data-command='runmenu:run-all']").click()
        notebook = page.locator(".jp-NotebookPanel:visible")
        notebook.locator(".jp-OutputArea-output img").first.wait_for(state="attached",
                                                                      timeout=180_000)
        notebook.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
            ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']"
        ).first.wait_for(state="attached", timeout=180_000)
        notebook.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
        page.screenshot(path=artifacts / "student-1-run-all.png")

        page.locator(".jp-Toolbar-item", has_text="Validate").click()
        page.locator("#coursekit-progress").get_by_text(
            f"Validating {lab_id}/{lab_id}.ipynb").wait_for()
        dialog = page.locator(".jp-Dialog")
        dialog.get_by_text("coursekit validate").wait_for(timeout=300_000)
        report = dialog.inner_text()
        page.screenshot(path=artifacts / "student-2-validate.png")
        assert "Not ready to submit" in report
        assert "✗ lab01.numpy_graph_grads" in report and "points" in report
        assert "written answer [relu_mask_answer]" in report
        assert "Traceback" not in report and "see above" not in report
    finally:
        shut_down_kernels(lab)


def _run_cell(page, text: str) -> None:
    """Run the one code cell of the open notebook whose source holds ``text`` (Shift+Enter in
    its editor; the other lab's notebook may be open in a tab behind)."""
    cell = page.locator(".jp-NotebookPanel:visible .jp-CodeCell",
                        has=page.locator(".jp-InputArea-editor", has_text=text))
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def test_student_steps_through_a_backward_pass_in_the_widget(student_desk, page, artifacts):
    """lab02's BackwardStepper renders as a live widget whose Next button moves the picture
    and the status on, node by node, in the kernel."""
    lab, lab_id = student_desk, "lab02_autograd"
    lab.log_in(page)
    try:
        page.goto(f"{lab.url}/lab/tree/{lab_id}/{lab_id}.ipynb")
        kernel_ready(page)
        _run_cell(page, "device = pick_device()")
        _run_cell(page, "BackwardStepper(c_t.sum())")
        status = page.locator(".coursekit-stepper-status")
        status.wait_for(timeout=180_000)
        first = status.inner_text()
        assert first.startswith("step 1 of "), first
        steps = int(first.split(" of ")[1].split(":")[0])
        picture = page.locator(".coursekit-stepper img")
        before = picture.get_attribute("src")
        page.locator("button.coursekit-stepper-next").click()
        page.wait_for_function(
            "() => document.querySelector('.coursekit-stepper-status').innerText"
            ".startsWith('step 2 of ')", timeout=60_000)
        # The picture follows the status in the same update: a new image replaces the old.
        page.wait_for_function("before => document.querySelector('.coursekit-stepper img')"
                               ".getAttribute('src') !== before", arg=before, timeout=60_000)
        for _ in range(steps - 2):
            page.locator("button.coursekit-stepper-next").click()
        page.wait_for_function(
            f"() => document.querySelector('.coursekit-stepper-status').innerText"
            f".startsWith('step {steps} of ')", timeout=60_000)
        # The last node: nothing comes after it, so Next is switched off.
        page.wait_for_function("() => document.querySelector('button.coursekit-stepper-next')"
                               ".disabled", timeout=60_000)
        page.locator(".coursekit-stepper").scroll_into_view_if_needed()
        page.screenshot(path=artifacts / "student-3-backward-stepper.png")
    finally:
        shut_down_kernels(lab)
