#!/usr/bin/env bash
# Regenerates the output blocks of README.md's sweep and capacity recipes
# (section "Sweeps, capacity and the best topology") and its sessions and
# offline-benchmark recipes (TestREADMESessionRecipes,
# TestREADMEBenchRecipes) by running each recipe as written. TestREADMESweepRecipe, TestREADMECapacityRecipe and
# TestREADMEBestTopologyRecipe fail when a block is stale (for example
# after a pricing change). About 30 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/frontier-recipes ./cmd/frontier
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import re, shlex, subprocess, sys
work = sys.argv[1]
readme = open("README.md").read()

def run(cmd, quiet=True, cwd=None):
    args = shlex.split(cmd)[3:]  # drop "go run ./cmd/frontier"
    return subprocess.run(["/tmp/frontier-recipes", *args] + (["--quiet"] if quiet else []), cwd=cwd or work, check=True,
                          capture_output=True, text=True).stdout.rstrip("\n").split("\n")

def cut(lines, n=118):
    return [l if len(l) <= n else l[:n].rstrip() + " ..." for l in lines]

def replace(readme, prefix, blocks, **kw):
    # The ```sh block whose command starts with prefix, then its output
    # blocks (```\n...```), each replaced in order.
    m = re.search(r"```sh\n(go run ./cmd/frontier " + re.escape(prefix) + r"[^\n]*)\n```\n", readme)
    cmd, pos = m.group(1), m.end()
    out = run(cmd, **kw)
    for make in blocks:
        b = re.compile(r"```\n(.*?)```", re.S).search(readme, pos)
        new = "\n".join(make(out)) + "\n"
        readme = readme[:b.start(1)] + new + readme[b.end(1):]
        pos = b.start(1) + len(new) + 3
    return readme

def sweep(out):
    notes = [l for l in out if l.startswith("[")]
    return cut(out[:6] + notes[:1], 160)

def capacity(out):
    return cut(out[:10]) + ["..."]

def launch(out):
    return [l for l in out if l.startswith("vllm ")]

def best(out):
    p = next(i for i, l in enumerate(out) if "Pareto front" in l)
    l1 = next(i for i, l in enumerate(out) if l.startswith("# 1. "))
    l2 = next(i for i, l in enumerate(out) if l.startswith("# 2. "))
    return cut(out[:10]) + ["..."] + cut(out[p:p + 4]) + ["..."] + out[l1:l1 + 3] + cut(out[l2:l2 + 2], 150) + ["..."]

def sessions(out):
    # The rate line, the counts, the TTFT lines and the per-turn table.
    rate = next(i for i, l in enumerate(out) if l.startswith("Request rate:"))
    ttft = [l for l in out if l.startswith(("Mean TTFT", "Median TTFT"))]
    p = next(i for i, l in enumerate(out) if "Per turn" in l)
    a = next(i for i, l in enumerate(out) if l.startswith("all "))
    head = out[rate:rate + 2] + ["..."]
    if "concurrent users" in out[rate]:
        head += ttft + ["..."]
    return head + out[p:a + 1]

def latency(out):
    return out[:4] + ["..."] + out[-1:]

readme = replace(readme, "simulate --dataset-name sessions", [sessions])
readme = replace(readme, "simulate --scenario scenarios/examples/llama-3.1-8b-h200-agent-sessions.yaml", [sessions], cwd=".")
for hw in ("h100-sxm", "h200-sxm"):
    readme = replace(readme, "bench latency --model meta-llama/Llama-3.1-8B-Instruct --hardware " + hw, [latency], quiet=False)
    readme = replace(readme, "bench throughput --model meta-llama/Llama-3.1-8B-Instruct --hardware " + hw, [lambda out: out], quiet=False)
readme = replace(readme, "sweep ", [sweep])
readme = replace(readme, "capacity --slo", [capacity, launch])
readme = replace(readme, "capacity --model", [best])
open("README.md", "w").write(readme)
PY
