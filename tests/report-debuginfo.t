#!/bin/sh
# report-debuginfo.t - names for a stripped program from its separate debug
# file: under a --debug-dir in the build-id layout (/usr/lib/debug/.build-id/
# xx/yyyy.debug, Debian's -dbgsym packages), through .gnu_debuglink, and
# from a debuginfod server (Debian's debuginfod on 127.0.0.1, DEBUGINFOD_URLS
# pointing at it); none of it when nothing is configured.
. "$(dirname "$0")/lib.sh"

needs "$B/progs/inlined"
plan 9

# top FILE [OPTS]: the top function of the self table.
top() {
	_f=$1
	shift
	timeout -s KILL 60 "$REPORT" "$@" "$_f" 2>/dev/null | awk '/^Top functions by self/ { t = 1; next }
		t && /^ +Self%/ { next } t && $1 ~ /%$/ { print $3; exit }'
}

cp "$B/progs/inlined" prog
objcopy --only-keep-debug prog prog.debug
objcopy --strip-all --add-gnu-debuglink=prog.debug prog
bid=$(readelf -n prog | awk '/Build ID/ { print $3 }')
mkdir -p bid/.build-id/$(echo "$bid" | cut -c1-2) link"$T" srv
cp prog.debug bid/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug
cp prog.debug link"$T"/prog.debug
mv prog.debug srv/
cp prog srv/
timeout -s KILL 60 perf record -q -e cpu-clock -o s.data ./prog 20 >/dev/null 2>&1
ok $? "perf record of the stripped program"

unset DEBUGINFOD_URLS
case "$(top s.data)" in prog+0x*) r=0 ;; *) r=1 ;; esac
ok $r "without a debug file: addresses only ($(top s.data))"
is "$(top s.data --debug-dir "$T/bid")" mix "--debug-dir: the build-id layout names the inlined function"
is "$(top s.data --debug-dir "$T/bid" --no-inline)" run.constprop.0 \
	"--debug-dir --no-inline: the symbol's function"
is "$(top s.data --debug-dir "$T/link")" mix "--debug-dir: DIR/<object's dir>/<debuglink>"
"$REPORT" --debug-dir "" s.data >/dev/null 2>err.txt
[ $? -ne 0 ] && [ "$(wc -l <err.txt)" -ge 1 ]
ok $? "--debug-dir '': one line, non-zero exit"

# debuginfod: a server scanning srv/ on a free port.
if command -v debuginfod >/dev/null 2>&1; then
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	debuginfod -d "$T/db.sqlite" -p "$port" -F "$T/srv" >dbgd.log 2>&1 &
	dpid=$!
	export DEBUGINFOD_CACHE_PATH="$T/cache"
	i=0
	while [ $i -lt 40 ]; do
		curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$bid/debuginfo" && break
		sleep 0.5
		i=$((i + 1))
	done
	if [ $i -lt 40 ]; then
		is "$(DEBUGINFOD_URLS=http://127.0.0.1:$port top s.data)" mix \
			"debuginfod: the debug file fetched by build id names the functions"
		ls "$T/cache/$bid/debuginfo" >/dev/null 2>&1
		ok $? "debuginfod: the file is in DEBUGINFOD_CACHE_PATH"
		kill "$dpid"
		wait "$dpid" 2>/dev/null
		rm -rf "$T/cache"
		case "$(DEBUGINFOD_URLS=http://127.0.0.1:$port top s.data)" in prog+0x*) r=0 ;; *) r=1 ;; esac
		ok $r "debuginfod gone: addresses again, no hang"
	else
		kill "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		diag_file dbgd.log
		for i in 1 2 3; do skip "debuginfod did not serve the file in 20 s"; done
	fi
else
	for i in 1 2 3; do skip "debuginfod is not installed"; done
fi
done_testing
