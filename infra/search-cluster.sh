#!/usr/bin/env bash
# A local OpenSearch cluster for the search service's Elasticsearch backend, on loopback only:
#   bash infra/search-cluster.sh start [N]   N nodes (default 1) as one cluster; waits for green or
#                                            yellow health, then prints the nodes' URLs alone on
#                                            stdout, comma-separated (http://127.0.0.1:9250,...)
#   bash infra/search-cluster.sh status      the nodes that run, and the cluster's health
#   bash infra/search-cluster.sh stop        stops every node and removes the cluster's data and logs
#   bash infra/search-cluster.sh kill I      ends node I at once (SIGKILL), keeping its data
#   bash infra/search-cluster.sh restart I   starts node I again on its data, waits for every node
# Node i (1..N) answers HTTP on 127.0.0.1:9250+i-1 and talks to the others on 127.0.0.1:9350+i-1.
# Each start begins with an empty cluster: nothing is kept from a cluster that stopped or died.
# Each node is one JVM running infra/search-cluster/ (OpenSearch 2.19 from Maven Central, with its
# Netty transport, common analyzers and Painless on the classpath; no distribution, no security
# plugin). Built with Maven on first use into infra/search-cluster/target (not committed).
# Settings:
#   SEARCH_CLUSTER_DIR        data, logs and PID files (default /tmp/kn-search-cluster); removed by stop
#   SEARCH_CLUSTER_HTTP_PORT  first node's HTTP port (default 9250)
#   SEARCH_CLUSTER_TRANSPORT_PORT  first node's transport port (default 9350)
#   SEARCH_CLUSTER_JAVA_OPTS  heap and GC options per node (default "-Xms256m -Xmx512m")
#   SEARCH_CLUSTER_TIMEOUT    seconds to wait for the cluster's health (default 180)
# Every failure is one line on stderr; the failing node's log is named in it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/infra/need.sh"
src="$root/infra/search-cluster"
target="$src/target"
dir=${SEARCH_CLUSTER_DIR:-/tmp/kn-search-cluster}
http_base=${SEARCH_CLUSTER_HTTP_PORT:-9250}
transport_base=${SEARCH_CLUSTER_TRANSPORT_PORT:-9350}
java_opts=${SEARCH_CLUSTER_JAVA_OPTS:--Xms256m -Xmx512m}
wait_s=${SEARCH_CLUSTER_TIMEOUT:-180}
marker="$dir/.kn-search-cluster"
cluster_name=kn-search

fail() { echo "search-cluster: $*" >&2; exit 1; }
say() { echo "search-cluster: $*" >&2; }
listening() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
# A process that runs (a zombie does not).
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]; }
# A node of this folder, not another program that got its PID (after a reboot).
ours() {
  local arg
  alive "${1:-}" || return 1
  while IFS= read -r -d '' arg; do
    [[ $arg == "path.home=$dir/node-"* ]] && return 0
  done 2>/dev/null <"/proc/$1/cmdline"
  return 1
}
# The PIDs of the nodes that still run, one a line.
running() {
  local f pid
  for f in "$dir"/node-*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    ours "$pid" && echo "$pid"
  done
  return 0
}
health() { curl -s -m 5 "http://127.0.0.1:$http_base/_cluster/health${1:-}" 2>/dev/null || true; }

# The launcher's classes and classpath, built again when the pom or a source is newer than them
# or a jar of the classpath has gone (a fresh Maven repository).
build() {
  need java openjdk-17-jdk-headless
  local version
  version=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  [ "${version%%.*}" -ge 17 ] 2>/dev/null || fail "java $version is too old: OpenSearch 2.19 here needs Java 17 or newer"
  local stamp="$target/classpath.txt" stale=
  if [ ! -s "$stamp" ] || [ -n "$(find "$src/pom.xml" "$src/src" -newer "$stamp" -type f | head -1)" ]; then
    stale=1
  else
    local jar
    IFS=: read -ra jars <"$stamp" || true # no newline at its end
    for jar in "${jars[@]}"; do [ -e "$jar" ] || { stale=1; break; }; done
  fi
  if [ -n "$stale" ]; then
    need mvn maven
    say "building the launcher in $src (Maven; the first build downloads OpenSearch and Maven plugins, about 85 MB)"
    local log
    log=$(mktemp)
    (cd "$src" && mvn -q -B package -DskipTests) >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; fail "the Maven build of $src failed (output above)"; }
    rm -f "$log"
    touch "$stamp" # the dependency plugin leaves an unchanged classpath.txt as it was
  fi
}

