#!/usr/bin/env bash
# Capacity that frees where phalanx-operator sees no event (audit 2026-11-30): pods of other
# workloads hold the GPUs of a private cluster of 4 fake p5.48xlarge nodes (one layer-3 block);
# phalanx-scheduler counts them, the operator watches only its own pods.
#   1. four plain pods (no phalanx.dev/job label), one per node, 8 GPUs each, fill the block:
#      a 2-node TrainingJob that quota admits waits, CannotBePlaced;
#   2. two of the plain pods are deleted: no event of the operator's own wakes it, yet the job is
#      admitted within the recheck of gangs that cannot be placed (30 s) and runs, where it
#      used to wait for an unrelated change.
#   3. pods that only copy a job's labels (no owner) are left alone: one holding a rank's name
#      keeps that rank waiting with a FailedCreate event naming it, until the user deletes it.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_cluster --nodes 4 --ttl 600

NS=foreign
one_queue $NS fp-p5 fp 64

# --- 1. other workloads' pods fill the nodes ----------------------------------------------
mapfile -t NODES < <(kc get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
[[ ${#NODES[@]} == 4 ]] || die "want 4 nodes, have ${#NODES[@]}"
for i in 0 1 2 3; do
  kc -n $NS apply -f - >/dev/null <<YAML || die "cannot create plain pod other-$i"
apiVersion: v1
kind: Pod
metadata: {name: other-$i}
spec:
  nodeName: ${NODES[$i]}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - {name: c, image: registry.example/other:1, resources: {limits: {nvidia.com/gpu: 8}}}
YAML
done
others_running() { [[ $(kc -n $NS get pods -l '!phalanx.dev/job' -o json | jq '[.items[] | select(.status.phase=="Running")] | length') == 4 ]]; }
eventually 60 others_running && pass "four plain pods (8 GPUs each) run, one per node" || die "the plain pods do not run"
job $NS w 2 "{required: topology.k8s.aws/network-node-layer-3}"
eventually 60 has_reason $NS w CannotBePlaced && pass "w waits: $(cond $NS w Queued)" ||
  die "w does not wait as CannotBePlaced: $(cond $NS w Queued)"

# --- 2. they end; nothing the operator watches changes -------------------------------------
# First the cycles that w's own writes set off die down: 5 s without an admission cycle.
cycles() { curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" | awk '$1 == "phalanx_admission_cycles_total" {print $2}'; }
quiet() { local c; c=$(cycles); sleep 5; [[ $(cycles) == "$c" ]]; }
eventually 60 quiet || fail "the operator never stopped cycling"
kc -n $NS delete pod other-0 other-1 --wait=true --timeout=60s >/dev/null || fail "cannot delete two plain pods"
t0=$SECONDS
eventually 75 all_running $NS w 2 && pass "w admitted and Running $((SECONDS - t0))s after two plain pods went" ||
  fail "w still waits $((SECONDS - t0))s after two nodes freed: $(cond $NS w Queued)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"

# --- 3. pods that only copy a job's labels are not the operator's -----------------------------
# sq-0 (no owner, rank 0's name) and sq-extra (no owner, another name) carry job sq's labels;
# neither is scheduled (no scheduler of that name). The operator deletes neither; sq's rank 0
# waits for its name, saying so, and runs once the user's pod is gone.
kc -n $NS delete pod other-2 --wait=true --timeout=60s >/dev/null || fail "cannot free a node"
for name in sq-0 sq-extra; do
  kc -n $NS apply -f - >/dev/null <<YAML || fail "cannot create $name"
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels: {phalanx.dev/job: sq, phalanx.dev/rank: "0", phalanx.dev/restart: "0"}
spec:
  schedulerName: nobody
  containers: [{name: c, image: registry.example/other:1}]
YAML
done
job $NS sq 1 "{required: topology.k8s.aws/network-node-layer-3}"
squatted() {
  kc -n $NS get events --field-selector "involvedObject.name=sq,reason=FailedCreate" \
    -o jsonpath='{.items[*].message}' |
    grep -qF "pod $NS/sq-0 exists and is not this job's: it has no controller; rank 0 waits until it is gone"
}
eventually 60 squatted && pass "sq's rank 0 waits for its name, a FailedCreate event says whose pod holds it" ||
  fail "no FailedCreate naming sq-0: $(kc -n $NS get events --field-selector involvedObject.name=sq -o jsonpath='{.items[*].message}')"
sleep 3
[[ $(kc -n $NS get pod sq-0 sq-extra -o name 2>/dev/null | wc -l) == 2 ]] &&
  pass "the operator deleted neither of the user's pods" || fail "the user's pods: $(kc -n $NS get pods -o name | tr '\n' ' ')"
kc -n $NS delete pod sq-0 --wait=true --timeout=60s >/dev/null || fail "cannot delete sq-0"
eventually 60 all_running $NS sq 1 && pass "sq runs once sq-0 is gone" || fail "sq: $(phase $NS sq), pods $(npods $NS sq)"
finish
