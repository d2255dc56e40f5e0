#!/usr/bin/env bash
# Phalanx beside Kueue (issue #14 "Living beside Kueue"): on a control plane that also has Kueue's
# kinds registered (tests/e2e/cluster/testdata/kueue-crds.yaml, a fixture of ours modelling
# Kueue's names only), kubectl stays unambiguous:
#   1. kubectl api-resources: no plural, short name or kind is served by both phalanx.dev and
#      kueue.x-k8s.io;
#   2. one object of every Kueue kind and of every Phalanx kind, all with the same name: ctq, tq,
#      nf, ntopo, tj and the plurals return ours only; cq, lq, rf, queue, flavor, wl return
#      Kueue's only; the `phalanx` category lists phalanx.dev objects only; the old Phalanx names
#      (clusterqueues.phalanx.dev, ...) are gone;
#   3. deploy/examples/ applies unchanged and lands in phalanx.dev, nothing in kueue.x-k8s.io;
#   4. beside the TrainingJob kind of AWS's ACK SageMaker controller (testdata/
#      ack-sagemaker-trainingjob-crd.yaml, names only): trainingjobs.phalanx.dev and tj are ours,
#      and plain `trainingjobs` answers for one group only.
# The fixture CRDs (and with them every Kueue object) are deleted at the end; Phalanx's CRDs stay.
# Shares the cluster with the other tests/e2e/cluster tests (RESOURCE_LOCK with examples_apply:
# both apply deploy/examples). Needs PHALANX_KUBECONFIG (a cluster from hack/cluster/up.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster

