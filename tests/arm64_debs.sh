#!/bin/sh
# arm64_debs.sh DIR SUITE PROGRAM PACKAGE...: Debian SUITE's arm64 PACKAGEs
# unpacked into the sysroot DIR/root, for a test to run under qemu-aarch64
# and read with --sysroot; PROGRAM (a path under the root) must be there
# after.  Nothing is installed on the machine: apt-get reads the suite's
# arm64 package lists (deb.debian.org, and its security suite where there
# is one) into a state of its own under DIR and downloads the packages
# there; dpkg -x unpacks them.  Done once (root/.complete); on a failure
# prints the reason on stderr and exits 1.
[ $# -ge 4 ] || { echo "usage: arm64_debs.sh DIR SUITE PROGRAM PACKAGE..." >&2; exit 2; }
mkdir -p "$1" && dir=$(cd "$1" && pwd) || exit 1
suite=$2 program=$3
shift 3
root=$dir/root
[ -f "$root/.complete" ] && exit 0
pkgs="$*"
state=$dir/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$dir/debs" || exit 1
: >"$state/status"
echo "deb http://deb.debian.org/debian $suite main" >"$state/sources.list"
[ "$suite" = bookworm ] && echo "deb http://deb.debian.org/debian-security bookworm-security main" >>"$state/sources.list"
set -- -q -o Dir::State="$state" -o Dir::State::Lists=lists -o Dir::State::status="$state/status" \
	-o Dir::Cache="$state/cache" -o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=- \
	-o APT::Architecture=arm64 -o APT::Architectures::=arm64
log=$dir/apt.log
if ! apt-get "$@" update >"$log" 2>&1; then
	echo "apt-get update for $suite arm64 failed: $(tail -1 "$log")" >&2; exit 1
fi
# shellcheck disable=SC2086
if ! (cd "$dir/debs" && rm -f ./*.deb && apt-get "$@" download $pkgs) >>"$log" 2>&1; then
	echo "apt-get download of $suite's arm64 $pkgs failed: $(grep -E '^E:' "$log" | tail -1)" >&2; exit 1
fi
rm -rf "$root" && mkdir -p "$root" || exit 1
for deb in "$dir"/debs/*.deb; do
	dpkg -x "$deb" "$root" || { echo "dpkg -x $deb failed" >&2; exit 1; }
done
# a merged /usr (Debian 13): /lib is base-files' symlink, no package here has it
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib" || exit 1
[ -x "$root/$program" ] || { echo "no $program in $suite's arm64 $pkgs" >&2; exit 1; }
touch "$root/.complete"
