#!/bin/sh
# layers.t - the folders are layers and the headers say so. The reader's
# folders are its stages:
# each stage header compiles when included first (it includes what it
# uses); read/ includes no header of the stages it feeds (model/,
# aggregate/, view/) nor the driver above it, model/ none of aggregate/,
# view/ or driver/, aggregate/ none of view/ or driver/, util/ none at all;
# the views see the driver's session (driver/session.h), never its private
# driver.h; no report/ file is over 600 lines; every function a report/ .c
# file exports starts with its file's name (FILE__, or FILEs__ for the
# collection of FILE's objects).
# The preload library's handler layer is closed: preload/handler/*.c include
# only handler/ headers, common.h and include/autoprof/ (no header of the
# session nor of the wrappers), and their objects refer to no symbol the
# session's objects define, and to none of wrap/'s but the signal table
# handler.h declares (checked with nm). Over preload/: every function a .c
# file exports starts with its file's name (the interposers, AP_API, are
# libc's names), each file opens with its own name, none is over 600 lines,
# and no prefix is defined in two folders.
. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
CC=${CC:-cc}
plan 10

# 1. Each header alone.
bad=
for h in report/*.h report/*/*.h; do
	printf '#include "%s"\n' "${h#report/}" >"$T/one.c"
	if ! $CC -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -Ireport -fsyntax-only \
		"$T/one.c" 2>"$T/one.err"; then
		bad="$bad $h"
		diag_file "$T/one.err"
	fi
done
[ -z "$bad" ]
ok $? "each report header compiles when included first${bad:+ (not:$bad)}"

# 2-3. Which headers each folder includes: only its own and earlier stages'.
# foreign FOLDER ALLOWED: the report/FOLDER files including a "header" not matching ALLOWED.
foreign() {
	for _f in report/"$1"/*.[ch]; do
		grep -E '^#include "' "$_f" | grep -vqE "^#include \"($2)" && printf '%s ' "$_f"
	done
}
# include/autoprof/ (what the library and the reader share) is below every stage
bad="$(foreign util 'autoprof/|util/')$(foreign read 'autoprof/|read/|util/')$(foreign model 'autoprof/|model/|read/|util/')$(foreign aggregate 'autoprof/|aggregate/|model/|read/|util/')"
[ -z "$bad" ]
ok $? "each stage includes only its own and earlier stages' headers${bad:+ (in: $bad)}"
bad=$(foreign view 'autoprof/|view/|aggregate/|model/|read/|util/|driver/session.h|flame.h|json_lines.h|proto.h')
[ -z "$bad" ]
ok $? "the views include the session, not the driver's private header${bad:+ (in: $bad)}"

# 4. File sizes.
bad=$(wc -l report/*.[ch] report/*/*.[ch] | awk '$2 != "total" && $1 > 600 { printf "%s (%d) ", $2, $1 }')
[ -z "$bad" ]
ok $? "no report file over 600 lines${bad:+ ($bad)}"

# 5. Exported functions carry their file's name.
bad=
for f in report/*.c report/*/*.c; do
	b=$(basename "$f" .c)
	for fn in $(grep -E '^[a-z][a-z_0-9 *]*[ *][a-z_0-9]+\(' "$f" | grep -v '^static' |
		grep -v ';$' | sed -E 's/^[a-z][a-z_0-9 *]*[ *]\**([a-z_0-9]+)\(.*/\1/'); do
		case $fn in "$b" | "$b"__* | "$b"s__* | main) ;; *) bad="$bad $f:$fn" ;; esac
	done
done
[ -z "$bad" ]
ok $? "every exported report function starts with its file's name${bad:+ (not:$bad)}"

