"""JupyterLab for the instructor and TAs (``make grade-ui``): nbgrader's formgrader with
coursekit's pipeline behind its buttons, and MathJax served by this server.

Read when ``course/`` is on ``JUPYTER_CONFIG_PATH`` (``make grade-ui`` sets it), together with
``course/nbgrader_config.py``. See ``autograder/nbgrader_ui.py`` for what each button runs.
"""
import os

import autograder

c = get_config()  # noqa: F821 — provided by traitlets' config loader

c.ServerApp.jpserver_extensions = {
    "autograder.nbgrader_ui": True,       # formgrader buttons and Validate → coursekit
    "jupyter_server_mathjax": True,       # MathJax for the graded-notebook view, offline
}
# While Validate, Fetch or Submit waits on the server, a panel says what runs and counts the
# seconds (coursekit-progress, autograder/labextension/).
c.LabApp.extra_labextensions_path = [
    os.path.join(os.path.dirname(autograder.__file__), "labextension")]

# Validate here may run anybody's notebook (a student's hand-in above all) with this
# server's rights: it runs notebooks in the grading sandbox instead (autograder/nbgrader_ui.py).
c.ServerApp.tornado_settings = {"coursekit_instructor_server": True}
