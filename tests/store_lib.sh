# Shared by tests/t_store*.sh and bench/ingest.sh: fixture cores for the
# crash database.  Source after tests/lib.sh.
#
# store_cores DIR          fills DIR with the standard test batch (kept in
#                          $BUILD_FIX/store-cores, remade when a fixture
#                          changes) and prints how many cores it holds;
#                          returns 77 when no core can be had.
# store_q DB SQL           one value from the database (read-only query).
# store_handler_cores DIR  fills DIR with cores of fixtures/handler_c: one
#                          NULL write caught by handlers of three shapes
#                          (nodefer, abort, redis) and uncaught (none), one
#                          stack overflow caught (nodefer) and not (none),
#                          named SHAPE-BUG.core; returns 77 when none can be
#                          had.

# name mode count: the cores of the standard batch, per fixture program.
STORE_BATCH="store_crash:segv:9 store_crash:abort:9 store_crash:fpe:9 store_crash:deep:9
store_cxx:a:7 store_cxx:b:7"

store_make_cores() {
	local cache=$1 spec fix mode n i dir core
	rm -rf "$cache"; mkdir -p "$cache"
	for spec in $STORE_BATCH; do
		IFS=: read -r fix mode n <<<"$spec"
		dir=$(fixture_build "$fix") || return 1
		for i in $(seq 1 "$n"); do
			core=$(fixture_core "$dir" "$mode" "$i" 2>/dev/null) || return 77
			mv "$core" "$cache/$fix-$mode-$i.core"
			rm -rf "$(dirname "$core")"
		done
	done
	touch "$cache/.complete"
}

# store_cores_fresh CACHE: the batch in CACHE is newer than its fixtures.
store_cores_fresh() {
	[ -f "$1/.complete" ] &&
	[ -z "$(find "$ROOT/fixtures/store_crash" "$ROOT/fixtures/store_cxx" -newer "$1/.complete" -type f | head -1)" ]
}

# Made once (under a lock: the scripts that use it may run at once).
store_cores_make_once() {
	store_cores_fresh "$1" || store_make_cores "$1"
}

store_cores() {
	local out=$1 cache=$BUILD_FIX/store-cores rc
	if ! store_cores_fresh "$cache"; then
		with_lock store-cores store_cores_make_once "$cache"; rc=$?
		[ $rc -eq 0 ] || return $rc
	fi
	mkdir -p "$out"
	cp "$cache"/*.core "$out"/
	ls "$out"/*.core | wc -l
}

store_q() {
	"$ASYNCORE" query --db "$1" --format csv "$2" | tail -n +2
}

# store_clone_cores CORE DIR COUNT: COUNT copies of CORE in DIR, each with its
# index written into the end of NT_PRPSINFO's pr_psargs, so every copy has its
# own fingerprint and the same analysis.
store_clone_cores() {
	python3 - "$@" <<'PY'
import struct, sys
src, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, "rb").read())
assert data[:4] == b"\x7fELF" and data[4] == 2, "not an ELF64 file"
phoff, = struct.unpack_from("<Q", data, 0x20)
phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
where = None
for i in range(phnum):
    p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
    if p_type != 4:          # PT_NOTE
        continue
    off, end = p_offset, p_offset + p_filesz
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", data, off)
        desc = off + 12 + ((namesz + 3) & ~3)
        if ntype == 3 and descsz >= 136:      # NT_PRPSINFO: pr_psargs at 56, 80 bytes
            where = desc + 56 + 80 - 12
        off = desc + ((descsz + 3) & ~3)
assert where is not None, "no NT_PRPSINFO"
for i in range(count):
    data[where:where + 12] = b" #%010d" % i
    open("%s/clone-%05d.core" % (out, i), "wb").write(data)
PY
}

store_handler_cores() {
	local out=$1 dir spec shape bug core
	dir=$(fixture_build handler_c 2>/dev/null) || return 77
	mkdir -p "$out"
	for spec in nodefer:null abort:null redis:null none:null nodefer:overflow none:overflow; do
		IFS=: read -r shape bug <<<"$spec"
		core=$(fixture_core "$dir" "$shape" "$bug" 2>/dev/null) || return 77
		mv "$core" "$out/$shape-$bug.core"
		rm -rf "$(dirname "$core")"
	done
}
