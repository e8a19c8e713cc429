#!/usr/bin/env bash
# The main job (`npm run demo`): install what is needed, then run the demo on a local desktop.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node bin/vncua.js demo "$@"
