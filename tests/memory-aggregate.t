#!/bin/sh
# AUTOPROF_AGGREGATE=1 (--aggregate) with AUTOPROF_MEMORY=1: alloc-bytes is
# written as one record per thread, stack and block size per window (period
# the summed bytes, weight the size), not one per allocation, so that
# --memory-interval 1 on a long run stays small; every reader gives the same
# totals as without aggregation. tests/progs/memagg knows its allocations
# ("site NAME BYTES LEAKED BLOCKS"): 4 threads, two sites, 240 block sizes.
# Also: a thread without a sampler (libearlyalloc), fork, ctl dump, a table that fills
# (5000 sizes: said once at the end, nothing dropped), AUTOPROF_AGGREGATE at
# the default interval (the file's bytes are the library's own count, each site within
# sampling error of tests/progs/memtruth's truth), the
# windows (the library's and the launcher's merged ones, each read alike by
# perf report and autoprof-report), the launcher's one file and `autoprof merge`.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/memagg" "$B/progs/memcases" "$B/progs/memtruth" "$B/progs/libearlyalloc.so"
plan 31

P=$B/progs
A=$B/autoprof

. "$ROOT/tests/memlib.sh" # bytes, at

# ours FILE EVENT SYMBOL: SYMBOL's self value of EVENT in autoprof-report's table.
ours() {
	"$REPORT" -e "$2" "$1" 2>>report.err |
		awk -v s="$3" '/^Top functions by total/ { exit } $1 ~ /%$/ && $3 == s { print $2; exit }'
}

# records FILE EVENT: how many SAMPLE records of EVENT the file holds (perf script).
records() { perf script -i "$1" -F event 2>>perf.err | grep -c "$2:"; }

# truth FILE SITE COLUMN: the program's own number (1: bytes, 2: leaked, 3: blocks).
truth() { awk -v s="$2" -v c="$3" '$1 == "site" && $2 == s { print $(c + 2) }' "$1"; }

# sites_match COLUMN READER EVENT: each site's READER value of EVENT in n.data and a.data equals
# column COLUMN of the program's truth; the mismatches in $bad.
sites_match() {
	bad=""
	for site in churn keep; do
		want=$(truth plain.out $site "$1")
		for f in n.data a.data; do
			got=$("$2" $f "$3" $site)
			[ "$got" = "$want" ] || bad="$bad $f:$site:$got/$want"
		done
	done
	[ -z "$bad" ]
}

# profile OUT AGGREGATE ARGS...: ARGS under the library, every allocation recorded.
profile() {
	_out=$1 _agg=$2
	shift 2
	# `profile OUT env VAR=VALUE... PROG`: the assignments go to the outer env, so that PROG is
	# the first image (a preloaded env may take a CPU sample on a loaded machine, and keep the
	# file's name)
	[ "$1" = env ] && shift
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_AGGREGATE=$_agg \
		AUTOPROF_OUTPUT="$_out" LD_PRELOAD="$MEMPRELOAD" "$@"
}

# ---- the same run, merged or not ----
timeout -s KILL 60 "$P/memagg" 4 3 0 240 >plain.out 2>&1
echo $? >plain.rc
profile n.data 0 "$P/memagg" 4 3 0 240 >n.out 2>n.err
echo $? >n.rc
profile a.data 1 "$P/memagg" 4 3 0 240 >a.out 2>a.err
echo $? >a.rc
cmp -s plain.out a.out && cmp -s plain.rc a.rc && [ "$(cat a.rc)" = 0 ] && cmp -s n.out a.out
ok $? "--aggregate: the program's output and exit status as without the library" || diag_file a.err

nrec=$(records n.data alloc-bytes)
arec=$(records a.data alloc-bytes)
nsize=$(stat -c %s n.data)
asize=$(stat -c %s a.data)
diag "alloc-bytes records $nrec -> $arec, file $nsize -> $asize bytes"
# 4 threads x (240 sizes at churn + 1 at keep) per window, and a few of the start's
[ "$nrec" -ge 60000 ] && [ "$arec" -le $((4 * 241 * 3 + 50)) ] && [ "$asize" -lt $((nsize / 20)) ]
ok $? "one alloc-bytes record per thread, stack and size per window: $nrec -> $arec records, $nsize -> $asize bytes"

