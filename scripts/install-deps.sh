#!/bin/sh
# install-deps.sh [build|test|bench] - install the Debian packages autoprof needs.
#
# Does nothing (and asks nothing of apt) when every package is already there,
# so the Makefile can call it on every build. Needs root only when something
# is missing; otherwise it says exactly which packages to install.
set -eu

build_pkgs="gcc make libc6-dev libunwind-dev libelf-dev libdw-dev libdebuginfod-dev libzstd-dev libiberty-dev libpfm4-dev pkg-config zlib1g-dev"
# libc6-dbg names glibc's local functions (start_thread, __libc_start_call_main) in
# stacks; strace counts the library's system calls in preload-basic.t; clang-format
# checks the layout of the sources (format.t); g++, golang-go,
# rustc, nodejs and a JDK build and run the hostile programs (tests/hostile.t);
# man-db renders the generated manual pages (manual.t);
# chromium draws the flame graphs in report-flame.t (headless, tests/browser/);
# npm fetches speedscope and python3-jsonschema checks its schema (report-exports.t);
# musl-tools builds the musl-static program outside.t profiles from outside;
# gdb, lldb and valgrind run profiled programs under a debugger (signals-load.t);
# debuginfod serves a debug file to the reader in report-debuginfo.t;
# tmux is the real terminal autoprof top is driven in (top.t);
# libjemalloc2, libtcmalloc-minimal4 and libgoogle-perftools4 (the full tcmalloc) are the
# allocators memory.t, memory-cxx-alloc.t and memory-allocx.t link programs with.
test_pkgs="$build_pkgs perl linux-perf hotspot python3 xz-utils coreutils clang libclang-rt-14-dev
	libc6-dbg strace clang-format g++ golang-go rustc nodejs openjdk-17-jdk-headless
	npm python3-jsonschema chromium man-db musl-tools gdb lldb valgrind debuginfod tmux
	libjemalloc2 libtcmalloc-minimal4 libgoogle-perftools4"
bench_pkgs="$test_pkgs google-perftools hyperfine time heaptrack"

case "${1:-build}" in
build) want=$build_pkgs ;;
test) want=$test_pkgs ;;
bench) want=$bench_pkgs ;;
*) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac

missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
# A package that an installed one provides counts as there (NodeSource's nodejs
# provides and conflicts with npm): asking apt for it would remove its provider.
provided=$(dpkg-query -W -f='${Status}\t${Provides}\n' 2>/dev/null |
	sed -n 's/^install ok installed\t//p' | tr ',' '\n' | sed 's/ *(.*//; s/^ *//')
still=
for p in $missing; do
	printf '%s\n' "$provided" | grep -qx "$p" || still="$still $p"
done
missing=$still
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "autoprof: missing Debian packages:$missing (run: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "autoprof: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	rm -f "$log"
	echo "autoprof: apt-get failed to install$missing" >&2
	exit 1
fi
rm -f "$log"
