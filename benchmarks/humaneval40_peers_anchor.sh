#!/usr/bin/env bash
# Issue 37's peer rows at their anchors' settings on the HumanEval development set (problems 0-39), written into the
# 164-problem run directory so that greedy Direct and routed v2 rows from the same model, flags and data sit beside
# them (`solidcoder report --same-problems` restricts every row to the problems all of them ran). AlphaCodium takes
# 2,000 tokens per call whatever --max-tokens says (its anchor's ai_handler) and a 30-call cap (its full flow, its
# `min_calls`); LDB runs its debug and fix calls at temperature 0 with 1,024 tokens, and needs 21 calls for its 10
# rounds. Each command resumes where it stopped: bash benchmarks/humaneval40_peers_anchor.sh [strategy...]
set -euo pipefail
MODEL=${MODEL:-/work/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}
DATA=${DATA:-../shared/data/humaneval_with_sample_io.jsonl}
RUN_DIR=${RUN_DIR:-benchmarks/results/humaneval164_qwen05b}
IDS=${IDS:-benchmarks/ids/humaneval_0_39.txt}
THREADS=${THREADS:-1}
C=(--dataset humaneval --data-file "$DATA" --model "$MODEL" --max-tokens 512 --concurrency 1 --workers 1
   --max-calls 30 --threads "$THREADS" --ids "$IDS" --run-dir "$RUN_DIR")
for s in ${@:-ldb alphacodium}; do
  python3 -m solidcoder bench "${C[@]}" --strategy "$s"
done
