#!/usr/bin/env bash
# A local Keycloak, the identity provider of the single sign-on tests (docs/sso.md), on loopback only:
#   bash infra/keycloak.sh start    starts it in dev mode with the realm of infra/keycloak/realm.json
#                                   (its users, groups and the confidential client of the tests), waits
#                                   until the realm answers, then prints its issuer URL alone on stdout
#                                   (http://127.0.0.1:8190/realms/kn-test)
#   bash infra/keycloak.sh status   whether it runs
#   bash infra/keycloak.sh stop     stops it and removes its data and log
# Each start begins with the realm as the file has it: nothing is kept from an earlier run.
# Keycloak is the distribution org.keycloak:keycloak-quarkus-dist from Maven Central, fetched with
# Maven on first use (about 160 MB) and unpacked into infra/keycloak/target (not committed). It runs
# on the newest Java of `java` and /usr/lib/jvm/* (17 or newer; Keycloak prefers 21), or KEYCLOAK_JAVA_HOME.
# Settings:
#   KEYCLOAK_VERSION    the distribution's version (default 26.4.7)
#   KEYCLOAK_PORT       its HTTP port on 127.0.0.1 (default 8190)
#   KEYCLOAK_DIR        data, log and PID file (default /tmp/kn-keycloak); removed by stop
#   KEYCLOAK_TIMEOUT    seconds to wait for the realm (default 240)
#   KEYCLOAK_JAVA_HOME  the Java to run it with
# Every failure is one line on stderr; Keycloak's log is named in it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/infra/need.sh"
version=${KEYCLOAK_VERSION:-26.4.7}
port=${KEYCLOAK_PORT:-8190}
dir=${KEYCLOAK_DIR:-/tmp/kn-keycloak}
wait_s=${KEYCLOAK_TIMEOUT:-240}
target="$root/infra/keycloak/target"
dist="$target/keycloak-$version"
realm_file="$root/infra/keycloak/realm.json"
realm=$(sed -n 's/^ *"realm": *"\([^"]*\)".*/\1/p' "$realm_file" | head -1)
marker="$dir/.kn-keycloak"

fail() { echo "keycloak: $*" >&2; exit 1; }
say() { echo "keycloak: $*" >&2; }
listening() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]; }
# The Keycloak of this folder, not another program that got its PID (after a reboot).
ours() {
  local arg
  alive "${1:-}" || return 1
  while IFS= read -r -d '' arg; do
    # kc.sh, or the JVM it became (kc.sh execs it again after building its configuration).
    [[ $arg == "$dist/bin/kc.sh" || $arg == "-Djava.io.tmpdir=$dir" ]] && return 0
  done 2>/dev/null <"/proc/$1/cmdline"
  return 1
}
running() {
  local pid
  [ -e "$dir/keycloak.pid" ] || return 0
  pid=$(cat "$dir/keycloak.pid")
  ours "$pid" && echo "$pid"
  return 0
}
issuer() { echo "http://127.0.0.1:$port/realms/$realm"; }

# The major version of the Java at $1 (0 when it does not run).
java_major() {
  local v
  v=$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  echo "${v%%.*}" | grep -E '^[0-9]+$' || echo 0
}

