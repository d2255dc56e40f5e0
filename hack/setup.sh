#!/usr/bin/env bash
# Installs every build and test dependency from Debian's packages, then configures and builds
# Phalanx into build/. Idempotent: a second run installs nothing and rebuilds only what changed.
#   ./hack/setup.sh            # install + configure + build
#   PHALANX_SKIP_BUILD=1 ./hack/setup.sh   # install only
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl curl patch
  libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev
  libabsl-dev libcpprest-dev libboost-dev libboost-system-dev libssl-dev
  libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libsimdjson-dev rapidjson-dev jq ccache
  prometheus python3-yaml
  clang-16 libclang-rt-16-dev
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "hack/setup.sh: not root and no sudo; cannot install packages" >&2; exit 1
  fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # The prometheus package is here for its binaries (the monitoring tests run their own
  # Prometheus on a free port); on a machine running systemd its packaged service would start
  # listening on :9090, so it is stopped and disabled when this run installed it.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
else
  echo "[setup] all ${#PACKAGES[@]} packages present"
fi

if [ "${PHALANX_SKIP_BUILD:-0}" = "1" ]; then exit 0; fi

BUILD_DIR="${PHALANX_BUILD_DIR:-build}"
# ccache, keyed on paths relative to this checkout: a second clone on the same machine (CI runs
# in a fresh clone every time) compiles only what differs instead of all ~225 objects again.
# A cold machine builds everything once, as before. PHALANX_CCACHE=0 turns it off.
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=)
if [ "${PHALANX_CCACHE:-1}" = "1" ] && command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
# Configure every time (it is quick): a component directory added since the last configure is
# only picked up by a fresh configure.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${PHALANX_BUILD_TYPE:-RelWithDebInfo}" \
  "${launcher[@]}" >/dev/null
# Two cores and heavy template code: more than two jobs only thrashes.
cmake --build "$BUILD_DIR" -j "${PHALANX_JOBS:-2}"
