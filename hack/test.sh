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

# The Go build of the upstream binaries runs beside the C++ build: on a cold machine it keeps
# about one core busy for ~19 minutes (module downloads, single-threaded links) and runs at
# nice 10, so together they take minutes less than one after the other (docs/ci.md). Its
# output goes to a log, printed when it ends; a cached build returns at once.
go_log="$(mktemp)"
./hack/cluster/build.sh >"$go_log" 2>&1 &
go_pid=$!
setup_rc=0
./hack/setup.sh || setup_rc=$?
# Then, while the Go build finishes, the clang build of build-san/ that the ctests `sanitize`
# and `fuzz_short` use: it takes the core the Go build leaves idle, where inside ctest (both
# tests are RUN_SERIAL) nothing else would run beside it. Only for a whole run: a selection
# such as `-L unit` may not need build-san/ at all.
san_rc=0
if [ "$setup_rc" -eq 0 ] && [ "$#" -eq 0 ]; then
  ./hack/build-san.sh phalanx_test_binaries phalanx_sanitizer_canary fuzz_all >/dev/null ||
    san_rc=$?
fi
go_rc=0
wait "$go_pid" || go_rc=$?
cat "$go_log"
rm -f "$go_log"
if [ "$setup_rc" -ne 0 ] || [ "$san_rc" -ne 0 ] || [ "$go_rc" -ne 0 ]; then
  echo "[test] FAILED: hack/setup.sh exited $setup_rc, hack/build-san.sh $san_rc," \
       "hack/cluster/build.sh $go_rc" >&2
  exit 1
fi

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
