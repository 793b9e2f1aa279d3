# The two commands of the README. Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# nbgrader shells out to `alembic` by name: keep the venv's bin/ first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: lab test sweep lint release check check-arg clean venv-here

# A checkout copied or moved with its .venv: the editable install and the scripts' #! lines
# still point at the original checkout, whose code `drills` would then run. Re-point them at
# this checkout before anything runs (tools/repoint_venv.py; no network needed).
venv-here:
	@if [ -d $(VENV) ]; then $(PYTHON) tools/repoint_venv.py $(VENV); fi

lab: venv-here $(VENV)/.installed
	$(BIN)/jupyter lab --notebook-dir=exercises $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS)

# The suite runs its test files on TEST_JOBS workers (pytest-xdist; one file stays on one
# worker, so a file's shared fixture, such as the browser test's JupyterLab, is built once;
# the longest files first, in tests/conftest.py's order, not xdist's most-tests-first).
# Two workers on 2 cores, up to 4 on bigger machines; TEST_JOBS=0 runs in one process. (Three
# on 2 cores was tried on 2026-12-03: the suite used 1,009 s of CPU in that run, so it is bound
# by the two cores, not by its waits; docs/speed.md, "The test suite".)
TEST_JOBS ?= $(shell $(PYTHON) -c "import os; print(min(4, max(2, len(os.sched_getaffinity(0)))))" 2>/dev/null || echo 2)

test: venv-here $(VENV)/.installed-dev
	$(BIN)/python -m pytest $(if $(filter 0,$(TEST_JOBS)),,-n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder) $(PYTEST_ARGS)

# The suite with every sweep on (DRILLS_SWEEP=1): what `make test` runs a slice of (nbgrader's
# round trip of every notebook and mistake, every notebook in the browser, the Binder venv,
# ...) runs whole. Tens of minutes on 2 cores; docs/speed.md lists what each sweep adds.
sweep: export DRILLS_SWEEP := 1
sweep: test

lint: venv-here $(VENV)/.installed-dev
	$(BIN)/ruff check autograder tiny_model tests benchmarks tools deploy
	$(BIN)/ruff format --check autograder tiny_model tests benchmarks tools deploy

# Every check an author runs after changing one notebook, for that notebook only:
# `make check A=02` (the notebook's id or number); `drills author-check --help` for the stages.
check: check-arg venv-here $(VENV)/.installed-dev
	$(BIN)/drills author-check $(A) $(CHECK_ARGS)

check-arg:
	@test -n "$(A)" || { echo "make check A=<notebook id or number>, e.g. make check A=02"; exit 2; }

release: venv-here $(VENV)/.installed
	$(BIN)/drills release

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# On Linux, install the CPU build of torch first when none is present: a bare
# `pip install torch` would pull a CUDA build of several GB.
$(VENV)/.torch: | $(BIN)/python
	@if [ "$$(uname -s)" = "Linux" ] && ! $(BIN)/python -c "import torch" 2>/dev/null; then \
		$(BIN)/python -m pip install --quiet "torch==2.13.0"; \
	fi
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.torch
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) build *.egg-info gradebook.db
