#!/bin/sh
# aarch64_node.sh BASE: Debian 12's node for arm64 (nodejs, libnode108 with
# V8's postmortem metadata in its dynamic symbols, the libraries it loads
# and the JavaScript modules node loads at start) unpacked into the sysroot
# BASE/root by tests/arm64_debs.sh, for tests/t_node_aarch64.sh to run under
# qemu-aarch64 and read with --sysroot.
[ $# -eq 1 ] || { echo "usage: aarch64_node.sh BASE" >&2; exit 2; }
exec sh "$(dirname "$0")/arm64_debs.sh" "$1" bookworm usr/bin/node nodejs libnode108 libc6 libgcc-s1 libstdc++6 \
	libbrotli1 libc-ares2 libicu72 libnghttp2-14 libssl3 libuv1 zlib1g node-acorn node-cjs-module-lexer node-undici
