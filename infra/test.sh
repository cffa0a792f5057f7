#!/usr/bin/env bash
# Every test of the system, against the real PostgreSQL and NATS of this machine; then the search
# tests a second time on a real OpenSearch cluster (infra/search-cluster.sh), the backend that
# ELASTICSEARCH_URL switches on; then single sign-on through a real Keycloak (infra/keycloak.sh).
# Arguments (a test file, say) run those tests once, on the local engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash infra/ensure-servers.sh
bash infra/ensure-model.sh
bash infra/ensure-browser.sh
# The outside checkers of test/schemathesis.test.ts and test/scim-tester.test.ts (PyPI, pinned):
# installed here rather than inside the tests' time.
bash infra/ensure-python-tool.sh schemathesis >/dev/null
bash infra/ensure-python-tool.sh scim-tester >/dev/null
bash infra/pnpm.sh install --frozen-lockfile
bash infra/pnpm.sh run lint
bash infra/pnpm.sh run typecheck
if [ $# -gt 0 ]; then
  bash infra/pnpm.sh test "$@"
  exit 0
fi
# The files that need an engine run in the passes below: the faults on the one-node cluster, the
# scale-out test (three OpenSearch nodes of its own) last, alone.
# Each pass leaves jest's JSON results here; the last lines sum them up as "N passed, N failed",
# the plain closing line a reader of CI logs counts (jest's own summary is not one it reads).
results="${TMPDIR:-/tmp}/kn-test-results"
rm -rf "$results" && mkdir -p "$results"
bash infra/pnpm.sh test --json --outputFile="$results/main.json" --testPathIgnorePatterns /node_modules/ /test/search-scale-out /test/search-engine-faults /test/oidc-keycloak /test/saml-keycloak

# The same cases, not a thinner copy: the files whose tests search, route or rank experts.
engine_tests=(
  test/search.test.ts test/experts.test.ts test/expert-visibility.test.ts test/expert-model.test.ts
  test/tags.test.ts test/solutions-validation.test.ts test/large-payloads.test.ts test/search-engine-faults.test.ts
  test/semantic-search.test.ts test/search-topics.test.ts
)
scale_out_dir="${TMPDIR:-/tmp}/kn-search-scale-out"
trap 'bash infra/search-cluster.sh stop >/dev/null 2>&1; SEARCH_CLUSTER_DIR=$scale_out_dir bash infra/search-cluster.sh stop >/dev/null 2>&1; bash infra/keycloak.sh stop >/dev/null 2>&1' EXIT
url=$(bash infra/search-cluster.sh start 1)
echo "the search tests again, on OpenSearch at $url"
ELASTICSEARCH_URL=$url bash infra/pnpm.sh test --json --outputFile="$results/opensearch.json" "${engine_tests[@]}"
bash infra/search-cluster.sh stop
echo "two search instances on a three-node OpenSearch cluster"
bash infra/pnpm.sh test --json --outputFile="$results/scale-out.json" test/search-scale-out.test.ts

# Single sign-on end to end (OpenID Connect and SAML): the web app in Chromium, signing in on a real Keycloak's own login page.
issuer=$(bash infra/keycloak.sh start)
echo "single sign-on through Keycloak at $issuer"
KEYCLOAK_ISSUER=$issuer bash infra/pnpm.sh test --json --outputFile="$results/single-sign-on.json" test/oidc-keycloak.test.ts test/saml-keycloak.test.ts
bash infra/keycloak.sh stop
echo "infra/test.sh: all four passes passed (main, OpenSearch, scale-out, single sign-on)"
node -e '
  const passes = process.argv.slice(1).map((file) => require(file));
  const sum = (key) => passes.reduce((total, pass) => total + pass[key], 0);
  console.log(`Suites: ${sum("numPassedTestSuites")} passed, ${sum("numFailedTestSuites")} failed`);
  console.log(`Tests: ${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed, ${sum("numPendingTests") + sum("numTodoTests")} skipped`);
' "$results"/{main,opensearch,scale-out,single-sign-on}.json
rm -rf "$results"
