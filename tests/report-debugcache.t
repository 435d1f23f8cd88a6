#!/bin/sh
# report-debugcache.t - the unpacked copies of compressed debug files
# (report/model/debugcache.c): the first report that reads a compressed debug
# file's lines and inlined functions keeps an unpacked copy under
# $XDG_CACHE_HOME/autoprof/debug/<build id>; later reports read the copy. Every
# view that shows inlined frames or source lines is byte for byte the same with
# no copy yet, with the copy, and with AUTOPROF_REPORT_NO_DEBUG_CACHE=1; a
# truncated, foreign, garbage or older-version copy is not used and is written
# again; a cache folder that cannot be made changes nothing and says nothing;
# two reports writing the copy at once both print the same and leave one whole
# copy; the folder is kept under 1 GiB, the copies used longest ago removed. Objects: a test program whose separate debug file is compressed
# (objcopy --compress-debug-sections, found with --debug-dir), and libc when
# its debug file is (Debian's libc6-dbg).
#
# Run from the repository root after `make` (needs build/progs/inlined).
. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$B/progs/inlined" "$LIB" "$B/progs/demo"
ASAN_REPORT=$B/asan/autoprof-report

# the program: stripped, its debug file compressed, in a build-id folder
cp "$B/progs/inlined" prog
objcopy --only-keep-debug --compress-debug-sections=zlib prog prog.debug
objcopy --strip-all --add-gnu-debuglink=prog.debug prog
bid=$(readelf -n prog | awk '/Build ID/ { print $3 }')
b2=$(echo "$bid" | cut -c1-2)
mkdir -p dbg/.build-id/"$b2"
mv prog.debug dbg/.build-id/"$b2"/$(echo "$bid" | cut -c3-).debug
if ! readelf -SW dbg/.build-id/"$b2"/*.debug 2>/dev/null | grep -q '\.debug_info .* C '; then
	echo "1..0 # SKIP objcopy --compress-debug-sections did not compress .debug_info"
	exit 0
fi
timeout -s KILL 60 perf record -q -e cpu-clock -o p.data ./prog 20 >/dev/null 2>&1 ||
	AUTOPROF_OUTPUT=p.data LD_PRELOAD=$LIB timeout -s KILL 60 ./prog 20 >/dev/null 2>&1
# libc: a demo run, when libc's debug file is compressed
lbid=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ { print $3 }')
ldbg=/usr/lib/debug/.build-id/$(echo "$lbid" | cut -c1-2)/$(echo "$lbid" | cut -c3-).debug
libc=
if [ -n "$lbid" ] && readelf -SW "$ldbg" 2>/dev/null | grep -q '\.debug_info .* C '; then
	libc=yes
	AUTOPROF_OUTPUT=l.data LD_PRELOAD=$LIB timeout -s KILL 60 "$B/progs/demo" 0.3 >/dev/null 2>&1
fi

plan 24

# views FILE OUT: the views that show inlined frames and source lines, stdout and stderr
views() {
	_o=$1
	[ "$_o" = p.data ] && _o="--debug-dir $T/dbg $_o"
	{
		timeout -s KILL 60 "$REPORT" $_o
		timeout -s KILL 60 "$REPORT" --lines --no-children $_o
		timeout -s KILL 60 "$REPORT" --hot-lines 8 -n 30 $_o
		timeout -s KILL 60 "$REPORT" -s sym,srcline -n 60 $_o
		timeout -s KILL 60 "$REPORT" --tree --min-percent 0 $_o
		timeout -s KILL 60 "$REPORT" --folded $_o
		timeout -s KILL 60 "$REPORT" --json --lines $_o
		timeout -s KILL 60 "$REPORT" --no-inline --lines $_o
	} >"$2" 2>&1
}

# both FILE... : the views of the program's file, then libc's (when there)
both() {
	XDG_CACHE_HOME=$1 views p.data "$2.p"
	[ -z "$libc" ] || XDG_CACHE_HOME=$1 views l.data "$2.l"
}

# same A B MESSAGE: both files' views are the same
same() {
	same_views "$1.p" "$2.p" "$3 (program)"
	if [ -n "$libc" ]; then
		same_views "$1.l" "$2.l" "$3 (libc)"
	else
		skip "libc's debug file is not compressed here"
	fi
}

# whole DIR ID: the copy of ID in DIR is whole: an ELF of that build id
whole() { [ -s "$1/autoprof/debug/$2" ] && readelf -n "$1/autoprof/debug/$2" 2>/dev/null | grep -q "$2"; }

AUTOPROF_REPORT_NO_DEBUG_CACHE=1 both "$T/off" off
[ ! -e "$T/off/autoprof/debug" ]
ok $? "AUTOPROF_REPORT_NO_DEBUG_CACHE=1: no copy is written"
grep -q 'mix' off.p && grep -q 'inlined.c:' off.p
ok $? "the program's views show its inlined function and source lines"

both "$T/c" cold
whole "$T/c" "$bid" && { [ -z "$libc" ] || whole "$T/c" "$lbid"; }
ok $? "the first report keeps an unpacked copy per build id under \$XDG_CACHE_HOME/autoprof/debug"
[ -s "$T/c/autoprof/debug/$bid" ] &&
	! readelf -SW "$T/c/autoprof/debug/$bid" 2>/dev/null | grep -q '\.debug_info .* C '
ok $? "the copy's .debug_info is not compressed"
same off cold "no copy yet: every view as without the cache"
both "$T/c" warm
same off warm "with the copy: every view the same"
if command -v strace >/dev/null 2>&1; then
	XDG_CACHE_HOME=$T/c timeout -s KILL 60 strace -f -e trace=openat,rename,renameat,renameat2 -o trace.out "$REPORT" --debug-dir "$T/dbg" p.data \
		>/dev/null 2>&1
	# (relative to the checked folder's descriptor, without following a link)
	grep -q "openat([0-9]*, \"$bid\", O_RDONLY.*O_NOFOLLOW.*= [0-9]" trace.out &&
		! grep -q rename trace.out
	ok $? "a later report opens the copy (and does not write it again)"
else
	skip "strace is not installed"
fi

# damaged copies: not used, written again
cp "$T/c/autoprof/debug/$bid" good
size=$(wc -c <good)
damage() {
	case $1 in
	truncated) head -c $((size / 2)) good >"$T/c/autoprof/debug/$bid" ;;
	garbage) head -c "$size" /dev/urandom >"$T/c/autoprof/debug/$bid" ;;
	foreign) cp /bin/true "$T/c/autoprof/debug/$bid" ;;
	version)
		# the header section's version (the u64 after the magic) made 99
		off=$(grep -obUa 'APDBGC' good | head -n 1 | cut -d: -f1)
		cp good "$T/c/autoprof/debug/$bid"
		printf 'c' | dd of="$T/c/autoprof/debug/$bid" bs=1 seek=$((off + 8)) conv=notrunc 2>/dev/null
		;;
	esac
}
bad=
for how in truncated garbage foreign version; do
	damage $how
	XDG_CACHE_HOME=$T/c views p.data dmg.p
	cmp -s off.p dmg.p || bad="$bad $how(views)"
	cmp -s good "$T/c/autoprof/debug/$bid" || bad="$bad $how(not rewritten)"
done
is "$bad" "" "a truncated, garbage, foreign or older-version copy: same views, copy written again"

# a cache folder that cannot be made: the views as before, nothing on stderr
: >afile
both "$T/afile" unwritable
same off unwritable "an unwritable cache folder: every view the same, no message"

# two reports at once, no copy yet: both print the same, a whole copy, no temporary file left
XDG_CACHE_HOME=$T/two views p.data two1.p &
pid=$!
XDG_CACHE_HOME=$T/two views p.data two2.p
wait $pid
cmp -s off.p two1.p && cmp -s off.p two2.p && whole "$T/two" "$bid" &&
	[ -z "$(ls "$T/two/autoprof/debug" | grep '\.')" ]
ok $? "two reports writing the copy at once: the same views, a whole copy, no temporary file"

# the folder's bound (1 GiB): a copy used two hours ago of 1 GiB (sparse) goes to make
# room, as does a temporary file a reader left an hour ago; the new copy is written
mkdir -p pr/autoprof/debug
truncate -s 1G pr/autoprof/debug/00112233445566778899aabbccddeeff00112233
: >pr/autoprof/debug/00112233445566778899aabbccddeeff00112233.AbCdEf
touch -d '2 hours ago' pr/autoprof/debug/*
XDG_CACHE_HOME=$T/pr timeout -s KILL 60 "$REPORT" --debug-dir "$T/dbg" p.data >/dev/null 2>&1
[ ! -e pr/autoprof/debug/00112233445566778899aabbccddeeff00112233 ] &&
	[ ! -e pr/autoprof/debug/00112233445566778899aabbccddeeff00112233.AbCdEf ] && whole "$T/pr" "$bid"
ok $? "the folder is kept under 1 GiB: the copy used longest ago and a stale temporary file removed"

# a compressed debug file without .debug_aranges (libdw opens it whole): the copy too
mkdir -p noar/.build-id/"$b2"
objcopy --remove-section .debug_aranges dbg/.build-id/"$b2"/*.debug noar/.build-id/"$b2"/$(echo "$bid" | cut -c3-).debug
noar() { XDG_CACHE_HOME=$T/n timeout -s KILL 60 "$REPORT" --debug-dir "$T/noar" --lines -s sym,srcline p.data 2>&1; }
AUTOPROF_REPORT_NO_DEBUG_CACHE=1 noar >noar.off
noar >noar.cold
noar >noar.warm
whole "$T/n" "$bid" && cmp -s noar.off noar.cold && cmp -s noar.off noar.warm
ok $? "no .debug_aranges: a copy is kept, the views the same off, cold and warm"

# trust: a copy is read only from folders of this user that no one else may
# write, only when it is a file of this user, never through a symbolic link.
# A forged copy: the good one with the source file's name changed.
lines() { XDG_CACHE_HOME=$1 timeout -s KILL 60 "$REPORT" --debug-dir "$T/dbg" --lines -s sym,srcline p.data 2>&1; }
AUTOPROF_REPORT_NO_DEBUG_CACHE=1 lines "$T/none" >lines.off
perl -0777 -pe 's/inlined\.c/FORGED.cc/g' good >forged
cp forged forged.orig
# untouched DIR: the forged copy was not read (views as without the cache)
untouched() {
	lines "$1" >lines.out
	cmp -s lines.off lines.out && cmp -s forged forged.orig ||
		{ diff lines.off lines.out | head -5 | sed 's/^/# /'; false; }
}
mkdir -p sl/autoprof/debug
ln -s "$T/forged" sl/autoprof/debug/"$bid"
untouched "$T/sl" && [ -f sl/autoprof/debug/"$bid" ] && [ ! -L sl/autoprof/debug/"$bid" ] &&
	cmp -s good sl/autoprof/debug/"$bid"
ok $? "a copy named by a symbolic link is not read: a copy of our own is written in its place"
mkdir -p ww/autoprof/debug
chmod 777 ww/autoprof/debug
cp forged ww/autoprof/debug/"$bid"
untouched "$T/ww" && cmp -s forged ww/autoprof/debug/"$bid" && [ "$(ls ww/autoprof/debug)" = "$bid" ]
ok $? "a cache folder others may write (mode 777): its copy not read, nothing written there"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p no/autoprof/debug
	cp forged no/autoprof/debug/"$bid"
	chown nobody no/autoprof/debug/"$bid"
	untouched "$T/no" && cmp -s good no/autoprof/debug/"$bid" &&
		[ "$(stat -c %u no/autoprof/debug/"$bid")" = 0 ]
	ok $? "a copy owned by another user is not read: a copy of our own is written in its place"
	bad=
	for who in autoprof autoprof/debug; do
		rm -rf nf && mkdir -p nf/autoprof/debug
		cp forged nf/autoprof/debug/"$bid"
		chown nobody nf/$who
		untouched "$T/nf" || bad="$bad $who"
		cmp -s forged nf/autoprof/debug/"$bid" || bad="$bad $who(written)"
	done
	is "$bad" "" "a cache folder owned by another user (autoprof/ or debug/): its copy not read, not written"
	# the reviewer's case: a shared folder of nobody's, mode 777, a link to nobody's forged copy
	mkdir -p shared/autoprof/debug
	cp forged nobodys
	chown nobody nobodys shared/autoprof shared/autoprof/debug
	chmod 777 shared/autoprof/debug
	ln -s "$T/nobodys" shared/autoprof/debug/"$bid"
	lines "$T/shared" >lines.out
	! grep -q FORGED lines.out && cmp -s lines.off lines.out
	ok $? "a shared folder of another user's with a link to a forged copy: FORGED.cc is not shown"
else
	skip "not root: no file of another user to make"
	skip "not root: no folder of another user to make"
	skip "not root: no folder of another user to make"
fi

# damaged section headers: the copy's section set (names, types, sizes) must be
# the compressed file's, its layout (ELF header, section headers, section
# names) what was written: else it is rewritten, never used
mkdir -p sh/autoprof/debug
copy=sh/autoprof/debug/$bid
shoff=$(readelf -hW good | awk '/Start of section headers/ { print $5 }')
shnum=$(readelf -hW good | awk '/Number of section headers/ { print $5 }')
shent=$(readelf -hW good | awk '/Size of section headers/ { print $5 }')
# sect NAME FIELD: field FIELD of section NAME in the good copy (1 index, 5 offset, 6 size)
sect() { readelf -SW good | sed -n 's/^ *\[ *\([0-9]*\)\] */\1 /p' | awk -v n="$1" '$2 == n { print $'"$2"' }'; }
ar=$(sect .debug_aranges 1)
strtab="$((0x$(sect .shstrtab 5))) $((0x$(sect .shstrtab 6)))"
# poke OFF: byte OFF of the copy made another (the good copy's plus 1..255)
poke() {
	_v=$(od -An -tu1 -j "$1" -N1 good | tr -d ' ')
	_v=$(((_v + $2) % 256))
	cp good "$copy"
	printf "\\$(printf %03o "$_v")" | dd of="$copy" bs=1 seek="$1" conv=notrunc 2>/dev/null
}
poke $((shoff + ar * shent)) 1
cmp -s good "$copy" && skip "no .debug_aranges in the copy" || {
	lines "$T/sh" >lines.out
	cmp -s lines.off lines.out && cmp -s good "$copy"
	ok $? ".debug_aranges's name changed in the section headers: copy rewritten, views the same"
}
# 30 bytes chosen at random (a fixed seed) in the ELF header, the section
# header table and the section names
bad=
for pv in $(awk -v a="$shoff" -v n="$((shnum * shent))" -v s="$strtab" 'BEGIN {
	srand(12); split(s, st, " ")
	for (i = 0; i < 30; i++) {
		r = rand()
		if (r < 0.2) o = int(rand() * 64)
		else if (r < 0.8) o = a + int(rand() * n)
		else o = st[1] + int(rand() * st[2])
		printf "%d:%d\n", o, 1 + int(rand() * 255)
	}
}'); do
	poke "${pv%:*}" "${pv#*:}"
	lines "$T/sh" >lines.out
	cmp -s lines.off lines.out || bad="$bad $pv(views)"
	cmp -s good "$copy" || bad="$bad $pv(not rewritten)"