sites_match 1 at alloc-bytes
ok $? "perf report: alloc-bytes by function exact, merged or not" || diag "$bad"

is "$(at a.data live-bytes keep) $(at a.data live-bytes churn)" "$(truth plain.out keep 2) 0" \
	"perf report: live-bytes at the end exact (the leaks, nothing at the site that frees)"

sites_match 3 ours alloc-objects
ok $? "autoprof-report -e alloc-objects: the blocks (period / weight), merged or not" || diag "$bad"

for f in n a; do
	"$REPORT" -e alloc-bytes --folded $f.data 2>>report.err | grep -E ';(churn|keep)' | sort >$f.folded
	"$REPORT" --leaks $f.data 2>>report.err | awk '$1 ~ /^[0-9]+$/ && $4 != "" { print $1, $2, $4 }' >$f.leaks
done
[ -s a.folded ] && cmp -s n.folded a.folded
ok $? "--folded -e alloc-bytes: every stack's bytes as without aggregation" ||
	diff n.folded a.folded | head -5 | sed 's/^/# /'
[ -s a.leaks ] && cmp -s n.leaks a.leaks
ok $? "--leaks: the same stacks, bytes and blocks" || diag_file a.leaks

grep -q '^== alloc-bytes: [0-9]* merged records ==' "$("$REPORT" a.data >a.rep 2>&1; echo a.rep)" &&
	grep -q '^== alloc-bytes: [0-9]* samples ==' "$("$REPORT" n.data >n.rep 2>&1; echo n.rep)"
ok $? "autoprof-report counts merged records, not samples, for alloc-bytes in an aggregated file" ||
	grep '^==' a.rep | sed 's/^/# /'

for f in n a; do
	"$REPORT" -e alloc-bytes --speedscope $f.ss.json $f.data 2>>report.err
done
is "$(python3 -c 'import json, sys; print(sum(sum(p["weights"]) for p in json.load(open(sys.argv[1]))["profiles"]))' a.ss.json)" \
	"$(python3 -c 'import json, sys; print(sum(sum(p["weights"]) for p in json.load(open(sys.argv[1]))["profiles"]))' n.ss.json)" \
	"--speedscope -e alloc-bytes: the same bytes"

if command -v go >/dev/null; then
	bad=""
	for f in n a; do
		"$REPORT" --pprof $f.pb.gz $f.data 2>>report.err
	done
	for t in alloc_space alloc_objects inuse_space inuse_objects; do
		for f in n a; do
			case $t in *space) u=-unit=B ;; *) u= ;; esac
			timeout -s KILL 120 go tool pprof $u -sample_index=$t -top $f.pb.gz 2>&1 |
				awk '/flat%/ { on = 1; next } on && ($NF == "churn" || $NF == "keep") { print $1, $NF }' |
				sort >$f.$t
		done
		[ -s a.$t ] && cmp -s n.$t a.$t || bad="$bad $t:$(tr '\n' ' ' <a.$t)/$(tr '\n' ' ' <n.$t)"
	done
	[ -z "$bad" ]
	ok $? "go tool pprof -sample_index=alloc_space/alloc_objects/inuse_space/inuse_objects -top: the same per function" || diag "$bad"
else
	skip "no go"
fi

timeout -s KILL 60 "$PERFPARSER" --input a.data --print-stats >pp.out 2>&1
ok $? "hotspot's perfparser reads the aggregated file" || diag_file pp.out

# ---- the default interval: the file's bytes are what the library sampled ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_AGGREGATE=1 AUTOPROF_VERBOSE=1 \
	AUTOPROF_OUTPUT=d.data LD_PRELOAD="$MEMPRELOAD" "$P/memagg" 4 3 0 240 >/dev/null 2>d.err
