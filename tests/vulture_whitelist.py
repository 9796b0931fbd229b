"""Names that look unused to vulture but are used: frameworks and protocols call them by
name, or a test names them. tests/test_lint.py runs vulture over coursekit/, autograder/ and
tests/ with this file (settings in pyproject.toml, ``[tool.vulture]``). Never run."""
_ = None  # vulture reads the attribute names below; nothing here is ever executed

# The command line calls `<command>_arguments(parser)` and `<command>(args)` by name
# (coursekit/cli.py).
_.release_arguments
_.autograde_arguments
_.feedback_arguments
_.export_arguments
_.extend_arguments
_.demo_arguments
_.reveal_arguments
_.reveal
_.bundle_arguments
_.validate_arguments
_.fetch_arguments
_.formatter_class  # argparse reads it
_.VerifiedCollect  # nbgrader loads it by name (course/nbgrader_config.py)

# traitlets, jupyter_client, nbclient and Jupyter server: overrides, defaults and settings
# they read by name.
_._context_default
_._created_context
_.client_factory
_.interrupt_mode
_.handle_comm_msg
_._jupyter_server_extension_points
_._load_jupyter_server_extension
_.log_level
_.template_name
_.extra_template_basedirs
_.extra_template_paths
_.mathjax_url
# nbgrader's formgrader API (autograder/ui/formgrader.py overrides it; `force` is its argument)
_.get_source_assignments
_.get_submitted_students
_._filter_existing_notebooks
_.get_student_notebook_submissions
_.generate_assignment
_.generate_feedback
_.force
# nbformat: a code cell's field, cleared when the cell is restored
_.execution_count

# Python, IPython and pickle protocols
_.__call__
_.__reduce_ex__
_.protocol
_.exc_info
_.reducer_override
_._ipython_display_
_._repr_pretty_
_.cycle
_._render_traceback_

# cosmic-ray's operator API (tests/tooling/mechanical.py)
_.mutation_positions
_.mutate
_.examples

# Libraries that read our objects' attributes: copydetect a fingerprint's `offsets`;
# onnxruntime's SessionOptions thread counts.
_.offsets
_.intra_op_num_threads
_.inter_op_num_threads

# Public API of the reference library, named after PyTorch's (what students may call).
_.detach_
_.clip
_.register_module
_.DEFAULT

# The student bundle's generated modules import these by name (autograder/publish/bundle.py).
_.recorded_check
_.module_getattr

# Read through `self.__dict__.get("_initialized")` (coursekit/data/dataloader.py).
_._initialized

# pytest: fixtures a test asks for only for what they do, the xdist scheduler's hook.
_.nothing_left
_.private_uids
_._split_scope
# Attributes a test sets to see that Module.__setattr__ registers (or refuses) them.
_.registered
_.thing
# Callback signatures: shutil.copytree's `ignore`, sys.monitoring's CALL event.
_.directory
_.arg0
# Fields of BenchResult that reach the report through dataclasses.asdict.
_.work_per_call
_.peak_is_estimate
# course/jupyter_server_config.py and course/student/ import it (traitlets config files,
# not scanned).
_.LABEXTENSIONS

# Dead, left for now: other work in progress edits the checks (remove it with that work).
_._is_coursekit
