#!/bin/sh
# aarch64_python.sh BASE [VERSION...]: Debian's python3.X for arm64 (its
# interpreter, standard library, python3.X-dbg's debug files, and the arm64
# libraries it loads) unpacked into the sysroot BASE/python3.X/root, for
# each VERSION (default: every one of SUITES), for
# tests/t_cpython_aarch64.sh to run under qemu-aarch64 and read with
# --sysroot (tests/arm64_debs.sh fetches them, each once).
# aarch64_python.sh --list prints the versions; on a failure it prints the
# reason on stderr and exits 1.
set -u
# Debian's CPythons and the suites that ship them
SUITES="3.11:bookworm 3.13:trixie"
[ "${1:-}" = --list ] && { for s in $SUITES; do echo "${s%%:*}"; done; exit 0; }
[ $# -ge 1 ] || { echo "usage: aarch64_python.sh BASE [VERSION...] | --list" >&2; exit 2; }
base=$1; shift
[ $# -gt 0 ] || set -- $(for s in $SUITES; do echo "${s%%:*}"; done)
# fetch DIR VERSION SUITE: SUITE's python$VERSION into DIR/root.
fetch() {
	sh "$(dirname "$0")/arm64_debs.sh" "$1" "$3" "usr/bin/python$2" "python$2-minimal" "libpython$2-minimal" \
		"libpython$2-stdlib" "python$2-dbg" libc6 libffi8 zlib1g libexpat1
}

status=0
for version; do
	suite=
	for s in $SUITES; do [ "${s%%:*}" = "$version" ] && suite=${s#*:}; done
	[ -n "$suite" ] || { echo "no Debian suite for python$version" >&2; status=1; continue; }
	( fetch "$base/python$version" "$version" "$suite" ) || status=1
done
exit $status
