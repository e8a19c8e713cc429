#!/usr/bin/env bash
# The test command (`npm test`): install what is needed, type-check, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npx tsc -p tsconfig.json --noEmit
# One format, one linter: Biome checks both (npm run format rewrites the files).
npx biome ci --reporter=summary .
report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
# One plain closing line: "Tests: N passed, N failed".
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`Tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
' "$report" 2>/dev/null || true
exit "$status"
