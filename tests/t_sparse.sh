#!/usr/bin/env bash
# A sparse multi-GB core (201 threads on glibc's default 8 MiB stacks: 1.6 GB
# of file, a few MB of data): the JSON report reads no more of it than the
# text report does and the fingerprint it shows, since the file's SHA-256 is
# computed only with --sha256.
# What a report read is counted as the core's pages it brought into the page
# cache (dropped before each run with posix_fadvise DONTNEED, counted after
# with mincore through fincore), whether it read them with pread or a mapping.
source "$(dirname "$0")/lib.sh"

W=$BUILD_FIX/sparse_threads
mkdir -p "$W"
src=$ROOT/bench/stacks
if ! { gcc -O2 -g -fomit-frame-pointer -fPIC -shared -o "$W/libbench.so" "$src/lib.c" &&
       gcc -O2 -g -fomit-frame-pointer -DDEFAULT_STACKS -pthread -o "$W/prog" "$src/stacks.c" \
	       -L"$W" -lbench -Wl,-rpath,'$ORIGIN'; } >"$W/build.log" 2>&1; then
	fail "sparse: build: $(tail -1 "$W/build.log")"; exit 0
fi
core=$(fixture_core "$W" 2>"$W/core.err"); rc=$?
if [ $rc -eq 77 ]; then skip "sparse: no core: $(head -1 "$W/core.err")"; exit 0; fi
trap 'rm -rf "$(dirname "$core")"' EXIT
command -v fincore >/dev/null || { skip "sparse: no fincore (util-linux)"; exit 0; }
size=$(stat -c %s "$core")
blocks=$(( $(stat -c '%b * %B' "$core") ))
check "sparse: the core is sparse and multi-GB ($size bytes, $blocks allocated)" \
	[ "$size" -gt 1000000000 -a "$blocks" -lt $((size / 20)) ]

# measure ARGS...: "RES RCHAR" of `asyncore report CORE PROG ARGS` run with
# the core dropped from the page cache: RES the core's bytes in the page
# cache after it (pages read or mapped), RCHAR the bytes the process read
# (its /proc/PID/io, read while it is a zombie).  The SHA-256 skips holes
# (SEEK_DATA) and reads the data once more with read(): RCHAR sees it.
measure() {
	sync "$core"
	python3 - "$core" "$ASYNCORE" report "$core" "$W/prog" "$@" >"$W/io" 2>"$W/err" <<'PY'
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)
with open(os.environ['W'] + '/out', 'w') as out:
    p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    io = dict(l.split(':', 1) for l in open('/proc/%d/io' % p.pid).read().splitlines())
    rc = p.wait()
print(int(io['rchar']) if rc in (0, 1) else -1)
PY
	echo "$(fincore --bytes --noheadings --output RES "$core") $(cat "$W/io")"
}
export W
read -r text_res text_rd < <(measure --format text)
read -r json_res json_rd < <(measure --format json)
check "sparse: JSON without --sha256 has core.sha256 null" \
	[ "$(json_get "$W/out" 'j["core"]["sha256"]')" = None ]
read -r sha_res sha_rd < <(measure --format json --sha256)
check "sparse: with --sha256, core.sha256 is the file's" \
	[ "$(json_get "$W/out" 'j["core"]["sha256"]')" = "$(sha256sum "$core" | cut -d' ' -f1)" ]
echo "    page cache / bytes read: text $text_res / $text_rd, JSON $json_res / $json_rd," \
     "JSON --sha256 $sha_res / $sha_rd; file $size, data $blocks"
check "sparse: the text report brought under 1% of the core into the cache ($text_res bytes)" \
	[ "$text_res" -ge 0 -a "$text_res" -lt $((size / 100)) -a "$text_rd" -gt 0 ]
# Read-ahead makes the page counts differ by a few of its windows at most.
check "sparse: the JSON report brings no more of the core into the cache than the text report" \
	[ "$json_res" -ge 0 -a "$json_res" -le $((text_res + 2 * 1024 * 1024)) ]
# The JSON report alone shows the fingerprint, which hashes the notes and
# 18 blocks of 4 KiB (corefile/identity.c): the text report reads neither.
notes=0
for n in $(readelf -lW "$core" | awk '$1 == "NOTE" { print $5 }'); do notes=$((notes + n)); done
check "sparse: the JSON report reads no more bytes than the text report and the fingerprint's ($json_rd vs $text_rd + $notes)" \
	[ "$json_rd" -gt 0 -a "$notes" -gt 0 -a "$json_rd" -le $((text_rd + notes + 18 * 4096 + 64 * 1024)) ]
# The measure sees a whole-file read: --sha256 reads the core's data again.
check "sparse: with --sha256 the report reads the core's data once more ($sha_rd bytes)" \
	[ "$sha_rd" -ge $((text_rd + blocks * 9 / 10)) ]
# Leave no page of it in the cache of a shared machine.
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$core"
