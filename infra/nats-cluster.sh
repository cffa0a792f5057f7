#!/usr/bin/env bash
# A three-node NATS cluster with JetStream on this machine, for trying the system as it runs in
# production: clients on 127.0.0.1:4231-4233, routes on 6231-6233, stores under $NATS_CLUSTER_DIR
# (default /tmp/kn-nats-cluster). Then start the system against it:
#   NATS_URL=nats://127.0.0.1:4231,nats://127.0.0.1:4232,nats://127.0.0.1:4233 NATS_REPLICAS=3 bash infra/up.sh
# Ctrl-C stops the three nodes. docker-compose.yml runs the same cluster (infra/nats/cluster.conf).
set -euo pipefail
dir=${NATS_CLUSTER_DIR:-/tmp/kn-nats-cluster}
binary=${NATS_SERVER_BIN:-$(command -v nats-server || echo /usr/sbin/nats-server)}
mkdir -p "$dir"
routes="nats://127.0.0.1:6231,nats://127.0.0.1:6232,nats://127.0.0.1:6233"
pids=()
for n in 1 2 3; do
  "$binary" --name "node-$n" -a 127.0.0.1 -p "423$n" -js -sd "$dir/node-$n" \
    --cluster_name knowledge-network --cluster "nats://127.0.0.1:623$n" --routes "$routes" >"$dir/node-$n.log" 2>&1 &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null; wait' INT TERM EXIT
echo "NATS cluster: nats://127.0.0.1:4231,nats://127.0.0.1:4232,nats://127.0.0.1:4233 (logs in $dir); use NATS_REPLICAS=3"
wait
