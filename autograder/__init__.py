"""The instructor pipeline around nbgrader: release, collect, assemble, sandbox, execute,
score, gradebook, feedback, export — one small step per module, glued by :mod:`.commands`.

NOTE [slow jsonschema import]: ``jsonschema`` imports ``rfc3987_syntax`` when it is installed
(it is, through jupyter_events), and that module builds a parser grammar at import time: about
3 s of CPU on every ``import nbformat``. Nothing in this pipeline validates IRIs, so the
module is marked absent before anything imports jsonschema; ``iri`` formats are then simply
not checked, as on any machine without that package.
"""
import sys

sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]
