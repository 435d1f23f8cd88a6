#!/bin/sh
# format.t - every C and C++ file of the project is as clang-format (.clang-format) lays it out.
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
files=$(git ls-files '*.c' '*.h' '*.cc' '*.cpp' 2>/dev/null)
if [ -z "$files" ]; then
	echo "1..0 # SKIP not a git checkout: no list of the project's files"
	exit 0
fi
plan 1
bad=$(for f in $files; do clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
is "$bad" "" "clang-format finds nothing to change (make format fixes it)"
done_testing