# Starts node $1 of a cluster of $2 nodes, on the data it has (none on a first start).
launch() {
  local i=$1 n=$2 classpath seeds="" managers="" discovery j
  classpath="$target/classes:$(cat "$target/classpath.txt")"
  for ((j = 1; j <= n; j++)); do
    seeds+="${seeds:+,}127.0.0.1:$((transport_base + j - 1))"
    managers+="${managers:+,}node-$j"
  done
  if [ "$n" = 1 ]; then
    discovery=(discovery.type=single-node)
  else
    discovery=("discovery.seed_hosts=$seeds" "cluster.initial_cluster_manager_nodes=$managers")
  fi
  local home="$dir/node-$i"
  mkdir -p "$home/tmp"
  # The JVM options are those an OpenSearch distribution sets for itself, less the ones for a
  # production machine (pre-touched heap, heap dumps); the heap is bounded by SEARCH_CLUSTER_JAVA_OPTS.
  # shellcheck disable=SC2086
  setsid java $java_opts -Xss1m -Djava.io.tmpdir="$home/tmp" \
    -Dfile.encoding=UTF-8 -Djava.awt.headless=true -Djava.locale.providers=SPI,COMPAT \
    -Djna.nosys=true -Dio.netty.noUnsafe=true -Dio.netty.noKeySetOptimization=true \
    -Dio.netty.recycler.maxCapacityPerThread=0 -Dio.netty.allocator.numDirectArenas=0 \
    -Dlog4j.shutdownHookEnabled=false -Dlog4j2.disable.jmx=true -XX:-OmitStackTraceInFastThrow \
    -cp "$classpath" org.kn.searchcluster.SearchNode \
    cluster.name=$cluster_name node.name=node-$i \
    path.home="$home" path.data="$home/data" path.logs="$home/logs" \
    network.host=127.0.0.1 http.port=$((http_base + i - 1)) transport.port=$((transport_base + i - 1)) \
    "${discovery[@]}" bootstrap.memory_lock=false \
    cluster.routing.allocation.disk.threshold_enabled=false \
    </dev/null >>"$dir/node-$i.log" 2>&1 &
  echo $! >"$dir/node-$i.pid"
}

