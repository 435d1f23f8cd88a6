#!/bin/sh
# memory-real.t - memory profiles of real programs (issue 25): the programs
# installed here (python3, perl, git, sqlite3, make and cc, ...) run under
# autoprof --memory (and the bare LD_PRELOAD of both libraries) behave as
# without us (output, status), and their files hold plausible numbers that
# perf, autoprof-report and go tool pprof read. A program not installed is
# skipped.
. "$(dirname "$0")/lib.sh"
needs "$B/libautoprof-memory.so" "$B/autoprof"
plan 23
. "$ROOT/tests/memlib.sh" # MEMLIB, MEMPRELOAD, at

A=$B/autoprof
# total FILE: the live bytes --leaks reports in all (empty when none).
total() { "$REPORT" --leaks "$1" 2>/dev/null | sed -n 's/^(live-bytes: \([0-9]*\) bytes.*/\1/p'; }
# same NAME CMD...: run CMD plain and under --memory (at the interval in $MI, default the
# library's) into NAME.data; true when the output, errors and status are the same.
same() {
	_name=$1
	shift
	timeout -s KILL 60 "$@" >"$_name.0.out" 2>"$_name.0.err"
	echo "status $?" >>"$_name.0.out"
	timeout -s KILL 60 "$A" -q --memory ${MI:+--memory-interval "$MI"} -o "$_name.data" -- "$@" \
		>"$_name.out" 2>"$_name.err"
	echo "status $?" >>"$_name.out"
	cmp -s "$_name.0.out" "$_name.out" && cmp -s "$_name.0.err" "$_name.err" && return 0
	diff "$_name.0.out" "$_name.out" | head -5 | sed 's/^/#   /' >&2
	diff "$_name.0.err" "$_name.err" | head -5 | sed 's/^/#   /' >&2
	return 1
}
# readers FILE: perf script, hotspot's perfparser, autoprof-report --leaks and go tool
# pprof's inuse_space read FILE.
readers() {
	perf script -i "$1" >/dev/null 2>"$1.ps" && "$REPORT" --leaks "$1" >"$1.leaks" 2>&1 &&
		{ [ ! -x "$PERFPARSER" ] ||
			timeout -s KILL 60 "$PERFPARSER" --input "$1" --print-stats >"$1.pp" 2>&1; } &&
		"$REPORT" --pprof "$1.pb.gz" "$1" 2>/dev/null &&
		{ ! command -v go >/dev/null ||
			timeout -s KILL 60 go tool pprof -sample_index=inuse_space -top "$1.pb.gz" >"$1.top" 2>&1; }
}

# ---- a non-PIE executable that takes malloc's and free's addresses ----
# Its dynamic symbols for them are undefined with a value (canonical PLT
# entries, as Debian's python3 has): dlsym(RTLD_DEFAULT) finds those, in the
# executable, whose calls still reach the wrappers through the GOT. The
# library refused such programs ("do not reach the library"), no memory events.
cat >nopie.c <<'EOC'
#include <stdio.h>
#include <stdlib.h>
void *(*volatile get)(size_t);
void (*volatile put)(void *);
__attribute__((noinline)) void *leak_here(size_t n) { return get(n); }
int main(void)
{
	get = malloc; /* an absolute address in code: the canonical PLT entry */
	put = free;
	char *p = leak_here(3u << 20);
	for (size_t i = 0; i < (3u << 20); i += 4096)
		p[i] = 1;
	put(malloc(100));
	printf("%d\n", p[0]);
	return 0;
}
EOC
if cc -O1 -g -no-pie -fno-pie -o nopie nopie.c 2>cc.err &&
	[ "$(readelf --dyn-syms -W nopie | awk '$8 ~ /^malloc@/ && $7 == "UND" && $2 !~ /^0+$/' | wc -l)" = 1 ]; then
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=np.data LD_PRELOAD="$MEMPRELOAD" \
		./nopie >np.out 2>np.err
	is "$(cat np.out) $(at np.data live-bytes leak_here)" "1 3145728" \
		"non-PIE with canonical PLT entries for malloc and free: profiled, its leak found" ||
		diag_file np.err
	! grep -q 'do not reach' np.err
	ok $? "...and no line saying malloc does not reach the library" || diag_file np.err
else
	skip "cc -no-pie did not make a canonical PLT entry for malloc"
	skip "cc -no-pie did not make a canonical PLT entry for malloc"
