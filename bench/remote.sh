#!/usr/bin/env bash
# Times ckpt's remotes against restic on one S3 server (a Versity S3
# Gateway on loopback) and the same generated tree, in one run: cold push
# vs cold backup, push per 20-file turn vs backup per turn (time and
# bytes), clone vs restore (docs/benchmarks.md).
#
#   bench/remote.sh                      # 100,000 files (~370 MB), 5 turns
#   bench/remote.sh -files 10000 -turns 3
#
# Installs versitygw and restic with go install into ~/.cache/ckpt-tools
# when missing (the Go module proxy is all it needs); CKPT_VERSITYGW and
# CKPT_RESTIC name other binaries. Needs about 2.5 GB free in $BENCH_DIR
# (default /tmp/ckpt-bench-remote) for 100,000 files.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/ckpt-bench-remote}
tools="${XDG_CACHE_HOME:-$HOME/.cache}/ckpt-tools"
mkdir -p "$dir" "$tools"

versitygw_version=v1.8.0 # as scripts/test and internal/testutil/s3test
restic_version=v0.19.1

install() { # install DIR PACKAGE@VERSION
  echo "installing $2 into $1" >&2
  GOBIN="$1" GOFLAGS= GOWORK=off go install "$2"
}

gw=${CKPT_VERSITYGW:-$tools/versitygw-$versitygw_version/versitygw}
if [ ! -x "$gw" ]; then
  install "$(dirname "$gw")" "github.com/versity/versitygw/cmd/versitygw@$versitygw_version"
fi
restic=${CKPT_RESTIC:-$tools/restic-$restic_version/restic}
if [ ! -x "$restic" ]; then
  install "$(dirname "$restic")" "github.com/restic/restic/cmd/restic@$restic_version"
fi

go build -o "$dir/ckpt" ./cmd/ckpt
go build -o "$dir/remote" ./bench/remote
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
exec "$dir/remote" -dir "$dir" -ckpt "$dir/ckpt" -restic "$restic" -versitygw "$gw" \
  -versions "ckpt $rev, versitygw $versitygw_version" "$@"
