"""nbgrader configuration of a student's JupyterLab (``make lab`` on one machine).

Students see the course's assignment exchange in Assignment List (fetch, submit, fetch
feedback) and nothing of the instructor's: this folder is their Jupyter configuration
folder (``JUPYTER_CONFIG_PATH``), not ``course/``. On JupyterHub the same two settings go into
the students' ``nbgrader_config.py`` with the hub's shared exchange folder (README).
"""
import os

c = get_config()  # noqa: F821 — provided by traitlets' config loader

HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "deep-learning-software"
c.Exchange.root = os.path.normpath(os.path.join(HERE, "..", "exchange"))
