#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432) and NATS with JetStream (127.0.0.1:4222) are running on
# this machine, starting Debian's packages when they are not. Deployments use docker-compose.yml.
set -euo pipefail

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! listening 5432; then
  echo "starting PostgreSQL"
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  else
    echo "PostgreSQL is not running on 127.0.0.1:5432 and pg_ctlcluster is not installed" >&2
    exit 1
  fi
fi

if ! listening 4222; then
  echo "starting NATS (JetStream)"
  store=${NATS_STORE_DIR:-/var/lib/nats-server}
  mkdir -p "$store"
  if command -v start-stop-daemon >/dev/null; then
    start-stop-daemon --start --oknodo --background --exec "$(command -v nats-server)" -- \
      -a 127.0.0.1 -p 4222 -js -sd "$store" -l /var/log/nats-server.log
  else
    nohup nats-server -a 127.0.0.1 -p 4222 -js -sd "$store" >/tmp/nats-server.log 2>&1 &
  fi
fi

for _ in $(seq 1 50); do
  if listening 5432 && listening 4222; then exit 0; fi
  sleep 0.2
done
echo "PostgreSQL or NATS did not come up" >&2
exit 1