# JAVA_HOME for Keycloak: KEYCLOAK_JAVA_HOME, else the newest Java of the PATH and /usr/lib/jvm (17 at least:
# Keycloak 26 still runs on it, the Java the rest of the tests need; it prefers 21 and newer).
pick_java() {
  if [ -n "${KEYCLOAK_JAVA_HOME:-}" ]; then
    [ "$(java_major "$KEYCLOAK_JAVA_HOME/bin/java")" -ge 17 ] || fail "KEYCLOAK_JAVA_HOME ($KEYCLOAK_JAVA_HOME) is not a Java 17 or newer"
    echo "$KEYCLOAK_JAVA_HOME"
    return
  fi
  local best="" best_major=0 candidate major
  command -v java >/dev/null || need java openjdk-17-jdk-headless
  for candidate in "$(command -v java)" /usr/lib/jvm/*/bin/java; do
    [ -x "$candidate" ] || continue
    candidate=$(readlink -f "$candidate")
    major=$(java_major "$candidate")
    ((major > best_major)) && { best=$candidate; best_major=$major; }
  done
  ((best_major >= 17)) || fail "Keycloak $version needs Java 17 or newer (the newest found: ${best_major/#0/none}): install openjdk-17-jdk-headless, or set KEYCLOAK_JAVA_HOME"
  dirname "$(dirname "$best")"
}

# The distribution, fetched from Maven Central and unpacked on first use.
fetch() {
  [ -x "$dist/bin/kc.sh" ] && return
  need mvn maven
  need unzip unzip
  say "fetching Keycloak $version from Maven Central (about 160 MB, once)"
  mkdir -p "$target"
  local log
  log=$(mktemp)
  (cd "$target" && mvn -q -B dependency:copy "-Dartifact=org.keycloak:keycloak-quarkus-dist:$version:zip" -DoutputDirectory="$target") >"$log" 2>&1 ||
    { cat "$log" >&2; rm -f "$log"; fail "Maven could not fetch org.keycloak:keycloak-quarkus-dist:$version (output above)"; }
  rm -f "$log"
  rm -rf "$dist"
  unzip -q -o "$target/keycloak-quarkus-dist-$version.zip" -d "$target" || fail "could not unpack $target/keycloak-quarkus-dist-$version.zip"
  rm -f "$target/keycloak-quarkus-dist-$version.zip"
}

start() {
  need curl curl
  if [ -n "$(running)" ]; then
    say "already running ($dir)"
    issuer
    return
  fi
  [ -n "$realm" ] || fail "no realm name in $realm_file"
  fetch
  local java_home
  java_home=$(pick_java)
  listening "$port" && fail "port $port is taken by another program: set KEYCLOAK_PORT"
  [ -e "$dir" ] && [ ! -e "$marker" ] && [ -n "$(ls -A "$dir")" ] && fail "$dir exists and is not this script's folder: set KEYCLOAK_DIR"
  rm -rf "$dir"
  mkdir -p "$dir" "$dist/data/import"
  touch "$marker"
  # --import-realm reads the distribution's data/import; the database is in memory, so each start imports it anew.
  cp "$realm_file" "$dist/data/import/realm.json"
  local began=$SECONDS
  # Dev mode: an in-memory H2 database, plain HTTP, no production hostname. The admin account
  # exists only for a person looking at the realm by hand (admin / admin, on loopback only).
  JAVA_HOME="$java_home" PATH="$java_home/bin:$PATH" \
    JAVA_OPTS_APPEND="-Djava.io.tmpdir=$dir -Xms64m -Xmx768m" \
    KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin \
    setsid "$dist/bin/kc.sh" start-dev --import-realm --db=dev-mem \
    --http-host=127.0.0.1 --http-port="$port" </dev/null >>"$dir/console.log" 2>&1 &
  echo $! >"$dir/keycloak.pid"
  say "starting Keycloak $version on 127.0.0.1:$port (log: $dir/console.log)"
  while :; do
    alive "$(cat "$dir/keycloak.pid")" || { tail -n 20 "$dir/console.log" >&2; fail "Keycloak stopped while starting (its log's end above: $dir/console.log)"; }
    [ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$(issuer)/.well-known/openid-configuration")" = 200 ] && break
    ((SECONDS - began >= wait_s)) && fail "the realm $realm did not answer within ${wait_s}s (log: $dir/console.log; stop it with: bash infra/keycloak.sh stop)"
    sleep 1
  done
  say "realm $realm ready after $((SECONDS - began))s"
  issuer
}

stop() {
  local pid waited=0
  pid=$(running)
  if [ -n "$pid" ]; then
    # kc.sh runs the JVM as its child: end the whole process group setsid made.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    while [ -n "$(running)" ] && ((waited < 30)); do
      sleep 1
      waited=$((waited + 1))
    done
    [ -n "$(running)" ] && { say "Keycloak did not stop in 30s: killed"; kill -KILL -- "-$pid" 2>/dev/null || true; }
  fi
  if [ -e "$marker" ]; then
    rm -rf "$dir"
  elif [ -e "$dir" ]; then
    fail "$dir is not this script's folder: left as it is"
  fi
  say "stopped$([ -n "$pid" ] && echo " (pid $pid)" || echo ": nothing ran"); $dir removed"
}

status() {
  local pid
  pid=$(running)
  [ -n "$pid" ] || { say "not running ($dir)"; exit 1; }
  say "running from $dir (pid $pid): $(issuer)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: bash infra/keycloak.sh start | status | stop" >&2; exit 2 ;;
esac
