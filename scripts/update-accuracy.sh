#!/usr/bin/env bash
# Regenerates README.md's "Accuracy" section from `frontier gate`
# (never edit that section by hand; TestREADMEAccuracyIsCurrent checks it).
set -euo pipefail
cd "$(dirname "$0")/.."
section=$(go run ./cmd/frontier gate --format markdown 2>/dev/null)
python3 - "$section" <<'PY'
import re, sys
section = sys.argv[1]
readme = open("README.md").read()
begin, end = "<!-- accuracy:begin -->", "<!-- accuracy:end -->"
new = readme.split(begin)[0] + begin + "\n" + section.strip() + "\n" + end + readme.split(end)[1]
open("README.md", "w").write(new)
PY
