#!/usr/bin/env bash
# The test command (`npm test`): install what is needed, type-check, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npx tsc -p tsconfig.json --noEmit
npx vitest run "$@"