fi
# The same with SysV's hash table only (older binaries); and an executable
# that defines free itself (the loader binds every call of free to it): the
# wrappers' free is out of reach, memory is not profiled (one line, a mark).
cat >ownfree.c <<'EOC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
void free(void *p)
{
	static void (*f)(void *);

	if (!f)
		f = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	f(p);
}
int main(void)
{
	free(malloc(10));
	puts("ok");
	return 0;
}
EOC
if cc -O1 -g -no-pie -fno-pie -Wl,--hash-style=sysv -o nopie-sysv nopie.c 2>cc.err &&
	cc -O1 -o ownfree ownfree.c 2>>cc.err; then
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=sv.data LD_PRELOAD="$MEMPRELOAD" \
		./nopie-sysv >sv.out 2>sv.err
	is "$(cat sv.out) $(at sv.data live-bytes leak_here)" "1 3145728" \
		"...a non-PIE executable with SysV's hash table only: profiled too" || diag_file sv.err
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=of.data LD_PRELOAD="$MEMPRELOAD" \
		./ownfree >of.out 2>of.err
	is "$(cat of.out) $(grep -c 'do not reach the library' of.err) $(perf evlist -i of.data 2>/dev/null | grep -c 'memory-not-recorded:malloc-out')" \
		"ok 1 1" "an executable defining free: not profiled, one line, the file's mark" ||
		diag_file of.err
else
	skip "cc cannot link with --hash-style=sysv"
	skip "cc cannot link with --hash-style=sysv"
fi

# ---- python3: Debian's is non-PIE, with those entries ----
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	cat >hold.py <<'EOP'
import os, sys
keep = [bytearray(1000) for _ in range(100000)]   # 100 MB live at the end
sys.stdout.write("%d\n" % sum(len(b) for b in keep)); sys.stdout.flush()
os._exit(3)
EOP
	timeout -s KILL 60 "$PY" hold.py >py0.out 2>py0.err
	echo $? >>py0.out
	timeout -s KILL 60 "$A" -q --memory --memory-interval 65536 -o py.data -- "$PY" hold.py \
		>py.out 2>py.err
	echo $? >>py.out
	cmp -s py0.out py.out && cmp -s py0.err py.err
	ok $? "python3 under --memory: the same output, errors and status" || diag_file py.err
	within "$(total py.data)" 90000000 125000000 \
		"python3 holding 100,000 bytearrays of 1000 bytes at os._exit: about 100 MB live"
else
	skip "no python3"
	skip "no python3"
fi

# ---- node: Debian's is non-PIE too, with those entries for all four ----
if command -v node >/dev/null; then
	same node node -e 'const b = Buffer.alloc(24 << 20); console.log(b.length); console.error("e"); process.exitCode = 4'
	ok $? "node under --memory: the same output, errors and status" || diag_file node.err
	is "$(at node.data alloc-bytes node::NodeArrayBufferAllocator::Allocate)" 25165824 \
		"...its 24 MiB Buffer allocated in NodeArrayBufferAllocator::Allocate"
else
	skip "no node"
	skip "no node"
fi

# ---- a program listing its descriptors with scandir (libuv: node's fs.readdirSync) ----
# glibc's scandir reads the directory inside libc, past fddir.c's readdir: the
# profiler's descriptors (perf events, the file, a pipe) were listed.
cat >scan.c <<'EOC'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	struct dirent **l;
	int n = scandir("/proc/self/fd", &l, NULL, alphasort), m;

	for (int i = 0; i < n; i++)
		printf("%s ", l[i]->d_name), free(l[i]);
	free(l);
	m = scandirat(AT_FDCWD, "/proc/self/fd", &l, NULL, NULL);
	for (int i = 0; i < m; i++)
		free(l[i]);
	free(l);
	printf("| %d\n", m);
	return 0;
}
EOC
if cc -O1 -o scan scan.c 2>cc.err; then
	same scan ./scan
	ok $? "scandir and scandirat of /proc/self/fd list the program's descriptors only" ||
		diag_file scan.out
else
	skip "no cc"
fi
if command -v node >/dev/null; then
	same nodefd node -e 'console.log(require("fs").readdirSync("/proc/self/fd").join(" "))'
	ok $? "node's fs.readdirSync of /proc/self/fd: the same list as without us" ||
		diag_file nodefd.out
else
	skip "no node"
fi

# ---- the tools of a build and a shell, every allocation recorded ----
MI=1
if command -v perl >/dev/null; then
	same perl perl -e 'my $s = "x" x (48 << 20); my %h; $h{$_} = [$_] for 1 .. 20000;
		print length($s), " ", scalar(keys %h), "\n"; warn "w\n"; exit 5'
	ok $? "perl (a 48 MiB string, a hash): the same output, errors and status" || diag_file perl.err
	within "$(at perl.data alloc-bytes Perl_safesysmalloc)" $((48 << 20)) $((64 << 20)) \
		"...its 48 MiB string allocated in Perl_safesysmalloc"
else
	skip "no perl"
	skip "no perl"
