"""A student's JupyterLab (``make lab``): Validate runs ``coursekit validate`` (the per-check
report) and the instructor's formgrader is off. See ``autograder/nbgrader_ui.py``."""
c = get_config()  # noqa: F821 — provided by traitlets' config loader

c.ServerApp.jpserver_extensions = {
    "autograder.nbgrader_ui": True,
    "nbgrader.server_extensions.formgrader": False,
}
