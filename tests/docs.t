#!/bin/sh
# The README and the man page keep up with the variable table.
. "$(dirname "$0")/lib.sh"
vars=$(sed -n 's/^[ \t]*X(\([A-Z_]*\),.*/\1/p' "$ROOT/include/autoprof/env.h")
plan 3
missing=
for v in $vars; do grep -q "| \`AUTOPROF_$v\` |" "$ROOT/README.md" || missing="$missing $v"; done
is "$missing" "" "the README's table has a row for every AUTOPROF_* variable"
missing=
for v in $vars; do grep -q "AUTOPROF_$v" "$ROOT/doc/autoprof.1" || missing="$missing $v"; done
is "$missing" "" "the man page names every AUTOPROF_* variable"
grep -q '^make demo' "$ROOT/README.md" && grep -q '^make check' "$ROOT/README.md"
ok $? "the quick start is make demo and make check"
done_testing
