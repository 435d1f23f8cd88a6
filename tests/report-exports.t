#!/bin/sh
# report-exports.t - the exports for other tools, each read back by the tool
# itself on the same files (ours, and a `perf record -g` file):
#   --pprof       go tool pprof -top / -cum shares against our self / total
#                 shares, sample totals, build ids (perf buildid-list), lines,
#                 thread labels, stdout, refusing to overwrite an input
#   --speedscope  speedscope's own importer (npm package speedscope, run in
#                 node by tests/speedscope-load.js) and the schema it ships:
#                 profile names, frame names and weights equal ours
#   --json        format 2: python3's json loads it; functions, lines,
#                 threads, processes and the tree add up to the samples; the
#                 tree's totals against perf report --children, the hot lines
#                 against perf report --sort sym,srcline; -n limits nothing
. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$LIB" "$B/progs/threads" "$B/progs/split"
for tool in go node npm python3 gzip; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is not installed (make check installs it)"
		exit 0
	fi
done
plan 28

SS_VERSION=1.25.0
SS_DIR=$B/npm/speedscope-$SS_VERSION
export GOCACHE="${GOCACHE:-$B/go-cache}"

LD_PRELOAD=$LIB AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=t.data "$B/progs/threads" 400 >/dev/null
if ! timeout 120 perf record -q -e cpu-clock -g -o p.data "$B/progs/split" 400 >rec.out 2>&1; then
	# perf record needs perf_event_paranoid <= 2; our own file then stands in.
	diag "perf record does not work here ($(tail -n 1 rec.out)): p.data is the preload's"
	LD_PRELOAD=$LIB AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=p.data "$B/progs/split" 400 >/dev/null
fi
[ -s t.data ] && [ -s p.data ]
ok $? "the preload and perf record wrote a profile each"

# ---- pprof ----
for f in t p; do
	"$REPORT" --pprof $f.pb.gz $f.data 2>$f.err
	ok $? "$f.data: --pprof writes $f.pb.gz" || diag_file $f.err
done
gzip -t t.pb.gz
ok $? "the pprof file is gzip-compressed"

# pprof_cmp FILE MODE: "name ours pprof" per function both list; MODE self or cum.
pprof_cmp() {
	timeout 120 go tool pprof -top -nodecount=200 -nodefraction=0 -edgefraction=0 \
		$([ "$2" = cum ] && echo -cum) "$1.pb.gz" >"$1.$2.top" 2>"$1.$2.err"
	"$REPORT" --json "$1.data" >"$1.json" 2>/dev/null
	python3 - "$1.$2.top" "$1.json" "$2" <<'EOF'
import json, sys
top, js, mode = sys.argv[1:]
theirs, started = {}, False
for line in open(top):
    f = line.split()
    if f[:2] == ['flat', 'flat%']:
        started = True
        continue
    if started and len(f) >= 6:
        name = ' '.join(f[5:])
        if name.endswith(' (inline)'):  # an inlined function's frame, as pprof marks it
            name = name[:-9]
        theirs[name] = float((f[1] if mode == 'self' else f[4]).rstrip('%'))
ev = json.load(open(js))['events'][0]
key = 'self_percent' if mode == 'self' else 'total_percent'
for fn in ev['functions']:
    if fn['function'] in theirs and (fn[key] >= 0.5 or theirs[fn['function']] >= 0.5):
        print(fn['function'], fn[key], theirs[fn['function']])
EOF
}
for f in t p; do
	for mode in self cum; do
		pprof_cmp $f $mode >$f.$mode.cmp
		n=$(wc -l <$f.$mode.cmp)
		bad=$(awk '{ d = $2 - $3; if (d > 0.5 || d < -0.5) print $1 }' $f.$mode.cmp)
		# p.data's self time is all in spin(), inlined into both of split.c's leaves
		min=2
		[ $f$mode = pself ] && min=1
		[ "$n" -ge $min ] && [ -z "$bad" ]
		ok $? "$f.data: go tool pprof -top$([ $mode = cum ] && echo ' -cum') shares equal ours within 0.5 points ($n functions)" ||
			{ diag_file $f.$mode.cmp; diag_file $f.$mode.err; }
	done
done

# The sample counts add up: pprof's total of the samples value is our sample count.
got=$(timeout 120 go tool pprof -top -sample_index=samples -nodecount=1 t.pb.gz 2>/dev/null |
	awk '/^Showing nodes/ { print $(NF - 1) }')
want=$(python3 -c 'import json, sys; print(json.load(open("t.json"))["events"][0]["samples"])')
is "$got" "$want" "pprof's sample total is ours"

