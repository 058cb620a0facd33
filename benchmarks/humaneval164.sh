#!/usr/bin/env bash
# Issue 37's runs on all of HumanEval (164 problems) with Qwen2.5-Coder-0.5B Q4_K_M, one llama.cpp thread, in one run
# directory: greedy Direct, routed v2 (not retuned: its settings were chosen on HumanEval 0-39 and MBPP 0-39), and
# Direct best-of-5 at T 0.8 (the equal-compute line of `solidcoder report`); issue 53's greedy Direct in the model
# maker's format (`direct:prompt=qwen`). Each command resumes where it stopped.
# Run it with nothing else on the model's cores: bash benchmarks/humaneval164.sh [strategy...]
# THREADS (default 1) sets llama.cpp's threads; IDS a file of problem ids to run only those (e.g. the development
# set, benchmarks/ids/humaneval_0_39.txt).
set -euo pipefail
MODEL=${MODEL:-/work/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}
DATA=${DATA:-../shared/data/humaneval_with_sample_io.jsonl}
RUN_DIR=${RUN_DIR:-benchmarks/results/humaneval164_qwen05b}
C=(--dataset humaneval --data-file "$DATA" --model "$MODEL" --max-tokens 512 --concurrency 1 --workers 1
   --max-calls 20 --threads "${THREADS:-1}" --run-dir "$RUN_DIR" ${IDS:+--ids "$IDS"})
for strategy in "${@:-direct solidcoder-routed direct:n=5}"; do
  for s in $strategy; do
    python3 -m solidcoder bench "${C[@]}" --strategy "$s"
  done
done
