# Concord: `make run` sets everything up and starts it; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Everything make starts is the embedded default: it may run on the built-in development key.
export CONCORD_EMBEDDED ?= true

.PHONY: install run test lint format bench clean

$(STAMP): requirements.txt requirements-dev.txt
	@echo "Setting up: a virtualenv in $(VENV) with Concord's Python packages (pip; this takes a few minutes the first time)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(STAMP)
	@echo "Packages installed."

install: $(STAMP)

# The demo's logins are kept for run-local.sh, which prints them last, below the URL.
run: install
	@echo "Preparing the database (var/concord.sqlite3), static files and demo data..."
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py demo | tee var/demo-logins.txt
	$(BIN)/python manage.py demo_generation
	$(BIN)/python manage.py demo_estimates
	HOST=$(HOST) PORT=$(PORT) BIN=$(BIN) LOGINS=var/demo-logins.txt scripts/run-local.sh

test: install
	$(BIN)/python -m pytest

# lint-imports checks the layer contracts of pyproject.toml ([tool.importlinter]); mypy the type hints
# ([tool.mypy]; its cache in .mypy_cache makes a second run take seconds).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Each bench reads DATABASE_URL (PostgreSQL for the figures in the issues) and ends with a RESULT line.
bench: install
	$(BIN)/python bench/import_items.py
	$(BIN)/python bench/annotate_load.py
	$(BIN)/python bench/judge_throughput.py
	$(BIN)/python bench/generate_throughput.py
	$(BIN)/python bench/agreement_scale.py
	$(BIN)/python bench/export_scale.py
	$(BIN)/python bench/item_browser.py

clean:
	rm -rf $(VENV) var
