# The two commands in the README: `make lab` and `make test`.
# Both set up (system programs, then .venv from requirements.txt) first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test setup system notebooks nav bench clean

lab: setup
	$(BIN)/python tools/lab.py

test: setup
	@PYTHON=$(PYTHON) sh tools/setup_system.sh --browser
	$(BIN)/ruff check helpers tests tools notebooks
	$(BIN)/python -m pytest

setup: system $(STAMP)

system:
	@PYTHON=$(PYTHON) sh tools/setup_system.sh

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation --editable .
	touch $@

# Rewrite the navigation cells, then re-execute every notebook in place from a
# fresh kernel (outputs and widget state saved). Pass NB=notebooks/01-....ipynb for one.
notebooks: setup nav
	$(BIN)/python tools/run_notebooks.py $(NB)

nav: setup
	$(BIN)/python tools/nav.py

# Our drawing against torchviz on the same graphs, and nbval's wall time (prints a table).
bench: setup
	$(BIN)/python tools/bench.py

clean:
	rm -rf $(VENV) helpers/__pycache__ tests/__pycache__ *.egg-info
