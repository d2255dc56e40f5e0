#!/usr/bin/env bash
# Runs the whole Phalanx test suite: setup (packages + build), then every test through ctest.
# Exits non-zero on any failure, and also when ctest ran no test at all.
#   ./hack/test.sh                 # everything
#   ./hack/test.sh -L unit         # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${PHALANX_BUILD_DIR:-build}"

./hack/setup.sh

echo "[test] running ctest in $BUILD_DIR"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j "${PHALANX_JOBS:-2}" "$@" \
  2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  echo "[test] FAILED (ctest exit $rc)" >&2
  exit "$rc"
fi
if ! grep -Eq '^100% tests passed, 0 tests failed out of [1-9]' "$log"; then
  echo "[test] FAILED: ctest did not report every test passing" >&2
  exit 1
fi
echo "[test] all tests passed"
