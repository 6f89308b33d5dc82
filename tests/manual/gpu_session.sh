#!/usr/bin/env bash
# One lent GPU machine's checks of the stacked backend, in the order of their priority (run by hand from the
# repository root on the GPU machine; no test depends on it). Each step has its own time limit, so a slow step
# costs only itself; every result is one JSON file in $OUT (default /tmp/gpu_out).
#
# Needs: Fashion-MNIST's four .gz files in .gpu/fmnist (copied from Debian's dataset-fashion-mnist), python3 with
# torch, torchvision, numpy, scipy, tqdm and filelock (the GPU image has them; cvxpy and papermill are not needed).
#
#   1. DTFL at width 1/4 and 1: the per-client loop, both engine backends and the channels-last variant
#      (python -m fedlib.lab.bench dtfl --variants stacked_cl);
#   2. HASFL's record path: three committed runs trained again on the stacked backend, and a slice of rounds on
#      both backends (tests/manual/gpu_hasfl_records.py);
#   3. the paper profile's first steps on the stacked backend and on the loop backend (python -m tests.tools.first_steps);
#   4. the compiled variants at width 1/4 (torch.compile; CUDA graphs through its reduce-overhead mode).
set -u
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
step() {  # step NAME LIMIT_S COMMAND...: run with a time limit, stdout to $OUT/NAME, stderr to $OUT/log.txt
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name" 2>> "$OUT/log.txt"
    echo "$name rc=$? $((SECONDS - t0)) s" | tee -a "$OUT/steps.txt"
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
$PY -c "import torch, torchvision; print(torch.__version__, torchvision.__version__, torch.cuda.get_device_name())" >> "$OUT/gpu.txt"
$PY -m fedlib.lab.data fashion-mnist --debian-dir .gpu/fmnist >> "$OUT/log.txt" 2>&1
step dtfl_w025.json 100 $PY -m fedlib.lab.bench dtfl --device cuda --width 0.25 --rounds 2 --repeats 3 --variants stacked_cl
step dtfl_w1.json 90 $PY -m fedlib.lab.bench dtfl --device cuda --width 1 --rounds 2 --repeats 3 --variants stacked_cl
step hasfl_records.json 100 $PY tests/manual/gpu_hasfl_records.py
step first_steps_stacked.jsonl 60 $PY -m tests.tools.first_steps --device cuda --backend stacked --active 20 --paper dtfl hasfl
step first_steps_loop.jsonl 45 $PY -m tests.tools.first_steps --device cuda --backend loop --active 20 --paper dtfl hasfl
step dtfl_compile.json 100 $PY -m fedlib.lab.bench dtfl --device cuda --width 0.25 --rounds 2 --repeats 2 --variants stacked_compile,stacked_cl_compile,stacked_graphs
