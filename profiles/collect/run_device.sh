#!/usr/bin/env bash
# Runs the collector on a lent GPU machine, section by section (one process each,
# so a fault in one section cannot take the others down), merging into one dir.
#   bash profiles/collect/run_device.sh single OUTDIR   # 1 GPU: launch, gemm, attention, moe, ops
#   bash profiles/collect/run_device.sh comm OUTDIR     # all GPUs: NCCL collectives
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mode=$1
out=$2
here=$(dirname "$0")
models=""
for m in llama-3.1-8b-instruct llama-2-7b-hf mixtral-8x7b-v0.1; do
  models="$models --model $here/models/$m/config.json"
done
c="python3 $here/collect.py $models --tp 1 --tp 2 --out $out"
nvidia-smi --query-gpu=index,name,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv
step() { # name timeout args...
  local name=$1 lim=$2
  shift 2
  local t0=$(date +%s)
  timeout "$lim" "$@"
  echo "== section $name rc=$? wall=$(( $(date +%s) - t0 ))s"
}
if [ "$mode" = single ]; then
  step launch_gemm_bf16 130 $c --ops launch,gemm --gemm-dtypes bfloat16 --budget-s 110
  step attention 150 $c --ops attention --budget-s 130
  step moe 75 $c --ops moe --budget-s 60
  step ops 75 $c --ops ops --budget-s 60
  step gemm_fp8 80 $c --ops gemm --gemm-dtypes fp8 --budget-s 65
else
  step comm 300 python3 "$here/collect.py" --ops comm --out "$out" --budget-s 270
fi
python3 -c "import yaml,sys; d=yaml.safe_load(open('$out/meta.yaml')); print('meta.yaml ok, runs:', len(d['runs']))" || echo "meta.yaml did not parse"
ls -la "$out"
