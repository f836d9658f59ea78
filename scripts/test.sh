#!/usr/bin/env bash
# Install everything the test suite needs, then run it: ruff (lint and format), mypy, the import contract,
# pytest, and pip-audit on the dependencies.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/memory -x; ZM_TEST_WORKERS=0 runs every test in one process).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -e '.[test]'

# The dashboard's browser tests drive Debian's Chromium: Playwright's own browser download needs internet.
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    else
        echo "note: chromium is not installed; browser tests will be skipped (apt-get install chromium)" >&2
    fi
fi

.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy
.venv/bin/lint-imports --no-cache

# The tests run in ZM_TEST_WORKERS worker processes (pytest-xdist), 2 unless set (0: every test in this one
# process): most of the suite waits on servers, subprocesses, PostgreSQL, Chromium and node, so two workers
# finish sooner even on two cores. Each worker has its own temporary directories, ports and PostgreSQL
# server. A test file runs whole in one worker (--dist loadfile): its module fixtures (a
# served deployment, a client's install) are built once, and a file whose last test reads what the tests
# before it produced (tests/security/test_no_secret_leaks.py) sees all of it.
set +e
.venv/bin/python -m pytest -n "${ZM_TEST_WORKERS:-2}" --dist loadfile "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    code=1
fi

# Known vulnerabilities in the installed dependencies, from PyPI's advisory data; run after the tests so a
# registry outage does not hide their result. A vulnerability found fails the run. A dependency pip-audit
# could not look up is reported loudly but does not fail it: where the advisory service is unreachable (as on
# a registry mirror without PyPI's JSON API) nothing could be audited, and the run says so instead of
# claiming "No known vulnerabilities found".
if [ "${ZM_SKIP_PIP_AUDIT:-0}" = 1 ]; then
    echo "WARNING: ZM_SKIP_PIP_AUDIT=1: the dependencies were NOT audited for known vulnerabilities" >&2
else
    audit_log=$(mktemp)
    set +e
    .venv/bin/pip-audit --skip-editable --progress-spinner off >"$audit_log" 2>&1
    audit=$?
    set -e
    cat "$audit_log"
    if [ "$audit" -ne 0 ]; then
        echo "pip-audit failed: a dependency has a known vulnerability (raise its lower bound in pyproject.toml)" >&2
        code=1
    elif unaudited=$(grep -c "could not be audited" "$audit_log"); then
        echo "WARNING: pip-audit could not look up $unaudited dependencies (no vulnerability data reachable):" \
            "they were NOT audited" >&2
    fi
    rm -f "$audit_log"
fi
exit "$code"
