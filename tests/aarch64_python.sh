#!/bin/sh
# aarch64_python.sh BASE [VERSION...]: Debian's python3.X for arm64 (its
# interpreter, standard library, python3.X-dbg's debug files, and the arm64
# libraries it loads) unpacked into the sysroot BASE/python3.X/root, for
# each VERSION (default: every one of SUITES), for
# tests/t_cpython_aarch64.sh to run under qemu-aarch64 and read with
# --sysroot.  aarch64_python.sh --list prints the versions.  Nothing is
# installed on the machine: apt-get reads the suite's arm64 package lists
# (deb.debian.org) into a state of its own under BASE/python3.X and
# downloads the packages there; dpkg -x unpacks them.  Each is done once
# (its root/.complete); on a failure prints the reason on stderr and exits 1.
set -u
# Debian's CPythons and the suites that ship them
SUITES="3.11:bookworm 3.13:trixie"
[ "${1:-}" = --list ] && { for s in $SUITES; do echo "${s%%:*}"; done; exit 0; }
[ $# -ge 1 ] || { echo "usage: aarch64_python.sh BASE [VERSION...] | --list" >&2; exit 2; }
base=$1; shift
[ $# -gt 0 ] || set -- $(for s in $SUITES; do echo "${s%%:*}"; done)
# fetch DIR VERSION SUITE: SUITE's python$VERSION into DIR/root.
fetch() {
	mkdir -p "$1" && dir=$(cd "$1" && pwd) || exit 1
	version=$2 suite=$3
	root=$dir/root
	[ -f "$root/.complete" ] && exit 0
	PKGS="python$version-minimal libpython$version-minimal libpython$version-stdlib python$version-dbg
		libc6 libffi8 zlib1g libexpat1"
	state=$dir/apt
	mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$dir/debs" || exit 1
	: >"$state/status"
	echo "deb http://deb.debian.org/debian $suite main" >"$state/sources.list"
	set -- -q -o Dir::State="$state" -o Dir::State::Lists=lists -o Dir::State::status="$state/status" \
		-o Dir::Cache="$state/cache" -o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=- \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64
	log=$dir/apt.log
	if ! apt-get "$@" update >"$log" 2>&1; then
		echo "apt-get update for $suite arm64 failed: $(tail -1 "$log")" >&2; exit 1
	fi
	# shellcheck disable=SC2086
	if ! (cd "$dir/debs" && rm -f ./*.deb && apt-get "$@" download $PKGS) >>"$log" 2>&1; then
		echo "apt-get download of $suite's arm64 $PKGS failed: $(grep -E '^E:' "$log" | tail -1)" >&2; exit 1
	fi
	rm -rf "$root" && mkdir -p "$root" || exit 1
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$root" || { echo "dpkg -x $deb failed" >&2; exit 1; }
	done
	# a merged /usr (Debian 13): /lib is base-files' symlink, no package here has it
	[ -e "$root/lib" ] || ln -s usr/lib "$root/lib" || exit 1
	[ -x "$root/usr/bin/python$version" ] || { echo "no usr/bin/python$version in $suite's arm64 packages" >&2; exit 1; }
	touch "$root/.complete"
}

status=0
for version; do
	suite=
	for s in $SUITES; do [ "${s%%:*}" = "$version" ] && suite=${s#*:}; done
	[ -n "$suite" ] || { echo "no Debian suite for python$version" >&2; status=1; continue; }
	( fetch "$base/python$version" "$version" "$suite" ) || status=1
done
exit $status
