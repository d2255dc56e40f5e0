# Shared by the hack/bench-*.sh scripts that time a private local cluster; sourced, not run.
# The caller sets ROOT, TIMEOUT, KEEP (1: leave the cluster running) and BENCH_TAG (the log
# prefix), then sources this file, which makes a private cluster directory and defines:
#   log, remaining (seconds to the deadline), now, elapsed A B, sample_load (into LOADS),
#   bench_cleanup_trap  stop the cluster at exit: kept with --keep-cluster, logs kept on failure
#                       (the caller sets ok=1 once it has its result);
#   bench_flavor_yaml   the NetworkTopology and NodeFlavor of the benchmarks' queues;
#   bench_cluster_up N [fake-nodes.sh args]  hack/phalanx-up.sh with no nodes, then N fake nodes
#                       added here and awaited until their lifecycle taints are gone (phalanx-up.sh
#                       --nodes waits a fixed 120 s for that; kube-controller-manager, at 20 API
#                       requests/s by default, needs longer for 1,000 nodes). Exports KUBECONFIG and
#                       the cluster's env file (APISERVER_URL, CA_CERT, ADMIN_CERT, ADMIN_KEY) and
#                       defines kc. PHALANX_OPERATOR_ARGS, when exported, reaches the operator.
export PHALANX_CLUSTER_DIR
PHALANX_CLUSTER_DIR=$(mktemp -d "/tmp/phalanx-$BENCH_TAG.XXXXXX")
# shellcheck source=hack/cluster/lib.sh
source "$ROOT/hack/cluster/lib.sh"
DIR=$PHALANX_CLUSTER_DIR
log() { echo "[$BENCH_TAG] $*" >&2; }
deadline=$((SECONDS + TIMEOUT))
remaining() { local r=$((deadline - SECONDS)); ((r > 0)) && echo "$r" || echo 1; }
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
LOADS=()
sample_load() { LOADS+=("$(cut -d' ' -f1 /proc/loadavg)"); }

ok=0 up=0
bench_cleanup() {
  ((up == 1)) || return 0
  if [[ $KEEP == 1 ]]; then
    log "cluster kept: KUBECONFIG=$DIR/kubeconfig; stop it with PHALANX_CLUSTER_DIR=$DIR hack/phalanx-down.sh"
  elif [[ $ok == 1 ]]; then
    "$ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true
  else
    log "failed; logs kept in $DIR/logs (remove the directory when done)"
    PHALANX_KEEP_DIR=1 "$ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true
  fi
}
bench_cleanup_trap() { trap bench_cleanup EXIT; }

kc() { kubectl --request-timeout=60s "$@"; }
# The NetworkTopology (EKS layers 1-3, bench-eks) and NodeFlavor (p5.48xlarge, bench-p5) the
# benchmarks' ClusterTrainingQueues use, as YAML documents for kc apply.
bench_flavor_yaml() {
  cat <<'YAML'
apiVersion: phalanx.dev/v1alpha1
kind: NetworkTopology
metadata: {name: bench-eks}
spec:
  levels:
  - nodeLabel: topology.k8s.aws/network-node-layer-1
  - nodeLabel: topology.k8s.aws/network-node-layer-2
  - nodeLabel: topology.k8s.aws/network-node-layer-3
---
apiVersion: phalanx.dev/v1alpha1
kind: NodeFlavor
metadata: {name: bench-p5}
spec:
  topologyName: bench-eks
  nodeLabels: {node.kubernetes.io/instance-type: p5.48xlarge}
YAML
}
bench_fake_node_taints() {
  kc get nodes -l phalanx.dev/fake-node=true \
    -o jsonpath='{range .items[*]}{range .spec.taints[*]}{.key}{"\n"}{end}{end}' | grep -c '^node.kubernetes.io/' || true
}
bench_cluster_up() { # nodes [fake-nodes.sh args...]
  local nodes=$1 t_up t_nodes kubeconfig
  shift
  up=1
  t_up=$(now)
  if ! kubeconfig=$("$ROOT/hack/phalanx-up.sh" --nodes 0 --ttl $((TIMEOUT + 600)) | tail -1); then
    log "FAILED: hack/phalanx-up.sh"
    exit 1
  fi
  export KUBECONFIG="$kubeconfig"
  # shellcheck disable=SC1091
  source "$DIR/env"
  export APISERVER_URL CA_CERT ADMIN_CERT ADMIN_KEY
  "$ROOT/hack/cluster/fake-nodes.sh" --preset eks --count "$nodes" "$@" >&2
  t_nodes=$(now)
  until [[ $(bench_fake_node_taints) == 0 ]]; do
    ((SECONDS < deadline)) || { log "FAILED: fake nodes still carry node.kubernetes.io/ taints at the deadline"; exit 1; }
    sleep 2
  done
  log "cluster up in $(elapsed "$t_up" "$(now)")s ($nodes nodes Ready and untainted $(elapsed "$t_nodes" "$(now)")s after they were Ready)"
}
