# Every target creates .venv on first use, so a fresh clone needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.assertly-installed

.PHONY: test demo docs check format lint types bench fuzz schemas clean postgres test-models dist

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

demo: $(STAMP)
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" bash examples/demo.sh

# The documentation site (mkdocs.yml: README's pages under docs/, Material theme) into site/.
# --strict: a broken link or anchor fails the build. Nothing is downloaded (no web fonts).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

format: $(STAMP)
	$(VENV)/bin/ruff format src tests bench schemas scripts

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench schemas scripts

types: $(STAMP)
	$(VENV)/bin/mypy

check: format lint types test

# The benchmark suite (bench/suite.py): engine, peers (installed on demand into bench/.peers/),
# end to end, runner, start-up; prints one table, writes bench/results/latest.json. Never part
# of `make test`. Options: make bench BENCH_ARGS=--quick (or --no-peers, --update-docs).
BENCH_ARGS ?=
bench: $(STAMP)
	$(PY) bench/suite.py $(BENCH_ARGS)

# Long fuzzing: every Hypothesis property of the engine and of the loaders (tests/reliability/
# test_rel_fuzz.py) with FUZZ_EXAMPLES examples each, on every core. `make test` runs the same
# properties with a fast profile (150 examples).
FUZZ_EXAMPLES ?= 20000
# Opt-in, never part of `make test`: llm-rubric against a real model behind an OpenAI-compatible
# server you run on this machine (llama.cpp's llama-server, vLLM, Ollama …), e.g.
#   make test-models ASSERTLY_TEST_JUDGE_URL=http://127.0.0.1:8080/v1 ASSERTLY_TEST_JUDGE_MODEL=smollm2
test-models: $(STAMP)
	@test -n "$(ASSERTLY_TEST_JUDGE_URL)" -a -n "$(ASSERTLY_TEST_JUDGE_MODEL)" || { echo "test-models: set ASSERTLY_TEST_JUDGE_URL and ASSERTLY_TEST_JUDGE_MODEL (an OpenAI-compatible server on this machine)"; exit 2; }
	ASSERTLY_TEST_JUDGE_URL=$(ASSERTLY_TEST_JUDGE_URL) ASSERTLY_TEST_JUDGE_MODEL=$(ASSERTLY_TEST_JUDGE_MODEL) $(PY) -m pytest -q -rs tests/judge/test_real_model.py

fuzz: $(STAMP)
	ASSERTLY_PROPERTY_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider -n auto \
		--hypothesis-show-statistics \
		tests/engine/test_properties.py tests/engine/test_trajectory_properties.py \
		tests/reliability/test_rel_fuzz.py

# The distributions: an sdist and a wheel in dist/ (python -m build, in an isolated build
# environment), then `twine check --strict` on both. Install the wheel into any project with
# `pip install dist/assertly-*.whl` (docs/index.md, "Install into your project").
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(VENV)/bin/twine check --strict dist/*

schemas: $(STAMP)
	$(PY) schemas/generate.py

# A PostgreSQL server of the machine on 127.0.0.1:5432 with a role `assertly` (as root), to try
# `--store postgresql://assertly:assertly-test@127.0.0.1/postgres` by hand. The tests start
# servers of their own (initdb in a temporary directory), or use ASSERTLY_TEST_POSTGRES_URL.
postgres:
	bash .ci/postgres

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache dist site
