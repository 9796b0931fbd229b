"""End to end in a real browser: JupyterLab as a TA and as a student use it.

TA: ``make grade-ui``'s JupyterLab (``course/`` as the Jupyter configuration) on a copy of the
demo class the pipeline tests grade (tests/autograder/conftest.py, built once per run): the
formgrader lists every student with the score ``coursekit export`` has, its Autograde button
regrades one student through coursekit to the same score, and a written answer graded by hand
in the graded notebook view shows up in ``coursekit export``.

Student: ``make lab``'s JupyterLab (``course/student/``) on a working copy of lab01: run all
draws the lab's graph, and Validate shows coursekit's per-check report; on lab02, the backward
stepper widget moves on, node by node, at each click.

TA on a shared PostgreSQL gradebook: the formgrader lists what coursekit graded into it.

Screenshots go to tests/ui/artifacts/ (git-ignored).
"""
from __future__ import annotations

import csv
import importlib.util
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .conftest import REPO, jupyter_lab

pytestmark = pytest.mark.browser

COURSEKIT = [sys.executable, "-m", "coursekit.cli"]


def _test_module(name: str, file: str):
    """tests/autograder/``file``, loaded once under ``name``."""
    module = sys.modules.get(name)
    if module is None:
        path = REPO / "tests" / "autograder" / file
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module   # its dataclasses look their module up there
        spec.loader.exec_module(module)
    return module


def _graded_class_builder():
    """The pipeline tests' demo class builder (tests/autograder/conftest.py), so this test
    reuses the class they grade instead of grading another."""
    module = _test_module("pipeline_fixtures", "conftest.py")
    return module.once_per_run, module._grade_demo_class


@pytest.fixture
def ta_course(tmp_path_factory, tmp_path) -> Path:
    """A private copy of the graded demo class (the test regrades and overrides in it), with
    the repository's TA configuration."""
    once_per_run, build = _graded_class_builder()
    # In a thread of its own: grading runs an asyncio loop, and Playwright's runs in this one.
    with ThreadPoolExecutor(1) as thread:
        graded = Path(thread.submit(once_per_run, tmp_path_factory, "graded_class",
                                    build).result()["root"])
    root = tmp_path / "class"
    shutil.copytree(graded, root, symlinks=True)
    for name in ("nbgrader_config.py", "jupyter_server_config.py"):
        shutil.copy(REPO / "course" / name, root / "course" / name)
    return root


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


def submission_rows(page) -> dict[str, dict[str, str]]:
    page.wait_for_function("typeof models !== 'undefined' && models.loaded === true")
    rows = {}
    for row in page.locator("#main-table tr").all():
        student = row.locator("td.student-id").inner_text().strip()
        rows[student] = {"name": row.locator("td.student-name").inner_text().strip(),
                         "status": row.locator("td.status").inner_text().strip(),
                         "score": row.locator("td.score").inner_text().strip()}
    return rows


def test_ta_formgrader_shows_regrades_and_overrides_what_coursekit_exports(
        ta_course, page, artifacts):
    course_dir = ta_course / "course"
    lab_id = "labfx"
    expected = export_totals(ta_course)
    with jupyter_lab(ta_course, course_dir, artifacts / "ta-jupyterlab.log",
                     ta_course / "home") as lab:
        lab.log_in(page)
        # 1. Every student of the class, by id, with the score coursekit exports.
        page.goto(f"{lab.url}/formgrader/manage_submissions/{lab_id}")
        rows = submission_rows(page)
        page.screenshot(path=artifacts / "ta-1-manage-submissions.png", full_page=True)
        assert {s: r["score"] for s, r in rows.items()} == expected
        assert not [s for s, r in rows.items() if "None" in r["name"]]
        assert not [s for s, r in rows.items() if "needs autograding" in r["status"]]

        # 2. Autograde on one student runs coursekit: the same score, the graded notebook kept.
        student = "dan_syntax"   # a syntax error in the first answer: the rest still counts
        graded = course_dir / "autograded" / student / lab_id / f"{lab_id}.ipynb"
        assert graded.is_file()
        row = page.locator("#main-table tr", has=page.locator("td.student-id",
                                                               has_text=student))
        row.locator("td.autograde a").click()
        modal = page.locator("#success-modal, #error-modal")
        modal.locator("button.btn-primary").wait_for(timeout=300_000)
        page.wait_for_timeout(500)   # the modal fades in
        page.screenshot(path=artifacts / "ta-2-autograde-one-student.png")
        message = modal.inner_text()
        assert page.locator("#success-modal").is_visible(), message
        assert f"{student} · {lab_id}: 3.00 / 5 autograded points (graded)" in message
        assert "SyntaxError" in message
        modal.locator("button.btn-primary").click()
        modal.wait_for(state="detached")
        assert submission_rows(page)[student]["score"] == expected[student]
        assert export_totals(ta_course)[student] == expected[student]
        assert graded.is_file()

        # 3. The graded notebook view: each check's points and message; a written answer
        #    graded by hand counts in coursekit export.
        page.goto(f"{lab.url}/formgrader/gradebook/{lab_id}/{lab_id}")
        link = page.locator("a.name-shown", has_text="ada_full").first
        link.wait_for(state="attached")
        page.goto(lab.url + link.get_attribute("href"))
        page.wait_for_selector("#why_sum")
        text = page.locator("#notebook").first.inner_text()
        assert "coursekit: 2.00/2 points" in text and "labfx.relu (hidden)" in text
        with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                  and r.request.method == "PUT"):
            page.locator("#why_sum").fill("1")
            page.locator("#why_sum").press("Tab")
        page.screenshot(path=artifacts / "ta-3-graded-notebook.png", full_page=True)
        assert export_totals(ta_course)["ada_full"] == "6 / 6"