said=$(sed -n 's/.*allocation samples (\([0-9]*\) bytes estimated.*/\1/p' d.err)
inf=$(bytes d.data alloc-bytes | awk '{ n += $2 } END { print n + 0 }')
[ -n "$said" ] && [ "$said" -gt 0 ]
ok $? "default interval: the library sampled" || diag_file d.err
is "$inf" "$said" "default interval: the merged records' bytes add up to the library's estimate"

# each site's bytes within sampling error: 5 standard errors (1 / sqrt(bytes / 512 KiB): 3%
# for 600 MB) of what tests/progs/memtruth allocated, for the sites above 100 MB
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_AGGREGATE=1 AUTOPROF_OUTPUT=t.data \
	LD_PRELOAD="$MEMPRELOAD" "$P/memtruth" >t.out 2>t.err
bad=""
while read -r _ site alloc _; do
	[ "$alloc" -gt 100000000 ] || continue
	got=$(at t.data alloc-bytes "$site")
	awk -v g="$got" -v a="$alloc" 'BEGIN { e = 5 / sqrt(a / 524288); exit !(g > a * (1 - e) && g < a * (1 + e)) }' ||
		bad="$bad $site:$got/$alloc"
done <t.out
[ -z "$bad" ] && grep -q '^site churn_small' t.out
ok $? "default interval: each site's estimated bytes within sampling error of the truth" || diag "$bad"

# ---- a table that fills: written early, said once, nothing dropped ----
profile full.data 1 "$P/memagg" 1 2 0 5000 >full.out 2>full.err
is "$(grep -c 'aggregate: a table of merged records filled [0-9]* times' full.err)" 1 \
	"a table that fills before its window's end: one line at the end" || diag_file full.err
is "$(at full.data alloc-bytes churn) $(at full.data alloc-bytes keep)" \
	"$(truth full.out churn 1) $(truth full.out keep 1)" "... and every byte is in the file"
grep -q 'table of merged records' a.err
ok $((!$?)) "no such line when the table holds the run's stacks" || diag_file a.err

# ---- a thread without a sampler merges in the process's table ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_AGGREGATE=1 \
	AUTOPROF_OUTPUT=early.data LD_PRELOAD="$MEMPRELOAD $P/libearlyalloc.so" "$P/memcases" windows \
	>/dev/null 2>&1
is "$(at early.data alloc-bytes early_alloc) $(at early.data live-bytes early_alloc)" \
	"1000000 1000000" "a thread without a sampler: its allocations and leaks are in the file"
n=$(perf script -i early.data -F event,ip,sym 2>>perf.err | awk '/alloc-bytes:/ { getline; print $2 }' | grep -c '^early_alloc$')
is "$n" 1 "... in one merged record (1000 blocks of one size at one stack)"

# ---- fork ----
profile fork.data 1 "$P/memcases" fork >fork.out 2>&1
child=$(awk '/^child/ { print $2 }' fork.out)
is "$(at fork.data live-bytes before_fork) $(at fork.data.$child live-bytes before_fork) $(at fork.data.$child live-bytes in_child) $(at fork.data.$child alloc-bytes in_child) $(at fork.data alloc-bytes in_child)" \
	"100000 100000 300000 300000 0" \
	"fork: the child's merged records are its own, its live set starts as its parent's"

# ---- ctl dump: the merged records so far, then the live set of the moment ----
rm -f go
profile dump.data 1 "$P/memcases" dump "$PWD/go" >dump.out 2>dump.err &
dpid=$!
for i in $(seq 200); do
	grep -q ready dump.out 2>/dev/null && break
	sleep 0.1
done
timeout -s KILL 30 "$A" ctl "$(awk '/^ready/ { print $2 }' dump.out)" dump >ctl.out 2>&1
cp dump.data dump1.data
touch go
wait $dpid
is "$(at dump1.data alloc-bytes dump_keep) $(at dump1.data alloc-bytes dump_gone) $(at dump1.data live-bytes dump_keep) $(at dump1.data live-bytes dump_gone)" \
	"200000 300000 200000 300000" \
	"ctl dump: the file holds the merged allocations so far and the live set of the moment" ||
	diag_file ctl.out
