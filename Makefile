# Every target creates .venv on first use, so a fresh clone needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.assertly-installed

.PHONY: test demo check format lint types bench fuzz schemas clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

demo: $(STAMP)
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" bash examples/demo.sh

format: $(STAMP)
	$(VENV)/bin/ruff format src tests bench schemas

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench schemas

types: $(STAMP)
	$(VENV)/bin/mypy

check: format lint types test

bench: $(STAMP)
	$(PY) bench/engine_bench.py

schemas: $(STAMP)
	$(PY) schemas/generate.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
