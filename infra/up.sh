#!/usr/bin/env bash
# The whole system on this machine: servers, install, the web app, migrations (each service migrates its schema
# as it starts), every service and the gateway. Ctrl-C stops everything.
# --demo: then imports the Stack Exchange beer dump of the repository (datasets/stackexchange-beer) as demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/ensure-servers.sh
bash infra/pnpm.sh install --frozen-lockfile
bash infra/ensure-model.sh
# The web app the gateway serves at / (esbuild: well under a second, so it is built every time).
bash infra/pnpm.sh --filter @kn/web build
exec bash infra/pnpm.sh run up "$@"
