#!/usr/bin/env bash
# The whole test suite while busy processes load every core: shows that no test depends on an idle
# machine (issue 11, point 8). One busy loop per core (default: the number of cores, at least 2) runs
# at normal priority beside `npm test`; they are stopped when it ends, however it ends.
#
#   bash scripts/test-under-load.sh [--busy N] [vitest args...]
#
# Exit code: npm test's. The last lines say how many busy processes ran and how long the suite took.
set -euo pipefail
cd "$(dirname "$0")/.."

busy=$(nproc)
[ "$busy" -ge 2 ] || busy=2
if [ "${1:-}" = "--busy" ]; then
  busy=${2:?--busy takes a number}
  shift 2
fi
case "$busy" in ''|*[!0-9]*) echo "test-under-load: --busy takes a whole number, got '$busy'" >&2; exit 2 ;; esac

pids=()
stop_busy() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_busy EXIT
for _ in $(seq 1 "$busy"); do
  # A shell busy loop: pure CPU, no I/O (yes > /dev/null would do as well).
  bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "test-under-load: $busy busy processes (pids ${pids[*]}) load $(nproc) cores" >&2

start=$SECONDS
status=0
npm test -- "$@" || status=$?
echo "test-under-load: npm test exited $status after $((SECONDS - start)) s with $busy busy processes on $(nproc) cores" >&2
exit "$status"