fi
if command -v sqlite3 >/dev/null; then
	printf '%s\n' 'create table t(a integer primary key, b text);' \
		"with recursive c(x) as (select 1 union all select x+1 from c where x<20000) insert into t select x, printf('r%d', x) from c;" \
		'create index tb on t(b);' "select count(*), max(b) from t where b like 'r1%';" >q.sql
	same sqlite sh -c 'rm -f q.db; sqlite3 q.db <q.sql'
	ok $? "sqlite3 (inserts, an index, a query): the same output, errors and status" ||
		diag_file sqlite.err
	# sqlite3 frees all it allocates; what stays is libc's (stdio buffers, locale: ~13 KB)
	within "$(total sqlite.data)" 1 200000 "...at exit only libc's own blocks are live"
	# a filter that keeps no process: said so, not "ended without one (SIGKILL)"
	"$REPORT" --leaks --pid 1 sqlite.data >f.out 2>f.err
	is "$? $(grep -c 'no live set in what the filters keep' f.err)" "1 1" \
		"--leaks --pid of no process of the file: one line naming the filters, status 1" ||
		diag_file f.err
else
	skip "no sqlite3"
	skip "no sqlite3"
	skip "no sqlite3"
fi
if command -v git >/dev/null; then
	git init -q repo && for i in 1 2 3; do
		seq $i 300 >repo/f$i && git -C repo add f$i &&
			git -C repo -c user.email=a@b -c user.name=a commit -qm "c$i"
	done
	same git sh -c 'rm -rf cl && git clone -q repo cl && git -C cl log --format=%s && git -C cl gc -q && git -C cl fsck 2>&1 | wc -l'
	ok $? "git clone, log, gc, fsck: the same output, errors and status" || diag_file git.err
	readers git.data
	ok $? "...perf script, hotspot's perfparser, autoprof-report --leaks and go tool pprof read its file" ||
		diag_file git.data.ps
else
	skip "no git"
	skip "no git"
fi
MI=
if command -v make >/dev/null && command -v g++ >/dev/null; then
	mkdir -p mk && printf 'int f(int);\n#include <stdio.h>\nint main(void) { printf("%%d\\n", f(3)); return 0; }\n' >mk/a.c &&
		printf '#include <map>\n#include <string>\nextern "C" int f(int x) { std::map<std::string, int> m; for (int i = 0; i < x; i++) m[std::to_string(i)] = i; return (int)m.size(); }\n' >mk/b.cpp &&
		printf 'p: a.o b.o\n\tg++ -o $@ $^\n%%.o: %%.c\n\tgcc -O2 -c $<\n%%.o: %%.cpp\n\tg++ -O2 -c $<\n' >mk/Makefile
	same make sh -c 'make -s -B -j2 -C mk && mk/p'
	ok $? "make -j2 with gcc and g++: the same output, errors and status" || diag_file make.err
	readers make.data
	ok $? "...and its file is read" || diag_file make.data.leaks
else
	skip "no make or g++"
	skip "no make or g++"
fi

# ---- a thread whose first allocation is made inside pthread_getattr_np ----
# glibc holds the thread's lock while it reallocs there; the sample of that
# allocation asked glibc for the thread's stack (pthread_getattr_np again)
# and waited for the lock for ever: java -version hung at an interval of 1
# (the JVM asks each new thread's stack). The threads' samples are walked.
cat >getattr.c <<'EOC'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
static void *run(void *arg)
{
	pthread_attr_t a;
	size_t size = 0;
	void *addr;

	if (!pthread_getattr_np(pthread_self(), &a)) {
		pthread_attr_getstack(&a, &addr, &size);
		pthread_attr_destroy(&a);
	}
	*(int *)arg = size > 0;
	return NULL;
}
int main(void)
{
	int ok[4] = {0}, n = 0;
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, &ok[i]);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL), n += ok[i];
	printf("%d\n", n);
	return 0;
}
EOC
if cc -O1 -g -pthread -o getattr getattr.c 2>cc.err; then
	timeout -s KILL 20 "$A" -q --memory --memory-interval 1 -o ga.data -- ./getattr >ga.out 2>ga.err
	is "$? $(cat ga.out)" "0 4" "threads allocating inside pthread_getattr_np at interval 1: no deadlock" ||
		diag_file ga.err
	n=$(perf script -i ga.data -F event,ip,sym 2>/dev/null |
		awk '/alloc-bytes:/ { s = 1; next } s && $2 == "run" { n++ } NF == 0 { s = 0 } END { print n + 0 }')
	within "$n" 4 100 "...and the allocations of the threads' pthread_getattr_np are samples under run"
else
	skip "no cc"
	skip "no cc"
fi

# ---- java: a JVM at interval 1 (its threads ask their stacks) ----
if command -v java >/dev/null; then
	timeout -s KILL 60 java -version >jv0.out 2>&1
	echo $? >>jv0.out
	timeout -s KILL 60 "$A" -q --memory --memory-interval 1 -o jv.data -- java -version >jv.out 2>&1
	echo $? >>jv.out
	cmp -s jv0.out jv.out
	ok $? "java -version under --memory --memory-interval 1: finishes, the same output and status" ||
		diag_file jv.out
	within "$("$REPORT" jv.data 2>/dev/null | sed -n 's/^Event:.* live-bytes (\([0-9]*\) samples.*/\1/p')" \
		100 10000000 "...and the file has its live set at the exit"
else
	skip "no java"
	skip "no java"
fi
done_testing
