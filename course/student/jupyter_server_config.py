"""A student's JupyterLab (``make lab``): Validate runs ``coursekit validate`` (the per-check
report) and the instructor's formgrader is off. See ``autograder/nbgrader_ui.py``."""
import os

import autograder

c = get_config()  # noqa: F821 — provided by traitlets' config loader

c.ServerApp.jpserver_extensions = {
    "autograder.nbgrader_ui": True,
    "nbgrader.server_extensions.formgrader": False,
}
# While Validate, Fetch or Submit waits on the server, a panel says what runs and counts the
# seconds (coursekit-progress, autograder/labextension/).
c.LabApp.extra_labextensions_path = [
    os.path.join(os.path.dirname(autograder.__file__), "labextension")]
