#!/bin/sh
# layers.t - the reader's folders are its stages and the headers say so:
# each stage header compiles when included first (it includes what it
# uses); read/ includes no header of the stages it feeds (model/,
# aggregate/, view/) nor the driver above it, model/ none of aggregate/,
# view/ or driver/, aggregate/ none of view/ or driver/, util/ none at all;
# the views see the driver's session (driver/session.h), never its private
# driver.h; no report/ file is over 600 lines; every function a report/ .c
# file exports starts with its file's name (FILE__, or FILEs__ for the
# collection of FILE's objects).
# And the names of the folders in NAMED (launcher/, common/): no file over 600
# lines, each file's banner (its first comment's first line) names it, each
# function an object exports (nm) starts with its file's name, no such prefix
# is used in another folder, and no comment or string names a file that does
# not exist. NAMED holds preload/ too, whose interposers (wrap/, AP_API)
# export libc's names.
# The preload library's handler layer is closed: preload/handler/ files
# include only handler/ headers, common.h and include/autoprof/ (no header of
# the session nor of the wrappers), and their objects refer to no symbol the
# session's or the wrappers' objects define (checked with nm).
. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
CC=${CC:-cc}
plan 12

# The folders whose names checks 6-10 hold to; in preload/wrap/ and
# preload/memlib/ (libautoprof-memory.so) the interposers' libc names are
# the one exception to check 8 (libc_name), with the two libraries' link
# (__autoprof_*, memory_link.h), memlib/cxx.c's C++ operator new and
# delete (_Zn*, _Zd*) and memlib/allocx.c's allocators' own entry points
# (jemalloc's mallocx, tcmalloc's tc_malloc...: those memlib.map exports).
NAMED="launcher common preload preload/session preload/handler preload/wrap preload/memlib"

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

# The .c and .h files of the folders $@ (not their subfolders).
files_in() {
	for _d in "$@"; do
		ls "$_d"/*.[ch] 2>/dev/null
	done
}

# 6. File sizes.
bad=$(wc -l $(files_in $NAMED) | awk '$2 != "total" && $1 > 600 { printf "%s (%d) ", $2, $1 }')
[ -z "$bad" ]
ok $? "no file of $NAMED over 600 lines${bad:+ ($bad)}"

# 7. Banners: the first comment (after the SPDX line) opens with "NAME - ".
bad=
for f in $(files_in $NAMED); do
	name=$(sed -n '1,5{/^\(\/\*\| \*\) *[A-Za-z0-9_.\/]* - /{s/^\(\/\*\| \*\) *\([A-Za-z0-9_.\/]*\) - .*/\2/p;q}}' "$f")
	[ "$name" = "$(basename "$f")" ] || bad="$bad $f(${name:-none})"
done
[ -z "$bad" ]
ok $? "each file of $NAMED opens with its own name${bad:+ (not:$bad)}"

# The functions object file $1 defines and exports (nm: T), one a line.
exported() {
	nm --defined-only "$1" | awk '$2 == "T" { print $3 }'
}
# The stand-ins: functions of the library (declared in a preload/ header)
# that a launcher file defines in the library's place, for the library code
# linked into the launcher (outside_agg.c's writer__append for
# handler/aggregate.c, perf_out.c's control__dir for session/file_machine.c).
grep -ohE '[A-Za-z_][A-Za-z0-9_]*\(' preload/*.h preload/*/*.h | tr -d '(' | sort -u >"$T/library_names"
stand_in() {
	case $f in preload/*) return 1 ;; esac # (the library's own are no stand-ins)
	grep -qxF "$1" "$T/library_names"
}
# libc's own names (and glibc's __ ones), which wrap/'s interposers export.
nm -D --defined-only "$(ldd "$B/libautoprof.so" | awk '/libc\.so/ { print $3 }')" 2>/dev/null |
	awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u >"$T/libc_names"
libc_name() {
	case $1 in __*) return 0 ;; esac
	grep -qxF "$1" "$T/libc_names"
}

# 8. Exported functions carry their file's name: FILE, FILE__*, FILEs__*.
bad=
for f in $(files_in $NAMED | grep '\.c$'); do
	o=$B/${f%.c}.o
	if [ ! -f "$o" ] || [ "$o" -ot "$f" ]; then
		bad="$bad $o(not built: make)"
		continue
	fi
	b=$(basename "$f" .c)
	for fn in $(exported "$o"); do
		case $fn in "$b" | "$b"__* | "$b"s__* | main) continue ;; esac
		case $f in preload/wrap/* | preload/memlib/*) libc_name "$fn" && continue ;; esac
		case $f:$fn in preload/memlib/cxx.c:_Zn[wa]* | preload/memlib/cxx.c:_Zd[la]*) continue ;; esac
		case $f in preload/memlib/allocx.c) grep -qx "[[:space:]]*$fn;" preload/memlib/memlib.map && continue ;; esac
		case $fn in __autoprof_*) continue ;; esac
		stand_in "$fn" || bad="$bad $f:$fn"
	done
done
[ -z "$bad" ]
ok $? "every function $NAMED export starts with its file's name${bad:+ (not:$bad)}"

# 9. A prefix (what comes before "__") of NAMED's folders is used in no other
# folder: "FOLDER FUNCTION" for every function each built object of the tree
# exports, then "FOLDER PREFIX" but for the launcher's stand-ins.
for f in $(git ls-files 'launcher/*.c' 'common/*.c' 'preload/*.c' 'report/*.c'); do
	o=$B/${f%.c}.o
	[ -f "$o" ] && exported "$o" | sed "s|^|$(dirname "$f") |"
done | awk 'NR == FNR { lib[$1] = 1; next }
	$2 !~ /^_/ && $2 ~ /__/ && !($1 !~ /^preload/ && lib[$2]) { sub(/__.*/, "", $2); print $1, $2 }' \
	"$T/library_names" - | sort -u >"$T/prefixes"
