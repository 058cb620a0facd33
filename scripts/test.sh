#!/usr/bin/env bash
# Install solidcoder with everything the tests need, fetch the test model, then run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[dev,local,api]'
python3 -m pytest -q "$@"
