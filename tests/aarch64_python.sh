#!/bin/sh
# aarch64_python.sh DIR: Debian's python3.11 for arm64 (the static
# interpreter, its standard library, python3.11-dbg's debug files, and the
# arm64 libraries it loads) unpacked into the sysroot DIR/root, for
# tests/t_cpython_aarch64.sh to run under qemu-aarch64 and read with
# --sysroot.  Nothing is installed on the machine: apt-get reads the arm64
# package lists into a state of its own under DIR and downloads the
# packages to DIR/debs; dpkg -x unpacks them.  Done once (DIR/root/.complete);
# on failure prints the reason on stderr and exits 1.
set -u
mkdir -p "$1" && dir=$(cd "$1" && pwd) || exit 1
root=$dir/root
[ -f "$root/.complete" ] && exit 0
PKGS="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3.11-dbg
	libc6 libffi8 zlib1g libexpat1"
state=$dir/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$dir/debs" || exit 1
: >"$state/status"
set -- -q -o Dir::State="$state" -o Dir::State::Lists=lists -o Dir::State::status="$state/status" \
	-o Dir::Cache="$state/cache" -o APT::Architecture=arm64 -o APT::Architectures::=arm64
log=$dir/apt.log
if ! apt-get "$@" update >"$log" 2>&1; then
	echo "apt-get update for arm64 failed: $(tail -1 "$log")" >&2; exit 1
fi
# shellcheck disable=SC2086
if ! (cd "$dir/debs" && rm -f ./*.deb && apt-get "$@" download $PKGS) >>"$log" 2>&1; then
	echo "apt-get download of arm64 $PKGS failed: $(grep -E '^E:' "$log" | tail -1)" >&2; exit 1
fi
rm -rf "$root" && mkdir -p "$root" || exit 1
for deb in "$dir"/debs/*.deb; do
	dpkg -x "$deb" "$root" || { echo "dpkg -x $deb failed" >&2; exit 1; }
done
[ -x "$root/usr/bin/python3.11" ] || { echo "no usr/bin/python3.11 in the arm64 packages" >&2; exit 1; }
touch "$root/.complete"
