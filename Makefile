# The two commands in the README: `make lab` and `make test` (CI adds test-integration,
# test-classroom and test-torch).
# Both set up first: system programs (tools/setup_system.sh, once per run),
# then .venv from requirements.txt; `make test` adds requirements-dev.txt.
# On a machine without an NVIDIA GPU, TORCH=cpu takes PyTorch's CPU build
# (a few hundred MB) from PyTorch's own index instead of PyPI's CUDA build.

PYTHON ?= python3
TORCH ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
WHICH_PYTHON := import sys; print(sys.base_prefix, sys.version)
TORCH_INDEX := $(if $(filter cpu,$(TORCH)),--extra-index-url https://download.pytorch.org/whl/cpu)

# What make test, make quick and make check run first: ruff, the import contracts, actionlint on the
# CI workflow (with shellcheck on its run: scripts; the files named, so a download without .git works too).
LINT := $(BIN)/ruff check helpers tests tools classroom notebooks && $(BIN)/lint-imports \
	&& $(BIN)/actionlint -no-color -shellcheck=$(BIN)/shellcheck .github/workflows/*.yml

.PHONY: labextension test-classroom lab edit check notebook refresh test test-integration test-torch quick new setup system system-tests system-browser notebooks nav solutions site bench pin clean hub load grade

# JupyterLab on the learner's working copy, my-notebooks/ (made on the first run from
# notebooks/, ignored by git, never overwritten; see tools/runtime/working_copy.py).
lab: system $(STAMP)
	$(BIN)/python -m tools.runtime.lab

# The same working copy and settings in Jupyter Notebook 7.
notebook: system $(STAMP)
	$(BIN)/python -m tools.runtime.lab --notebook

# JupyterLab on the stored notebooks themselves (notebooks/), for a maintainer: the same settings,
# and the kernel whose language_info they store, so opening and saving one changes no metadata
# (tools/runtime/lab.py --edit). Outputs still come from `make notebooks NB=...`. NOTEBOOK=1: Notebook 7.
edit: system $(STAMP)
	$(BIN)/python -m tools.runtime.lab --edit $(if $(NOTEBOOK),--notebook)

# Replace my-notebooks/'s notebooks with the collection's; one you changed is moved
# to my-notebooks/backups/<date-time>/ first (it prints what it kept).
refresh: system $(STAMP)
	$(BIN)/python -m tools.runtime.lab --refresh

# Every test but the integration layers (tests/conftest.py's INTEGRATION), in 4 minutes from a
# fresh clone on 2 idle cores; CI runs `make test-integration` after it.
test: system-tests $(DEV_STAMP)
	$(LINT)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=25 --layers test

# The inner loop, one notebook: NB=02 (or 2). Ruff, then the notebook's cells run and compared
# (nbval, byte for byte too), its exercises' right and wrong answers, its widgets'
# declarations against its stored outputs, its structure (tests/conftest.py's --notebook picks
# them): 20 s for 02, 78 s for 09, which compiles (2 shared cores).
CHECKED := tests/test_exercises.py tests/test_exercise_checks.py tests/test_widget_registry.py tests/test_notebooks.py
check: system-tests $(DEV_STAMP)
	@test -n "$(NB)" || { echo "make check NB=02: name the notebook by its number"; exit 2; }
	@n=$$(echo "$(NB)" | sed 's/^[0-9]$$/0&/'); case "$$n" in [0-9][0-9]) ! ls notebooks/$$n-*.ipynb >/dev/null 2>&1 \
		|| exit 0;; esac; echo "make check NB=$(NB): no notebook numbered $(NB) in notebooks/ (NB=03 checks \
	notebooks/03-*.ipynb)"; exit 2
	$(LINT)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=5 --notebook $(NB) notebooks $(CHECKED)

# The layers make test leaves out: the browser (JupyterLab, Notebook 7, the site in Chromium),
# the set-up elsewhere (a notebook alone as on Colab, the pins for every Python), the
# byte-for-byte re-execution, and the check limits and deep graphs run to their ends. About 11 minutes; CI and the workflow run it on every change.
# PYTEST_ARGS= adds pytest arguments.
test-integration: system-browser $(DEV_STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=25 --layers integration $(PYTEST_ARGS)

# make test's selection, less the files about the repository itself, run by a second torch
# (TORCH_VERSION=, default 2.14.1, PyPI's CUDA build) in build/torch-<version>/ beside .venv's
# packages; nbval's differences sorted as tools/testkit/other_torch.py says (a cell tagged
# torch-release-behaviour is run, not compared). About 2 minutes for the install, 3 for the tests.
test-torch: system-tests $(DEV_STAMP)
	$(BIN)/python -m tools.testkit.other_torch $(TORCH_VERSION)

# make test without the tests that execute whole notebooks or draw real models (nbval over
# notebooks/; tests/conftest.py's EXECUTING), in 90 s; one notebook's loop is `make check NB=NN`.
quick: system $(DEV_STAMP)
	$(LINT)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=10 --layers quick

# A new notebook, NB=10-name, that passes `make test` as made (tools/build/new.py): the
# notebook, its helpers/lessons/nbNN.py and tests/answers/nbNN_answers.py; its navigation and set-up cells
# written before it is executed (they are cells too), and its time after. TITLE="..." its title
# (default: from the name), READ_AFTER=05-interview-relevance the notebook it follows.
new: setup $(DEV_STAMP)
	@test -n "$(NB)" || { echo "make new NB=10-name [TITLE=\"...\"] [READ_AFTER=NN-name]: name the notebook"; exit 2; }
	$(BIN)/python -m tools.build.new $(NB) --title "$(TITLE)" --read-after "$(READ_AFTER)"
	$(BIN)/python -m tools.build.nav
	$(BIN)/python -m tools.build.run_notebooks notebooks/$(NB).ipynb
	$(BIN)/python -m tools.build.nav

setup: system $(STAMP)

system:
	@PYTHON=$(PYTHON) sh tools/setup_system.sh

system-tests:
	@PYTHON=$(PYTHON) sh tools/setup_system.sh --tests

system-browser:
	@PYTHON=$(PYTHON) sh tools/setup_system.sh --browser

# A .venv made by another Python (another PYTHON=, or one upgraded since) is made again:
# `venv` over it would mix the two. A PYTHON= given on the command line (or in the environment)
# that is not the one .venv was made by makes it again even when the requirements did not change
# (make hub PYTHON=/usr/bin/python3 over a .venv of pyenv's, as make hub's refusal advises); the
# default python3 keeps whichever .venv is there.
ifneq ($(filter command line environment,$(origin PYTHON)),)
ifneq ($(wildcard $(BIN)/python),)
ifneq ($(shell $(BIN)/python -c "$(WHICH_PYTHON)" 2>&1),$(shell $(PYTHON) -c "$(WHICH_PYTHON)" 2>&1))
.PHONY: $(STAMP) $(DEV_STAMP)
endif
endif
endif

define MAKE_VENV
	@if [ -x $(BIN)/python ] && [ "$$($(BIN)/python -c "$(WHICH_PYTHON)" 2>&1)" != "$$($(PYTHON) -c "$(WHICH_PYTHON)")" ]; then \
		echo "$(VENV) was made by another Python than $(PYTHON): making it again"; rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
endef

$(STAMP): requirements.txt pyproject.toml
	$(MAKE_VENV)
	$(BIN)/python -m pip install --quiet $(TORCH_INDEX) -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation --editable .
	touch $@

# requirements-dev.txt holds every pin of requirements.txt too: one pip run installs both (a fresh
# `make test`'s set-up took 121 s so, 135 s as two runs), and the learner's stamp is set too.
$(DEV_STAMP): requirements.txt requirements-dev.txt pyproject.toml
	$(MAKE_VENV)
	$(BIN)/python -m pip install --quiet $(TORCH_INDEX) -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation --editable .
	touch $(STAMP) $@

# Re-execute every notebook in place from a fresh kernel (outputs and widget state
# saved), then rewrite the navigation cells: each notebook's time (tools/build/pacing.py)
# counts what its cells print. NB=03 (or NB=notebooks/03-....ipynb) for one.
notebooks: setup $(DEV_STAMP)
	$(BIN)/python -m tools.build.run_notebooks $(NB)
	$(BIN)/python -m tools.build.nav

nav: setup
	$(BIN)/python -m tools.build.nav

# The teacher's copy: every answer slot filled with its solution, executed and
# checked (every check must say Right), in build/solutions/ (ignored by git).
solutions: setup $(DEV_STAMP)
	$(BIN)/python -m tools.build.solutions

# The static website, from the stored notebooks (nothing executed), in build/site/.
site: setup $(DEV_STAMP)
	$(BIN)/python -m tools.build.site

# Our drawing against torchviz on the same graphs, the shape corpus's layouts, a 200,003-node graph
# and every exercise check's time (prints tables; --help lists the parts).
bench: system $(DEV_STAMP)
	$(BIN)/python -m tools.bench

# A class on one machine (classroom/README.md): JupyterHub on 127.0.0.1 (IP=, PORT= to change;
# HUB_API_PORT=, HUB_PROXY_API_PORT= for a second class), each learner's server in
# hub-learners/<name>/ as a Unix user of their own, with their own working copy and enforced
# limits (MEM_LIMIT=1.1G to change the memory). Where learners cannot be isolated it says why
# and stops, unless UNISOLATED=1 asks for a class without isolation. Ctrl-C stops the hub only
# (the class keeps running; make hub again takes it back); STOP=1 stops the class.
# ADMIN=name: the teacher's JupyterHub admin page (HUB_ADMIN_PASSWORD=, else one made up and
# printed). FORGET=1, after a course: the class stopped, the learners' Unix users removed, their
# notebooks kept (classroom/README.md).
hub: system-browser $(DEV_STAMP)
	$(if $(MEM_LIMIT),HUB_MEM_LIMIT=$(MEM_LIMIT)) $(BIN)/python -m classroom.hub $(if $(IP),--ip $(IP)) $(if $(PORT),--port $(PORT)) $(if $(STOP),--stop-class) $(if $(FORGET),--remove-users) $(if $(UNISOLATED),--unisolated) $(if $(ADMIN),--admin $(ADMIN))

# The load test on loopback: a class started as make hub starts one (ended as FORGET=1 ends one),
# where N simulated learners (default 20) log in, start, Run All of 01 and change its widgets. URL=http://host:8000 sends them to a running class
# hub instead (its class password from HUB_PASSWORD, or read from the hub's state as root), named
# loadtest-00 ..., whose Unix users and folders are removed at the end, also on Ctrl-C or SIGTERM.
load: system-browser $(DEV_STAMP)
	$(BIN)/python -m classroom.load -n $(or $(N),20) $(if $(URL),--url $(URL))

# The classroom's own tests (classroom/tests/): the hub with Unix users, grading in its sandbox,
# the load test's learner. make test runs none of them; CI runs them in a step of their own.
test-classroom: system-browser $(DEV_STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=15 classroom/tests $(PYTEST_ARGS)

# Grade submitted notebooks (SUBMISSIONS=dir, default hub-learners/) with the collection's own
# checks, each in a sandbox of its own (bubblewrap; UNISOLATED=1 runs them without one, only for
# submissions you trust): build/grades/grades.csv and summary.md.
grade: setup $(DEV_STAMP)
	$(BIN)/python -m classroom.grade $(or $(SUBMISSIONS),hub-learners) $(if $(UNISOLATED),--unisolated)

# Rebuild jupyter/labextensions/run-all-waits/ (the prebuilt JupyterLab extension make lab installs:
# Run All clicked while a kernel starts runs once it is ready) from jupyter/run-all-waits/src/, against
# this environment's JupyterLab; needs Node.js and npm. Rebuild after a JupyterLab upgrade, then make test-integration.
labextension: setup
	cd jupyter/run-all-waits && npm install --no-audit --no-fund --loglevel=error && npx tsc \
		&& node node_modules/@jupyterlab/builder/lib/build-labextension.js --core-path \
		"$$($(CURDIR)/$(BIN)/python -c 'import jupyterlab, pathlib; print(pathlib.Path(jupyterlab.__file__).parent / "staging")')" .

# Re-resolve requirements.txt and requirements-dev.txt from requirements.in and requirements-dev.in
# for Python 3.10 on (uv's universal resolution: python_version markers where versions differ),
# keeping the versions pinned now where they still fit (UPGRADE=1 takes the newest). PyPI's Linux
# torch is the CUDA build; the CPU build's pin needs none of its CUDA packages, so they are left out.
UV_PIN := $(BIN)/uv pip compile --quiet --universal --python-version 3.10 --only-binary :all: --no-annotate \
	$(if $(UPGRADE),--upgrade)
pin: $(DEV_STAMP)
	$(UV_PIN) requirements.in -o requirements.txt
	$(UV_PIN) requirements-dev.in -o requirements-dev.txt
	sed -i -E '/^(nvidia-|cuda-|triton)/d' requirements.txt requirements-dev.txt

clean:
	rm -rf $(VENV) artifacts build helpers/__pycache__ tests/__pycache__ tools/__pycache__ tools/*/__pycache__ *.egg-info