KUEUE_CRDS="$E2E_DIR/testdata/kueue-crds.yaml"
ACK_CRD="$E2E_DIR/testdata/ack-sagemaker-trainingjob-crd.yaml"
EX="$REPO_ROOT/deploy/examples"
N=coexist-$$           # the one name every object of both groups gets
NS=phalanx-e2e-kueue-$$
TMP=$(mktemp -d)
# A discovery cache of this test's own, so a cache left by another test cannot answer for it.
k() { kc --cache-dir "$TMP/cache" "$@"; }
cleanup() {
  k delete --ignore-not-found --wait=false -f "$EX" >/dev/null 2>&1
  k delete --ignore-not-found --wait=false -n "$NS" trainingjob "$N" >/dev/null 2>&1
  k delete --ignore-not-found --wait=false ctq/"$N" nf/"$N" ntopo/"$N" >/dev/null 2>&1
  k delete --ignore-not-found --wait=false namespace "$NS" >/dev/null 2>&1
  k delete --ignore-not-found --wait=false -f "$KUEUE_CRDS" -f "$ACK_CRD" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT

# --- setup: both groups' CRDs, Established --------------------------------------------------
out=$(k apply --server-side --field-manager=phalanx-e2e -f "$KUEUE_CRDS" 2>&1) ||
  die "Kueue fixture CRDs did not apply: $out"
mapfile -t kueue_crds < <(k get -f "$KUEUE_CRDS" -o name)
[[ ${#kueue_crds[@]} == 8 ]] || die "expected 8 Kueue fixture CRDs, got ${#kueue_crds[@]}"
k wait --for=condition=Established --timeout=60s "${kueue_crds[@]}" >/dev/null ||
  die "Kueue fixture CRDs did not become Established"
install_crds || finish
pass "Kueue's 8 kinds (fixture) and Phalanx's 5 CRDs installed and Established"
eventually 30 k get cq || die "kueue.x-k8s.io is not served"

# --- 1. kubectl api-resources: nothing shared ------------------------------------------------
# Every name kubectl resolves for a group: plurals, short names, lower-case kinds. The APIVERSION
# column is the first containing "/"; the columns before it are NAME and SHORTNAMES (when any).
names_of() { # group
  k api-resources --api-group="$1" --no-headers | awk -v g="$1/" '{
    for (i = 1; i <= NF; i++) if (index($i, g) == 1) break
    print $1
    if (i == 3) { n = split($2, s, ","); for (j = 1; j <= n; j++) print s[j] }
    print tolower($(i + 2))
  }' | sort -u
}
phalanx_names=$(names_of phalanx.dev)
kueue_names=$(names_of kueue.x-k8s.io)
expect_names() { # group names-of-the-group wanted...
  local group=$1 names=$2 want; shift 2
  for want in "$@"; do
    grep -qx "$want" <<<"$names" || fail "api-resources: $group lacks '$want'"
  done
}
expect_names phalanx.dev "$phalanx_names" trainingjobs tj clustertrainingqueues ctq trainingqueues \
  tq nodeflavors nf networktopologies ntopo clustertrainingqueue networktopology
expect_names kueue.x-k8s.io "$kueue_names" clusterqueues cq localqueues lq queue queues \
  resourceflavors rf flavor flavors workloads wl topologies workloadpriorityclasses \
  admissionchecks cohorts
shared=$(comm -12 <(echo "$phalanx_names") <(echo "$kueue_names") | tr '\n' ' ')
if [[ -z $shared ]]; then
  pass "api-resources: no plural, short name or kind in both groups ($(wc -l <<<"$phalanx_names") phalanx.dev names, $(wc -l <<<"$kueue_names") kueue.x-k8s.io names)"
else
  fail "api-resources: served by both phalanx.dev and kueue.x-k8s.io: $shared"
fi

# --- 2. same-named objects in both groups ---------------------------------------------------
k create namespace "$NS" >/dev/null || die "cannot create namespace $NS"
# Kueue's objects need no spec here: the fixture accepts any object.
kueue_objects() {
  local v_kind_ns v kind ns
  for v_kind_ns in v1beta1/ClusterQueue/ v1beta1/LocalQueue/$NS v1beta1/ResourceFlavor/ \
      v1beta1/Workload/$NS v1beta1/WorkloadPriorityClass/ v1beta1/AdmissionCheck/ \
      v1alpha1/Topology/ v1alpha1/Cohort/; do
    IFS=/ read -r v kind ns <<<"$v_kind_ns"
    printf 'apiVersion: kueue.x-k8s.io/%s\nkind: %s\nmetadata: {name: %s%s}\n---\n' \
      "$v" "$kind" "$N" "${ns:+, namespace: $ns}"
  done
}
out=$(kueue_objects | k apply --server-side --field-manager=phalanx-e2e -f - 2>&1) ||
  die "cannot create the Kueue objects: $out"
out=$(k apply --server-side --field-manager=phalanx-e2e -f - 2>&1 <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: NetworkTopology
metadata: {name: $N}
spec:
  levels: [{nodeLabel: topology.k8s.aws/network-node-layer-1}, {nodeLabel: topology.k8s.aws/network-node-layer-2}]
---
apiVersion: phalanx.dev/v1alpha1
kind: NodeFlavor
metadata: {name: $N}
spec: {topologyName: $N, nodeLabels: {node.kubernetes.io/instance-type: p5.48xlarge}}
---
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: $N}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: $N, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: $N, namespace: $NS}
spec: {clusterQueue: $N}
---
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: $N, namespace: $NS}
spec:
  queueName: $N
  replicas: 1
  template:
    spec:
      containers: [{name: trainer, image: busybox, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
) || die "cannot create the Phalanx objects: $out"
pass "one object of each of Kueue's 8 kinds and Phalanx's 5 kinds, all named $N"

# `kubectl get WHAT` returns exactly one object named $N, of the given resource.group: the other
# group's same-named object is not in the answer.
gets_only() { # want-resource.group what [kubectl args]
  local want=$1 what=$2; shift 2
  local got
  if ! got=$(k get "$what" "$@" -o name 2>&1); then fail "kubectl get $what $*: $got"; return; fi
  got=$(grep "/$N\$" <<<"$got")
  if [[ $got == "$want/$N" ]]; then
    pass "kubectl get $what $* -> $got"
  else
    fail "kubectl get $what $*: want only $want/$N, got '$(tr '\n' ' ' <<<"$got")'"
  fi
}
gets_only clustertrainingqueue.phalanx.dev ctq
gets_only clustertrainingqueue.phalanx.dev clustertrainingqueues
gets_only trainingqueue.phalanx.dev tq -n "$NS"
gets_only trainingqueue.phalanx.dev trainingqueues -n "$NS"
gets_only nodeflavor.phalanx.dev nf
gets_only nodeflavor.phalanx.dev nodeflavors
gets_only networktopology.phalanx.dev ntopo
gets_only networktopology.phalanx.dev networktopologies
gets_only trainingjob.phalanx.dev tj -n "$NS"
gets_only trainingjob.phalanx.dev trainingjobs -n "$NS"
gets_only clusterqueue.kueue.x-k8s.io cq
gets_only clusterqueue.kueue.x-k8s.io clusterqueues
gets_only localqueue.kueue.x-k8s.io lq -n "$NS"
gets_only localqueue.kueue.x-k8s.io queue -n "$NS"
gets_only resourceflavor.kueue.x-k8s.io rf
gets_only resourceflavor.kueue.x-k8s.io flavor
gets_only topology.kueue.x-k8s.io topologies
gets_only workload.kueue.x-k8s.io wl -n "$NS"

# A whole-listing check too: every object `get ctq` / `get cq` returns is of one group.
only_group() { # what group [kubectl args]
  local what=$1 group=$2; shift 2
  local got others
  got=$(k get "$what" "$@" -o name 2>&1) || { fail "kubectl get $what: $got"; return; }
  others=$(grep -v "^[a-z]*\.$group/" <<<"$got" | tr '\n' ' ')
  [[ -z $others ]] && pass "kubectl get $what $*: all $(wc -l <<<"$got") objects are $group" ||
    fail "kubectl get $what $*: objects outside $group: $others"
}
only_group ctq phalanx.dev
only_group tq phalanx.dev -A
only_group nf phalanx.dev
only_group ntopo phalanx.dev
only_group cq kueue.x-k8s.io
only_group lq kueue.x-k8s.io -A
only_group rf kueue.x-k8s.io

# The category: ours, all five, and nothing of Kueue's.
if got=$(k get phalanx -A -o name 2>&1); then
  others=$(grep -v '^[a-z]*\.phalanx\.dev/' <<<"$got" | tr '\n' ' ')
  mine=$(grep -c "\.phalanx\.dev/$N\$" <<<"$got")
  if [[ -z $others && $mine == 5 ]]; then
    pass "kubectl get phalanx -A: phalanx.dev only, our 5 objects named $N among them"
  else
    fail "kubectl get phalanx -A: $mine of our 5 objects; outside phalanx.dev: '$others'"
  fi
else
  fail "kubectl get phalanx -A: $got"
fi

# The old names are not served by phalanx.dev any more (Kueue's group still answers for them).
for old in clusterqueues localqueues resourceflavors topologies; do
  if out=$(k get "$old.phalanx.dev" 2>&1); then
    fail "$old.phalanx.dev is still served: $out"
  else
    pass "$old.phalanx.dev is not served"
  fi
done

# --- 3. deploy/examples/ unchanged lands in phalanx.dev -------------------------------------
if out=$(k apply --server-side --field-manager=phalanx-e2e -f "$EX" -o name 2>&1); then
  custom=$(grep -v '^namespace/\|^priorityclass\.scheduling\.k8s\.io/' <<<"$out")
  outside=$(grep -v '\.phalanx\.dev/' <<<"$custom" | tr '\n' ' ')
  counts=$(cut -d/ -f1 <<<"$custom" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
  [[ -z $outside ]] && pass "deploy/examples applied unchanged, all in phalanx.dev: ${counts%, }" ||
    fail "deploy/examples: outside phalanx.dev: $outside"
else
  fail "deploy/examples did not apply beside Kueue's kinds: $out"
fi
[[ $(k get ctq llm -o jsonpath='{.spec.cohort}' 2>&1) == gpu-fleet ]] &&
  pass "ctq llm is the example's (cohort gpu-fleet)" || fail "ctq llm: $(k get ctq llm 2>&1)"
out=$(k get cq llm 2>&1) && fail "Kueue's cq has an llm: $out" ||
  pass "no Kueue ClusterQueue llm (the example went to phalanx.dev)"
[[ $(k get tq -n team-llm training -o jsonpath='{.spec.clusterQueue}' 2>&1) == llm ]] &&
  pass "tq team-llm/training feeds ctq llm" || fail "tq team-llm/training: $(k get tq -n team-llm training 2>&1)"
[[ -z $(k get lq -A -o name 2>&1 | grep -v "/$N\$") ]] &&
  pass "Kueue's lq -A lists only the test's own LocalQueue" || fail "lq -A: $(k get lq -A -o name 2>&1)"

# --- 4. ACK SageMaker's TrainingJob kind beside ours -----------------------------------------
out=$(k apply --server-side --field-manager=phalanx-e2e -f "$ACK_CRD" 2>&1) &&
  k wait --for=condition=Established --timeout=60s -f "$ACK_CRD" >/dev/null ||
  die "ACK TrainingJob fixture CRD not Established: $out"
rm -rf "$TMP/cache"  # kubectl must rediscover: plain `trainingjobs` now has two groups
eventually 30 k get trainingjobs.sagemaker.services.k8s.aws -A || die "ACK's group is not served"
out=$(k apply --server-side --field-manager=phalanx-e2e -f - 2>&1 <<YAML
apiVersion: sagemaker.services.k8s.aws/v1alpha1
kind: TrainingJob
metadata: {name: $N, namespace: $NS}
YAML
) || die "cannot create ACK's TrainingJob: $out"
gets_only trainingjob.phalanx.dev trainingjobs.phalanx.dev -n "$NS"
gets_only trainingjob.phalanx.dev tj -n "$NS"
gets_only trainingjob.sagemaker.services.k8s.aws trainingjobs.sagemaker.services.k8s.aws -n "$NS"
if got=$(k get trainingjobs -n "$NS" -o name 2>&1) && [[ $(grep -c "/$N\$" <<<"$got") == 1 ]]; then
  pass "plain 'kubectl get trainingjobs' answers for one group only ($got): name the group"
else
  fail "kubectl get trainingjobs -n $NS: '$got'"
fi

# --- cleanup, checked (the trap repeats it if anything below fails) ---------------------------
k delete --ignore-not-found --wait=false -f "$EX" >/dev/null 2>&1
k delete --ignore-not-found --wait=false -n "$NS" trainingjob "$N" >/dev/null 2>&1
k delete --ignore-not-found ctq/"$N" nf/"$N" ntopo/"$N" >/dev/null 2>&1 ||
  fail "cannot delete the test's cluster-scoped Phalanx objects"
k delete --ignore-not-found --wait=false namespace "$NS" >/dev/null 2>&1
if k delete --ignore-not-found --wait=true --timeout=60s -f "$KUEUE_CRDS" -f "$ACK_CRD" >/dev/null 2>&1; then
  pass "Kueue and ACK fixture CRDs deleted"
else
  fail "Kueue fixture CRDs not deleted"
fi
if eventually 120 bash -c "! kubectl --kubeconfig='$PHALANX_KUBECONFIG' get ns team-llm team-vision team-research $NS -o name 2>/dev/null | grep -q ."; then
  pass "example and test namespaces deleted"
else
  fail "namespaces still present after 120s"
fi
finish
