#!/usr/bin/env bash
# Regenerates cmd/frontier/default.pgo: the CPU profile that `go build` and
# `go run` use for profile-guided optimisation of the frontier binary (the go
# command's default -pgo=auto reads a main package's default.pgo). It merges
# profiles of what users run most: one 9,000-request simulation (the codegen
# gate run, 60 times), 10⁶ requests (BenchmarkMillion), the whole gate, a
# 100-point sweep and a capacity search. PGO changes speed only, never a
# result: rerun this after large changes to the simulator's hot paths.
# `go test` applies default.pgo only to cmd/frontier's tests; to measure the
# simulator core as the binary runs it, pass the profile by hand:
#   go test ./sim -run '^$' -bench SimulateCodegen -pgo="$PWD/cmd/frontier/default.pgo"
set -euo pipefail
cd "$(dirname "$0")/.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bench() { # package, benchmark regexp, benchtime, profile name
	go test "./$1" -run '^$' -bench "$2" -benchtime "$3" -o "$t/$4.test" -cpuprofile "$t/$4.prof" >/dev/null
}
bench sim '^BenchmarkSimulateCodegen$' 60x codegen
bench sim '^BenchmarkMillion$' 1x million
bench calibration '^BenchmarkGate$' 2x gate
bench cmd/frontier '^(BenchmarkSweep|BenchmarkCapacity)$' 1x plan
go tool pprof -proto "$t"/*.prof >cmd/frontier/default.pgo 2>/dev/null
echo "wrote cmd/frontier/default.pgo ($(wc -c <cmd/frontier/default.pgo) bytes)"
