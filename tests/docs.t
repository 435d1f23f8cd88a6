#!/bin/sh
# The README and the man page keep up with the variable table.
. "$(dirname "$0")/lib.sh"
vars=$(sed -n 's/^[ \t]*X(\([A-Z_]*\),.*/\1/p' "$ROOT/include/autoprof/env.h")
plan 5
missing=
for v in $vars; do grep -q "| \`AUTOPROF_$v\` |" "$ROOT/README.md" || missing="$missing $v"; done
is "$missing" "" "the README's table has a row for every AUTOPROF_* variable"
# Each program's manual names the variables it reads (env.h's who column).
missing=
for v in $vars; do
	man=autoprof
	grep -q "^[[:space:]]*X($v, *REPORT," "$ROOT/include/autoprof/env.h" && man=autoprof-report
	grep -q "AUTOPROF_$v" "$B/man/$man.1" || missing="$missing $v"
done
is "$missing" "" "the man pages name every AUTOPROF_* variable"
grep -q '^make demo' "$ROOT/README.md" && grep -q '^make check' "$ROOT/README.md"
ok $? "the quick start is make demo and make check"
# The quick start names exactly the packages scripts/install-deps.sh installs.
pkgs() { (eval "$(sed -n '/^build_pkgs=/,/^bench_pkgs=/p' "$ROOT/scripts/install-deps.sh" |
	grep -v '^#\|^bench_pkgs=')" && eval "echo \$$1") | tr ' \t' '\n\n' | grep . | sort | tr '\n' ' '; }
readme() { sed -n "s/.*<!-- $1 -->\(.*\)<!-- \/$1 -->.*/\1/p" "$ROOT/README.md" | tr ' ' '\n' |
	grep . | sort | tr '\n' ' '; }
is "$(readme build-pkgs)" "$(pkgs build_pkgs)" "the README lists the build packages install-deps.sh installs"
build=$(pkgs build_pkgs)
only_test=$(for p in $(pkgs test_pkgs); do case " $build " in *" $p "*) ;; *) echo "$p" ;; esac; done |
	sort | tr '\n' ' ')
is "$(readme test-pkgs)" "$only_test" "the README lists the test packages (besides the build ones)"
done_testing
