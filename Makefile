# Two commands do everything from a fresh clone:
#   make demo   grade the bundled demo class end to end (SQLite gradebook under course/)
#   make test   run the whole test suite
# Both create or update .venv from pyproject.toml on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# As an activated environment would: nbgrader runs tools of its own by name (alembic, when
# Collect in the formgrader makes the gradebook), which must be this environment's.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: demo test test-all test-under-load lab grade-ui bench release-check mutants sweep-secrets gpu-check gpu-wheels clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@bash autograder/install_sandbox.sh || echo "WARNING: sandbox tools missing; grading will say so loudly"
	@bash autograder/install_browser.sh || echo "WARNING: chromium missing; the browser test (tests/ui) will be skipped"
	@bash autograder/install_postgres.sh || echo "WARNING: PostgreSQL missing; its gradebook tests will be skipped"
	@bash autograder/install_hub.sh || echo "WARNING: configurable-http-proxy missing; the JupyterHub test (tests/hub) will be skipped"
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/coursekit demo

# One BLAS/torch thread per test worker: two workers on two cores must not oversubscribe.
# TESTS=path... runs only those (all of tests/ and solutions/ by default).
# A test worker that dies (a C library's abort) ends the run at once, said as a failure:
# with a replacement worker, xdist's file-by-file scheduler was seen to wait forever.
# `make test` leaves out the nightly tier (pyproject.toml's `nightly` marker: what it proves
# once, proved again for every lab through another route), which `make test-all` adds (run it
# before a release or a term). CI runs `make test`. The 100 slowest tests are listed at the
# end: what CI's time is made of, for keeping it under its budget.
PYTEST = OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=2 \
  $(BIN)/python -m pytest -n 2 --dist loadfile --max-worker-restart 0 --timeout 900 \
  --durations=100
test: $(STAMP)
	$(PYTEST) -m "not benchmark and not nightly" $(TESTS)

test-all: $(STAMP)
	$(PYTEST) -m "not benchmark" $(TESTS)

# `make test` on a busy machine, as beside other gradings and a browser: two busy processes
# per core run beside it. Each stops as soon as this recipe's shell is gone, however it ended
# (a trap would miss a SIGKILL), and after LOAD_S seconds in any case (timeout).
LOAD_S ?= 10800
test-under-load: $(STAMP)
	@for i in $$(seq $$((2 * $$(nproc)))); do \
	  timeout $(LOAD_S) sh -c 'while kill -0 $$0 2>/dev/null; do :; done' $$$$ & \
	done; \
	echo "load: $$((2 * $$(nproc))) busy processes beside the tests, for at most $(LOAD_S) s"; \
	$(MAKE) --no-print-directory test

# Mechanical mutants (cosmic-ray) of every answer cell, judged like the hand-written suite on
# three seeds; prints the kill rates per lab and writes tests/mutants/mechanical_results.json.
# Too slow for every `make test` (minutes); nightly-style CI runs it. MUTANT_JOBS=N workers.
mutants: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=2 \
	  PYTHONPATH=tests $(BIN)/python -m tooling.mechanical $(LABS)

# Every solution scored under SECRETS students' hidden seeds (default 10): a check that fails a
# right answer on rare seeds shows here, not in a student's grade. Minutes per lab.
SECRETS ?= 10
sweep-secrets: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=2 \
	  $(BIN)/python tests/labs/sweep_secrets.py --secrets $(SECRETS) $(LABS)

# Students work on copies: released labs not fetched yet are copied into work/ (git ignores
# it; a new release never writes over an edited file), and JupyterLab opens there.
lab: $(STAMP)
	$(BIN)/coursekit fetch --all
	JUPYTER_CONFIG_PATH=$(CURDIR)/course/student $(BIN)/jupyter lab work/ $(ALLOW_ROOT)

# The instructor's and TAs' JupyterLab, opened on nbgrader's formgrader: every button runs
# coursekit (autograder/ui/formgrader.py); course/ is its Jupyter configuration folder.
grade-ui: $(STAMP)
	JUPYTER_CONFIG_PATH=$(CURDIR)/course $(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) \
	  --LabApp.default_url=/formgrader $(ALLOW_ROOT)

ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

release-check: $(STAMP)
	$(BIN)/coursekit release --check

bench: $(STAMP)
	$(BIN)/python -m pytest -m benchmark -s -p no:randomly tests/benchmarks

# Every GPU path in one run (tests/gpu/gpu_check.py): on a lent GPU machine the labs that say
# they run unchanged on a GPU, their checks and `coursekit doctor --bench`; elsewhere a loud dry
# run on the CPU. The lent machine is offline and has no venv: there it runs on its own python3
# (it needs no venv where there is none and an NVIDIA driver is present). GPU_CHECK_OUT=DIR.
GPU_CHECK_OUT ?= build/gpu-check
GPU_PYTHON = $(if $(wildcard $(BIN)/python),$(BIN)/python,python3)
gpu-check: $(if $(or $(wildcard $(BIN)/python),$(if $(shell command -v nvidia-smi),,none)),$(STAMP))
	$(GPU_PYTHON) tests/gpu/gpu_check.py --out $(GPU_CHECK_OUT) $(GPU_CHECK_ARGS)

# The wheels the GPU check carries to the lent machine (Python 3.12), into .whl/ (git-ignored).
gpu-wheels: $(STAMP)
	$(BIN)/python tests/gpu/gpu_check.py --download-wheels .whl

clean:
	rm -rf $(VENV) course/gradebook.db course/submitted course/autograded course/feedback course/exports course/.work
