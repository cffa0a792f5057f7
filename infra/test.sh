#!/usr/bin/env bash
# Every test of the system, against the real PostgreSQL and NATS of this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/ensure-servers.sh
bash infra/pnpm.sh install --frozen-lockfile
bash infra/pnpm.sh run lint
bash infra/pnpm.sh run typecheck
bash infra/pnpm.sh test "$@"
