#!/usr/bin/env bash
# The CRDs install and become Established; every example in deploy/examples applies
# cleanly with server-side apply and reads back with its defaults; then the example
# objects are deleted (the CRDs stay installed: other tests may share the cluster;
# set PHALANX_E2E_DELETE_CRDS=1 to delete them too).
# Needs PHALANX_KUBECONFIG (a cluster from hack/cluster/up.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster

if install_crds; then pass "CRDs installed and Established"; else finish; fi

# every CRD is served with its short names and in the phalanx category
for r in tj ctq tq nf ntopo networktopologies; do
  if out=$(kc get "$r" -A 2>&1); then pass "kubectl get $r works"; else fail "kubectl get $r: $out"; fi
done
if out=$(kc get phalanx -A 2>&1); then pass "category 'phalanx' lists the resources"; else fail "kubectl get phalanx: $out"; fi

EX="$REPO_ROOT/deploy/examples"
files=("$EX"/*.yaml)
[[ ${#files[@]} -gt 0 ]] || die "no examples in $EX"
for f in "${files[@]}"; do
  if out=$(kc apply --server-side --field-manager=phalanx-e2e -f "$f" 2>&1); then
    pass "apply --server-side $(basename "$f")"
  else
    fail "apply --server-side $(basename "$f"): $out"
  fi
done

# Re-applying is a no-op (idempotent, no conflicts).
if out=$(kc apply --server-side --field-manager=phalanx-e2e -f "$EX" 2>&1); then
  pass "re-apply of all examples is clean"
else
  fail "re-apply: $out"
fi

# Defaults from the schemas are visible.
check() { # description expected jsonpath args...
  local what=$1 want=$2; shift 2
  local got
  got=$(kc get "$@" 2>&1)
  if [[ $got == "$want" ]]; then pass "$what = $want"; else fail "$what: want '$want', got '$got'"; fi
}
check "tj/moe-gb200-tp16 .spec.successPolicy default" All -n team-llm tj moe-gb200-tp16 -o jsonpath='{.spec.successPolicy}'
check "tj/moe-gb200-tp16 .spec.suspend default" false -n team-llm tj moe-gb200-tp16 -o jsonpath='{.spec.suspend}'
check "tj/moe-gb200-tp16 .spec.topology.groupLevel" nvidia.com/gpu.clique -n team-llm tj moe-gb200-tp16 -o jsonpath='{.spec.topology.groupLevel}'
check "tj/llama-pretrain-64 .spec.replicas" 8 -n team-llm tj llama-pretrain-64 -o jsonpath='{.spec.replicas}'
check "tj/llama-pretrain-64 template kept (preserve-unknown-fields)" 32 -n team-llm tj llama-pretrain-64 -o jsonpath='{.spec.template.spec.containers[0].resources.limits.vpc\.amazonaws\.com/efa}'
check "tj/mistral-finetune .spec.elastic.step" 2 -n team-research tj mistral-finetune -o jsonpath='{.spec.elastic.step}'
check "ctq/research .spec.preemption.borrowWithinCohort.policy default" Never ctq research -o jsonpath='{.spec.preemption.borrowWithinCohort.policy}'
check "ctq/vision .spec.stopPolicy default" None ctq vision -o jsonpath='{.spec.stopPolicy}'
check "ctq/llm .spec.fairSharing.weight" 2 ctq llm -o jsonpath='{.spec.fairSharing.weight}'
check "tq team-vision/training -> ctq" vision -n team-vision tq training -o jsonpath='{.spec.clusterQueue}'
check "ntopo/gb200 levels" "topology.k8s.aws/network-node-layer-1 topology.k8s.aws/network-node-layer-2 topology.k8s.aws/network-node-layer-3 nvidia.com/gpu.clique" ntopo gb200 -o jsonpath='{.spec.levels[*].nodeLabel}'
check "nf/p5 topologyName" eks nf p5 -o jsonpath='{.spec.topologyName}'

# Printer columns render.
if out=$(kc get tj -A 2>&1) && [[ $out == *QUEUE* && $out == *REPLICAS* && $out == *DOMAIN* ]]; then
  pass "TrainingJob printer columns"
else
  fail "TrainingJob printer columns: $out"
fi

# Status subresource: status is writable only through /status.
if out=$(kc patch -n team-llm tj llama-pretrain-64 --subresource=status --type=merge \
    -p '{"status":{"phase":"Admitted","admission":{"clusterQueue":"llm","flavor":"p5","replicas":8}}}' 2>&1); then
  pass "status subresource patch"
else
  fail "status subresource patch: $out"
fi
check "status.admission.replicas via /status" 8 -n team-llm tj llama-pretrain-64 -o jsonpath='{.status.admission.replicas}'

# Cleanup: delete in reverse order; namespaces are finalized by kube-controller-manager.
for ((i = ${#files[@]} - 1; i >= 0; i--)); do
  kc delete --ignore-not-found --wait=false -f "${files[$i]}" >/dev/null 2>&1 || true
done
if eventually 120 bash -c "! kubectl --kubeconfig='$PHALANX_KUBECONFIG' get ns team-llm team-vision team-research -o name 2>/dev/null | grep -q ."; then
  pass "example namespaces deleted (namespace controller ran)"
else
  fail "example namespaces still present after 120s"
fi
if [[ -n ${PHALANX_E2E_DELETE_CRDS:-} ]]; then
  kc delete --ignore-not-found -f "$REPO_ROOT/crds/" >/dev/null 2>&1 && pass "CRDs deleted" || fail "CRDs not deleted"
fi
finish
