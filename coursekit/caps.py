"""The size caps of grading, in one place: how much the grader reads of what a submission
and its kernel produce, so that no hand-in can fill the grader's memory, disk or time.

Each cap says why it has its value. What a submission is measured against (a lab's memory,
processes, cell time) is the course's, in ``course/course.toml``, not here.

The student side (``coursekit validate``, the kernel's own code) and the grader share these
caps, so they live in ``coursekit``: the grader (``autograder``) imports them from here, and
nothing here imports anything. The modules that apply a cap import it by name, so a test can
still lower it on that module (``monkeypatch.setattr(collect, "MAX_MEMBERS", 3)``).
"""

# ---------------------------------------------------------------- a hand-in on disk (collect)
# What one archive may unpack to: a zip bomb stops here; a term's labs are tens of MB.
MAX_UNPACKED_BYTES = 512 * 2**20
# Files in one archive: a hand-in holds a few notebooks and their data files.
MAX_MEMBERS = 10_000
# Folders in a path, in an archive or a handed-in tree: lab notebooks sit one to three deep.
MAX_FOLDER_DEPTH = 32
# Files and folders looked at in one walk of a handed-in tree.
MAX_ENTRIES = 100_000
# One notebook file: lab notebooks with their plots are a few MB.
MAX_NOTEBOOK_BYTES = 64 * 2**20
# Nesting of a notebook's JSON: real notebooks nest about 10 deep (widget state included).
MAX_JSON_DEPTH = 64
# Objects and lists in one notebook's JSON: a notebook holds a few thousand; an inline
# plotting library's code counted by its brackets, a few hundred thousand. Reading one costs
# the grader ~10x its text and a Python walk per container: this bounds both (a notebook of
# nested lists would cost 500 MB and a minute at 2 million).
MAX_JSON_CONTAINERS = 500_000
# Notebooks read in one hand-in (a term's labs and their copies), and their bytes together.
MAX_CANDIDATES = 40
MAX_CANDIDATE_BYTES = 256 * 2**20
# An exchange file beside a feedback page: nbgrader writes a timestamp and a hash, a few
# dozen bytes.
MAX_EXCHANGE_FILE = 4096

# ------------------------------------------------------- a running kernel's output (execute)
# Before any cap below: the bytes of one message part the grader reads at all, and how many
# messages may wait in one socket's queue (execute's NOTE [capped before decoded]). Above
# MAX_PAYLOAD_CHARS's worth of JSON, so that a legal payload always arrives.
MAX_MESSAGE_BYTES = 64 * 2**20
# A kernel that sends faster than the grader reads waits, instead of queueing in the grader.
MAX_QUEUED_MESSAGES = 64
# stdout and stderr kept per cell: a print loop must not fill the grader's memory.
MAX_STREAM_CHARS = 200_000
# Outputs kept per cell: a lab's cell shows a handful; a display in a loop, thousands.
MAX_OUTPUTS_PER_CELL = 500
# One rich output (image, HTML, text/plain of a display): a lab's plots are well under.
MAX_DISPLAY_CHARS = 2_000_000
# One check's observations, encoded (the payload a grade() call sends, and what drive keeps
# of it): large tensors, never gigabytes.
MAX_PAYLOAD_CHARS = 50_000_000
# All output kept from one notebook: bounds the grader's memory per kernel it drives.
MAX_NOTEBOOK_CHARS = 100_000_000
# An exception's message, and each traceback line; and the lines of one traceback (a deep
# recursion's would be thousands, and its first and last lines say what happened).
MAX_ERROR_CHARS = 10_000
MAX_TRACEBACK_LINES = 100
# Of an exception's message, what a report line quotes ("the answer in cell 4 raised …"):
# enough for a shape mismatch's message; the cell's output keeps the rest.
SHOWN_ERROR_CHARS = 300

# --------------------------------------------------------------------- a driven check (drive)
# Observations kept per call: a check program has tens to hundreds of cases.
MAX_OBSERVATIONS = 20_000
# Characters of a check's stdout or stderr kept per call, and in the graded notebook.
MAX_PRINTED = 20_000

# ----------------------------------------------------------------- the monitor's reports
# Reports of the kernel's monitor kept in the grader's memory per kernel.
MAX_EVENTS = 100_000
# One report line: reports are short JSON lines; a longer one is not the monitor's.
MAX_LINE = 4096

# ------------------------------------------------------------------------ in the kernel
# An observed array over this many elements is recorded by its description, not its values:
# 8 MB of float64, far above any check's tensors.
MAX_ARRAY_ELEMENTS = 1_000_000
# One request to the pre-warmed kernel: the kernel's environment holds the lab's forbidden
# targets.
MAX_REQUEST = 64 * 2**20
# A release notebook read for its points: a release notebook is far smaller; anything larger
# is not one.
MAX_RELEASE_NOTEBOOK_BYTES = 8 << 20