bad=$(for d in $NAMED; do
	awk -v d="$d" '$1 == d { print $2 }' "$T/prefixes" | while read -r p; do
		awk -v d="$d" -v p="$p" '$2 == p && $1 != d { printf "%s__ (%s, %s) ", p, d, $1 }' "$T/prefixes"
	done
done)
[ -z "$bad" ]
ok $? "no prefix of $NAMED is used in another folder${bad:+ ($bad)}"

# 10. Every file named in NAMED's files exists: in the tree (relative to the
# root, to the naming file, to include/, preload/ or report/; a bare name
# anywhere in the tree), in the system's headers, or in a foreign tree named
# as such (the kernel's tools/perf/, fs/...). Never outside the tree
# (../shared/...). Comments and strings only: c.map is a member, not a file.
cc_include=$($CC -print-file-name=include)
git ls-files | sed 's|.*/||' | sort -u >"$T/basenames"
bad=
for f in $(files_in $NAMED); do
	d=$(dirname "$f")
	# in comments and strings only (not a member access such as c.map)
	for r in $(perl -0777 -ne 'while (m{/\*(.*?)\*/|"((?:[^"\\\n]|\\.)*)"|//([^\n]*)}gs) { print(($1 // $2 // $3), "\n") }' "$f" |
		grep -ohE '(\.\./)*[A-Za-z0-9_][A-Za-z0-9_./-]*\.(c|h|md|sh|t|map|py|txt)\b' | sort -u); do
		case $r in
		*PID*) continue ;; # a pattern (/tmp/perf-PID.map), not a file
		../*)
			real=$(realpath -m "$d/$r")
			case $real in "$ROOT"/*) [ -e "$real" ] && continue ;; esac
			;;
		tools/perf/* | tools/lib/* | fs/* | kernel/* | mm/*) continue ;; # the kernel's tree
		*/*)
			for base in . "$d" include preload report /usr/include /usr/include/*-linux-gnu "$cc_include"; do
				[ -e "$base/$r" ] && continue 2
			done
			;;
		*)
			grep -qxF "$r" "$T/basenames" && continue
			ls /usr/include/"$r" /usr/include/*-linux-gnu/"$r" "$cc_include/$r" >/dev/null 2>&1 && continue
			;;
		esac
		bad="$bad $f:$r"
	done
done
[ -z "$bad" ]
ok $? "every file $NAMED name exists${bad:+ (not:$bad)}"

# 11. The handler includes only its own headers, common.h and include/autoprof/.
bad=
for f in preload/handler/*.c preload/handler/*.h; do
	for h in $(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f"); do
		case $h in autoprof/* | common.h) continue ;; esac
		[ -f "preload/handler/$h" ] || bad="$bad $f:$h"
	done
done
[ -z "$bad" ]
ok $? "handler/ includes no header of the session or the wrappers${bad:+ (in:$bad)}"

# 12. nm: the handler's objects refer to nothing the session or the wrappers
# define (libc's names excepted: an interposer binds them at run time, and
# the handler calls none of those; the call graph is in doc/design.md).
objs() { for _c in preload/"$1"/*.c; do _o=$B/${_c%.c}.o; [ -f "$_o" ] && printf '%s ' "$_o"; done; }
defined() { nm --defined-only $(objs "$1") 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRVWG]/ { print $3 }' | sort -u; }
nm -u $(objs handler) 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u >"$T/handler.u"
defined session >"$T/session.d"
nm --defined-only "$B/preload/entry.o" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRVWG]/ { print $3 }' >>"$T/session.d"
defined wrap >"$T/wrap.d"
up=$(sort "$T/session.d" | comm -12 "$T/handler.u" -)
wrap=$(comm -12 "$T/handler.u" "$T/wrap.d" | comm -23 - "$T/libc_names")
[ -n "$(objs handler)" ] && [ -s "$T/session.d" ] && [ -z "$up$wrap" ]
ok $? "handler/ objects refer to no symbol of the session or the wrappers${up:+ (session: $(echo $up))}${wrap:+ (wrap: $(echo $wrap))}"
done_testing
