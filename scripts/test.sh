#!/usr/bin/env bash
# The test command (`npm test`): install what is needed, type-check, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The Docker engine, the desktop image (eval/providers/docker.desktop.test.ts) and the worker image
# (cli/worker-image.desktop.test.ts; scripts/build-worker-image.sh sets up the other two
# first), beside the type check and the linter. Where none can be had, the docker tests are skipped and print why;
# VNCUA_TEST_DOCKER=0 skips the setup (the tests then say the engine or image is missing).
docker_log=$(mktemp)
docker_pid=""
if [ "${VNCUA_TEST_DOCKER:-1}" != 0 ]; then
  bash scripts/build-worker-image.sh >"$docker_log" 2>&1 &
  docker_pid=$!
fi
npx tsc -p tsconfig.json --noEmit
# One format, one linter: Biome checks both (npm run format rewrites the files).
npx biome ci --reporter=summary .
if [ -n "$docker_pid" ]; then
  if wait "$docker_pid"; then cat "$docker_log"; else
    cat "$docker_log"
    echo "vncua test: no Docker engine or image here (see above): the docker tests will be skipped, saying why" >&2
  fi
fi
rm -f "$docker_log"
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
