#!/usr/bin/env bash
# An outside checker from PyPI that a test runs (`schemathesis`: test/schemathesis.test.ts;
# `scim-tester`: test/scim-tester.test.ts), in a virtualenv of the project's own at
# ${KN_TOOLS_CACHE:-~/.cache/kn-tools}/<tool>-<hash of the pins>/, never in the repository: exactly
# the versions of infra/<tool>-requirements.txt. Prints the virtualenv's bin folder. Idempotent: a
# virtualenv set up from the same pins is used as it is (well under a second); new pins make a new
# one beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
source infra/need.sh

tool=${1:?usage: infra/ensure-python-tool.sh schemathesis|scim-tester}
requirements=infra/$tool-requirements.txt
[ -f "$requirements" ] || { echo "ensure-python-tool: no $requirements" >&2; exit 2; }
pins=$(sha256sum "$requirements" | cut -c1-16)
cache=${KN_TOOLS_CACHE:-$HOME/.cache/kn-tools}
dir=$cache/$tool-$pins
fail() {
  echo "ensure-python-tool: $tool not set up: $*" >&2
  exit 1
}
# The stamp is written last: a virtualenv whose install was cut short is never taken as ready.
ready() { [ -f "$dir/.installed" ] && [ -x "$dir/bin/python" ]; }
ready && { echo "$dir/bin"; exit 0; }

need python3 python3
need flock util-linux
python3 -m pip --version >/dev/null 2>&1 || need pip3 python3-pip
python=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
python3 -c 'import ensurepip' 2>/dev/null || need "/usr/lib/python$python/ensurepip/__init__.py" "python$python-venv"

mkdir -p "$cache"
# Two test workers may ask at once on a fresh machine: one sets up, the other waits and finds it done.
exec 9>"$dir.lock"
flock 9
ready && { echo "$dir/bin"; exit 0; }
rm -rf "$dir"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "ensure-python-tool: installing $tool from $requirements (PyPI) in $dir" >&2
python3 -m venv "$dir" >"$log" 2>&1 || fail "python3 -m venv failed: $(tail -1 "$log")"
# --no-deps: every package is pinned in the file, so nothing unpinned comes along.
"$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements" >"$log" 2>&1 ||
  fail "pip install -r $requirements failed: $(tail -1 "$log")"
"$dir/bin/pip" check >"$log" 2>&1 || fail "the pinned packages do not fit together: $(head -1 "$log")"
touch "$dir/.installed"
echo "ensure-python-tool: $tool ready" >&2
echo "$dir/bin"
