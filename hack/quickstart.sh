#!/usr/bin/env bash
# Sets up and builds Phalanx, then runs the main job on the built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
./hack/setup.sh
BUILD_DIR="${PHALANX_BUILD_DIR:-build}"
exec "$BUILD_DIR/cli/phalanx" demo
