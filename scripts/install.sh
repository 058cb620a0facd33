#!/usr/bin/env bash
# Install solidcoder (editable) with the given extras, e.g. `bash scripts/install.sh local,tiny`.
# llama-cpp-python compiles llama.cpp for this CPU. Its AMX kernels crash (SIGSEGV in ggml_backend_amx_mul_mat) on
# machines whose kernel or sandbox grants AMX but does not run it, as this project's machines do; the flags below
# build without them (a CPU without AMX loses nothing). Set CMAKE_ARGS yourself to build otherwise. pip caches the
# wheel it builds: `pip cache remove llama_cpp_python` before reinstalling with other flags.
set -euo pipefail
cd "$(dirname "$0")/.."
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
export CMAKE_ARGS="${CMAKE_ARGS:--DCMAKE_C_FLAGS='$NO_AMX' -DCMAKE_CXX_FLAGS='$NO_AMX'}"
python3 -m pip install -q -e ".[${1:-local}]"
