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
#   4. resumed, it is admitted again at once (no backoff left over), and
#      phalanx_admission_wait_time_seconds observes the wait since the resume, not since its
#      creation;
#   5. `rs` (2 pods) runs; rank 1 fails while an outside pod holds its node, so the restarted
#      gang cannot come up: suspended then (or evicted by the timeout), Restarting turns False;
#   6. `late` (missing PersistentVolumeClaim, activeDeadlineSeconds 5) fails DeadlineExceeded
#      with a message saying its gang never had every rank running;
#   7. a NodeFlavor's nodeLabels edited under a running gang do not reach the pods of its next
#      restart (status.admission records the flavor at admission, as Kueue applies it once);
#   8. `el`, elastic 4 pods (minReplicas 2) whose ranks 2 and 3 cannot get a pod (a pod of
#      someone else already has each name): the timeout shrinks it to the 2 ranks that run
#      (Shrunk reason PodsReadyTimeout) instead of evicting it, it runs at 2, and is not grown
#      back into the ranks that could not;
#   9. `gr`, elastic 2..4 pods running at 2, grows to 4 when capacity frees, and its new ranks
#      cannot get a pod the same way: the timeout, counted from the growth, shrinks it back to 2.
# (Both used a ResourceQuota with room for 2 pods until 2026-11-30; the operator now admits and
# grows an elastic job only to the size such a quota has room for: events_test.sh.)
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

# A job of 2 pods that mount a PersistentVolumeClaim that does not exist: kube-scheduler never
# binds them.
unbound_job() { # name [extra spec yaml, indented 2]
  job $NS "$1" 2 "{required: topology.k8s.aws/network-node-layer-3}" "${2:-}" \
    "      volumes: [{name: data, persistentVolumeClaim: {claimName: no-such-claim}}]"
}
unbound_job stuck || die "cannot create stuck"

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
# "<count> <count at le=5>" of the queue's admission wait histogram.
waits() {
  curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" | awk '
    $1 == "phalanx_admission_wait_time_seconds_count{cluster_queue=\"pr\"}" {n = $2}
    $1 == "phalanx_admission_wait_time_seconds_bucket{cluster_queue=\"pr\",le=\"5\"}" {le5 = $2}
    END {print n + 0, le5 + 0}'
}
read -r n0 fast0 <<<"$(waits)"
kc -n $NS patch trainingjob stuck --type merge -p '{"spec":{"suspend":false}}' >/dev/null || fail "cannot resume stuck"
eventually 30 phase_is $NS stuck Admitted && pass "resumed, admitted again at once" ||
  fail "stuck after resuming: $(phase $NS stuck) $(cond $NS stuck Queued)"
# Created more than a minute ago, it waited since the resume: at most 5 s (Kueue's
# kueue_admission_wait_time_seconds is "created or requeued until admission").
read -r n1 fast1 <<<"$(waits)"
[[ $((n1 - n0)) -ge 1 && $((n1 - n0)) == $((fast1 - fast0)) ]] &&
  pass "phalanx_admission_wait_time_seconds counts the wait since the resume (<= 5 s, $((n1 - n0)) admission)" ||
  fail "admission waits: count $n0 -> $n1, of them <= 5 s: $fast0 -> $fast1"
eventually 40 count_is stuck 1 && pass "and timed out again with a fresh count: $(requeue stuck)" ||
  fail "after resuming: $(requeue stuck)"
grep -q "PodsReadyTimeout\|pods-ready-timeout" "$OPLOG" && pass "the operator logged the evictions" ||
  fail "no eviction in the operator's log"
kc -n $NS delete trainingjob stuck --wait=false >/dev/null
eventually 60 npods_is $NS stuck 0 || fail "stuck's pods were not deleted"

# --- 5. suspended while a restart cannot come up: not Restarting -------------------------------
job $NS rs 2 "{required: topology.k8s.aws/network-node-layer-3}" "  failurePolicy: {maxRestarts: 3}"
eventually 60 all_running $NS rs 2 || fail "rs is not Running: $(phase $NS rs) $(cond $NS rs Queued)"
held=$(kc -n $NS get pod rs-1 -o jsonpath='{.spec.nodeName}')
# An outside pod bound straight to rank 1's node takes its GPUs: the restarted rank 1 cannot bind.
kc -n $NS apply -f - >/dev/null <<YAML || fail "cannot create the intruder on $held"
apiVersion: v1
kind: Pod
metadata: {name: intruder}
spec:
  nodeName: $held
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: c
    image: registry.example/c:1
    resources: {limits: {nvidia.com/gpu: 8}}