postgres = pytest.fixture(scope="module", name="postgres")(
    _test_module("postgres_server", "postgres_server.py").running)


def test_ta_formgrader_reads_a_shared_postgresql_gradebook(ta_course, postgres, page, artifacts):
    """A team's gradebook on PostgreSQL ($COURSEKIT_DB): coursekit grades into it and the
    formgrader, configured by the same variable, lists exactly those grades."""
    env = {"COURSEKIT_DB": postgres.create_database("formgrader")}
    students = ["ada_full", "dan_syntax"]
    graded = subprocess.run(COURSEKIT + ["autograde", "--root", str(ta_course), "--no-progress",
                                         *[a for s in students for a in ("--student", s)]],
                            cwd=ta_course, env={**os.environ, **env}, capture_output=True,
                            text=True)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "gradebook: postgresql" in graded.stdout, graded.stdout
    expected = export_totals(ta_course, env)
    assert sorted(expected) == students
    with jupyter_lab(ta_course, ta_course / "course", artifacts / "ta-postgresql.log",
                     ta_course / "home", extra_env=env) as lab:
        lab.log_in(page)
        page.goto(f"{lab.url}/formgrader/manage_submissions/labfx")
        rows = submission_rows(page)
        page.screenshot(path=artifacts / "ta-4-postgresql-gradebook.png", full_page=True)
    assert {s: rows[s]["score"] for s in students} == expected
    # The class's other hand-ins are on disk but not in this gradebook: listed, not scored.
    assert len(rows) > len(students) and not [
        s for s, r in rows.items() if s not in students and r["score"]]


def kernel_ready(page) -> None:
    """Wait until the open notebook's kernel is connected and idle, as the status bar says
    (before that, Run All runs nothing)."""
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").wait_for()
    page.locator(".jp-StatusBar-TextItem", has_text="| Idle").wait_for(timeout=240_000)


def test_student_runs_a_lab_and_validates_it(tmp_path, page, artifacts):
    work = tmp_path / "work"
    lab_id = "lab01_graphs"
    shutil.copytree(REPO / "notebooks" / lab_id, work / lab_id)
    with jupyter_lab(work, REPO / "course" / "student", artifacts / "student-jupyterlab.log",
                     tmp_path / "home") as lab:
        lab.log_in(page)
        page.goto(f"{lab.url}/lab/tree/{lab_id}/{lab_id}.ipynb")
        kernel_ready(page)
        # Run all: the cells before the first exercise run, and its failing check stops it.
        page.get_by_role("menuitem", name="Run").click()
        page.locator("li[data-command='runmenu:run-all']").click()
        page.locator(".jp-OutputArea-output img").first.wait_for(state="attached",
                                                                  timeout=180_000)
        page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                     ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']"
                     ).first.wait_for(state="attached", timeout=180_000)
        page.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
        page.screenshot(path=artifacts / "student-1-run-all.png")

        page.locator(".jp-Toolbar-item", has_text="Validate").click()
        dialog = page.locator(".jp-Dialog")
        dialog.get_by_text("coursekit validate").wait_for(timeout=300_000)
        report = dialog.inner_text()
        page.screenshot(path=artifacts / "student-2-validate.png")
        assert "Not ready to submit" in report
        assert "✗ lab01.numpy_graph_grads" in report and "points" in report
        assert "written answer [relu_mask_answer]" in report
        assert "Traceback" not in report and "see above" not in report


def _run_cell(page, text: str) -> None:
    """Run the one code cell whose source holds ``text`` (Shift+Enter in its editor)."""
    cell = page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor",
                                                          has_text=text))
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def test_student_steps_through_a_backward_pass_in_the_widget(tmp_path, page, artifacts):
    """lab02's BackwardStepper renders as a live widget whose Next button moves the picture
    and the status on, node by node, in the kernel."""
    work = tmp_path / "work"
    lab_id = "lab02_autograd"
    shutil.copytree(REPO / "notebooks" / lab_id, work / lab_id)
    with jupyter_lab(work, REPO / "course" / "student", artifacts / "student-widget.log",
                     tmp_path / "home") as lab:
        lab.log_in(page)
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
