#!/usr/bin/env bash
# Kueue's waitForPodsReady through the real phalanx-operator (docs/operator.md "Pods ready"), on a
# private cluster of 4 fake p5 nodes, the operator started with --pods-ready-timeout-seconds 10,
# --requeuing-backoff-base-seconds 5 and --requeuing-backoff-limit-count 2:
#   1. `stuck` (2 pods) mounts a PersistentVolumeClaim that does not exist: admitted, but
#      kube-scheduler never binds its pods. 10 s later it is evicted (Evicted and Queued reason
#      PodsReadyTimeout, the message naming the ranks and why), its pods deleted, its nodes given
#      back, status.requeueState {count 1, requeueAt} written, an Event and a metric;
#   2. during its backoff `fits` (2 pods) takes the nodes and runs past the timeout untouched;
#   3. requeued and evicted again after 5 s, then 10 s; the third eviction would pass the limit of
#      2 requeues: the job is suspended (spec.suspend), its requeue count cleared;
#   4. resumed, it is admitted again at once (no backoff left over);
#   5. a NodeFlavor's nodeLabels edited under a running gang do not reach the pods of its next
#      restart (status.admission records the flavor at admission, as Kueue applies it once).
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PHALANX_OPERATOR_ARGS="--pods-ready-timeout-seconds 10 --requeuing-backoff-base-seconds 5 --requeuing-backoff-limit-count 2"
start_cluster --nodes 4 --ttl 600

NS=podsready
one_queue $NS pr-p5 pr 64
requeue() { jq_job $NS "$1" '.status.requeueState // {} | "\(.count // "")/\(.requeueAt // "")"'; }
count_is() { [[ $(jq_job $NS "$1" '.status.requeueState.count // 0') == "$2" ]]; }
suspended() { [[ $(jq_job $NS "$1" '.spec.suspend // false') == true ]]; }
not_admitted() { [[ $(jq_job $NS "$1" '.status.admission // "none"') == none ]]; }

kc -n $NS apply -f - >/dev/null <<'YAML' || die "cannot create stuck"
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: stuck}
spec:
  queueName: training
  replicas: 2
  topology: {required: topology.k8s.aws/network-node-layer-3}
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: no-such-claim}}]
      containers:
      - name: trainer
        image: registry.example/trainer:1
        volumeMounts: [{name: data, mountPath: /data}]
        resources: {limits: {nvidia.com/gpu: 8}}
YAML

# --- 1. admitted, never running: evicted after the timeout -----------------------------------
eventually 60 phase_is $NS stuck Admitted && pass "stuck is admitted: $(cond $NS stuck Admitted)" ||
  die "stuck not admitted: $(cond $NS stuck Queued)"
admitted_at=$(date +%s)
eventually 40 count_is stuck 1 || die "stuck not evicted 40 s after its admission: $(cond $NS stuck Admitted); pods: $(npods $NS stuck)"
took=$(($(date +%s) - admitted_at))
[[ $took -ge 8 ]] && pass "evicted ${took}s after the admission was seen (timeout 10 s)" ||
  fail "evicted after ${took}s, before the 10 s timeout"
evicted=$(cond $NS stuck Evicted)
[[ $evicted == "True PodsReadyTimeout: the gang did not have every rank running within 10s of its admission"* ]] &&
  pass "Evicted: $evicted" || fail "Evicted condition: '$evicted'"
[[ $evicted == *"2 of 2 ranks not running: rank 0 (pod stuck-0) Pending, not bound to a node (unschedulable: "*'persistentvolumeclaim "no-such-claim" not found'* ]] &&
  pass "the message names the stuck ranks and kube-scheduler's reason" || fail "the message does not name the ranks: '$evicted'"
[[ $evicted == *"requeue 1 at "*"(backoff 5s)"* ]] && pass "the message says when it is requeued" ||
  fail "no requeue time in '$evicted'"
[[ $(cond $NS stuck Queued) == "True PodsReadyTimeout:"* ]] && pass "Queued=True PodsReadyTimeout" ||
  fail "Queued: $(cond $NS stuck Queued)"
