#!/bin/sh
# Every variable the library, the launcher and autoprof-report read is in
# include/autoprof/env.h: AUTOPROF_* ones in the table, read through ap_env();
# others' in AUTOPROF_OTHER_ENV_TABLE. A static check of the sources.
. "$(dirname "$0")/lib.sh"
plan 4

ENV_H=$ROOT/include/autoprof/env.h
SRC="$ROOT/preload $ROOT/launcher $ROOT/report $ROOT/common"
table=$(sed -n 's/^[ \t]*X(\([A-Z_]*\),.*/AUTOPROF_\1/p' "$ENV_H" | sort -u)
others=$(sed -n 's/^[ \t]*Y("\([^"]*\)".*/\1/p' "$ENV_H" | tr ', ' '\n\n' | grep . | sort -u)

# getenv/secure_getenv of a literal name, as NAME FILE:LINE.
reads() {
	grep -rnoE '(secure_)?getenv\("[A-Za-z_0-9]+"\)' $SRC --include='*.c' --include='*.h' |
		sed 's/^\([^:]*:[0-9]*\):.*getenv("\([^"]*\)")/\2 \1/'
}

bare=$(reads | awk '$1 ~ /^AUTOPROF_/ { print $2 }' | sed "s#^$ROOT/##" | tr '\n' ' ')
is "$bare" "" "no AUTOPROF_* variable is read with a bare getenv (ap_env() reads the table's)"

unlisted=$(reads | while read -r name where; do
	case "$name" in AUTOPROF_*) continue ;; esac
	echo "$others" | grep -qx "$name" || echo "$name(${where#"$ROOT/"})"
done | tr '\n' ' ')
is "$unlisted" "" "every other variable read is listed in AUTOPROF_OTHER_ENV_TABLE"

# getenv through a variable name: only ap_env() itself and the places that
# read a name they were given (none today besides env.h).
indirect=$(grep -rnE '(secure_)?getenv\([^")]' $SRC --include='*.c' --include='*.h' |
	sed "s#^$ROOT/##" | cut -d: -f1,2 | tr '\n' ' ')
is "$indirect" "" "no getenv of a computed name outside env.h's accessor"

# Every AUTOPROF_* name the code spells in a string is a row of the table.
unknown=$(grep -rhoE '"AUTOPROF_[A-Z_]*[A-Z]' $SRC --include='*.c' --include='*.h' |
	sed 's/^"//' | sort -u | while read -r v; do
	echo "$table" | grep -qx "$v" || echo "$v"
done | tr '\n' ' ')
is "$unknown" "" "every AUTOPROF_* name in the code's strings is in env.h's table"
done_testing
