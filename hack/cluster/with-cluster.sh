#!/usr/bin/env bash
# Run a command against a fresh local cluster, then stop the cluster whatever happens.
# Usage: hack/cluster/with-cluster.sh [--build] [--scheduler-config FILE] -- COMMAND [ARGS...]
#   --build   run hack/cluster/build.sh first (a no-op when the binaries are cached;
#             a cold build takes ~19 minutes on 2 cores)
# The command sees PHALANX_KUBECONFIG and PHALANX_CLUSTER_DIR. Exit status is the command's
# (or up.sh's if the cluster did not start). The cluster has a watchdog TTL of
# PHALANX_CLUSTER_TTL seconds (default 5400) in case this script is killed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build=0 upargs=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=1; shift ;;
    --scheduler-config) upargs+=(--scheduler-config "$2"); shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || { echo "usage: with-cluster.sh [--build] [--scheduler-config FILE] -- COMMAND..." >&2; exit 2; }
if [[ $build == 1 ]]; then
  "$HERE/build.sh" || exit 1
fi
export PHALANX_CLUSTER_DIR="${PHALANX_CLUSTER_DIR:-/tmp/phalanx-cluster}"
kc=$("$HERE/up.sh" --ttl "${PHALANX_CLUSTER_TTL:-5400}" "${upargs[@]}" | tail -n 1)
rc=${PIPESTATUS[0]}
if [[ $rc != 0 || ! -f $kc ]]; then
  echo "[with-cluster] FAILED: hack/cluster/up.sh exited $rc" >&2
  exit 1
fi
trap '"$HERE/down.sh" >&2' EXIT
export PHALANX_KUBECONFIG="$kc"
"$@"
