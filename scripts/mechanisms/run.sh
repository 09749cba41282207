#!/usr/bin/env bash
# Re-runs the mechanism experiments of issue 16 (README, "What the failing
# cells show"): each candidate mechanism is switched on in a throw-away copy
# of the simulator (experiments.patch adds environment switches; none of it
# is in the product), the gate runs over all 18 cells, and a table prints
# each cell's verdict and worst gated error per variant.
#   FID_ATTN_X     multiplies decode attention (measured paged-KV effects)
#   FID_MIXED_X    multiplies decode attention in mixed prefill/decode steps
#   FID_BLOCK_NS   host ns per KV block of the running decodes, per step
#   FID_TP_HOST_X  multiplies engine host time when TP > 1 (CPU contention)
#   FID_API_OUT_NS API server ns per engine output, merged or not
# The patch applies to the commit named in BASE (the code the README's
# numbers came from), which run.sh checks out in a temporary worktree.
# Usage: scripts/mechanisms/run.sh   (from anywhere; about 30 s on 2 cores)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add --detach "$work/src" "$(cat "$repo/scripts/mechanisms/BASE")" >/dev/null 2>&1
cd "$work/src"
git apply "$repo/scripts/mechanisms/experiments.patch"
go build -o "$work/frontier" ./cmd/frontier
mkdir -p scenarios/nocache
for f in scenarios/gate/*.yaml; do
  sed 's/^  max_model_len: 4096$/  max_model_len: 4096\n  enable_prefix_caching: false/' "$f" > scenarios/nocache/"$(basename "$f")"
done
python3 - "$repo/predictor/calibrated/h100-sxm.json" "$work/split.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["api_token_ns"] = 62800  # the split point a 7th constant settled at (issue 3 note)
json.dump({"host": d["host"]}, open(sys.argv[2], "w"))
PY
run() { # name env... -- gate args...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$work/frontier" gate --format json "$@" > "$work/$name.json" 2>/dev/null
  echo "$name"
}
names=(
  "$(run base X=0 --)"
  "$(run attn_x1.15 FID_ATTN_X=1.15 --)"
  "$(run mixed_x2 FID_MIXED_X=2 --)"
  "$(run no_prefix_cache X=0 -- --cells scenarios/nocache)"
  "$(run host_block_2.4us FID_BLOCK_NS=2400 --)"
  "$(run tp2_host_x13 FID_TP_HOST_X=13 --)"
  "$(run api_out_60.6us FID_API_OUT_NS=60600 -- --calibration "$work/split.json")"
  "$(run api_out_290us FID_API_OUT_NS=290000 --)"
)
python3 "$repo/scripts/mechanisms/summary.py" "$work" "${names[@]}"
