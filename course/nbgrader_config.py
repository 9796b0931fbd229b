"""nbgrader configuration of the course (read by `coursekit release` and by nbgrader itself).

Layout: this folder (``course/``) is nbgrader's course directory. The instructor notebooks in
``../solutions/<lab>/`` are nbgrader's *source*, the student notebooks in ``../notebooks/<lab>/``
its *release*. Runtime state (gradebook.db, submitted/, autograded/, feedback/, exports/) lives
here and is git-ignored. Use ``coursekit release`` rather than ``nbgrader generate_assignment``:
it fills in ``{exercise}`` in the stub below and writes byte-stable notebooks. In JupyterLab
(``make grade-ui``, with ``jupyter_server_config.py`` beside this file) the formgrader's
buttons run coursekit's commands (``autograder/ui/formgrader.py``).
"""
import os

c = get_config()  # noqa: F821 — provided by traitlets' config loader

HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = "deep-learning-software"
c.CourseDirectory.source_directory = os.path.join("..", "solutions")
c.CourseDirectory.release_directory = os.path.join("..", "notebooks")
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
# The gradebook: $COURSEKIT_DB where a team shares one (postgresql+psycopg://USER@HOST/DB),
# read by every coursekit command too; else the embedded SQLite file beside this one.
c.CourseDirectory.db_url = (os.environ.get("COURSEKIT_DB")
                            or "sqlite:///" + os.path.join(HERE, "gradebook.db"))

# nbgrader's exchange on one machine: release → the students' Assignment List (fetch, submit)
# → collect into submitted/ → feedback back. Git-ignored; a JupyterHub deployment sets its own
# shared folder here instead (README, "The assignment exchange").
c.Exchange.root = os.path.join(HERE, "exchange")
# Collect believes neither the student a hand-in names nor the time it states: the owner of
# the hand-in must be that student, and its files' change times are kept as a receipt
# (autograder/pipeline/verified_collect.py).
c.ExchangeFactory.collect = "autograder.pipeline.verified_collect.VerifiedCollect"

# What replaces a `### BEGIN SOLUTION` ... `### END SOLUTION` region. `{exercise}` becomes the
# answer cell's grade_id, so a student running an untouched cell learns which task it is.
c.ClearSolutions.code_stub = {
    "python": 'raise NotImplementedError("{exercise}: replace this line with your implementation")',
}
c.ClearSolutions.text_stub = "_Write your answer here (graded by hand)._"
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
c.ClearHiddenTests.begin_test_delimeter = "BEGIN HIDDEN TESTS"
c.ClearHiddenTests.end_test_delimeter = "END HIDDEN TESTS"

# Students may not delete or edit checks cells and setup cells (they are restored at grading
# time anyway); answer cells cannot be deleted.
c.LockCells.lock_solution_cells = True
c.LockCells.lock_grade_cells = True
c.LockCells.lock_readonly_cells = True
