#!/usr/bin/env bash
# Times ckpt against git status, cat | sha256sum, the sandbox snapshot tools' temp-index
# snapshots and a Gemini-style shadow repository on the same generated
# tree, in one run, and prints medians and ratios (docs/benchmarks.md);
# ckpt is timed on both its sqlite and its git backend.
#
#   bench/compare.sh                      # 100,000 files (~370 MB), 5 turns
#   bench/compare.sh -files 10000 -turns 3
#   bench/compare.sh -corpus gosrc        # a copy of $GOROOT/src
#
# Needs git and about 2 GB free in $BENCH_DIR (default /tmp/ckpt-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/ckpt-bench}
mkdir -p "$dir"
go build -o "$dir/ckpt" ./cmd/ckpt
go build -o "$dir/compare" ./bench/compare
git --version >&2
exec "$dir/compare" -dir "$dir" -ckpt "$dir/ckpt" "$@"
