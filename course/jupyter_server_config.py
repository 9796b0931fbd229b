"""JupyterLab for the instructor and TAs (``make grade-ui``): nbgrader's formgrader with
coursekit's pipeline behind its buttons, and MathJax served by this server.

Read when ``course/`` is on ``JUPYTER_CONFIG_PATH`` (``make grade-ui`` sets it), together with
``course/nbgrader_config.py``. See ``autograder/ui/formgrader.py`` for what each button runs.
"""
from coursekit.student.server import LABEXTENSIONS

c = get_config()  # noqa: F821 — provided by traitlets' config loader

c.ServerApp.jpserver_extensions = {
    # The formgrader's buttons run coursekit; Validate runs a notebook in the grading sandbox
    # (here a notebook may be a student's hand-in, and this server has the instructor's rights).
    "autograder.ui.formgrader": True,
    "jupyter_server_mathjax": True,       # MathJax for the graded-notebook view, offline
}
# While a button waits on the server, a panel says what runs and counts the seconds
# (coursekit-progress, coursekit/student/labextension/).
c.LabApp.extra_labextensions_path = [str(LABEXTENSIONS)]
