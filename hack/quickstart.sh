#!/usr/bin/env bash
# Sets up and builds Phalanx, then runs the main job on the built-in default: `phalanx simulate`
# compares Phalanx with four baseline schedulers on a simulated 128-node p5 cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
./hack/setup.sh
BUILD_DIR="${PHALANX_BUILD_DIR:-build}"
exec "$BUILD_DIR/cli/phalanx" simulate "$@"
