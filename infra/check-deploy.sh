#!/usr/bin/env bash
# Validates the deployment with the real tools, without a Docker engine: the compose file
# (docker-compose config, with the variables of .env.example, with and without the elasticsearch
# profile), the NATS configuration (nats-server -t), the Prometheus configuration and alert rules
# (promtool check, and promtool's unit tests of the alerts), and every query of the Grafana
# dashboard (parsed by promtool). The tools come from Debian's packages (docker-compose,
# prometheus, nats-server), installed when missing and this runs as root. The test suite runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

. infra/need.sh
need docker-compose docker-compose
need promtool prometheus
need nats-server nats-server

# Runs a check; its output only when it fails.
quiet() {
  local out
  out=$("$@" 2>&1) || { echo "$out" >&2; echo "failed: $*" >&2; exit 1; }
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The compose file, as `docker compose up` would read it with a filled-in .env.
quiet docker-compose --env-file .env.example -f docker-compose.yml config -q
quiet docker-compose --env-file .env.example -f docker-compose.yml --profile elasticsearch config -q

# NATS: the cluster node's configuration with the generated authorization it includes.
(set -a; . ./.env.example; NATS_SERVER_NAME=nats-1 quiet nats-server -t -c infra/nats/cluster.conf)

# Prometheus: configuration, alert rules and their unit tests.
quiet promtool check config --syntax-only infra/prometheus/prometheus.yml
quiet promtool check rules infra/prometheus/alerts.yml
quiet promtool test rules infra/prometheus/alerts.test.yml

# Grafana: every query of the dashboard is valid PromQL (checked as recording rules).
node -e '
  const d = JSON.parse(require("fs").readFileSync("infra/grafana/dashboards/knowledge-network.json", "utf8"));
  const rules = d.panels.flatMap((p, i) => p.targets.map((t, j) => ({ record: `dashboard:panel${i}_${j}`, expr: t.expr })));
  if (!rules.length) throw new Error("the dashboard has no queries");
  console.log(JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
' > "$work/dashboard-rules.json"
quiet promtool check rules "$work/dashboard-rules.json"

echo "deployment files valid: docker-compose.yml, infra/nats, infra/prometheus, infra/grafana"
