#!/usr/bin/env bash
# Regenerates README.md's router table (section "Scheduling and routing
# policies") by running its recipe; TestREADMERouterRecipe fails when the
# table is stale. About 10 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
FRONTIER_UPDATE_README=1 go test ./cmd/frontier -run '^TestREADMERouterRecipe$' -count 1
