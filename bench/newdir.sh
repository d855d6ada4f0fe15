#!/usr/bin/env bash
# Times `ckpt save` served by the watcher after a 20-file turn that also
# makes an ignored directory (build/<n>/obj/a.o under a .gitignore of
# build/, like build output), for two ckpt binaries taking turns on the
# same workspace, each with its own store and watcher (docs/benchmarks.md,
# "New ignored directories").
#
#   bench/newdir.sh WORKSPACE CKPT_A CKPT_B      # N=9 rounds by default
#
# WORKSPACE is changed (a .gitignore, build/, 20 files get a line per
# turn): use a copy, e.g. of bench/served.sh's tree.
set -euo pipefail
ws=$(cd "${1:?usage: bench/newdir.sh WORKSPACE CKPT_A CKPT_B}" && pwd)
A=$(realpath "${2:?CKPT_A}")
B=$(realpath "${3:?CKPT_B}")
N=${N:-9}
stores=$(mktemp -d)
cd "$ws"
printf 'build/\n' >.gitignore
stop() {
	for x in A B; do CKPT_STORE=$stores/$x "${!x}" watch --stop >/dev/null 2>&1 || true; done
	rm -rf "$stores"
}
trap stop EXIT
for x in A B; do
	CKPT_STORE=$stores/$x "${!x}" save -q --force -m cold >/dev/null
	CKPT_STORE=$stores/$x "${!x}" watch -d >/dev/null
	for _ in 1 2 3; do CKPT_STORE=$stores/$x "${!x}" save -q --allow-empty >/dev/null; done
done
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 100000)); }
turn() {
	find . -path ./build -prune -o -type f -print | shuf -n 20 | while read -r f; do echo "turn $RANDOM" >>"$f"; done
	mkdir -p "build/$1/obj" && echo o >"build/$1/obj/a.o"
	sync
}
med() { sort -n | awk '{a[NR]=$1} END{m=a[int((NR+1)/2)]; printf "%d.%d ms", m/10, m%10}'; }
echo "$(find . -path ./build -prune -o -type f -print | wc -l) files; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
ta="" tb="" ua="" ub=""
for i in $(seq 1 "$N"); do
	for x in A B; do
		turn "$x$i"
		t=$(CKPT_STORE=$stores/$x ms "${!x}" save -q -m turn)
		u=$(CKPT_STORE=$stores/$x ms "${!x}" save -q)
		if [ $x = A ]; then ta="$ta $t" ua="$ua $u"; else tb="$tb $t" ub="$ub $u"; fi
	done
done
echo "A ($A): turn with a new ignored directory $(echo $ta | tr ' ' '\n' | med), unchanged tree $(echo $ua | tr ' ' '\n' | med)"
echo "B ($B): turn with a new ignored directory $(echo $tb | tr ' ' '\n' | med), unchanged tree $(echo $ub | tr ' ' '\n' | med)"
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
