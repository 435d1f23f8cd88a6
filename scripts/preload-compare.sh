#!/bin/sh
# preload-compare.sh - profile the same test programs with two builds of the
# library and say where the files differ where time does not enter: the
# attrs (perf evlist -v), the header's features (perf report --header-only)
# and every record that is not a sample (MMAP2 with their build ids, COMM),
# with pids, load addresses (the libraries after ours move with its size),
# our own library's line and the times (the timer's delivered period, the
# reference time, offsets) set aside; in a window's file, which records
# there are, not how many (the threads alive at its start). Samples
# themselves depend on time: only their count is printed. For refactorings
# of the library.
#
# usage: scripts/preload-compare.sh OLD_LIB NEW_LIB
# Needs build/progs (make the test programs first). Runs without ASLR
# (setarch -R). Exit status 0 when every compared part is identical.

[ $# -eq 2 ] || { echo "usage: $0 OLD_LIB NEW_LIB" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$ROOT/build/progs
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# record LIB DIR NAME PROG [VAR=VALUE...]: one profile into DIR/NAME.data
record() {
	_lib=$1 _dir=$2 _name=$3 _prog=$4
	shift 4
	# shellcheck disable=SC2086
	timeout -s KILL 60 setarch -R env AUTOPROF_OUTPUT="$_dir/$_name.data" AUTOPROF_QUIET=1 \
		"$@" LD_PRELOAD="$_lib" $_prog >/dev/null 2>&1
}

# parts FILE: the parts of FILE compared, normalised, into FILE.{evlist,header,records}
parts() {
	norm() {
		sed -E -e 's/[0-9]+\/[0-9]+/P\/T/g; s/:[0-9]+ /:P /g; s/ [0-9]+ +P/ P P/g' \
			-e '/libautoprof/d' -e 's/(sample_period, sample_freq \} ?[:=] )[0-9]+/\1N/' \
			-e 's/\[0x[0-9a-f]+\(/[A(/' -e 's/[[:space:]]+/ /g' \
			-e '/feat offset|reference time|data offset|^# *$/d'
	}
	perf evlist -v -i "$1" 2>/dev/null | norm >"$1.evlist"
	perf report -i "$1" --header-only 2>/dev/null |
		grep -v "captured on\|duration\|time of\|data size\|^# ========" | norm >"$1.header"
	# a window's file names the threads alive when it began: how many, time decides
	case $1 in */window*) count="sort -u" ;; *) count="uniq -c" ;; esac
	perf script -i "$1" --show-mmap-events --show-task-events -F comm,pid,tid,event 2>/dev/null |
		grep -v "cpu-clock\|cycles\|offcpu\|samples" | norm | sort | $count >"$1.records"
	perf script -i "$1" -F tid,ip 2>/dev/null | wc -l >"$1.samples"
}

for which in old new; do
	[ "$which" = old ] && lib=$1 || lib=$2
	d=$tmp/$which
	mkdir -p "$d"
	record "$lib" "$d" plain "$P/mtwork"
	record "$lib" "$d" aggregate "$P/mtwork" AUTOPROF_AGGREGATE=1
	record "$lib" "$d" timer "$P/mtwork" AUTOPROF_MODE=timer
	record "$lib" "$d" dlopen "$P/lddlopen threads $P/libldplug.so 1 20"
	record "$lib" "$d" fp "$P/demo" AUTOPROF_CALLGRAPH=fp
	record "$lib" "$d" window "$P/mtwork" AUTOPROF_WINDOW=0.3 AUTOPROF_KEEP=2
	# window files by their order in time, not their stamps
	i=0
	for f in $(ls "$d"/window.data.* 2>/dev/null | grep -v '\.stat$'); do
		i=$((i + 1))
		mv "$f" "$d/window$i.data"
	done
	for f in "$d"/*.data; do parts "$f"; done
done

status=0
for f in "$tmp"/old/*.data; do
	b=$(basename "$f")
	for part in evlist header records; do
		if ! cmp -s "$f.$part" "$tmp/new/$b.$part"; then
			echo "$b $part differs:"
			diff "$f.$part" "$tmp/new/$b.$part" | head -20
			status=1
		fi
	done
	echo "$b: $(cat "$f.records" | wc -l) record kinds, $(cat "$f.samples") / $(cat "$tmp/new/$b.samples" 2>/dev/null) samples (old / new)"
done
[ "$(ls "$tmp"/old/*.data | wc -l)" = "$(ls "$tmp"/new/*.data | wc -l)" ] || {
	echo "not the same files: $(ls "$tmp"/old) / $(ls "$tmp"/new)"
	status=1
}
[ $status = 0 ] && echo "identical where time does not enter"
exit $status
