#!/usr/bin/env bash
# Times every ckpt operation (cold save, turn, turn in watch mode, restore,
# diff, log, gc, fsck) against git status, a shadow repository and the
# sandbox snapshot tools' method at several tree sizes, one run per size,
# and writes scale.md (the table), scale.json and scale.svg (cost against
# tree size) into $BENCH_DIR (docs/benchmarks.md, "How cost grows with
# tree size").
#
#   bench/scale.sh -sizes 10000,100000 -reps 5
#   bench/scale.sh -sizes 1000000 -reps 3 -slow-reps 1   # ~15 GB and a copy of the tree, ~45 minutes
#   bench/scale.sh -sizes 10000,100000 -corpus tiny      # files of 0-200 bytes
#   bench/scale.sh -render a.json,b.json -out DIR        # one table and chart from several runs
#
# Needs git; $BENCH_DIR defaults to /tmp/ckpt-scale. Each size's tree is
# deleted when it is done (-keep keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/ckpt-scale}
mkdir -p "$dir"
go build -o "$dir/ckpt" ./cmd/ckpt
go build -o "$dir/scale" ./bench/scale
git --version >&2
exec "$dir/scale" -dir "$dir" -ckpt "$dir/ckpt" "$@"