YAML
set_pod_phase $NS rs-1 Failed || fail "cannot fail rs-1"
eventually 30 phase_is $NS rs Restarting || fail "rs is not Restarting: $(phase $NS rs)"
kc -n $NS patch trainingjob rs --type merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "cannot suspend rs"
# (Evicted if the 10 s pods-ready timeout came first: not admitted either way.)
not_restarting() { [[ $(cond $NS rs Restarting) == "False "@(Suspended|Evicted)": Previously: pod rs-1 (rank 1) failed"* ]]; }
eventually 30 phase_is $NS rs Suspended && not_restarting &&
  pass "suspended during a restart: $(cond $NS rs Restarting)" ||
  fail "rs after the suspension: phase $(phase $NS rs), $(cond $NS rs Restarting)"
kc -n $NS delete trainingjob rs --wait=false >/dev/null
kc -n $NS delete pod intruder --wait=false >/dev/null

# --- 6. a deadline passed by a gang that never ran ------------------------------------------------
unbound_job late "  activeDeadlineSeconds: 5" || die "cannot create late"
eventually 60 phase_is $NS late Failed &&
  [[ $(cond $NS late Failed) == "True DeadlineExceeded: the gang was admitted "*" s ago (at "*"), past spec.activeDeadlineSeconds (5 s), and never had all its 2 ranks running (0 running now)" ]] &&
  pass "a gang that never ran is not said to have run past its deadline: $(cond $NS late Failed)" ||
  fail "late: phase $(phase $NS late), $(cond $NS late Failed)"

# --- 7. a NodeFlavor edited under a running gang does not reach its restarted pods -------------
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

# --- 8. an elastic gang with some ranks running shrinks to them --------------------------------
kc -n $NS delete trainingjob steady --wait=false >/dev/null
eventually 60 npods_is $NS steady 0 || fail "steady's pods were not deleted"
kc patch nodeflavor pr-p5 --type merge -p '{"spec":{"nodeLabels":{"pool":null}}}' >/dev/null ||
  fail "cannot restore the NodeFlavor"
QNS=podsready-quota
team $QNS pr >/dev/null || die "cannot create namespace $QNS"
# squat JOB RANK: a pod that is not the job's holds rank RANK's name, so that rank gets no pod.
squat() {
  kc -n $QNS apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1-$2
  labels: {phalanx.dev/job: $1, phalanx.dev/rank: "$2", phalanx.dev/restart: "0"}
spec:
  schedulerName: nobody
  containers: [{name: c, image: registry.example/other:1}]
YAML
}
squat el 2 && squat el 3 || die "cannot create the pods holding el's ranks 2 and 3"
job $QNS el 4 "{required: topology.k8s.aws/network-node-layer-3}" "  elastic: {minReplicas: 2, maxReplicas: 4}" ||
  die "cannot create el"
replicas() { jq_job $QNS el '.status.admission.replicas // 0'; }
shrunk_to_two() { [[ $(replicas) == 2 ]]; }
eventually 60 shrunk_to_two && pass "el shrank from 4 to 2 pods" ||
  fail "el: replicas $(replicas), $(cond $QNS el Queued); $(cond $QNS el Admitted); $(cond $QNS el Evicted)"
shrunk=$(cond $QNS el Shrunk)
[[ $shrunk == "True PodsReadyTimeout: shrunk from 4 to 2 pods: the gang did not have every rank running within 10s of its admission"*"2 of 4 ranks not running"* ]] &&
  pass "Shrunk: $shrunk" || fail "Shrunk condition: '$shrunk'"
[[ $shrunk == *"; the last pod create was refused: pod $QNS/el-"*" exists and is not this job's"* ]] &&
  pass "the message says why the ranks have no pod (their names are taken)" || fail "no create refusal in '$shrunk'"
