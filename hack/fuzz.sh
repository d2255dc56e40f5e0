#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang++-16, -fsanitize=fuzzer,address,undefined) in
# build-san/ (hack/build-san.sh, shared with hack/sanitize.sh) and runs each over its corpus for a
# bounded time. Fails on the first crash, leak, sanitizer report, timeout or out-of-memory,
# printing the input that caused it.
#   hack/fuzz.sh                          # every target, 20 s each
#   hack/fuzz.sh --seconds 600 --target fuzz_quantity
# Environment: PHALANX_SAN_BUILD_DIR (default build-san), PHALANX_SAN_FLAGS (hack/build-san.sh),
# PHALANX_JOBS (default 2).
# The corpus in tests/fuzz/corpus/<target> is only read; new inputs go to a scratch directory
# (printed), from which interesting ones can be copied into the corpus by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --target) only="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "hack/fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

# The targets are the sources tests/fuzz/fuzz_*.cc (tests/fuzz/CMakeLists.txt builds each).
targets=()
for src in tests/fuzz/fuzz_*.cc; do
  t=${src##*/}
  targets+=("${t%.cc}")
done
if [ -n "$only" ]; then
  if [[ " ${targets[*]} " != *" $only "* ]]; then
    echo "hack/fuzz.sh: unknown target $only (one of: ${targets[*]})" >&2
    exit 2
  fi
  targets=("$only")
fi

# build-san/ (hack/build-san.sh): the fuzz targets beside the sanitized unit tests.
BUILD_DIR=$(./hack/build-san.sh fuzz_all | tail -1)

symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0${symbolizer:+:external_symbolizer_path=$symbolizer}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${symbolizer:+:external_symbolizer_path=$symbolizer}"
work="$(mktemp -d /tmp/phalanx-fuzz.XXXXXX)"
echo "[fuzz] new inputs and crash artifacts go under $work (removed when nothing is found)"
failed=0
for t in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$t"
  if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
    echo "hack/fuzz.sh: FAILED: corpus $corpus is missing or empty" >&2
    exit 1
  fi
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  log="$work/$t/log"
  echo "[fuzz] $t for ${seconds}s over $corpus"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a few inputs must not eat the
  # machine (both are reported as failures with their input). max_len bounds the inputs the
  # fuzzer makes up (seeds may be longer).
  set +e
  nice -n 10 "$BUILD_DIR/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$work/$t/artifacts/" "$work/$t/corpus" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" |
          sed 's/^stat:://' | tr '\n' ' ')
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "[fuzz] $t FAILED (exit $rc); last lines of $log:" >&2
    grep -vE '^#[0-9]+' "$log" | tail -40 >&2
    for a in "$work/$t/artifacts/"*; do
      [ -e "$a" ] && echo "[fuzz] $t crash input: $a (reproduce: $BUILD_DIR/tests/fuzz/$t $a)" >&2
    done
    continue
  fi
  # libFuzzer's last status line: executions, coverage (cov: edges, ft: features) and the
  # corpus it ended with (corp: inputs/bytes), as docs/fuzzing.md records them.
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
  echo "[fuzz] $t ok: $stats"
  echo "[fuzz] $t final: ${done_line:-(no DONE line)}"
done
if [ "$failed" -ne 0 ]; then
  echo "[fuzz] FAILED" >&2
  exit 1
fi
# Nothing found: the inputs made up on the way are not worth keeping (CI runs this on every
# submission, and they would pile up in /tmp). On a finding everything stays for the crash input.
rm -rf "$work"
echo "[fuzz] all ${#targets[@]} targets ran ${seconds}s each without a finding"