# 6. The handler includes only its own headers, common.h and include/autoprof/.
bad=
for f in preload/handler/*.c preload/handler/*.h; do
	for h in $(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f"); do
		case $h in autoprof/* | common.h) continue ;; esac
		[ -f "preload/handler/$h" ] || bad="$bad $f:$h"
	done
done
[ -z "$bad" ]
ok $? "handler/ includes no header of the session or the wrappers${bad:+ (in:$bad)}"

# 7. nm: the handler's objects refer to nothing the session defines, and of
# wrap/ only to what handler.h declares (the program's signal table).
objs() { for _c in preload/"$1"/*.c; do _o=$B/${_c%.c}.o; [ -f "$_o" ] && printf '%s ' "$_o"; done; }
defined() { nm --defined-only $(objs "$1") 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRVWG]/ { print $3 }' | sort -u; }
nm -u $(objs handler) 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u >"$T/handler.u"
defined session >"$T/session.d"
nm --defined-only "$B/preload/entry.o" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRVWG]/ { print $3 }' >>"$T/session.d"
defined wrap >"$T/wrap.d"
# libc's own names (interposed by wrap/, bound there at run time) are not ours to check
nm -D --defined-only "$(ldd "$B/libautoprof.so" | awk '/libc\.so/ { print $3 }')" 2>/dev/null |
	awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u >"$T/libc.d"
up=$(sort "$T/session.d" | comm -12 "$T/handler.u" -)
wrap=$(comm -12 "$T/handler.u" "$T/wrap.d" | comm -23 - "$T/libc.d" | while read -r s; do
	grep -q "[ *]$s(" preload/handler/handler.h || printf '%s ' "$s"
done)
[ -n "$(objs handler)" ] && [ -s "$T/session.d" ] && [ -z "$up$wrap" ]
ok $? "handler/ objects refer to no session symbol, and to wrap/ only through handler.h${up:+ (session: $(echo $up))}${wrap:+ (wrap: $wrap)}"

# 8. Over preload/: exported functions carry their file's name.
bad=
for f in preload/*.c preload/*/*.c; do
	b=$(basename "$f" .c)
	for fn in $(grep -E '^[a-z][a-z_0-9 *]*[ *][a-z_0-9]+\(' "$f" | grep -v '^static' |
		grep -v ';$' | sed -E 's/^[a-z][a-z_0-9 *]*[ *]\**([a-z_0-9]+)\(.*/\1/'); do
		# __name: glibc's (its checked functions, declared for our wrappers)
		case $fn in "$b" | "$b"__* | "$b"s__* | __*) ;; *) bad="$bad $f:$fn" ;; esac
	done
done
[ -z "$bad" ]
ok $? "every exported preload function starts with its file's name${bad:+ (not:$bad)}"

# 9. Each preload file opens with its own name.
bad=
for f in preload/*.[ch] preload/*/*.[ch]; do
	sed -n 3p "$f" | grep -q "^ \* $(basename "$f") - " || bad="$bad $f"
done
[ -z "$bad" ]
ok $? "each preload file opens with its own name${bad:+ (not:$bad)}"

# 10. No preload file over 600 lines; no function prefix defined in two folders.
bad=$(wc -l preload/*.[ch] preload/*/*.[ch] | awk '$2 != "total" && $1 > 600 { printf "%s (%d) ", $2, $1 }')
two=$(for f in preload/*.c preload/*/*.c; do
	d=$(dirname "$f")
	grep -oE '^[a-z][a-z_0-9 *]*[ *]\**[a-z][a-z_0-9]*__[a-z_0-9]+\(' "$f" | grep -v '^static' |
		sed -E 's/.*[ *]\**([a-z][a-z_0-9]*)__[a-z_0-9]+\($/\1/' | sort -u | sed "s|\$| $d|"
done | sort -u | awk '{ n[$1]++; d[$1] = d[$1] " " $2 } END { for (p in n) if (n[p] > 1) printf "%s:%s ", p, d[p] }')
[ -z "$bad$two" ]
ok $? "no preload file over 600 lines, no prefix in two folders${bad:+ (long: $bad)}${two:+ (two: $two)}"
done_testing
