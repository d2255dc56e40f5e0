# Helpers for tests/e2e/cluster/*_test.sh. Source it.
# shellcheck shell=bash
set -uo pipefail
E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$E2E_DIR/../../.." && pwd)"
PASSED=0
FAILED=0
TEST_NAME=$(basename "$0" .sh)

pass() { PASSED=$((PASSED + 1)); echo "PASS: $TEST_NAME: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $TEST_NAME: $*"; }
die() { FAILED=$((FAILED + 1)); echo "FAIL: $TEST_NAME: $*"; finish; }
finish() {
  echo "$TEST_NAME: $PASSED passed, $FAILED failed"
  [[ $FAILED == 0 ]] && exit 0 || exit 1
}

# The cluster comes from PHALANX_KUBECONFIG (hack/cluster/up.sh prints it). No cluster is a
# failure, not a skip.
require_cluster() {
  if [[ -z ${PHALANX_KUBECONFIG:-} ]]; then
    die "PHALANX_KUBECONFIG is not set (start a cluster: export PHALANX_KUBECONFIG=\$(hack/cluster/up.sh | tail -1))"
  fi
  if [[ ! -r $PHALANX_KUBECONFIG ]]; then
    die "PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG is not a readable file"
  fi
  local out
  if ! out=$(kc get --raw /readyz 2>&1); then
    die "cluster at PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG is unreachable: $out"
  fi
}

kc() { kubectl --kubeconfig="$PHALANX_KUBECONFIG" --request-timeout=30s "$@"; }

# Poll until a command succeeds or $1 seconds pass.
eventually() { # timeout cmd...
  local t=$1; shift
  local deadline=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS >= deadline)) && return 1
    sleep 0.5
  done
}

install_crds() {
  local out
  if ! out=$(kc apply --server-side --force-conflicts --field-manager=phalanx-e2e -f "$REPO_ROOT/crds/" 2>&1); then
    fail "CRDs did not apply: $out"
    return 1
  fi
  local crd
  for crd in trainingjobs clustertrainingqueues trainingqueues nodeflavors networktopologies; do
    if ! kc wait --for=condition=Established --timeout=60s "crd/$crd.phalanx.dev" >/dev/null 2>&1; then
      fail "crd/$crd.phalanx.dev did not become Established"
      return 1
    fi
  done
  # discovery of the new group can lag a moment behind Established
  eventually 30 kc get trainingjobs -A
}

# Starts Phalanx on a private cluster of this test's own (hack/phalanx-up.sh ARGS, under
# PHALANX_BUILD_DIR) and stops it when the test exits: exports PHALANX_CLUSTER_DIR, sets
# PHALANX_KUBECONFIG and sources the cluster's env (PHALANX_SCHEDULER_GRPC, ...). Dies with
# phalanx-up.sh's log if it fails.
phalanx_up_private() { # name phalanx-up-args...
  local name=$1; shift
  export PHALANX_CLUSTER_DIR
  PHALANX_CLUSTER_DIR=$(mktemp -d "/tmp/phalanx-e2e-$name.XXXXXX")
  rmdir "$PHALANX_CLUSTER_DIR"
  trap '"$REPO_ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true' EXIT
  local t0=$SECONDS log="$PHALANX_CLUSTER_DIR.log"
  if ! PHALANX_KUBECONFIG=$("$REPO_ROOT/hack/phalanx-up.sh" "$@" 2>"$log" | tail -1); then
    cat "$log"; rm -f "$log"
    die "hack/phalanx-up.sh $* failed"
  fi
  rm -f "$log"
  pass "phalanx-up.sh $* in $((SECONDS - t0))s"
  # shellcheck disable=SC1091
  source "$PHALANX_CLUSTER_DIR/env"
}

# The bench tests' first step: runs hack/SCRIPT ARGS..., passes or fails on its exit status
# (showing its last 40 lines on failure), and prints its last stdout line, the benchmark's
# JSON, also left in BENCH_JSON.
run_bench() {
  local script=$1 t0=$SECONDS out rc
  shift
  out=$("$REPO_ROOT/hack/$script" "$@" 2>&1)
  rc=$?
  BENCH_JSON=$(tail -1 <<<"$out")
  [[ $rc == 0 ]] && pass "$script $* exited 0 in $((SECONDS - t0))s" ||
    { echo "$out" | tail -40; fail "$script exited $rc"; }
  echo "$BENCH_JSON"
}
