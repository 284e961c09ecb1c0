#!/bin/sh
# aarch64_node.sh BASE: Debian 12's node for arm64 (nodejs, libnode108 with
# V8's postmortem metadata in its dynamic symbols, the libraries it loads
# and the JavaScript modules node loads at start) unpacked into the sysroot
# BASE/root, for tests/t_node_aarch64.sh to run under qemu-aarch64 and read
# with --sysroot.  Nothing is installed on the machine: apt-get reads
# bookworm's arm64 package lists (deb.debian.org) into a state of its own
# under BASE and downloads the packages there; dpkg -x unpacks them.  Done
# once (root/.complete); on a failure prints the reason on stderr, exits 1.
set -u
[ $# -eq 1 ] || { echo "usage: aarch64_node.sh BASE" >&2; exit 2; }
mkdir -p "$1" && dir=$(cd "$1" && pwd) || exit 1
root=$dir/root
[ -f "$root/.complete" ] && exit 0
PKGS="nodejs libnode108 libc6 libgcc-s1 libstdc++6 libbrotli1 libc-ares2 libicu72 libnghttp2-14 libssl3
	libuv1 zlib1g node-acorn node-cjs-module-lexer node-undici"
state=$dir/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$dir/debs" || exit 1
: >"$state/status"
printf '%s\n' "deb http://deb.debian.org/debian bookworm main" \
	"deb http://deb.debian.org/debian-security bookworm-security main" >"$state/sources.list"
set -- -q -o Dir::State="$state" -o Dir::State::Lists=lists -o Dir::State::status="$state/status" \
	-o Dir::Cache="$state/cache" -o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=- \
	-o APT::Architecture=arm64 -o APT::Architectures::=arm64
log=$dir/apt.log
if ! apt-get "$@" update >"$log" 2>&1; then
	echo "apt-get update for bookworm arm64 failed: $(tail -1 "$log")" >&2; exit 1
fi
# shellcheck disable=SC2086
if ! (cd "$dir/debs" && rm -f ./*.deb && apt-get "$@" download $PKGS) >>"$log" 2>&1; then
	echo "apt-get download of bookworm's arm64 $PKGS failed: $(grep -E '^E:' "$log" | tail -1)" >&2; exit 1
fi
rm -rf "$root" && mkdir -p "$root" || exit 1
for deb in "$dir"/debs/*.deb; do
	dpkg -x "$deb" "$root" || { echo "dpkg -x $deb failed" >&2; exit 1; }
done
[ -x "$root/usr/bin/node" ] || { echo "no usr/bin/node in bookworm's arm64 nodejs" >&2; exit 1; }
touch "$root/.complete"
