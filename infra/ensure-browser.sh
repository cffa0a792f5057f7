#!/usr/bin/env bash
# The browser of the web app's end-to-end tests (test/web.test.ts): Debian's chromium, driven by
# playwright-core. Installed from Debian's packages when missing (never a browser download);
# run again, it changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. infra/need.sh
need /usr/bin/chromium chromium
