#!/usr/bin/env bash
# Runs the whole Phalanx test suite: setup (packages + build), the upstream Kubernetes binaries
# (built from pinned Go modules once, then cached in ~/.cache/phalanx), a local control plane on
# 127.0.0.1, and every test through ctest. Exits non-zero on any failure, and when ctest ran no
# test at all. The control plane is stopped (by PID) whatever happens.
#   ./hack/test.sh                 # everything
#   ./hack/test.sh -L unit         # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${PHALANX_BUILD_DIR:-build}"

./hack/setup.sh
./hack/cluster/build.sh

echo "[test] running ctest in $BUILD_DIR against a local control plane"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
export PHALANX_CLUSTER_DIR="${PHALANX_CLUSTER_DIR:-/tmp/phalanx-test-cluster}"
set +e
./hack/cluster/with-cluster.sh -- \
  ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j "${PHALANX_JOBS:-2}" "$@" \
  2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  echo "[test] FAILED (exit $rc)" >&2
  exit "$rc"
fi
if ! grep -Eq '^100% tests passed, 0 tests failed out of [1-9]' "$log"; then
  echo "[test] FAILED: ctest did not report every test passing" >&2
  exit 1
fi
echo "[test] all tests passed"
