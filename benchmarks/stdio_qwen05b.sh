#!/usr/bin/env bash
# Qwen2.5-Coder-0.5B on stdin/stdout problems, Python beside C++ (issue 41): APPS-150's 49 stdin problems and the
# CodeContests sample (20), greedy Direct then routed v2 (`solidcoder-routed`, solve's default), each in both
# languages. APPS goes in steps of 10 problems, Python then C++, so that a run stopped part-way has both languages
# on the same problems. Resumable: rerun to go on (recorded calls are replayed, not paid again).
# Results: benchmarks/results/stdio_qwen05b/ (its README reads them).
# Usage: bash benchmarks/stdio_qwen05b.sh [DATA_DIR] [GGUF]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
gguf=${2:-/work/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}
out=benchmarks/results/stdio_qwen05b
common=(--model "$gguf" --max-tokens 1024 --concurrency 1 --workers 1 --max-calls 20 --run-dir "$out")
apps=(--dataset apps --data-file "$data/apps_selected150.jsonl" --ids "$out/apps_stdin_ids.txt")
cc=(--dataset codecontests --data-file "$data/codecontests_sample19.jsonl")
for strategy in direct solidcoder-routed; do
  for language in python cpp; do
    solidcoder bench "${cc[@]}" "${common[@]}" --strategy "$strategy" --language "$language"
  done
  for limit in 10 20 30 40 49; do
    for language in python cpp; do
      solidcoder bench "${apps[@]}" --limit "$limit" "${common[@]}" --strategy "$strategy" --language "$language"
    done
  done
done
