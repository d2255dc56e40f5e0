#!/usr/bin/env bash
# Elastic TrainingJobs through the real phalanx-operator on a private cluster of 16 fake
# p5.48xlarge nodes (issue #11 "Elastic"), with the example queues (deploy/examples):
#   1. the example elastic job (minReplicas 2, maxReplicas 16, step 2) is admitted as large as
#      the free nodes allow: 16 pods, PET_NNODES=2:16;
#   2. a higher-priority job of the same queue needs 8 nodes: the elastic job is shrunk
#      from its highest ranks to at most 8 (the ranks above deleted, the ones below keep running
#      on the same nodes, phase Resizing then Running, a Shrunk event), never evicted, and the
#      preemptor runs, reserved in the cycle that shrank it (so no later cycle shrinks it
#      again while the dropped ranks' pods are still being deleted);
#   3. when the preemptor finishes, a 10-pod job of the same queue that cannot start (8 free
#      nodes) and cannot preempt it (lower priority) holds its growth, and it is told so (a
#      GrowthHeld event naming that job); once that job is deleted, the elastic job grows back
#      toward maxReplicas (a Grown event, new ranks on new nodes, the old ranks untouched);
#   4. failover: a standby phalanx-operator waits on the Lease; the leader is killed with
#      SIGKILL; the standby takes the Lease, becomes ready and admits the next job, and nothing
#      is lost or admitted twice;
#   4b. the new leader is frozen (SIGSTOP) past the Lease; a second standby takes over; resumed,
#      the deposed leader writes nothing (the lease fence) and exits;
#   5. a TrainingQueue pointing at a missing ClusterTrainingQueue: its job gets a Queued
#      condition naming the problem, the TrainingQueue a Warning event and Active=False.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_cluster --nodes 16 --ttl 900
kc apply -f "$REPO_ROOT/deploy/examples/00-priorityclasses.yaml" -f "$REPO_ROOT/deploy/examples/01-networktopologies.yaml" \
  -f "$REPO_ROOT/deploy/examples/02-nodeflavors.yaml" -f "$REPO_ROOT/deploy/examples/03-namespaces.yaml" \
  -f "$REPO_ROOT/deploy/examples/04-clustertrainingqueues.yaml" -f "$REPO_ROOT/deploy/examples/05-trainingqueues.yaml" >/dev/null ||
  die "cannot apply the example queues"