# Mappings carry the build ids perf buildid-list names for the same objects.
timeout 120 go tool pprof -raw t.pb.gz >t.raw 2>/dev/null
want=$(perf buildid-list -i t.data 2>/dev/null | awk '$2 ~ /\/threads$/ { print $1 }')
got=$(awk '/^Mappings/ { m = 1; next } m && $3 ~ /\/threads$/ { print $4 }' t.raw)
[ -n "$want" ] && [ "$got" = "$want" ]
ok $? "the program's mapping has its build id ($got)"
grep -q '^PeriodType: cpu nanoseconds' t.raw && grep -q '^Period: 1000000$' t.raw &&
	grep -q '^Duration: ' t.raw
ok $? "period type, period (1 ms at 1 kHz) and duration are set"

# Locations carry source lines: burn_alpha's time is in threads.c.
timeout 120 go tool pprof -top -lines -nodecount=10 t.pb.gz 2>/dev/null | grep -q 'burn_alpha threads\.c:[0-9]'
ok $? "go tool pprof -lines names the source lines"

# Thread labels: the four workers by tid and name.
n=$(timeout 120 go tool pprof -tags t.pb.gz 2>/dev/null | grep -c 'busy-[0-3]$')
is "$n" 4 "samples are labelled with the thread names"

# Standard output, and never over an input.
"$REPORT" --pprof - t.data 2>/dev/null | gzip -t
ok $? "--pprof - writes the profile to standard output"
cp t.data t.copy
"$REPORT" --pprof t.data t.data 2>over.err
st=$?
[ $st -eq 1 ] && cmp -s t.data t.copy && grep -q 'refusing' over.err
ok $? "--pprof over an input is refused (status $st), the input unchanged"
"$REPORT" --pprof - --json t.data >/dev/null 2>usage.err
is "$?" 2 "--pprof - with another stdout view is a usage error"

# ---- speedscope ----
for f in t p; do
	"$REPORT" --speedscope $f.ss.json $f.data 2>$f.ss.err
	ok $? "$f.data: --speedscope writes $f.ss.json" || diag_file $f.ss.err
done
if [ ! -f "$SS_DIR/node_modules/speedscope/package.json" ]; then
	mkdir -p "$SS_DIR"
	timeout 300 npm install --silent --no-audit --no-fund --prefix "$SS_DIR" \
		"speedscope@$SS_VERSION" >npm.log 2>&1 || diag_file npm.log
fi
bundle=$(ls "$SS_DIR"/node_modules/speedscope/dist/release/speedscope-*.js 2>/dev/null | head -n 1)
[ -n "$bundle" ]
ok $? "the speedscope $SS_VERSION npm package is installed in build/npm"

for f in t p; do
	timeout 120 node "$ROOT/tests/speedscope-load.js" "$bundle" $f.ss.json >$f.ss.loaded 2>$f.ss.lerr
	python3 - $f.ss.loaded $f.json <<'EOF' >$f.ss.cmp 2>&1
import json, sys
loaded, ours = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = ours['events'][0]
# per thread: the profile's total weight is the thread's period
threads = {'%s %d/%d' % (t['comm'], t['pid'], t['tid']): t['period'] for t in ev['threads']}
got = {p['name']: p['total'] for p in loaded['profiles']}
assert got == threads, ('thread totals', got, threads)
# per function: self weights summed over the threads are our self periods
self_w = {}
for p in loaded['profiles']:
    for name, (s, t) in p['frames'].items():
        self_w[name] = self_w.get(name, 0) + s
ours_self = {}
for fn in ev['functions']:
    if fn['self_period']:
        ours_self[fn['function']] = ours_self.get(fn['function'], 0) + fn['self_period']
theirs = {k: v for k, v in self_w.items() if v}
assert theirs == ours_self, ('self weights', theirs, ours_self)
assert sum(got.values()) == ev['period'], 'total'
print('ok', len(got), 'profiles', len(theirs), 'functions')
EOF
	ok $? "$f.data: speedscope's importer reads the same threads, frames and weights ($(cat $f.ss.cmp | head -c 200))" ||
		diag_file $f.ss.lerr
done
schema=$(dirname "$bundle")/file-format-schema.json
if python3 -c 'import jsonschema' 2>/dev/null; then
	python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' t.ss.json "$schema" 2>schema.err
	ok $? "t.ss.json is valid against the schema the speedscope package ships" || diag_file schema.err
else
	ok 1 "python3's jsonschema module is missing (Debian: python3-jsonschema)"
fi

# ---- JSON ----
for f in t p; do
	python3 - $f.json <<'EOF' >$f.jcheck 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d['format'] == 2
for k in ('command', 'hostname', 'samples', 'lost', 'duration_s', 'counters', 'functions', 'events'):
    assert k in d, k