rq=$(requeue stuck)
[[ $rq == 1/20* ]] && pass "status.requeueState: $rq" || fail "status.requeueState: '$rq'"
eventually 30 npods_is $NS stuck 0 && pass "stuck's pods were deleted" || fail "stuck still has $(npods $NS stuck) pods"
has_event $NS stuck PodsReadyTimeout && pass "a PodsReadyTimeout event" || fail "no PodsReadyTimeout event"
metrics=$(curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics")
grep -qE '^phalanx_evicted_workloads_total[{]cluster_queue="pr",reason="PodsReadyTimeout"[}] [1-9]' <<<"$metrics" &&
  pass "/metrics counts the eviction" ||
  fail "/metrics: $(grep phalanx_evicted_workloads_total <<<"$metrics" | tr '\n' ';')"

# --- 2. its nodes are free for others meanwhile -------------------------------------------------
job $NS fits 4 "{required: topology.k8s.aws/network-node-layer-3}"
eventually 60 phase_is $NS fits Running && pass "fits runs on the 4 nodes stuck held" ||
  fail "fits: $(phase $NS fits) $(cond $NS fits Queued)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"
kc -n $NS delete trainingjob fits --wait=false >/dev/null

# --- 3. requeued twice more, then suspended at the limit ---------------------------------------
eventually 60 count_is stuck 2 && pass "requeued and evicted again: $(requeue stuck)" ||
  fail "second eviction: $(requeue stuck) $(cond $NS stuck Evicted)"
[[ $(cond $NS stuck Evicted) == *"requeue 2 at "*"(backoff 10s)"* ]] && pass "the second backoff doubles to 10 s" ||
  fail "second eviction's message: $(cond $NS stuck Evicted)"
eventually 90 suspended stuck && pass "suspended at the requeuing limit" ||
  fail "not suspended: $(requeue stuck) $(cond $NS stuck Evicted)"
evicted=$(cond $NS stuck Evicted)
[[ $evicted == *"evicted and suspended: requeue 3 would pass --requeuing-backoff-limit-count 2; resume the job (spec.suspend: false) to queue it again" ]] &&
  pass "the Evicted message says why it is suspended" || fail "Evicted at the limit: '$evicted'"
eventually 30 phase_is $NS stuck Suspended && pass "phase Suspended" || fail "phase $(phase $NS stuck)"
eventually 30 count_is stuck 0 && pass "the suspension cleared status.requeueState" ||
  fail "requeueState after the suspension: $(requeue stuck)"
not_admitted stuck && npods_is $NS stuck 0 && pass "not admitted, no pods" || fail "stuck still admitted or has pods"

# --- 4. resumed: admitted again at once ---------------------------------------------------------
kc -n $NS patch trainingjob stuck --type merge -p '{"spec":{"suspend":false}}' >/dev/null || fail "cannot resume stuck"
eventually 30 phase_is $NS stuck Admitted && pass "resumed, admitted again at once" ||
  fail "stuck after resuming: $(phase $NS stuck) $(cond $NS stuck Queued)"
eventually 40 count_is stuck 1 && pass "and timed out again with a fresh count: $(requeue stuck)" ||
  fail "after resuming: $(requeue stuck)"
grep -q "PodsReadyTimeout\|pods-ready-timeout" "$OPLOG" && pass "the operator logged the evictions" ||
  fail "no eviction in the operator's log"
kc -n $NS delete trainingjob stuck --wait=true --timeout=60s >/dev/null || fail "cannot delete stuck"

# --- 5. a NodeFlavor edited under a running gang does not reach its restarted pods -------------
job $NS steady 2 "{required: topology.k8s.aws/network-node-layer-3}"
eventually 60 all_running $NS steady 2 && pass "steady runs" || fail "steady: $(phase $NS steady) $(cond $NS steady Queued)"
sel=$(jq_job $NS steady '.status.admission.nodeSelector | tostring')
[[ $sel == '{"node.kubernetes.io/instance-type":"p5.48xlarge"}' ]] &&
  pass "status.admission records the flavor's labels at admission: $sel" || fail "status.admission.nodeSelector: $sel"
kc patch nodeflavor pr-p5 --type merge -p '{"spec":{"nodeLabels":{"node.kubernetes.io/instance-type":"p5.48xlarge","pool":"moved"}}}' >/dev/null ||
  fail "cannot edit the NodeFlavor"
set_pod_phase $NS steady-1 Failed
eventually 30 has_event $NS steady Restarting && pass "a gang restart after the NodeFlavor edit" || fail "steady did not restart"
eventually 60 all_running $NS steady 2 && pass "the restarted pods run on their reserved nodes (the flavor as it was at admission)" ||
  fail "steady after the restart: $(phase $NS steady); pods: $(pods_of $NS steady | jq -c '[.items[] | {n: .metadata.name, sel: .spec.nodeSelector, p: .status.phase}]')"
[[ $(pods_of $NS steady | jq -r '[.items[].spec.nodeSelector.pool // "none"] | unique | join(",")') == none ]] &&
  pass "the new pods do not carry the edited label" || fail "the new pods carry the edited label"
finish
