#!/usr/bin/env bash
# Configures build-san/ (clang++-16, -fsanitize=address,undefined on every object, the libFuzzer
# targets of tests/fuzz) and builds the given targets in it. hack/sanitize.sh and hack/fuzz.sh
# both build there: one clang build directory instead of two keeps the cold CI run short
# (docs/ci.md). Prints the build directory on its last line.
#   hack/build-san.sh phalanx_test_binaries
#   hack/build-san.sh fuzz_all
# Environment: PHALANX_SAN_BUILD_DIR (default build-san), PHALANX_SAN_CXX (default clang++-16),
# PHALANX_SAN_FLAGS (default "-O0 -gline-tables-only -DNDEBUG"; a long fuzzing campaign may want
# "-O1 -gline-tables-only -DNDEBUG" in a build directory of its own), PHALANX_JOBS (default 2),
# PHALANX_CCACHE=0 to compile without ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: hack/build-san.sh TARGET..." >&2; exit 2; }

CXX_SAN="${PHALANX_SAN_CXX:-clang++-16}"
if ! command -v "$CXX_SAN" >/dev/null 2>&1; then
  echo "hack/build-san.sh: FAILED: $CXX_SAN not found" \
       "(hack/setup.sh installs clang-16 and libclang-rt-16-dev)" >&2
  exit 1
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     "$CXX_SAN" -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
  echo "hack/build-san.sh: FAILED: $CXX_SAN cannot link -fsanitize=fuzzer,address,undefined" \
       "(install libclang-rt-16-dev)" >&2
  exit 1
fi

BUILD_DIR="${PHALANX_SAN_BUILD_DIR:-build-san}"
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=)
if [ "${PHALANX_CCACHE:-1}" = "1" ] && command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
# -O0 -gline-tables-only by default: a sanitized object compiles in about a third of the CPU of
# -O2 -g (tests/unit/kube/informer_test.cc: 13.4 s against 43.6 s; http_server_beast.cc: 24.7 s
# against 96.4 s), and a cold CI run pays for every object; line tables keep file:line in every
# sanitizer report. The three pure cores are compiled at -O2 all the same (CMakeLists.txt), so
# the property tests and the simulator do not run ten times slower. NDEBUG as in build/.
SAN_FLAGS="${PHALANX_SAN_FLAGS:--O0 -gline-tables-only -DNDEBUG}"
echo "[build-san] building $* in $BUILD_DIR with $CXX_SAN" >&2
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$SAN_FLAGS" \
  -DCMAKE_CXX_COMPILER="$CXX_SAN" -DPHALANX_SANITIZE=address,undefined -DPHALANX_FUZZ=ON \
  "${launcher[@]}" >/dev/null
nice -n 10 cmake --build "$BUILD_DIR" -j "${PHALANX_JOBS:-2}" --target "$@" >&2
echo "$BUILD_DIR"
