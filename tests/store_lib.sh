# Shared by tests/t_store*.sh and bench/ingest.sh: fixture cores for the
# crash database.  Source after tests/lib.sh.
#
# store_cores DIR          fills DIR with the standard test batch (kept in
#                          $BUILD_FIX/store-cores, remade when a fixture
#                          changes) and prints how many cores it holds;
#                          returns 77 when no core can be had.
# store_q DB SQL           one value from the database (read-only query).

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

store_cores() {
	local out=$1 cache=$BUILD_FIX/store-cores rc
	if [ ! -f "$cache/.complete" ] ||
	   [ -n "$(find "$ROOT/fixtures/store_crash" "$ROOT/fixtures/store_cxx" -newer "$cache/.complete" -type f | head -1)" ]; then
		store_make_cores "$cache"; rc=$?
		[ $rc -eq 0 ] || return $rc
	fi
	mkdir -p "$out"
	cp "$cache"/*.core "$out"/
	ls "$out"/*.core | wc -l
}

store_q() {
	"$ASYNCORE" query --db "$1" --format csv "$2" | tail -n +2
}