eventually 60 all_running $QNS el 2 && pass "el runs its 2 ranks" || fail "el: $(npods $QNS el) pods, phase $(phase $QNS el)"
eventually 30 phase_is $QNS el Running && pass "el is Running" || fail "el phase: $(phase $QNS el)"
has_event $QNS el Shrunk && pass "a Shrunk event" || fail "no Shrunk event for el"
# Past another timeout and a few admission cycles: neither evicted nor grown back to 4.
sleep 15
[[ $(replicas) == 2 && $(jq_job $QNS el '.status.requeueState // "none"') == none ]] &&
  [[ $(cond $QNS el Admitted) == "True Admitted:"*"shrunk from 4 pods" ]] &&
  pass "15 s later el still runs at 2 pods, admitted, never evicted" ||
  fail "el later: replicas $(replicas), $(cond $QNS el Admitted), requeueState $(jq_job $QNS el '.status.requeueState')"
curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" |
  grep -qE '^phalanx_resize_events_total[{]direction="shrink"[}] [1-9]' &&
  pass "/metrics counts the shrink" || fail "no shrink in phalanx_resize_events_total"

# --- 9. an elastic growth whose new ranks do not come up shrinks back ---------------------------
# gr (2..4 pods) starts at 2 while hold has the other 2 nodes; hold ends, gr grows to 4, and the
# new ranks' names are taken by pods of someone else: 10 s later gr is back at the 2 ranks
# that run, never evicted.
kc -n $QNS delete trainingjob el --wait=false >/dev/null
kc -n $QNS delete pod el-2 el-3 --wait=false >/dev/null  # the pods that held its ranks' names
eventually 60 npods_is $QNS el 0 || fail "el's pods were not deleted"
job $NS hold 2 "{required: topology.k8s.aws/network-node-layer-3}" || die "cannot create hold"
eventually 60 all_running $NS hold 2 || die "hold is not Running: $(cond $NS hold Queued)"
squat gr 2 && squat gr 3 || die "cannot create the pods holding gr's ranks 2 and 3"
job $QNS gr 4 "{required: topology.k8s.aws/network-node-layer-3}" "  elastic: {minReplicas: 2, maxReplicas: 4}" ||
  die "cannot create gr"
eventually 60 all_running $QNS gr 2 && eventually 30 phase_is $QNS gr Running &&
  pass "gr runs at 2 of 2..4 pods beside hold" ||
  die "gr: $(npods $QNS gr) pods, phase $(phase $QNS gr), $(cond $QNS gr Queued)"
gr_replicas() { jq_job $QNS gr '.status.admission.replicas // 0'; }
kc -n $NS delete trainingjob hold --wait=false >/dev/null
grown() { [[ $(gr_replicas) == 4 ]]; }
eventually 60 grown && pass "gr grew to 4 when hold ended" || fail "gr did not grow: replicas $(gr_replicas)"
eventually 30 phase_is $QNS gr Resizing && pass "gr is Resizing while its new ranks' pods are refused: $(cond $QNS gr Resizing)" ||
  fail "gr phase $(phase $QNS gr), $(cond $QNS gr Resizing)"
back_to_two() { [[ $(gr_replicas) == 2 ]]; }
eventually 60 back_to_two && pass "gr shrank back to 2 pods" || fail "gr: replicas $(gr_replicas), $(cond $QNS gr Shrunk)"
shrunk=$(cond $QNS gr Shrunk)
[[ $shrunk == "True PodsReadyTimeout: shrunk from 4 to 2 pods: the gang did not have every rank running within 10s of its growth to 4 ranks"*"2 of 4 ranks not running"* ]] &&
  pass "Shrunk: $shrunk" || fail "Shrunk condition: '$shrunk'"
eventually 30 phase_is $QNS gr Running && pass "gr is Running at 2" || fail "gr phase: $(phase $QNS gr)"
sleep 15
[[ $(gr_replicas) == 2 && $(jq_job $QNS gr '.status.requeueState // "none"') == none &&
   $(cond $QNS gr Admitted) == "True "* ]] &&
  pass "15 s later gr still runs at 2 pods, admitted, never evicted nor grown again" ||
  fail "gr later: replicas $(gr_replicas), $(cond $QNS gr Admitted), requeueState $(jq_job $QNS gr '.status.requeueState')"
finish
