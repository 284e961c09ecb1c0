# ClickHouse servers for tests and benchmarks: Debian's clickhouse-server
# (installed as a test dependency), each server with its own config, data
# directory and log under a work directory, on free loopback ports.  Source
# after tests/lib.sh.
#
# ch_available LOG         true when clickhouse-server is (or could be)
#                          installed; the apt-get output goes to LOG.
# ch_cluster_start DIR N   N servers (shards of the cluster "asyncore_test",
#                          one replica each) under DIR/s1 .. DIR/sN; sets
#                          CH_HTTP[i] and CH_TCP[i] (i = 1..N) and returns
#                          once every server answers (1 when one does not).
# ch_stop I                stops server I (SIGTERM, then SIGKILL), waiting
#                          for it to exit; ch_kill I kills it at once.
# ch_start I               starts server I again with its config.
# ch_cluster_stop          stops every server started (call it from a trap).
# ch_q I SQL [SETTINGS]    the result of SQL on server I (TabSeparated), with
#                          SETTINGS ("name=value&...") in the URL.
# ch_replicate I DB COPIES [AT [SET]]
#                          DB.cores's rows (through server I) made COPIES
#                          times as many, copy n (1 .. COPIES-1) with "-n"
#                          after its fingerprint and path and, given AT (an
#                          expression of n), crashed_at AT, and given SET,
#                          term_set SET: the benches' synthetic stores.
#
# The config is the least a server needs: listen on 127.0.0.1 only, HTTP and
# native TCP ports, its own paths, a user "default" without password and the
# cluster in remote_servers (the Distributed tables use its native TCP ports).
#
# Ports: other runs of these tests (and other servers) share the machine.
# Ports are drawn at random below the kernel's ephemeral range (where
# client sockets, ours and others', take theirs) among those that bind; a
# server that then cannot listen makes the cluster start again on new ports,
# and a server counts as up only when the one answering on its port has its
# own directory in its macros (never another run's server).

CH_SERVER=/usr/sbin/clickhouse-server
CH_CLUSTER_NAME=asyncore_test
CH_PIDS=()
CH_DIRS=()

ch_available() {
	[ -x "$CH_SERVER" ] && return 0
	apt_install "$1" clickhouse-server
	[ -x "$CH_SERVER" ]
}

# N distinct ports free now, one a line.
ch_free_ports() {
	python3 - "$1" <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
ports = []
while len(ports) < int(sys.argv[1]):
    port = random.randrange(10000, max(low, 10001))
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    if port not in ports:
        ports.append(port)
print("\n".join(map(str, ports)))
PY
}

# The remote_servers section naming every server's TCP port, one shard each.
ch_remote_servers() {
	local i
	echo "<remote_servers><$CH_CLUSTER_NAME>"
	for i in "${!CH_TCP[@]}"; do
		echo "<shard><replica><host>127.0.0.1</host><port>${CH_TCP[$i]}</port></replica></shard>"
	done
	echo "</$CH_CLUSTER_NAME></remote_servers>"
}

ch_write_config() {
	local i=$1 d=${CH_DIRS[$1]}
	mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
	cat >"$d/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/error.log</errorlog>
    <size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${CH_HTTP[$i]}</http_port>
  <tcp_port>${CH_TCP[$i]}</tcp_port>
  <max_connections>64</max_connections>
  <keep_alive_timeout>3</keep_alive_timeout>
  <max_concurrent_queries>32</max_concurrent_queries>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
  <macros><asyncore_dir>$d</asyncore_dir></macros>
  $(ch_remote_servers)
</yandex>
EOF
	cat >"$d/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage>
    <max_threads>2</max_threads><background_pool_size>2</background_pool_size>
    <background_schedule_pool_size>2</background_schedule_pool_size>
    <max_distributed_connections>8</max_distributed_connections></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
EOF
}

# Server I answers on its port, and it is server I.
ch_is_up() {
	local i=$1
	[ "$(curl -s "http://127.0.0.1:${CH_HTTP[$i]}/" --data-binary \
		"SELECT substitution FROM system.macros WHERE macro = 'asyncore_dir'" 2>/dev/null)" = \
	  "${CH_DIRS[$i]}" ]
}

