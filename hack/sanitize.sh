#!/usr/bin/env bash
# The unit and integration tests under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer: builds them in build-san/ (clang++-16,
# PHALANX_SANITIZE=address,undefined; hack/build-san.sh), checks that the build really is
# sanitized, and runs them with ctest against a local control plane. Any sanitizer report fails
# the test that hit it, and the run.
#   hack/sanitize.sh                       # ctest -L 'unit|integration' -LE monitoring
#   hack/sanitize.sh -R Quantity           # other ctest arguments instead of that selection
# The integration tests need a control plane: the one in PHALANX_KUBECONFIG when it is set (as
# inside ./hack/test.sh, whose ctest runs this as the test `sanitize`), else a private one
# started and stopped here (hack/cluster/with-cluster.sh) in PHALANX_CLUSTER_DIR (default a new
# directory under /tmp). Environment: PHALANX_SAN_BUILD_DIR (default build-san), PHALANX_JOBS
# (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

# The shell tests labelled `monitoring` check YAML with promtool and run none of our C++.
selection=(-L 'unit|integration' -LE monitoring)
[ $# -eq 0 ] || selection=("$@")

BUILD_DIR=$(./hack/build-san.sh phalanx_test_binaries phalanx_sanitizer_canary | tail -1)
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)

symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
symbolize=${symbolizer:+external_symbolizer_path=$symbolizer}
symbolize=${symbolize:-allow_addr2line=1}
# halt_on_error: the first report ends the process (for ASan the default; UBSan's code is also
# built with -fno-sanitize-recover). Leaks are checked at every test process's exit.
asan=(halt_on_error=1 abort_on_error=0 detect_leaks=1 detect_stack_use_after_return=1
      check_initialization_order=1 strict_init_order=1 "$symbolize")
ASAN_OPTIONS=$(IFS=:; echo "${asan[*]}")
export ASAN_OPTIONS
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:$symbolize"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitize/lsan_suppressions.txt:print_suppressions=0"

fail() { echo "hack/sanitize.sh: FAILED: $*" >&2; exit 1; }

# 1. The instrumentation is there and a finding fails: each deliberate bug of the canary must be
#    reported by its sanitizer and end the process with a non-zero status.
canary="$BUILD_DIR/tests/sanitize/phalanx_sanitizer_canary"
"$canary" none || fail "$canary none exited $?: the canary cannot even run"
for case in "heap-buffer-overflow:ERROR: AddressSanitizer: heap-buffer-overflow" \
            "heap-use-after-free:ERROR: AddressSanitizer: heap-use-after-free" \
            "signed-overflow:runtime error: signed integer overflow" \
            "leak:ERROR: LeakSanitizer: detected memory leaks"; do
  bug=${case%%:*} want=${case#*:}
  set +e
  out=$("$canary" "$bug" 2>&1)
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || fail "the canary's $bug exited 0: the sanitizers would let findings pass"
  grep -qF "$want" <<<"$out" || fail "the canary's $bug did not report '$want' (exit $rc): $out"
done
echo "[sanitize] canary: 4 deliberate bugs reported and fatal"

# 2. Every test executable the selection runs is instrumented: ASan's per-object constructor and
#    UBSan's non-recovering handlers are linked in (a test built without PHALANX_SANITIZE has
#    neither), as are the binaries the shell tests run.
mapfile -t exes < <(ctest --test-dir "$BUILD_DIR" "${selection[@]}" --show-only=json-v1 |
  jq -r '.tests[].command[0] // empty' | sort -u | grep "^$BUILD_DIR/" || true)
exes+=("$BUILD_DIR/cli/phalanx")
[ "${#exes[@]}" -gt 1 ] || fail "ctest ${selection[*]} selects no test executable in $BUILD_DIR"
for exe in "${exes[@]}"; do
  syms=$(nm "$exe" 2>/dev/null) || fail "nm cannot read $exe"
  grep -q 'asan.module_ctor' <<<"$syms" || fail "$exe has no AddressSanitizer instrumentation"
  grep -q '__ubsan_handle_.*_abort' <<<"$syms" ||
    fail "$exe has no UndefinedBehaviorSanitizer checks"
done
echo "[sanitize] ${#exes[@]} executables instrumented with ASan and UBSan"

# 3. The tests. A control plane only when the selection has integration tests.
needs_cluster=$(ctest --test-dir "$BUILD_DIR" "${selection[@]}" --show-only=json-v1 |
  jq '[.tests[] | select(any(.properties[]?;
                                .name == "LABELS" and (.value | index("integration"))))] | length')
run_ctest=(ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error
           -j "${PHALANX_JOBS:-2}" "${selection[@]}")
echo "[sanitize] running ${run_ctest[*]} ($needs_cluster integration tests)"
if [ "$needs_cluster" -eq 0 ]; then
  "${run_ctest[@]}"
elif [ -n "${PHALANX_KUBECONFIG:-}" ]; then
  [ -f "$PHALANX_KUBECONFIG" ] || fail "PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG does not exist"
  echo "[sanitize] integration tests against the control plane of $PHALANX_KUBECONFIG"
  "${run_ctest[@]}"
else
  ./hack/cluster/build.sh
  export PHALANX_CLUSTER_DIR="${PHALANX_CLUSTER_DIR:-$(mktemp -d /tmp/phalanx-san-cluster.XXXXXX)}"
  ./hack/cluster/with-cluster.sh -- "${run_ctest[@]}"
fi
echo "[sanitize] all selected tests passed under ASan and UBSan"