# Waits until the cluster is green or yellow with $1 nodes (every node's process alive), or fails.
await_health() {
  local n=$1 began=$2 body i
  while :; do
    for ((i = 1; i <= n; i++)); do
      alive "$(cat "$dir/node-$i.pid")" || {
        tail -n 20 "$dir/node-$i.log" >&2
        [ "${4:-}" = fresh ] && { stop quiet; fail "node-$i stopped while starting (its log's end above; the folder is removed)"; }
        fail "node-$i stopped while starting (its log's end above; stop the cluster with: bash infra/search-cluster.sh stop)"
      }
    done
    body=$(health "?wait_for_status=yellow&wait_for_nodes=$n&timeout=2s")
    [[ $body =~ \"status\":\"(green|yellow)\" ]] && [[ $body == *'"timed_out":false'* ]] && { status=${BASH_REMATCH[1]}; return; }
    if ((SECONDS - began >= wait_s)); then
      say "last health: ${body:-no answer on 127.0.0.1:$http_base}"
      fail "the cluster was not green or yellow with $n node(s) within ${wait_s}s (logs: $dir/node-*.log; stop it with: bash infra/search-cluster.sh stop)"
    fi
    sleep 1
  done
}

start() {
  local n=${1:-1}
  [[ $n =~ ^[1-9][0-9]*$ ]] || fail "the number of nodes must be a positive integer, not '$n'"
  need curl curl
  local pids
  pids=$(running)
  if [ -n "$pids" ]; then
    local had
    had=$(cat "$dir/nodes" 2>/dev/null || echo '?')
    [ "$had" = "$n" ] || fail "a cluster of $had node(s) already runs from $dir: stop it first (bash infra/search-cluster.sh stop)"
    [ "$(echo "$pids" | wc -l)" = "$n" ] ||
      fail "only $(echo "$pids" | wc -l) of the cluster's $n nodes run (logs: $dir/node-*.log): stop it and start again"
    say "already running ($n node(s), $dir)"
    urls "$n"
    return
  fi
  build
  local i
  for ((i = 0; i < n; i++)); do
    listening $((http_base + i)) && fail "port $((http_base + i)) is taken by another program: set SEARCH_CLUSTER_HTTP_PORT"
    listening $((transport_base + i)) && fail "port $((transport_base + i)) is taken by another program: set SEARCH_CLUSTER_TRANSPORT_PORT"
  done
  # Left over from a node that was killed: nothing of it runs (checked above).
  [ -e "$dir" ] && [ ! -e "$marker" ] && [ -n "$(ls -A "$dir")" ] &&
    fail "$dir exists and is not a search cluster's folder: set SEARCH_CLUSTER_DIR"
  rm -rf "$dir"
  mkdir -p "$dir"
  touch "$marker"
  echo "$n" >"$dir/nodes"

  local began=$SECONDS
  for ((i = 1; i <= n; i++)); do launch "$i" "$n"; done
  say "starting $n node(s) in $dir (logs: $dir/node-*.log)"

  local status=""
  await_health "$n" "$began" fresh
  say "cluster $cluster_name is $status with $n node(s) after $((SECONDS - began))s"
  urls "$n"
}

# Every node's URL, comma-separated (ELASTICSEARCH_URL takes the list: the client moves to another node when one is gone).
urls() {
  local i out=""
  for ((i = 1; i <= $1; i++)); do out+="${out:+,}http://127.0.0.1:$((http_base + i - 1))"; done
  echo "$out"
}

# The node number $1 of the running cluster, checked.
node_of() {
  local n
  n=$(cat "$dir/nodes" 2>/dev/null) || fail "no cluster was started from $dir"
  [[ ${1:-} =~ ^[1-9][0-9]*$ ]] && (($1 <= n)) || fail "the node must be a number from 1 to $n, not '${1:-}'"
  echo "$n"
}

# Ends node $1 at once (SIGKILL, as a machine that fails), its data left for a restart.
kill_node() {
  node_of "$1" >/dev/null
  local pid
  pid=$(cat "$dir/node-$1.pid")
  ours "$pid" || fail "node-$1 does not run"
  kill -KILL "$pid"
  while alive "$pid"; do sleep 0.1; done
  say "node-$1 killed"
}

# Starts node $1 again on its data; waits until the cluster has every node again.
restart_node() {
  local n began=$SECONDS status=""
  n=$(node_of "$1")
  ours "$(cat "$dir/node-$1.pid")" && fail "node-$1 runs already"
  launch "$1" "$n"
  await_health "$n" "$began"
  say "node-$1 is back after $((SECONDS - began))s; cluster $status"
}

stop() {
  local pids pid waited=0
  pids=$(running)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    while [ -n "$(running)" ] && ((waited < 30)); do
      sleep 1
      waited=$((waited + 1))
    done
    for pid in $(running); do
      [ "${1:-}" = quiet ] || say "node $pid did not stop in 30s: killed"
      kill -KILL "$pid" 2>/dev/null || true
    done
  fi
  if [ -e "$marker" ]; then
    rm -rf "$dir"
  elif [ -e "$dir" ]; then
    fail "$dir is not a search cluster's folder: left as it is"
  fi
  [ "${1:-}" = quiet ] || say "stopped$([ -n "$pids" ] && echo " $(echo "$pids" | wc -l) node(s)" || echo ": nothing ran"); $dir removed"
}

status() {
  local pids
  pids=$(running)
  [ -n "$pids" ] || { say "not running ($dir)"; exit 1; }
  say "$(echo "$pids" | wc -l) node(s) running from $dir: $(echo $pids)"
  health "?pretty"
}

case "${1:-}" in
  start) start "${2:-1}" ;;
  stop) stop ;;
  status) status ;;
  kill) kill_node "${2:-}" ;;
  restart) restart_node "${2:-}" ;;
  *) echo "usage: bash infra/search-cluster.sh start [N] | status | stop | kill I | restart I" >&2; exit 2 ;;
esac
