#!/usr/bin/env bash
# CI step: the packed packages installed with npm into a project outside the repository, type-checked
# (Bundler, and NodeNext with its documented workaround) and run on plain Node. See consumer-test.mjs.
set -euo pipefail
cd "$(dirname "$0")/../.."
node scripts/ci/consumer-test.mjs
