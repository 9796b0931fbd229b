"""A student's JupyterLab (``make lab``): Validate runs ``coursekit validate`` (the per-check
report), the Assignment List works in the folder JupyterLab serves, and the instructor's
formgrader is off. See ``coursekit/student/server.py``."""
from coursekit.student.server import LABEXTENSIONS

c = get_config()  # noqa: F821 — provided by traitlets' config loader

c.ServerApp.jpserver_extensions = {
    "coursekit.student.server": True,
    "nbgrader.server_extensions.formgrader": False,
}
# While Validate, Fetch or Submit waits on the server, a panel says what runs and counts the
# seconds (coursekit-progress, coursekit/student/labextension/).
c.LabApp.extra_labextensions_path = [str(LABEXTENSIONS)]