done
is "$bad" "" "30 random bytes changed in the headers and section names: each copy rewritten, views the same"

# a compressed debug file whose .debug_aranges holds no range (a set with only
# its terminator): the sanitizer build reads it without complaint
if [ -x "$ASAN_REPORT" ]; then
	mkdir -p ea/.build-id/"$b2"
	objcopy --decompress-debug-sections dbg/.build-id/"$b2"/*.debug plain.debug
	printf '\034\000\000\000\002\000\000\000\000\000\010\000\000\000\000\000' >ar.bin
	printf '\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >>ar.bin
	objcopy --update-section .debug_aranges=ar.bin plain.debug empty.debug
	objcopy --compress-debug-sections=zlib empty.debug ea/.build-id/"$b2"/$(echo "$bid" | cut -c3-).debug
	ea() { XDG_CACHE_HOME=$T/e timeout -s KILL 60 "$1" --debug-dir "$T/ea" --lines -s sym,srcline p.data; }
	AUTOPROF_REPORT_NO_DEBUG_CACHE=1 ea "$REPORT" >ea.want 2>&1
	ea "$ASAN_REPORT" >ea.got 2>ea.err
	st=$?
	[ $st -eq 0 ] && [ ! -s ea.err ] && cmp -s ea.want ea.got
	ok $? "no range in .debug_aranges: the ASan/UBSan report exits 0, says nothing, prints the same"
	[ $st -eq 0 ] && [ ! -s ea.err ] || diag_file ea.err
else
	skip "no build/asan/autoprof-report"
fi

# the copy is a plain ELF file that readers other than ours take (eu-readelf)
if command -v eu-readelf >/dev/null 2>&1; then
	# (it may complain of the location lists, which a copy leaves out)
	timeout -s KILL 60 eu-readelf --debug-dump=info "$T/c/autoprof/debug/$bid" >dump.out 2>&1
	grep -q 'inlined_subroutine' dump.out
	ok $? "eu-readelf reads the copy's DWARF"
else
	skip "eu-readelf is not installed"
fi
done_testing
