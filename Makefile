# toolbind — every target uses the project's own virtualenv (.venv), created by `make install`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
SPECS ?= specs
OUT ?= generated

.DEFAULT_GOAL := help
.PHONY: help install generate check test test-deep lint format typecheck regen bench conformance wheel-test clean

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY) ## Create .venv with toolbind (editable) and everything the tests need
	$(PY) -m pip install --quiet -e '.[test,bench]' --config-settings editable_mode=strict

generate: ## Compile specs/ into generated/ (all-or-nothing)
	$(BIN)/toolbind generate $(SPECS) -o $(OUT)

check: ## Exit 1 with a diff when generated/ is stale
	$(BIN)/toolbind generate $(SPECS) -o $(OUT) --check

test: ## Run the test suite (hypothesis profile "ci")
	$(PY) -m pytest -n 2 -q

test-deep: ## The property tests with 1000 examples per schema
	HYPOTHESIS_PROFILE=deep $(PY) -m pytest -n 2 -q

lint: ## ruff lint + format check
	$(BIN)/ruff check compiler runtime tests bench
	$(BIN)/ruff format --check compiler runtime tests bench

format: ## ruff format the sources
	$(BIN)/ruff format compiler runtime tests bench

typecheck: ## pyright (strict) over compiler/, runtime/, tests/, generated/
	$(BIN)/pyright

regen: ## Regenerate generated/ and the golden files under tests/golden/
	$(BIN)/toolbind generate $(SPECS) -o $(OUT)
	TOOLBIND_REGEN=1 $(PY) -m pytest -q tests/test_golden.py

bench: ## Benchmarks against the peers (prints ratios)
	$(PY) bench/compile.py
	$(PY) bench/validate.py
	$(PY) bench/openapi.py

conformance: ## JSON-Schema-Test-Suite: toolbind vs datamodel-codegen vs jsonschema
	$(PY) bench/conformance.py

wheel-test: ## Build the wheel, install it in a fresh venv, generate and import
	bash .ci/wheel-test.sh

clean: ## Remove build artefacts (keeps .venv)
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
