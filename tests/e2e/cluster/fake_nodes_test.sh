#!/usr/bin/env bash
# hack/cluster/fake-nodes.sh creates kwok-managed GPU nodes that become Ready with the
# topology labels and GPU/EFA allocatable of docs/local-cluster.md's table; a pod bound to one
# (spec.nodeName) goes Running, and the phalanx.dev/kwok-phase annotation completes it
# (Succeeded, or Failed with an exit code). Cleans up its nodes and namespace.
# Needs PHALANX_KUBECONFIG (a cluster from hack/cluster/up.sh, which runs kwok).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster
FAKE="$REPO_ROOT/hack/cluster/fake-nodes.sh"
P5=e2e-p5-$$
GB=e2e-gb-$$
NS=phalanx-e2e-nodes-$$
cleanup() {
  kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG "$FAKE" --delete --prefix "$P5" >/dev/null 2>&1 || true
  PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG "$FAKE" --delete --prefix "$GB" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# 20 p5 nodes, 8 per layer-3 block, 2 blocks per layer-2 node
t0=$SECONDS
if out=$(PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG "$FAKE" --preset eks --instance-type p5.48xlarge --count 20 \
    --nodes-per-block 8 --blocks-per-spine 2 --prefix "$P5" 2>&1); then
  pass "20 p5 nodes created and Ready in $((SECONDS - t0))s"
else
  die "fake-nodes.sh p5: $out"
fi
n=$(kc get nodes -l "phalanx.dev/fake-node-prefix=$P5" -o name | wc -l)
[[ $n == 20 ]] && pass "20 nodes listed by prefix label" || fail "expected 20 nodes, got $n"

node="$P5-0009"
get() { kc get node "$node" -o jsonpath="$1"; }
expect() { # what want got
  if [[ $3 == "$2" ]]; then pass "$1 = $2"; else fail "$1: want '$2', got '$3'"; fi
}
expect "$node Ready" True "$(get '{.status.conditions[?(@.type=="Ready")].status}')"
expect "$node allocatable nvidia.com/gpu" 8 "$(get '{.status.allocatable.nvidia\.com/gpu}')"
expect "$node capacity nvidia.com/gpu" 8 "$(get '{.status.capacity.nvidia\.com/gpu}')"
expect "$node allocatable vpc.amazonaws.com/efa" 32 "$(get '{.status.allocatable.vpc\.amazonaws\.com/efa}')"
expect "$node allocatable cpu" 192 "$(get '{.status.allocatable.cpu}')"
expect "$node allocatable memory" 2Ti "$(get '{.status.allocatable.memory}')"
expect "$node instance-type" p5.48xlarge "$(get '{.metadata.labels.node\.kubernetes\.io/instance-type}')"
expect "$node hostname label" "$node" "$(get '{.metadata.labels.kubernetes\.io/hostname}')"
# node 9: block 9/8=1, layer-2 1/2=0, layer-1 0/4=0
expect "$node layer-3" "nn-$P5-l3-1" "$(get '{.metadata.labels.topology\.k8s\.aws/network-node-layer-3}')"
expect "$node layer-2" "nn-$P5-l2-0" "$(get '{.metadata.labels.topology\.k8s\.aws/network-node-layer-2}')"
expect "$node layer-1" "nn-$P5-l1-0" "$(get '{.metadata.labels.topology\.k8s\.aws/network-node-layer-1}')"
blocks=$(kc get nodes -l "phalanx.dev/fake-node-prefix=$P5" -o jsonpath='{range .items[*]}{.metadata.labels.topology\.k8s\.aws/network-node-layer-3}{"\n"}{end}' | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
expect "p5 nodes per layer-3 block" "8 8 4 " "$blocks"
expect "$node managed by kwok" fake "$(get '{.metadata.annotations.kwok\.x-k8s\.io/node}')"

# 4 GB200 nodes: 4 GPUs, 4 EFA, NVLink clique label
if out=$(PHALANX_KUBECONFIG=$PHALANX_KUBECONFIG "$FAKE" --preset gb200 --count 4 --prefix "$GB" 2>&1); then
  pass "4 gb200 nodes created and Ready"
else
  fail "fake-nodes.sh gb200: $out"
fi
node="$GB-0003"
expect "$node instance-type" p6e-gb200.36xlarge "$(get '{.metadata.labels.node\.kubernetes\.io/instance-type}')"
expect "$node allocatable nvidia.com/gpu" 4 "$(get '{.status.allocatable.nvidia\.com/gpu}')"
expect "$node allocatable vpc.amazonaws.com/efa" 4 "$(get '{.status.allocatable.vpc\.amazonaws\.com/efa}')"
expect "$node clique" "$GB-cluster.0" "$(get '{.metadata.labels.nvidia\.com/gpu\.clique}')"

# Pods bound to a fake node run, and complete on request.
kc create namespace "$NS" >/dev/null || die "cannot create namespace $NS"
eventually 60 kc -n "$NS" get serviceaccount default || fail "serviceaccount $NS/default not created (kube-controller-manager)"
pod() { # name annotations-json
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
  annotations: $2
spec:
  nodeName: $P5-0003
  restartPolicy: Never
  containers:
  - name: trainer
    image: busybox
    resources:
      limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}
YAML
}
pod runner '{}' | kc apply -f - >/dev/null || fail "cannot create pod runner"
if eventually 60 bash -c "[[ \$(kubectl --kubeconfig='$PHALANX_KUBECONFIG' -n $NS get pod runner -o jsonpath='{.status.phase}') == Running ]]"; then
  pass "pod bound to $P5-0003 is Running"
else
  fail "pod runner not Running: $(kc -n "$NS" get pod runner -o jsonpath='{.status}')"
fi
expect "pod runner Ready" True "$(kc -n "$NS" get pod runner -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')"

kc -n "$NS" annotate pod runner phalanx.dev/kwok-phase=Succeeded >/dev/null || fail "annotate runner"
if eventually 60 bash -c "[[ \$(kubectl --kubeconfig='$PHALANX_KUBECONFIG' -n $NS get pod runner -o jsonpath='{.status.phase}') == Succeeded ]]"; then
  pass "annotated pod went Succeeded"
else
  fail "pod runner not Succeeded: $(kc -n "$NS" get pod runner -o jsonpath='{.status.phase}')"
fi

pod crasher '{"phalanx.dev/kwok-phase": "Failed", "phalanx.dev/kwok-exit-code": "137", "phalanx.dev/kwok-delay": "2s"}' | kc apply -f - >/dev/null || fail "cannot create pod crasher"
if eventually 60 bash -c "[[ \$(kubectl --kubeconfig='$PHALANX_KUBECONFIG' -n $NS get pod crasher -o jsonpath='{.status.phase}') == Failed ]]"; then
  pass "pod created with kwok-phase=Failed ran, then Failed"
else
  fail "pod crasher not Failed: $(kc -n "$NS" get pod crasher -o jsonpath='{.status.phase}')"
fi
expect "crasher exit code" 137 "$(kc -n "$NS" get pod crasher -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"

# Deleting a pod on a kwok node completes (kwok plays the kubelet's part).
if kc -n "$NS" delete pod runner crasher --timeout=60s >/dev/null 2>&1; then
  pass "pods on fake nodes delete"
else
  fail "pods on fake nodes did not delete within 60s"
fi

cleanup
trap - EXIT
if eventually 60 bash -c "! kubectl --kubeconfig='$PHALANX_KUBECONFIG' get nodes -l phalanx.dev/fake-node-prefix=$P5 -o name | grep -q ."; then
  pass "fake nodes deleted"
else
  fail "fake nodes still present"
fi
finish
