#!/usr/bin/env bash
# Issue 53 on MBPP's report set: problems 160-279 of ../shared/data/mbpp_397.jsonl (120, never used for tuning;
# benchmarks/ids/mbpp_160_279.txt), Qwen2.5-Coder-0.5B Q4_K_M on llama.cpp, greedy Direct in the model maker's format
# (`direct`, its default since 2026-12-08) and in the plain prompt (`direct:prompt=plain`). Resumable: rerun to go on.
# Usage: bash benchmarks/mbpp_report120.sh [strategy...]   (THREADS sets llama.cpp's threads, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-/work/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}
DATA=${DATA:-../shared/data/mbpp_397.jsonl}
RUN_DIR=${RUN_DIR:-benchmarks/results/mbpp_report120_qwen05b}
C=(--dataset mbpp --data-file "$DATA" --ids benchmarks/ids/mbpp_160_279.txt --model "$MODEL" --max-tokens 512
   --concurrency 1 --workers 1 --max-calls 20 --threads "${THREADS:-1}" --run-dir "$RUN_DIR")
for strategy in "${@:-direct direct:prompt=plain}"; do
  for s in $strategy; do
    python3 -m solidcoder bench "${C[@]}" --strategy "$s"
  done
done
