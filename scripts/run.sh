#!/usr/bin/env bash
# Sets up, builds and runs the main job with configs/default.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/bin/fieldbrain --config configs/default.json "$@"
