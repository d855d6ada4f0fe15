#!/usr/bin/env bash
# Times `ckpt save` from the CLI on a workspace, after 20-file turns and
# on an unchanged tree, three ways: without a watcher, with a watcher that
# only says what changed (CKPT_WATCH_SERVE=0), and served by the watcher
# (docs/benchmarks.md, "Saves served by the watcher").
#
#   bench/served.sh WORKSPACE [STORE]     # N=9 turns per mode by default
#
# WORKSPACE is changed (20 files get a line per turn): use a copy, e.g.
#   CKPT_BENCH_FILES=100000 CKPT_BENCH_DIR=/tmp/b go test -run XXX -bench SaveCold -benchtime 1x ./bench/
#   cp -a /tmp/b/corpus-100000 /tmp/ws100k && bench/served.sh /tmp/ws100k
set -euo pipefail
cd "$(dirname "$0")/.."
ws=$(cd "${1:?usage: bench/served.sh WORKSPACE [STORE]}" && pwd)
store=${2:-$ws.ckpt-store}
bin=$(mktemp -d)/ckpt
go build -o "$bin" ./cmd/ckpt
export CKPT_STORE=$store
cd "$ws"
"$bin" watch --stop >/dev/null 2>&1 || true
"$bin" save -q -m cold >/dev/null
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 100000)); }
turn() {
	find . -type f -print | shuf -n 20 | while read -r f; do echo "turn $RANDOM" >>"$f"; done
	sync
}
med() { sort -n | awk '{a[NR]=$1} END{m=a[int((NR+1)/2)]; printf "%d.%d ms", m/10, m%10}'; }
run() {
	local t="" u=""
	for _ in $(seq 1 "${N:-9}"); do
		turn
		t="$t $(ms env "$2" "$bin" save -q -m turn)"
		u="$u $(ms env "$2" "$bin" save -q)"
	done
	echo "$1: 20-file turn $(echo $t | tr ' ' '\n' | med), unchanged tree $(echo $u | tr ' ' '\n' | med)"
}
echo "$(find . -type f | wc -l) files; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
run "no watcher" CKPT_WATCH_SERVE=1
"$bin" watch -d >/dev/null
for _ in 1 2 3; do "$bin" save -q --allow-empty >/dev/null; done
run "watcher asked (CKPT_WATCH_SERVE=0)" CKPT_WATCH_SERVE=0
run "served by the watcher" CKPT_WATCH_SERVE=1
v=""
for _ in 1 2 3 4 5 6 7 8 9; do v="$v $(ms "$bin" --version)"; done
echo "ckpt --version: $(echo $v | tr ' ' '\n' | med)"
"$bin" watch --stop >/dev/null
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
