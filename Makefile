# One command runs the pipeline (`make demo`), one runs the tests (`make test`).
# Needs only python3 (3.11), git and make: uv is bootstrapped into .tools/ and installs the
# locked environment into .venv/.
PYTHON ?= python3
VENV := .venv
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
export UV_PYTHON_DOWNLOADS := never

.PHONY: install demo test test-fast bench clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.13.9"

$(VENV)/.installed: uv.lock pyproject.toml | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	@touch $@

install: $(VENV)/.installed

# The whole pipeline on the embedded defaults, under one Prefect server for all stages
# (none is started when `dvc status` says there is nothing to do).
demo: install
	@export PATH="$(abspath $(VENV))/bin:$$PATH"; \
	if dvc status -q >/dev/null 2>&1; then echo "Data and pipelines are up to date."; \
	else python -m flows.serve dvc repro; fi
	@echo "report: $(abspath reports/report.md)"

test: install
	$(VENV)/bin/python -m pytest

test-fast: install
	$(VENV)/bin/python -m pytest -m "not slow"

bench: install
	$(VENV)/bin/regula bench env

# .prefect is Prefect's home, set in prefect.toml.
clean:
	rm -rf $(VENV) $(TOOLS) .prefect