assert sum(e['samples'] for e in d['events']) == d['samples'], 'event samples'
ids = {f['id'] for f in d['functions']}
for e in d['events']:
    n = e['samples']
    assert sum(f['self_samples'] for f in e['functions']) == n, 'function self'
    for f in e['functions']:
        assert sum(l['self_samples'] for l in f.get('lines', [])) == f['self_samples'], 'lines'
    assert sum(t['samples'] for t in e['threads']) == n, 'threads'
    assert sum(p['samples'] for p in e['processes']) == n, 'processes'
    assert sum(r['self_samples'] for r in e['rows']) == n, 'rows'
    tree = e['tree']
    assert tree[0]['parent'] is None and tree[0]['total_samples'] == n, 'root'
    assert sum(x['self_samples'] for x in tree) == n, 'tree self'
    kids = {}
    for x in tree[1:]:
        assert x['function'] in ids, 'function id'
        kids.setdefault(x['parent'], []).append(x)
    for x in tree:
        assert x['total_samples'] == x['self_samples'] + sum(c['total_samples'] for c in kids.get(x['id'], [])), 'node sum'
print('ok')
EOF
	ok $? "$f.json loads; functions, lines, threads, processes, rows and tree add up to the samples" ||
		diag_file $f.jcheck
done

# The tree's totals per function (outermost occurrence in each stack) against
# perf report --children on the perf record file.
perf report -i p.data --stdio --children --sort sym -g none 2>/dev/null |
	awk '$1 ~ /%$/ && $3 ~ /^\[/ { sub(/%/, "", $1); n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ /, "", n); print n "\t" $1 }' >children.tsv
python3 - p.json children.tsv <<'EOF' >tree.cmp
import json, sys
d = json.load(open(sys.argv[1]))
perf = dict(l.rstrip('\n').split('\t') for l in open(sys.argv[2]) if '\t' in l)
names = {f['id']: f['name'] for f in d['functions']}
e = d['events'][0]
byid = {x['id']: x for x in e['tree']}
total = {}
for x in e['tree'][1:]:
    p, seen = x['parent'], False
    while p:
        if byid[p]['function'] == x['function']:
            seen = True
        p = byid[p]['parent']
    if not seen:
        total[x['function']] = total.get(x['function'], 0) + x['total_period']
for fid, t in total.items():
    pct = 100.0 * t / e['period']
    n = names[fid]
    if n in perf and (pct >= 0.5 or float(perf[n]) >= 0.5):
        print(n, round(pct, 2), perf[n])
EOF
n=$(wc -l <tree.cmp)
bad=$(awk '{ d = $2 - $3; if (d > 0.5 || d < -0.5) print $1 }' tree.cmp)
[ "$n" -ge 2 ] && [ -z "$bad" ]
ok $? "the JSON tree's totals equal perf report --children within 0.5 points ($n functions)" || diag_file tree.cmp

# Hot source lines per function against perf report --sort sym,srcline
# (--no-inline: perf's sym is the symbol's function; split.c inlines spin()).
for f in t p; do
	"$REPORT" --no-inline --json $f.data >$f.noinline.json 2>/dev/null
	perf report -i $f.data --stdio --no-children --sort sym,srcline -g none 2>/dev/null |
		awk '$1 ~ /%$/ && $2 ~ /^\[/ { sub(/%/, "", $1); s = $3; for (i = 4; i < NF; i++) s = s " " $i; print s "\t" $NF "\t" $1 }' >$f.srcline.tsv
	python3 - $f.noinline.json $f.srcline.tsv <<'EOF' >$f.lines.cmp
import json, sys
e = json.load(open(sys.argv[1]))['events'][0]
perf = {}
for l in open(sys.argv[2]):
    sym, src, pct = l.rstrip('\n').split('\t')
    perf[(sym, src)] = float(pct)
for f in e['functions']:
    for l in f.get('lines', []):
        key = (f['function'], l['source'])
        ours = 100.0 * l['self_period'] / e['period']
        if key in perf and (ours >= 0.5 or perf[key] >= 0.5):
            print('%s@%s' % key, round(ours, 2), perf[key])
EOF
	n=$(wc -l <$f.lines.cmp)
	bad=$(awk '{ d = $2 - $3; if (d > 0.5 || d < -0.5) print $1 }' $f.lines.cmp)
	[ "$n" -ge 2 ] && [ -z "$bad" ]
	ok $? "$f.json: hot source lines equal perf report --sort sym,srcline within 0.5 points ($n lines)" ||
		diag_file $f.lines.cmp
done

# -n limits the printed tables, not the JSON.
got=$("$REPORT" --json -n 1 t.data | python3 -c 'import json, sys; e = json.load(sys.stdin)["events"][0]; print(len(e["rows"]) > 1 and len(e["functions"]) > 1)')
is "$got" True "-n 1 leaves every row and function in the JSON"

done_testing
