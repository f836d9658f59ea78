#!/usr/bin/env bash
# Install everything the test suite needs, then run it: ruff, mypy and pytest.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/memory -x).
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
.venv/bin/mypy

set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    exit 1
fi
exit "$code"
