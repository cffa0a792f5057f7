#!/usr/bin/env bash
# pnpm at the project's pinned version, fetched from the npm registry (corepack cannot fetch it here).
exec npx --yes pnpm@10.34.8 "$@"