ch_wait() {
	local i=$1 n
	for n in $(seq 1 3000); do   # a loaded machine starts it slowly
		kill -0 "${CH_PIDS[$i]}" 2>/dev/null || return 1
		ch_is_up "$i" && return 0
		sleep 0.1
	done
	return 1
}

ch_start() {
	local i=$1 d=${CH_DIRS[$1]}
	(cd "$d" && exec "$CH_SERVER" --config-file="$d/config.xml" >"$d/stdout.log" 2>&1) &
	CH_PIDS[$i]=$!
	ch_wait "$i"
}

ch_cluster_start() {
	local dir=$1 n=$2 i try ports
	for try in 1 2 3; do
		ports=($(ch_free_ports $((2 * n))))
		for i in $(seq 1 "$n"); do
			CH_DIRS[$i]=$dir/s$i
			CH_HTTP[$i]=${ports[$((2 * i - 2))]}
			CH_TCP[$i]=${ports[$((2 * i - 1))]}
		done
		for i in $(seq 1 "$n"); do
			rm -rf "${CH_DIRS[$i]}"
			ch_write_config "$i"
		done
		for i in $(seq 1 "$n"); do
			ch_start "$i" || break
		done
		[ "$i" -eq "$n" ] && ch_is_up "$n" && return 0
		ch_cluster_stop   # a port was taken meanwhile: again, on others
	done
	return 1
}

ch_stop() {
	local pid=${CH_PIDS[$1]:-} n
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null
	for n in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	CH_PIDS[$1]=
}

ch_kill() {
	local pid=${CH_PIDS[$1]:-}
	[ -n "$pid" ] || return 0
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	CH_PIDS[$1]=
}

ch_cluster_stop() {
	local i
	for i in "${!CH_PIDS[@]}"; do
		ch_stop "$i"
	done
}

ch_q() {
	curl -sS --fail-with-body "http://127.0.0.1:${CH_HTTP[$1]}/?${3:-}" --data-binary "$2"
}

ch_replicate() {
	local cols fp="concat(fingerprint, '-', toString(n)), " path="concat(path, '-', toString(n)), "
	cols=$(ch_q "$1" "SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns
	                  WHERE database = '$2' AND table = 'cores'") || return 1
	cols=${cols/fingerprint, /$fp}
	cols=${cols/path, /$path}
	[ -z "${4:-}" ] || cols=${cols/crashed_at, /$4, }
	[ -z "${5:-}" ] || cols=${cols/term_set/$5}
	ch_q "$1" "INSERT INTO $2.cores SELECT $cols FROM $2.cores FINAL
	           ARRAY JOIN arrayMap(x -> x + 1, range($(($3 - 1)))) AS n" insert_distributed_sync=1
}

# serve_listening OUT PID: until `asyncore serve` (PID) has said where it
# listens in OUT, or is gone; the bound only keeps a broken build from
# hanging the script (a loaded machine may take long to start it).
serve_listening() {
	local n
	for n in $(seq 3000); do
		grep -q http "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# serve_start DB OUT: `asyncore serve --db DB` on a free loopback port, its
# output in OUT; sets SERVE_PID and SERVE_PORT.  A port taken between the
# choice and the bind (tests run in parallel) is chosen again.
serve_start() {
	local try
	for try in 1 2 3 4 5; do
		SERVE_PORT=$(ch_free_ports 1)   # below the ephemeral range, as the servers' ports
		# emptied here, not only by the background's redirection: until it
		# runs, OUT may still hold an earlier server's "http" line
		: >"$2"
		"$ASYNCORE" serve --db "$1" --listen "127.0.0.1:$SERVE_PORT" >"$2" 2>"$2.err" &
		SERVE_PID=$!
		serve_listening "$2" $SERVE_PID && return 0
		wait $SERVE_PID 2>/dev/null
	done
	return 1
}
