#!/usr/bin/env bash
# The whole product on a local control plane, in about two minutes: hack/phalanx-up.sh with 64
# fake p5.48xlarge nodes (EKS 3-layer network topology) and one GB200 group (36
# p6e-gb200.36xlarge nodes: two NVL72 NVLink cliques of 18), phalanx-scheduler, a real
# kube-scheduler and phalanx-operator; then `kubectl apply -f deploy/examples/` (priority
# classes, topologies, flavors, three teams' queues and three TrainingJobs), waits for the jobs,
# prints where each one landed and what the queues use, and stops everything.
#
# Usage: hack/demo.sh [--keep]
#   --keep   leave the cluster running (stop it with hack/phalanx-down.sh; KUBECONFIG is printed)
# Env: PHALANX_CLUSTER_DIR (default /tmp/phalanx-demo), PHALANX_BUILD_DIR (default build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PHALANX_CLUSTER_DIR=${PHALANX_CLUSTER_DIR:-/tmp/phalanx-demo}
BUILD="${PHALANX_BUILD_DIR:-build}"
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
export PHALANX_BUILD_DIR="$BUILD"
KEEP=0
case ${1:-} in
  --keep) KEEP=1 ;;
  "") ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
cleanup() { [[ $KEEP == 1 ]] || "$ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true; }
trap cleanup EXIT

say "starting the control plane, phalanx-scheduler, kube-scheduler, phalanx-operator and 100 fake GPU nodes"
# The gb200 preset's levels are the three network layers plus nvidia.com/gpu.clique; the p5
# nodes carry no clique label, and gangs on them ask for network levels only.
export KUBECONFIG
KUBECONFIG=$("$ROOT/hack/phalanx-up.sh" --preset gb200 --nodes 36 --add-nodes eks:64 --ttl 1800 | tail -1)
kubectl get nodes -L node.kubernetes.io/instance-type --no-headers |
  awk '{n[$NF]++} END {for (t in n) printf "  %3d x %s\n", n[t], t}'

say "kubectl apply -f deploy/examples/"
kubectl apply -f "$ROOT/deploy/examples/" | sed 's/^/  /'

say "waiting for the TrainingJobs (up to 120 s)"
deadline=$((SECONDS + 120))
jobs_running() {
  kubectl get trainingjobs -A -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -vc '^Running$' || true
}
while [[ $(jobs_running) != 0 ]] && ((SECONDS < deadline)); do sleep 2; done
kubectl get trainingjobs -A

say "where each gang landed (rank -> node -> network block / NVLink clique)"
for job in $(kubectl get trainingjobs -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'); do
  ns=${job%/*} name=${job#*/}
  echo "$job: $(kubectl -n "$ns" get trainingjob "$name" -o jsonpath='{.status.phase}: {.status.placement.level}={.status.placement.domain}')"
  kubectl -n "$ns" get trainingjob "$name" \
    -o jsonpath='{range .status.conditions[?(@.status=="True")]}    {.type}: {.message}{"\n"}{end}'
  kubectl -n "$ns" get pods -l "phalanx.dev/job=$name" --no-headers \
    -o custom-columns='RANK:.metadata.labels.phalanx\.dev/rank,POD:.metadata.name,NODE:.spec.nodeName' 2>/dev/null |
    sort -n | while read -r _ pod node; do
      [[ $node == "<none>" ]] && { echo "    $pod  (pending)"; continue; }
      printf '    %-28s %-18s %s\n' "$pod" "$node" "$(kubectl get node "$node" \
        -o jsonpath='{.metadata.labels.topology\.k8s\.aws/network-node-layer-3} {.metadata.labels.nvidia\.com/gpu\.clique}')"
    done
done

say "queues"
if "$BUILD/cli/phalanx" queues --help >/dev/null 2>&1; then
  "$BUILD/cli/phalanx" queues -A
else
  kubectl get clustertrainingqueues
  kubectl get trainingqueues -A
fi
if [[ $KEEP == 1 ]]; then
  say "left running: export KUBECONFIG=$KUBECONFIG; stop with PHALANX_CLUSTER_DIR=$PHALANX_CLUSTER_DIR hack/phalanx-down.sh"
else
  say "stopping everything"
fi
