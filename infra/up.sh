#!/usr/bin/env bash
# The whole system on this machine: servers, install, migrations (each service migrates its schema
# as it starts), every service and the gateway. Ctrl-C stops everything.
# --demo: then imports the Stack Exchange beer dump (../shared/data/stackexchange-beer) as demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/ensure-servers.sh
bash infra/pnpm.sh install --frozen-lockfile
exec bash infra/pnpm.sh run up "$@"
