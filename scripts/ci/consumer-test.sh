#!/usr/bin/env bash
# CI step: the packed packages installed with npm into a project outside the repository, type-checked
# (Bundler, and NodeNext with its documented workaround) and run on plain Node: the machine's, then
# Node 22 and 24 (binaries from the npm registry, cached like node24-tests.sh's). See consumer-test.mjs.
set -euo pipefail
cd "$(dirname "$0")/../.."
node scripts/ci/consumer-test.mjs --node 22 --node 24
