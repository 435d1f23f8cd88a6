#!/bin/bash
# fresh-root.sh - run the README's quick start (`make demo`, `make check`) the way a new
# user would: in a bare Debian 12 root with nothing but build-essential, git and
# ca-certificates, on a clone of this checkout. CI runs this (.ci/run), so a package
# installed by hand on a developer's machine can never hide a missing install step.
#
#   scripts/fresh-root.sh [--dir PATH]... [--twice] [--new-base] [--keep]
#
#   --dir PATH    where the clone goes inside the root (default /root/p); repeat it to
#                 run the quick start in several places, each in a root of its own
#   --twice       run `make check` a second time in the same clone (the second run of a
#                 user who types it again)
#   --new-base    debootstrap the base root again instead of using the cached one
#   --keep        leave the last root mounted for a look (prints where)
#
# The base root (debootstrap --variant=minbase bookworm, from the archive this machine's
# apt uses, with the same apt sources) is made once and cached in $AUTOPROF_FRESH
# (default /var/tmp/autoprof-fresh); it is never written to: each run gets an overlay of
# it, so every run starts from the bare root and installs every package itself. Only the
# downloaded .deb files are kept between runs (apt's archive cache), to save the network.
# Needs root (debootstrap, chroot, mounts). Exit status 0 only when every command passed.
set -euo pipefail

STATE=${AUTOPROF_FRESH:-/var/tmp/autoprof-fresh}
BASE=$STATE/base
PROJ=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
dirs=()
twice=0
new_base=0
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--dir) dirs+=("$2"); shift ;;
	--twice) twice=1 ;;
	--new-base) new_base=1 ;;
	--keep) keep=1 ;;
	*) echo "usage: $0 [--dir PATH]... [--twice] [--new-base] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
[ ${#dirs[@]} -gt 0 ] || dirs=(/root/p)
[ "$(id -u)" -eq 0 ] || { echo "fresh-root: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

say() { printf 'fresh-root: %s\n' "$*"; }
elapsed() { echo $((SECONDS - $1))s; }

# The archive this machine's apt uses (deb822 sources first, then sources.list).
mirror() {
	local m
	m=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian}"
}

make_base() {
	local t0=$SECONDS tmp=$STATE/base.new
	command -v debootstrap >/dev/null || {
		say "installing debootstrap"
		apt-get install -y -q debootstrap >/dev/null 2>&1 ||
			{ apt-get update -qq && apt-get install -y -q debootstrap >/dev/null; }
	}
	rm -rf "$tmp"
	mkdir -p "$STATE"
	say "debootstrap bookworm from $(mirror) (once; cached in $BASE)"
	if ! debootstrap --variant=minbase --include=build-essential,git,ca-certificates \
		bookworm "$tmp" "$(mirror)" >"$STATE/debootstrap.log" 2>&1; then
		tail -n 5 "$STATE/debootstrap.log" >&2
		say "debootstrap failed (log: $STATE/debootstrap.log)"
		exit 2
	fi
	# The same apt sources as this machine (a Debian 12 install has updates and security).
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		cp /etc/apt/sources.list.d/debian.sources "$tmp/etc/apt/sources.list.d/"
		: >"$tmp/etc/apt/sources.list"
	elif [ -f /etc/apt/sources.list ]; then
		cp /etc/apt/sources.list "$tmp/etc/apt/sources.list"
	fi
	rm -rf "$tmp/var/cache/apt/archives"/*.deb
	rm -rf "$BASE"
	mv "$tmp" "$BASE"
	say "base root made in $(elapsed "$t0")"
}

root=
cleanup() {
	[ -n "$root" ] || return 0
	umount -R "$root/merged" 2>/dev/null || umount -l "$root/merged" 2>/dev/null || true
	rm -rf "$root"
	root=
}
trap cleanup EXIT

# new_root: an overlay over the base root, with /proc, /sys, /dev and apt's archive cache.
new_root() {
	root=$(mktemp -d "$STATE/run.XXXXXX")
	mkdir -p "$root/upper" "$root/work" "$root/merged" "$STATE/apt-archives/partial"
	mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$root/upper,workdir=$root/work" \
		"$root/merged"
	mount -t proc proc "$root/merged/proc"
	mount --rbind /sys "$root/merged/sys"
	mount --rbind /dev "$root/merged/dev"
	mount --bind "$STATE/apt-archives" "$root/merged/var/cache/apt/archives"
	cp /etc/resolv.conf "$root/merged/etc/resolv.conf" 2>/dev/null || true
	# The network as this machine reaches it: the CAs it adds (a sandbox's egress
	# proxy signs with one) belong to the machine, not to the project, so a fresh
	# root of this machine trusts them too; npm is told to use the system's CAs.
	if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
		mkdir -p "$root/merged/usr/local/share/ca-certificates"
		cp /usr/local/share/ca-certificates/*.crt "$root/merged/usr/local/share/ca-certificates/"
		chroot "$root/merged" update-ca-certificates >/dev/null 2>&1 || true
		printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$root/merged/etc/npmrc"
	fi
}

# in_root DIR LOG COMMAND: run COMMAND in DIR inside the root, with a login's environment.
in_root() {
	chroot "$root/merged" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd '$1' && $3" >"$2" 2>&1
}

# report NAME LOG STATUS T0: one line, and what failed.
report() {
	local name=$1 log=$2 st=$3 t0=$4
	grep -E '^(Files=|Result:)' "$log" | sed 's/^/  /' || true
	if [ "$st" -eq 0 ]; then
		say "$name passed in $(elapsed "$t0")"
	else
		grep -E '^(not ok|# |Failed|  Failed|tests/.*\(Wstat)' "$log" | head -n 60 | sed 's/^/  /' || true
		tail -n 25 "$log" | sed 's/^/  | /'
		say "$name FAILED (status $st) after $(elapsed "$t0"); log: $log"
	fi
}

[ "$new_base" -eq 0 ] && [ -x "$BASE/usr/bin/make" ] || make_base
logs=$STATE/logs
mkdir -p "$logs"
fail=0
for dir in "${dirs[@]}"; do
	t0=$SECONDS
	new_root
	mkdir -p "$root/merged$(dirname "$dir")"
	git clone -q "$PROJ" "$root/merged$dir"
	say "clone of $(git -C "$PROJ" rev-parse --short HEAD) in $dir (a new root)"
	tag=$(echo "$dir" | tr / _)
	set +e
	in_root "$dir" "$logs/demo$tag.log" "make demo"
	st=$?
	report "make demo in $dir" "$logs/demo$tag.log" $st $t0
	[ $st -eq 0 ] || fail=1
	t1=$SECONDS
	in_root "$dir" "$logs/check$tag.log" "make check"
	st=$?
	report "make check in $dir" "$logs/check$tag.log" $st $t1
	[ $st -eq 0 ] || fail=1
	if [ "$twice" -eq 1 ]; then
		t1=$SECONDS
		in_root "$dir" "$logs/check2$tag.log" "make check"
		st=$?
		report "make check again in $dir" "$logs/check2$tag.log" $st $t1
		[ $st -eq 0 ] || fail=1
	fi
	set -e
	if [ "$keep" -eq 1 ]; then
		say "root kept at $root/merged (umount -R it, then rm -rf $root)"
		trap - EXIT
	else
		cleanup
	fi
done
exit $fail
