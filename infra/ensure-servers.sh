#!/usr/bin/env bash
# Brings up the servers the system needs on this machine, and checks them:
#   PostgreSQL on 127.0.0.1:5432 and its Unix socket, the role postgres let in without a password
#   from this machine only, the contrib extensions (unaccent, pg_trgm) at hand;
#   NATS with JetStream on 127.0.0.1:4222, its store in $NATS_STORE_DIR (default /var/lib/nats-server).
# What is missing is installed from Debian's packages (as root). A second run changes nothing.
# A DATABASE_URL / NATS_URL that names another machine is left to that machine's server.
# Every failure is one line on stderr that names the setting and the cause; nothing waits unbounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. infra/need.sh

fail() { echo "$*" >&2; exit 1; }
listening() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
# The parts of a server URL (the first of a list): its authority (user:password@host:port), host and port.
authority() { local u=${1%%,*}; u=${u#*://}; printf '%s' "${u%%[/?]*}"; }
host_of() { local a; a=$(authority "$1"); a=${a##*@}; printf '%s' "${a%:[0-9]*}"; }
port_of() { local a; a=$(authority "$1"); a=${a##*@}; [[ $a =~ :([0-9]+)$ ]] && printf '%s' "${BASH_REMATCH[1]}" || printf '%s' "$2"; }
on_this_machine() { case "$(host_of "$1")" in 127.0.0.1 | localhost | '[::1]') return 0 ;; *) return 1 ;; esac; }

elsewhere=", or point DATABASE_URL and TEST_DATABASE_URL at a PostgreSQL that runs elsewhere"
HBA_MARK='# knowledge-network: the role postgres without a password, from this machine only'
PG_PORT=5432

# Debian's cluster "main", installed, set up and started: the server of the default URLs.
ensure_postgres() {
  need pg_ctlcluster postgresql "$elsewhere"
  need psql postgresql-client "$elsewhere"
  local version
  version=$(ls /usr/lib/postgresql | sort -V | tail -1)
  need "/usr/share/postgresql/$version/extension/pg_trgm.control" postgresql-contrib "$elsewhere"
  need "/usr/share/postgresql/$version/extension/unaccent.control" postgresql-contrib "$elsewhere"
  if [ ! -f "/etc/postgresql/$version/main/postgresql.conf" ]; then
    echo "creating the PostgreSQL $version cluster main on port $PG_PORT" >&2
    # 300 connections: the tests run two files at once, each with a whole system of seven services
    # holding pools of their own, beside benchmarks; Debian's 100 was seen running out.
    pg_createcluster "$version" main -p "$PG_PORT" -o max_connections=300 >/dev/null
  fi
  local hba="/etc/postgresql/$version/main/pg_hba.conf"
  if ! grep -qF "$HBA_MARK" "$hba"; then
    # First match wins in pg_hba.conf: these lines go before Debian's peer and password rules.
    { printf '%s\n' "$HBA_MARK" 'local all postgres trust' \
        'host all postgres 127.0.0.1/32 trust' 'host all postgres ::1/128 trust' ''
      cat "$hba"; } >"$hba.new"
    chown --reference="$hba" "$hba.new" && chmod --reference="$hba" "$hba.new" && mv "$hba.new" "$hba"
    if cluster_online "$version"; then pg_ctlcluster "$version" main reload; fi
  fi
  if ! cluster_online "$version"; then
    listening "$PG_PORT" &&
      fail "127.0.0.1:$PG_PORT (the port of DATABASE_URL) is taken by a program that is not this machine's PostgreSQL $version: stop it$elsewhere"
    echo "starting PostgreSQL $version" >&2
    pg_ctlcluster --skip-systemctl-redirect "$version" main start >/dev/null ||
      fail "PostgreSQL $version did not start: see /var/log/postgresql/postgresql-$version-main.log"
    for _ in $(seq 1 60); do
      pg_isready -q -h 127.0.0.1 -p "$PG_PORT" -t 1 && break
      sleep 0.5
    done
  fi
}

cluster_online() { pg_lsclusters -h "$1" main 2>/dev/null | grep -q ' online'; }

# Whether the server of a Postgres URL ($2 names the setting) lets its user in.
check_postgres() {
  local port user refused
  port=$(port_of "$1" 5432)
  user=$(authority "$1")
  user=${user%%@*}
  refused=$(PGCONNECT_TIMEOUT=5 timeout 10 psql -X -w -Atqc 'select 1' "postgres://$(authority "$1")/postgres" 2>&1 >/dev/null | head -1) && return
  refused=${refused#psql: }
  if pg_isready -q -h 127.0.0.1 -p "$port" -t 3; then
    fail "PostgreSQL on 127.0.0.1:$port ($2) does not let the role ${user%%:*} in ($refused): allow it in pg_hba.conf$elsewhere"
  elif listening "$port"; then
    fail "127.0.0.1:$port (the port of $2) answers, but not as PostgreSQL ($refused): stop that program$elsewhere"
  fi
  fail "nothing answers on 127.0.0.1:$port (the port of $2): start PostgreSQL there$elsewhere"
}

# The first line a NATS server sends on a new connection (INFO {...}), '' when none comes.
nats_info() { timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && IFS= read -r line <&3 && printf '%s' \"\$line\"" 2>/dev/null || true; }

# A NATS server with JetStream on the port of a NATS URL of this machine ($2 names the setting).
ensure_nats() {
  need nats-server nats-server ", or point NATS_URL at a NATS server with JetStream that runs elsewhere"
  local info port store=${NATS_STORE_DIR:-/var/lib/nats-server}
  port=$(port_of "$1" 4222)
  if ! listening "$port"; then
    echo "starting NATS with JetStream on 127.0.0.1:$port (store in $store)" >&2
    mkdir -p "$store"
    setsid nats-server -a 127.0.0.1 -p "$port" -js -sd "$store" >>"$store/nats-server.log" 2>&1 </dev/null &
    for _ in $(seq 1 50); do
      listening "$port" && break
      sleep 0.2
    done
  fi
  info=$(nats_info "$port")
  case "$info" in
    'INFO '*'"jetstream":true'*) ;;
    'INFO '*) fail "NATS on 127.0.0.1:$port ($2) runs without JetStream: restart it with -js" ;;
    *) if listening "$port"; then
         fail "127.0.0.1:$port (the port of $2) is taken by a program that is not NATS: stop it, or point $2 at a NATS server with JetStream"
       fi
       fail "NATS did not start on 127.0.0.1:$port: $(tail -1 "$store/nats-server.log" 2>/dev/null)" ;;
  esac
}

# The settings the scripts and the tests read, and their defaults.
pg_settings=(DATABASE_URL TEST_DATABASE_URL)
nats_settings=(NATS_URL TEST_NATS_URL)
declare -A default=(
  [DATABASE_URL]=postgres://postgres@127.0.0.1:5432/knowledge_network
  [TEST_DATABASE_URL]=postgres://postgres@127.0.0.1:5432/postgres
  [NATS_URL]=nats://127.0.0.1:4222
  [TEST_NATS_URL]=nats://127.0.0.1:4222
)
url() { printf '%s' "${!1:-${default[$1]}}"; }

for setting in "${pg_settings[@]}"; do
  u=$(url "$setting")
  if on_this_machine "$u" && [ "$(port_of "$u" 5432)" = "$PG_PORT" ]; then ensure_postgres; break; fi
done
for setting in "${pg_settings[@]}"; do
  u=$(url "$setting")
  if on_this_machine "$u"; then need psql postgresql-client "$elsewhere"; check_postgres "$u" "$setting"; fi
done
for setting in "${nats_settings[@]}"; do
  u=$(url "$setting")
  if on_this_machine "$u"; then ensure_nats "$u" "$setting"; fi
done
