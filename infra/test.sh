#!/usr/bin/env bash
# Every test of the system, against the real PostgreSQL and NATS of this machine; then the search
# tests a second time on a real OpenSearch cluster (infra/search-cluster.sh), the backend that
# ELASTICSEARCH_URL switches on. Arguments (a test file, say) run those tests once, on the local engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/ensure-servers.sh
bash infra/pnpm.sh install --frozen-lockfile
bash infra/pnpm.sh run lint
bash infra/pnpm.sh run typecheck
bash infra/pnpm.sh test "$@"
[ $# -gt 0 ] && exit 0

# The same cases, not a thinner copy: the files whose tests search, route or rank experts.
engine_tests=(
  test/search.test.ts test/experts.test.ts test/expert-visibility.test.ts test/expert-model.test.ts
  test/tags.test.ts test/solutions-validation.test.ts test/large-payloads.test.ts
)
trap 'bash infra/search-cluster.sh stop >/dev/null' EXIT
url=$(bash infra/search-cluster.sh start 1)
echo "the search tests again, on OpenSearch at $url"
ELASTICSEARCH_URL=$url bash infra/pnpm.sh test "${engine_tests[@]}"