is "$(at dump.data alloc-bytes dump_gone) $(at dump.data live-bytes dump_gone)" "300000 0" \
	"...and at the end each allocation once, the live set of the end"

# window_sums DIR: churn's alloc-bytes over DIR's window files (w.data.*) in $sum (perf
# report's), and in $bad the files where perf report and autoprof-report disagree.
window_sums() {
	sum=0 bad=""
	for f in "$1"/w.data.*; do
		case $f in *.stat) continue ;; esac
		p=$(at "$f" alloc-bytes churn)
		o=$(ours "$f" alloc-bytes churn)
		[ "$p" = "${o:-0}" ] || bad="$bad $f:$p/$o"
		sum=$((sum + p))
	done
}

# ---- the library's windows: each window's file whole ----
mkdir win
(cd win && profile w.data 1 env AUTOPROF_WINDOW=200ms "$P/memagg" 2 8 60 240 >../win.out 2>../win.err)
window_sums win
last=$(ls win/w.data.* | grep -v stat | tail -1)
diag "$(ls win | grep -vc stat) windows"
is "$sum" "$(truth win.out churn 1)" "--window: the windows' merged records add up to every byte"
[ -z "$bad" ]
ok $? "--window: perf report and autoprof-report agree on every window's file (no record before its objects)" ||
	diag "$bad"
is "$(at "$last" live-bytes keep)" "$(truth win.out keep 2)" "--window: the last window holds the live set"

# ---- the launcher: one file for the run, and its merged windows ----
timeout -s KILL 60 "$A" -q --memory --memory-interval 1 --aggregate -o run.data -- \
	sh -c "$P/memagg 2 2 0 240; $P/memagg 1 2 0 240" >run.out 2>run.err
want=$(awk '$1 == "site" && $2 == "churn" { n += $3 } END { print n }' run.out)
leak=$(awk '$1 == "site" && $2 == "keep" { n += $4 } END { print n }' run.out)
is "$(at run.data alloc-bytes churn) $(at run.data live-bytes keep)" "$want $leak" \
	"launcher, two processes: the merged file holds both processes' merged records" || diag_file run.err
timeout -s KILL 60 "$PERFPARSER" --input run.data --print-stats >pp2.out 2>&1
ok $? "hotspot's perfparser reads the launcher's merged file" || diag_file pp2.out
mkdir lw
(cd lw && timeout -s KILL 60 "$A" -q --memory --memory-interval 1 --aggregate --window 200ms \
	-o w.data -- sh -c "$P/memagg 2 6 60 240; $P/memagg 1 4 60 240" >../lw.out 2>../lw.err)
want=$(awk '$1 == "site" && $2 == "churn" { n += $3 } END { print n }' lw.out)
window_sums lw
is "$sum" "$want" "launcher --window: the run's windows add up to every byte" || diag_file lw.err
[ -z "$bad" ]
ok $? "launcher --window: perf report and autoprof-report agree on every merged window" || diag "$bad"

# ---- autoprof merge ----
cp a.data b.data
timeout -s KILL 60 "$A" merge -o m.data a.data b.data >merge.out 2>&1
is "$(at m.data alloc-bytes churn) $(ours m.data alloc-objects keep)" \
	"$(($(truth plain.out churn 1) * 2)) $(($(truth plain.out keep 3) * 2))" \
	"autoprof merge: two aggregated files, twice the bytes and blocks" || diag_file merge.out

# ---- AUTOPROF_AGGREGATE_CHECK keeps every allocation's record ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_AGGREGATE_CHECK=1 \
	AUTOPROF_OUTPUT=c.data LD_PRELOAD="$MEMPRELOAD" "$P/memagg" 1 1 0 240 >/dev/null 2>&1
is "$(records c.data alloc-bytes)" "$(records c.data alloc-bytes | awk '$1 >= 5050 { print $1 }')" \
	"AUTOPROF_AGGREGATE_CHECK: alloc-bytes records stay one per allocation"
done_testing
