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
. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
CC=${CC:-cc}
plan 5

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
done_testing
