#!/bin/sh
# The manual keeps up with the code: doc/variables.md and the man page with the
# variable table, doc/install.md with the packages install-deps.sh installs, the
# README with CI's quick start and with every page of doc/, and every relative
# link and doc/ reference with the files it names.
. "$(dirname "$0")/lib.sh"
vars=$(sed -n 's/^[ \t]*X(\([A-Z_]*\),.*/\1/p' "$ROOT/include/autoprof/env.h")
plan 11
[ "$(echo "$vars" | wc -w)" -ge 20 ]
ok $? "env.h's table has its rows ($(echo "$vars" | wc -w)), as this test reads them"
missing=
for v in $vars; do grep -q "^| \`AUTOPROF_$v\` |" "$ROOT/doc/variables.md" || missing="$missing $v"; done
is "$missing" "" "doc/variables.md's table has a row for every AUTOPROF_* variable"
# Each program's manual names the variables it reads (env.h's who column).
missing=
for v in $vars; do
	man=autoprof
	grep -q "^[[:space:]]*X($v, *REPORT," "$ROOT/include/autoprof/env.h" && man=autoprof-report
	grep -q "AUTOPROF_$v" "$B/man/$man.1" || missing="$missing $v"
done
is "$missing" "" "the man pages name every AUTOPROF_* variable"
# CI (.ci/run -> scripts/fresh-root.sh) runs exactly these two lines of the README.
grep -q '^make demo' "$ROOT/README.md" && grep -q '^make check' "$ROOT/README.md"
ok $? "the README's quick start is make demo and make check"
# doc/install.md names exactly the packages scripts/install-deps.sh installs.
pkgs() { (eval "$(sed -n '/^build_pkgs=/,/^bench_pkgs=/p' "$ROOT/scripts/install-deps.sh" |
	grep -v '^#\|^bench_pkgs=')" && eval "echo \$$1") | tr ' \t' '\n\n' | grep . | sort | tr '\n' ' '; }
listed() { sed -n "s/.*<!-- $1 -->\(.*\)<!-- \/$1 -->.*/\1/p" "$ROOT/doc/install.md" | tr ' ' '\n' |
	grep . | sort | tr '\n' ' '; }
is "$(listed build-pkgs)" "$(pkgs build_pkgs)" "doc/install.md lists the build packages install-deps.sh installs"
build=$(pkgs build_pkgs)
only_test=$(for p in $(pkgs test_pkgs); do case " $build " in *" $p "*) ;; *) echo "$p" ;; esac; done |
	sort | tr '\n' ' ')
is "$(listed test-pkgs)" "$only_test" "doc/install.md lists the test packages (besides the build ones)"

# Every AUTOPROF_* name the programs' sources spell out (a getenv of the reader or the
# launcher, a variable the library sets) has a row too.
missing=
for v in $(cd "$ROOT" && grep -rhoE '"AUTOPROF_[A-Z0-9_]+' report launcher common preload include |
	tr -d '"' | sort -u); do
	grep -q "^| \`$v\` |" "$ROOT/doc/variables.md" || missing="$missing $v"
done
is "$missing" "" "doc/variables.md has a row for every AUTOPROF_* name in the sources"

# The README stays a front door: a page or two, linking every page of the manual.
lines=$(wc -l <"$ROOT/README.md")
[ "$lines" -le 250 ]
ok $? "the README is at most 250 lines ($lines)"
missing=
for f in "$ROOT"/doc/*.md; do
	grep -q "](doc/$(basename "$f"))" "$ROOT/README.md" || missing="$missing $(basename "$f")"
done
is "$missing" "" "the README links every page of doc/"

# Every relative markdown link in the README and doc/ names a file that exists,
# and a #fragment names a heading of that file (GitHub's anchors).
perl -e '
	use strict;
	my $bad = "";
	my %anchors;
	sub anchors {
		my ($f) = @_;
		return $anchors{$f} if $anchors{$f};
		my %a;
		open(my $h, "<", $f) or return {};
		my $code = 0;
		while (<$h>) {
			$code = !$code if /^\s*```/;
			next if $code || !/^#{1,6}\s+(.*?)\s*#*\s*$/;
			my $s = lc $1;
			$s =~ s/[^a-z0-9 _-]//g;
			$s =~ s/ /-/g;
			my $n = $s;
			my $i = 0;
			$n = $s . "-" . ++$i while $a{$n};
			$a{$n} = 1;
		}
		return $anchors{$f} = \%a;
	}
	for my $f (@ARGV) {
		(my $dir = $f) =~ s{/[^/]*$}{};
		open(my $h, "<", $f) or die "$f: $!";
		my $code = 0;
		while (my $l = <$h>) {
			$code = !$code if $l =~ /^\s*```/;
			next if $code;
			$l =~ s/`[^`]*`//g;
			while ($l =~ /\]\(([^)\s]+)\)/g) {
				my $t = $1;
				next if $t =~ m{^[a-z]+:};
				my ($p, $frag) = split /#/, $t, 2;
				my $target = $p eq "" ? $f : "$dir/$p";
				if (!-e $target) { $bad .= " $f:$.:$t"; next; }
				next unless defined $frag && $target =~ /\.md$/;
				$bad .= " $f:$.:$t" unless anchors($target)->{$frag};
			}
		}
	}
	print "$bad\n";
' "$ROOT/README.md" "$ROOT"/doc/*.md >links.out
is "$(cat links.out)" "" "every relative link in README.md and doc/*.md resolves (file and #anchor)"

# A doc/NAME.md named anywhere in the tree (code, tests, scripts, pages) exists.
missing=
for d in $(cd "$ROOT" && git ls-files 2>/dev/null | grep -v '^tests/fuzz/\|^tests/outside/' |
	xargs grep -ho 'doc/[a-z0-9][a-z0-9_-]*\.md' 2>/dev/null | sort -u); do
	[ -f "$ROOT/$d" ] || missing="$missing $d"
done
is "$missing" "" "every doc/*.md the tree refers to exists"
done_testing