eventually 60 kc -n team-research get serviceaccount default || die "no default serviceaccount in team-research"
NS=team-research J=mistral-finetune
admitted() { jq_job $NS $J '.status.admission.replicas // 0'; }
admitted_is() { [[ $(admitted) == "$1" ]]; }
node_of_rank() { kc -n $NS get pod "$J-$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
uid_of_rank() { kc -n $NS get pod "$J-$1" -o jsonpath='{.metadata.uid}' 2>/dev/null; }

# --- 1. admitted at the largest size that fits -----------------------------------------
kc apply -f "$REPO_ROOT/deploy/examples/11-trainingjob-elastic-finetune.yaml" >/dev/null || die "cannot apply example 11"
eventually 90 phase_is $NS $J Running || die "$J not Running: $(cond $NS $J Queued)"
size=$(admitted)
[[ $size == 16 ]] && pass "$J admitted with 16 pods (maxReplicas) on 16 free nodes" || fail "$J admitted with $size pods"
eventually 60 all_running $NS $J 16 && pass "16 ranks Running" || fail "not 16 ranks Running"
nnodes=$(kc -n $NS get pod $J-0 -o json | jq -r '.spec.containers[0].env[] | select(.name=="PET_NNODES") | .value')
[[ $nnodes == 2:16 ]] && pass "PET_NNODES=$nnodes (torchrun elastic range)" || fail "PET_NNODES=$nnodes"
declare -a keep_node keep_uid
for r in 0 1 2 3 4 5 6 7; do keep_node[$r]=$(node_of_rank $r); keep_uid[$r]=$(uid_of_rank $r); done

# --- 2. shrunk, not evicted, by a higher-priority job of the same queue ------------------
job $NS urgent 8 "" "  priorityClassName: training-critical"
eventually 120 phase_is $NS urgent Running && pass "the higher-priority job runs" ||
  fail "urgent not Running: $(cond $NS urgent Queued)"
shrunk() { local n; n=$(admitted); [[ $n -ge 2 && $n -le 8 ]]; }
eventually 60 shrunk && pass "$J shrunk to $(admitted) pods (status.admission.replicas; 8 needed)" || fail "$J admitted size $(admitted)"
sleep 5
S=$(admitted)
[[ $S == 8 ]] && pass "$J was shrunk to exactly the 8 pods the preemptor left it" ||
  fail "$J was shrunk to $S, not the 8 the preemptor needed"
any_event_has() { kc -n $NS get events --field-selector "involvedObject.name=$1" -o jsonpath='{.items[*].message}' | grep -q -- "$2"; }
any_event_has urgent "but the reservation failed" &&
  fail "urgent's reservation failed while the dropped ranks' pods were still bound" ||
  pass "urgent was reserved in the cycle that shrank $J"
[[ -z $(jq_job $NS $J '.status.conditions[]? | select(.type=="Evicted" and .status=="True") | .type') ]] &&
  pass "$J was not evicted" || fail "$J was evicted instead of shrunk"
has_event $NS $J Shrunk && pass "a Shrunk event names the preemptor: $(kc -n $NS get events --field-selector involvedObject.name=$J,reason=Shrunk -o jsonpath='{.items[0].message}')" ||
  fail "no Shrunk event on $J"
has_event $NS $J Resizing && pass "a Resizing event while the gang changed size" || fail "no Resizing event on $J"
eventually 60 npods_is $NS $J "$S" && pass "ranks $S-15 deleted" || fail "$J has $(npods $NS $J) pods"
same=0
for ((r = 0; r < S; r++)); do
  [[ $(node_of_rank $r) == "${keep_node[$r]}" && $(uid_of_rank $r) == "${keep_uid[$r]}" ]] && same=$((same + 1))
done
[[ $same == "$S" ]] && pass "ranks 0-$((S - 1)) kept running untouched (same pods, same nodes)" || fail "only $same of ranks 0-$((S - 1)) untouched"
eventually 60 phase_is $NS $J Running && pass "$J Running again at $S pods; $(cond $NS $J Resizing)" ||
  fail "$J phase $(phase $NS $J)"
admitted_msg() { jq_job $NS $J '.status.conditions[]? | select(.type=="Admitted") | "\(.status) \(.message)"'; }
[[ $(admitted_msg) == "True admitted "*" with $S pods; "*"; shrunk from 16 pods" ]] &&
  pass "the Admitted condition gives the size now: $(admitted_msg)" || fail "Admitted after the shrink: $(admitted_msg)"
[[ $(cond $NS $J Shrunk) == "True Preempted:"* ]] && pass "Shrunk=True Preempted" ||
  fail "Shrunk after the shrink: '$(cond $NS $J Shrunk)'"

# --- 3. grows back when the room is free again -------------------------------------------
job $NS waiter 10  # priority 0, below $J's: it cannot shrink $J, and 10 nodes never free
for r in 0 1 2 3 4 5 6 7; do set_pod_phase $NS urgent-$r Succeeded; done
eventually 60 phase_is $NS urgent Succeeded || fail "urgent did not succeed"
held_msg() { kc -n $NS get events --field-selector "involvedObject.name=$J,reason=GrowthHeld" -o jsonpath='{.items[*].message}'; }
held_names_waiter() { [[ $(held_msg) == *"not grown beyond $S pods while $NS/waiter waits in the same ClusterTrainingQueue"* ]]; }
eventually 60 held_names_waiter && pass "$J held at $S pods while waiter waits, and told so: $(held_msg)" ||
  fail "no GrowthHeld event naming waiter on $J: '$(held_msg)'"
admitted_is "$S" && pass "$J did not grow while waiter waits" || fail "$J grew to $(admitted) while waiter waits"
kc -n $NS delete trainingjob waiter --wait=false >/dev/null || fail "cannot delete waiter"
eventually 120 admitted_is 16 && pass "$J grew back to 16 pods" || fail "$J admitted size $(admitted) after the room freed"
has_event $NS $J Grown && pass "a Grown event" || fail "no Grown event on $J"
[[ $(admitted_msg) == "True admitted "*" with 16 pods; "*"; grown from "*" pods" ]] &&
  pass "the Admitted condition gives the size now: $(admitted_msg)" || fail "Admitted after the growth: $(admitted_msg)"
[[ $(cond $NS $J Queued) == "False Admitted: admitted "*" with 16 pods; "*"; grown from "*" pods" ]] &&
  pass "so does Queued=False: $(cond $NS $J Queued)" || fail "Queued after the growth: $(cond $NS $J Queued)"
[[ $(cond $NS $J Shrunk) == "False Grown: Previously: "* ]] && pass "Shrunk is history after the growth: $(cond $NS $J Shrunk)" ||
  fail "Shrunk after the growth: '$(cond $NS $J Shrunk)'"
eventually 90 all_running $NS $J 16 && pass "16 ranks Running after the growth" || fail "$J: $(npods $NS $J) pods after growth"
same=0
for ((r = 0; r < S; r++)); do [[ $(uid_of_rank $r) == "${keep_uid[$r]}" ]] && same=$((same + 1)); done
[[ $same == "$S" ]] && pass "ranks 0-$((S - 1)) untouched by the growth" || fail "only $same of ranks 0-$((S - 1)) untouched by the growth"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"

# --- 4. failover to a standby ------------------------------------------------------------
# shellcheck disable=SC1091
source "$PHALANX_CLUSTER_DIR/env"
SB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BUILD/operator/phalanx-operator" --kubeconfig "$PHALANX_KUBECONFIG" --placement-address "$PHALANX_SCHEDULER_GRPC" \
  --health-address "127.0.0.1:$SB_PORT" --identity e2e-standby >"$PHALANX_CLUSTER_DIR/logs/standby-operator.log" 2>&1 &
SB_PID=$!
trap 'kill "$SB_PID" 2>/dev/null; "$REPO_ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true' EXIT
eventually 30 curl -sf "http://127.0.0.1:$SB_PORT/healthz" && pass "a standby phalanx-operator is up" || fail "standby not healthy"
sb_ready() { curl -sf "http://127.0.0.1:$SB_PORT/readyz"; }
sleep 3
sb_ready && fail "the standby says ready while the leader holds the Lease" ||
  pass "the standby is not ready while the leader holds the Lease: $(curl -s "http://127.0.0.1:$SB_PORT/readyz")"
leader=$(awk '$1=="phalanx-operator" {print $2}' "$PHALANX_CLUSTER_DIR/pids")
kill -KILL "$leader" && pass "leader phalanx-operator killed with SIGKILL (pid $leader)" || fail "cannot kill the leader"
# The cluster is full again: the new job needs priority to make room (by shrinking $J).
job $NS after-failover 2 "" "  priorityClassName: training-critical"
eventually 90 sb_ready && pass "the standby took the Lease and is ready" || fail "the standby did not take over: $(tail -3 "$PHALANX_CLUSTER_DIR/logs/standby-operator.log")"
holder=$(kc -n kube-system get lease phalanx-operator -o jsonpath='{.spec.holderIdentity}')
[[ $holder == e2e-standby ]] && pass "Lease holder is e2e-standby" || fail "Lease holder is '$holder'"
eventually 90 phase_is $NS after-failover Running && pass "a job applied during the failover runs" ||
  fail "after-failover: $(cond $NS after-failover Queued)"
[[ $(admitted) -ge 2 ]] && pass "$J is still admitted ($(admitted) pods) across the failover" || fail "$J lost its admission"
out=$(check_invariants) && pass "invariants hold after the failover" || fail "invariants broken: $out"

# --- 4b. a frozen leader wakes up deposed and writes nothing ------------------------------
# The leader (the former standby) is stopped with SIGSTOP, as a paused container or a starved
# process would be; a second standby takes over and admits a job created meanwhile. When the
# frozen one resumes, its queues hold work from a stale cache: the lease fence refuses every
# write (kube/fenced_client.h), and it exits.
SB2_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SB2_LOG="$PHALANX_CLUSTER_DIR/logs/standby2-operator.log"
"$BUILD/operator/phalanx-operator" --kubeconfig "$PHALANX_KUBECONFIG" --placement-address "$PHALANX_SCHEDULER_GRPC" \
  --health-address "127.0.0.1:$SB2_PORT" --identity e2e-standby2 >"$SB2_LOG" 2>&1 &
SB2_PID=$!
trap 'kill -CONT "$SB_PID" 2>/dev/null; kill "$SB_PID" "$SB2_PID" 2>/dev/null; "$REPO_ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true' EXIT
eventually 30 curl -sf "http://127.0.0.1:$SB2_PORT/healthz" || fail "second standby not healthy"
SB_LOG="$PHALANX_CLUSTER_DIR/logs/standby-operator.log"
kill -STOP "$SB_PID" && pass "leader e2e-standby frozen with SIGSTOP (pid $SB_PID)" || fail "cannot stop $SB_PID"
job $NS while-frozen 1 "" "  priorityClassName: training-critical"
eventually 60 curl -sf "http://127.0.0.1:$SB2_PORT/readyz" >/dev/null && pass "e2e-standby2 took the Lease" ||
  fail "e2e-standby2 did not take over: $(tail -3 "$SB2_LOG")"
eventually 60 phase_is $NS while-frozen Running && pass "the job created during the freeze runs" ||
  fail "while-frozen: $(phase $NS while-frozen) $(cond $NS while-frozen Queued)"
kill -CONT "$SB_PID"
gone() { ! kill -0 "$SB_PID" 2>/dev/null; }
eventually 30 gone && pass "the deposed leader exited after it resumed" || fail "the deposed leader still runs"
stale=$(awk '/lost lease/ {lost = 1; next} lost && / -> /' "$SB_LOG")
[[ -z $stale ]] && pass "it wrote no job status after it woke up ($(grep -c 'not writing' "$SB_LOG") writes refused by the fence)" ||
  fail "the deposed leader wrote after it woke up: $stale"
[[ $(phase $NS while-frozen) == Running ]] && pass "while-frozen still Running" || fail "while-frozen: $(phase $NS while-frozen)"
out=$(check_invariants) && pass "invariants hold after the frozen leader woke" || fail "invariants broken: $out"

# --- 5. a TrainingQueue pointing at a missing ClusterTrainingQueue ------------------------
kc apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: orphan, namespace: $NS}
spec: {clusterQueue: no-such-queue}
YAML
kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: orphaned}
spec:
  queueName: orphan
  replicas: 1
  template:
    spec:
      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
eventually 60 bash -c "kubectl --kubeconfig=$PHALANX_KUBECONFIG -n $NS get trainingjob orphaned -o jsonpath='{.status.conditions[?(@.type==\"Queued\")].message}' | grep -q 'does not exist'" &&
  pass "the job names the problem: $(cond $NS orphaned Queued)" || fail "orphaned: '$(cond $NS orphaned Queued)'"
lq_event() { kc -n $NS get events --field-selector involvedObject.name=orphan,involvedObject.kind=TrainingQueue -o jsonpath='{.items[*].message}' | grep -q no-such-queue; }
eventually 60 lq_event && pass "a Warning event on the TrainingQueue names the missing ClusterTrainingQueue" || fail "no event on TrainingQueue orphan"
[[ $(kc -n $NS get trainingqueue orphan -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == False ]] &&
  pass "TrainingQueue orphan is Active=False" || fail "TrainingQueue orphan status: $(kc -n $NS get trainingqueue orphan -o jsonpath='{.status}')"
kill "$SB2_PID" 2>/dev/null
finish
