#!/bin/sh
# autoprof-report on native memory profiles (AUTOPROF_MEMORY=1): the text
# views show bytes and objects by function, --leaks lists what is still
# allocated at the end by stack, biggest first, and the exports carry the
# memory events: pprof's alloc_space, alloc_objects, inuse_space and
# inuse_objects (checked with go tool pprof), folded stacks and flame graphs
# weighed by bytes, speedscope in bytes. tests/progs/memtruth at
# AUTOPROF_MEMORY_INTERVAL=1 (every allocation) knows every number exactly.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/memtruth" "$B/progs/split"
plan 13
. "$ROOT/tests/memlib.sh" # MEMPRELOAD

timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_OUTPUT=m.data \
	LD_PRELOAD="$MEMPRELOAD" "$B/progs/memtruth" 100 >m.out 2>m.err
ok $? "memtruth ran under the library" || diag_file m.err

# The top table of EVENT: "FUNCTION VALUE" per row of the self table.
top() {
	awk -v ev="$1" '$0 == "== " ev ": " $3 " samples ==" || index($0, "== " ev ":") == 1 { on = 1; next }
		on && /^Top functions by total/ { exit }
		on && $1 ~ /%$/ { print $3, $2 }' rep.txt
}
timeout -s KILL 60 "$REPORT" m.data >rep.txt 2>rep.err
ok $? "autoprof-report reads the file" || diag_file rep.err
grep -q '^  Self%         Bytes  Function' rep.txt
ok $? "the memory events' tables count bytes" || diag_file rep.txt
bad=""
while read -r _ site alloc leak; do
	n=$(top alloc-bytes | awk -v s=$site '$1 == s { print $2 }')
	[ "$n" = "$alloc" ] || bad="$bad alloc-bytes:$site:$n/$alloc"
	[ "$leak" = 0 ] && continue
	n=$(top live-bytes | awk -v s=$site '$1 == s { print $2 }')
	[ "$n" = "$leak" ] || bad="$bad live-bytes:$site:$n/$leak"
done <m.out
[ -z "$bad" ]
ok $? "allocated and live bytes by function are the program's own" || diag "$bad"
is "$(top alloc-objects | awk '$1 == "churn_small" || $1 == "leak_small" { printf "%s=%s ", $1, $2 }')" \
	"churn_small=30000 leak_small=3000 " "alloc-objects counts the blocks"

timeout -s KILL 60 "$REPORT" --leaks m.data >leaks.txt 2>leaks.err
ok $? "--leaks" || diag_file leaks.err
awk '$1 ~ /^[0-9]+$/ && $4 != "" { print $1, $2, $4 }' leaks.txt | head -2 >leaks.rows
is "$(tr '\n' ' ' <leaks.rows)" "16777216 4 leak_big 300000 3000 leak_small " \
	"--leaks: the leaking stacks, biggest first, with bytes and blocks" || diag_file leaks.txt

timeout -s KILL 60 env AUTOPROF_OUTPUT=cpu.data LD_PRELOAD="$LIB" "$B/progs/split" 50 >/dev/null 2>&1
"$REPORT" --leaks cpu.data >none.out 2>none.err
rc=$?
[ $rc = 1 ] && [ "$(wc -l <none.err)" = 1 ] && grep -q 'no memory profile' none.err
ok $? "--leaks on a CPU profile: one line, status 1" || diag_file none.err

"$REPORT" -e live-bytes --folded m.data >folded.txt
is "$(awk '{ n += $NF } END { print n }' folded.txt)" 17081312 \
	"--folded -e live-bytes: the stacks' bytes add up to what is live"
want=$(awk '$2 == "churn_small" { print $3 }' m.out)
"$REPORT" -e alloc-bytes --flamegraph m.svg m.data && grep -q "churn_small \[memtruth\] ($want bytes" m.svg
ok $? "--flamegraph -e alloc-bytes: frames weighed by bytes"
"$REPORT" -e live-bytes --speedscope m.speedscope.json m.data &&
	python3 -c 'import json, sys; ps = json.load(open(sys.argv[1]))["profiles"]; sys.exit(not (all(p["unit"] == "bytes" for p in ps) and sum(sum(p["weights"]) for p in ps) == 17081312))' m.speedscope.json
ok $? "--speedscope -e live-bytes: weights in bytes (one profile a thread, adding up to what is live)"

if command -v go >/dev/null; then
	"$REPORT" --pprof m.pb.gz m.data 2>pprof.err
	timeout -s KILL 120 go tool pprof -unit=B -sample_index=inuse_space -top m.pb.gz >inuse.txt 2>&1
	awk '/flat%/ { on = 1; next } on { print $1, $NF }' inuse.txt | head -2 | tr '\n' ' ' >inuse.rows
	is "$(cat inuse.rows)" "16777216B leak_big 300000B leak_small " \
		"go tool pprof -sample_index=inuse_space -top: the leaks" || diag_file inuse.txt
	ok=0
	for t in alloc_space alloc_objects inuse_objects; do
		timeout -s KILL 120 go tool pprof -sample_index=$t -top m.pb.gz >$t.txt 2>&1 &&
			grep -q "^Type: $t" $t.txt || { ok=1; diag_file $t.txt; }
	done
	ok $ok "go tool pprof reads alloc_space, alloc_objects and inuse_objects"
else
	skip "no go"
	skip "no go"
fi
done_testing
