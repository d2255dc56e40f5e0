#!/usr/bin/env bash
# What a user sees in `kubectl describe trainingjob` (issue #14 "Events and logs"): every decision
# is an Event on the job that names where, why and by whom, and a job that waits does not pile
# up Events. On a private control plane with phalanx-scheduler, a real kube-scheduler and
# phalanx-operator, the shipped queues (deploy/examples), 8 kwok p5.48xlarge nodes in two
# layer-3 blocks of 4, every job pinned to one block (topology.required = layer-3):
#   huge    (60 pods, 480 GPUs > ClusterTrainingQueue llm's 256 + 128 borrowable)  waits:
#           one InsufficientQuota Event naming the queue, however often its quota message changes
#   steady  (3 pods, training-critical)    Admitted: the Event names queue, flavor, size, block
#   low     (4 pods, training-preemptible) Admitted into the other block
#   high    (4 pods, training-critical)    no block has 4 free: preempts low (steady, of equal
#           priority, is no candidate); low's Preempted Event names high, and an Event of high
#           names low; low then waits, CannotBePlaced naming the best block
#   a node of steady tainted NoSchedule -> NodesReplaced naming the failed and the spare node
#   a rank's pod deleted by kubectl    -> PodRecreated naming the pod, rank and node
#   steady suspended and resumed       -> admitted again on its nodes; no PodRecreated
#   huge suspended and resumed         -> Suspended, Resumed
#   unreadable (a GPU count that is not a quantity) -> Queued=True Invalid naming the field;
#   self-set (spec.priority 2000000000, no PriorityClass) -> an Invalid Event: the operator's
#           default takes priorities only from PriorityClasses (--allow-job-priority=false);
#           it still counts as its queue's pending (inadmissible) workload
#   forbidden (training-critical, which a ResourceQuota of the namespace forbids) -> Invalid
#           naming the quota, not admitted; admissible once the quota is deleted
#   b-8     (1 pod) under a ResourceQuota of 16 GPUs that a-16 uses up -> pending with reason
#           InsufficientResourceQuota naming the quota, its room and use (status, Event,
#           phalanx explain, the queue's pending counts), preempting nobody; runs once a-16 goes
#   c-el    (elastic, 1 to 3 pods) with 3 nodes free and 8 GPUs of that quota left -> admitted at
#           1 pod, no refused pod create; grows to 2 when b-8 goes
# Reasons alone are checked by the other operator tests; this one checks the messages.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_cluster --nodes 0 --ttl 600
export PHALANX_KUBECONFIG
NS=team-llm
L3=topology.k8s.aws/network-node-layer-3
apply_example_queues
"$REPO_ROOT/hack/cluster/fake-nodes.sh" --count 8 --nodes-per-block 4 >/dev/null ||
  die "cannot create the fake nodes"
# A new node carries node.kubernetes.io/not-ready until the node lifecycle controller sees it Ready.
untainted() { kc get nodes -o json | jq '[.items[] | select(.spec.taints == null)] | length'; }
all_untainted() { [[ $(untainted) == 8 ]]; }
eventually 120 all_untainted || die "the fake nodes still carry taints: $(untainted) of 8 clear"

# "<reason>|<type>|<count>|<message>" of each Event of a job, oldest first.
events_of() {
  kc -n $NS get events --field-selector "involvedObject.name=$1" --sort-by=.firstTimestamp \
    -o jsonpath='{range .items[*]}{.reason}|{.type}|{.count}|{.message}{"\n"}{end}'
}
# The message of the job's latest Event with this reason.
event_message() { events_of "$1" | grep "^$2|" | tail -1 | cut -d'|' -f4-; }
has_event_matching() { [[ $(event_message "$1" "$2") =~ $3 ]]; }
# Events are written after the status they describe, so a check right after a status changed
# can run before its event exists: every event check below waits for it (up to 20 s).
any_event_has() { events_of "$1" | grep -q -- "$2"; } # job text
gang() { job $NS "$1" "$2" "{required: $L3}" "${3:-}"; }
block_of() { kc get node "$1" -o jsonpath="{.metadata.labels.topology\.k8s\.aws/network-node-layer-3}"; }
nodes_of() { jq_job $NS "$1" '.status.placement.nodes // [] | join(" ")'; }

# --- a job that cannot fit its queue's quota: one Event, not one per cycle ----------------
gang huge 60
eventually 30 has_reason $NS huge InsufficientQuota &&
  pass "huge waits: $(cond $NS huge Queued)" || fail "huge: Queued '$(cond $NS huge Queued)'"

# --- admitted: the Event names the queue, the flavor, the size and the block --------------
gang steady 3 "  priorityClassName: training-critical"
eventually 60 all_running $NS steady 3 || die "steady is not Running: $(cond $NS steady Queued)"
read -ra S <<<"$(nodes_of steady)"
steady_block=$(block_of "${S[0]}")
eventually 20 has_event_matching steady Admitted "ClusterTrainingQueue llm in flavor p5 with 3 pods; placed in $L3=$steady_block" &&
  pass "steady's Admitted event: $(event_message steady Admitted)" ||
  fail "steady's Admitted event does not name queue llm, flavor p5, 3 pods and block $steady_block: $(events_of steady)"
kc -n $NS describe trainingjob steady | grep -A20 '^Events:' | grep -q "Admitted .*ClusterTrainingQueue llm" &&
  pass "kubectl describe trainingjob steady lists the Admitted event" ||
  fail "kubectl describe trainingjob steady: $(kc -n $NS describe trainingjob steady | grep -A20 '^Events:')"
eventually 20 has_event_matching steady Running "all 3 ranks are running" && pass "steady's Running event: $(event_message steady Running)" ||
  fail "steady: no Running event: $(events_of steady)"

# --- preempted: the victim's Event names the preemptor, and the preemptor's names the victim
gang low 4 "  priorityClassName: training-preemptible"
eventually 60 all_running $NS low 4 || die "low is not Running: $(cond $NS low Queued)"
gang high 4 "  priorityClassName: training-critical"
eventually 60 all_running $NS high 4 || die "high is not Running: $(cond $NS high Queued); low: $(cond $NS low Evicted)"
eventually 20 has_event_matching low Preempted "evicted to make room for $NS/high: lower priority than $NS/high in ClusterTrainingQueue llm" &&
  pass "low's Preempted event: $(event_message low Preempted)" || fail "low's Preempted event does not name high: $(events_of low)"
# Admitted in the cycle that preempts, while low's pods are still being deleted:
# phalanx-scheduler stops counting a released gang's pods at once (docs/scheduler.md), so the
# reservation holds their room and nobody else can take it in the gap.
eventually 20 has_event_matching high Admitted "; preempted $NS/low" &&
  pass "high is admitted in the cycle that evicts low: $(event_message high Admitted)" ||
  fail "high's Admitted event does not name low (admitted by a later cycle?): $(events_of high)"
any_event_has high "but the reservation failed" &&
  fail "high's reservation failed while low's pods were still bound: $(events_of high)" ||
  pass "no failed reservation for high"

# --- waiting: the reason and the best domain ---------------------------------------------
# The queue has two flavors: the message explains the p5 attempt, not only the gb200 one.
eventually 30 has_event_matching low CannotBePlaced "placement: .*$L3 domain; the best \\(nn-p5-l3-[01]\\) fits [0-3];.* in flavor p5 available" &&
  pass "low waits, its event says why: $(event_message low CannotBePlaced)" ||
  fail "low: no CannotBePlaced event naming the best layer-3 block of flavor p5: $(events_of low)"

# --- a node of steady fails: the Event names the failed and the spare node ----------------
kc taint node "${S[1]}" example.com/gpu-xid=79:NoSchedule >/dev/null || die "cannot taint ${S[1]}"
replaced() { read -ra n <<<"$(nodes_of steady)"; [[ -n ${n[1]:-} && ${n[1]} != "${S[1]}" ]]; }
eventually 60 replaced || fail "steady: rank 1 was not moved off ${S[1]}: $(nodes_of steady)"
read -ra S2 <<<"$(nodes_of steady)"
eventually 20 has_event_matching steady NodesReplaced "${S[1]} has taint example.com/gpu-xid=79:NoSchedule .*rank 1 ${S[1]} -> ${S2[1]}" &&
  pass "steady's NodesReplaced event: $(event_message steady NodesReplaced)" ||
  fail "steady's NodesReplaced event does not name ${S[1]} -> ${S2[1]:-?}: $(events_of steady)"
eventually 60 all_running $NS steady 3 || fail "steady is not Running again: $(events_of steady)"
has_event $NS steady Resizing && fail "steady, not elastic, got a Resizing event for its moved rank: $(events_of steady)" ||
  pass "no Resizing event for a moved rank"
has_event $NS steady PodRecreated && fail "a moved rank's new pod was called recreated: $(events_of steady)" ||
  pass "no PodRecreated event for a moved rank"

# --- a rank's pod deleted by someone else: created again on its node, and said so ----------
kc -n $NS delete pod steady-2 --wait=false >/dev/null || fail "cannot delete steady-2"
eventually 60 has_event_matching steady PodRecreated "^pod steady-2 \(rank 2\) on ${S2[2]} was deleted while the gang ran \(not by phalanx-operator\); created again on the same node$" &&
  pass "steady's PodRecreated event: $(event_message steady PodRecreated)" ||
  fail "steady: no PodRecreated event for steady-2 on ${S2[2]}: $(events_of steady)"
eventually 60 all_running $NS steady 3 || fail "steady is not Running again after steady-2 was deleted"

# --- suspended and resumed: admitted again on the same nodes, and no PodRecreated ---------
# The operator deleted those pods itself. Its memory of the ranks seen is per admission:
# before, it looked for the Admitted condition among its own conditions, never reset it, and
# called the new admission's pods recreated (audit session 34, D2-2).
recreated_before=$(events_of steady | grep '^PodRecreated|')
kc -n $NS patch trainingjob steady --type=merge -p '{"spec":{"suspend":true}}' >/dev/null ||
  fail "cannot suspend steady"
suspended_gone() { phase_is $NS steady Suspended && npods_is $NS steady 0; }
eventually 60 suspended_gone || fail "steady: phase $(phase $NS steady), $(npods $NS steady) pods after its suspension"
kc -n $NS patch trainingjob steady --type=merge -p '{"spec":{"suspend":false}}' >/dev/null ||
  fail "cannot resume steady"
eventually 60 all_running $NS steady 3 || fail "steady is not Running after its resume: $(cond $NS steady Queued)"
# Placement orders the block's nodes afresh, so only some ranks may be back on their own node.
read -ra S3 <<<"$(nodes_of steady)"
same=$(for r in 0 1 2; do [[ ${S3[$r]:-} == "${S2[$r]}" ]] && echo "rank $r on ${S2[$r]}"; done | paste -sd, -)
[[ -n $same ]] && pass "steady resumed with $same again (${S3[*]}; it ran on ${S2[*]})" ||
  fail "steady resumed on ${S3[*]}, no rank on its node of ${S2[*]}: the check below proves nothing"
sleep 2 # the job controller records PodRecreated right after the creates, before Running
[[ $(events_of steady | grep '^PodRecreated|') == "$recreated_before" ]] &&
  pass "no PodRecreated event for the resumed gang's pods" ||
  fail "steady's resumed pods were called recreated: $(events_of steady | grep '^PodRecreated|')"

# --- suspend and resume ------------------------------------------------------------------
kc -n $NS patch trainingjob huge --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
eventually 30 has_event_matching huge Suspended "spec.suspend: true" && pass "huge's Suspended event: $(event_message huge Suspended)" ||
  fail "huge: no Suspended event: $(events_of huge)"
kc -n $NS patch trainingjob huge --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
eventually 30 has_event_matching huge Resumed "waits for admission again" && pass "huge's Resumed event: $(event_message huge Resumed)" ||
  fail "huge: no Resumed event: $(events_of huge)"

# --- a priority a user set herself is not honoured (the operator's default) ----------------
job $NS self-set 1 "{required: $L3}" "  priority: 2000000000"
eventually 30 has_event_matching self-set Invalid "is not honoured on this cluster: priorities come only from PriorityClasses" &&
  pass "self-set's Invalid event: $(event_message self-set Invalid)" || fail "self-set: $(cond $NS self-set Queued); $(events_of self-set)"
[[ -z $(jq_job $NS self-set '.status.admission // empty') ]] && pass "self-set was not admitted" || fail "self-set was admitted"

# --- a job phalanx-operator cannot read: Queued=True Invalid naming the field ----------------
# The template is not checked by the API server (x-kubernetes-preserve-unknown-fields); a GPU
# count that is not a quantity used to leave the job with no status, condition or event, and
# in no queue's count (audit 2026-12-01, F2).
kc -n $NS apply -f - >/dev/null <<'YAML' || fail "cannot create unreadable"
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: unreadable}
spec:
  queueName: training
  replicas: 1
  template:
    spec:
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources: {limits: {nvidia.com/gpu: eight}}
YAML
eventually 30 has_reason $NS unreadable Invalid &&
  [[ $(cond $NS unreadable Queued) == *'spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: invalid quantity "eight"'* ]] &&
  has_event_matching unreadable Invalid 'invalid quantity "eight"' &&
  pass "unreadable: $(cond $NS unreadable Queued)" ||
  fail "unreadable: Queued '$(cond $NS unreadable Queued)'; $(events_of unreadable)"
# --- a PriorityClass the namespace may not use (a ResourceQuota scoped to it) ---------------
# Kubernetes' way to limit a PriorityClass: a ResourceQuota of pods 0 scoped to it. The pods
# would be refused at create, so the job is not admitted (nor allowed to preempt at that
# priority); without the quota it is admissible again.
class_forbidden_quota $NS no-critical training-critical || fail "cannot create the ResourceQuota"
gang forbidden 1 "  priorityClassName: training-critical"
eventually 30 has_event_matching forbidden Invalid "^ResourceQuota $NS/no-critical \\(scope PriorityClass In \\[training-critical\\]\\) allows at most 0 pods in namespace $NS, and the gang needs 1: the API server would refuse its pods, so it is not admitted$" &&
  pass "forbidden's Invalid event: $(event_message forbidden Invalid)" ||
  fail "forbidden: $(cond $NS forbidden Queued); $(events_of forbidden)"
[[ -z $(jq_job $NS forbidden '.status.admission // empty') ]] && pass "forbidden was not admitted" ||
  fail "forbidden was admitted"
kc -n $NS delete resourcequota no-critical >/dev/null || fail "cannot delete the ResourceQuota"
not_invalid() { [[ $(cond $NS forbidden Queued) != "True Invalid:"* ]]; }
eventually 30 not_invalid && pass "without the quota forbidden is admissible: $(cond $NS forbidden Queued)" ||
  fail "forbidden still Invalid without the quota: $(cond $NS forbidden Queued)"
kc -n $NS delete trainingjob forbidden --timeout=60s >/dev/null || fail "forbidden was not deleted"

# Still its queue's pending workload, as Kueue counts an inadmissible one (audit 2026-11-30 c,
# D1: refused before admission, it was in no count): the TrainingQueue's pendingWorkloads is
# every job of the namespace waiting, and the metric counts it inadmissible.
waiting_jobs() {
  kc -n $NS get trainingjobs -o json |
    jq '[.items[] | select(.status.admission == null and .spec.suspend != true and
         (.status.phase // "" | IN("Succeeded", "Failed") | not))] | length'
}
tq_pending() { kc -n $NS get trainingqueue training -o jsonpath='{.status.pendingWorkloads}'; }
counted() { [[ $(tq_pending) == "$(waiting_jobs)" ]]; }
eventually 30 counted && pass "TrainingQueue training counts self-set: pendingWorkloads $(tq_pending) = jobs waiting" ||
  fail "pendingWorkloads $(tq_pending), jobs waiting $(waiting_jobs)"
inadmissible() {
  curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" |
    awk '$1 == "phalanx_pending_workloads{cluster_queue=\"llm\",status=\"inadmissible\"}" {print $2}'
}
some_inadmissible() { [[ $(inadmissible) =~ ^[1-9] ]]; }
eventually 30 some_inadmissible &&
  pass "phalanx_pending_workloads{cluster_queue=\"llm\",status=\"inadmissible\"} $(inadmissible)" ||
  fail "self-set is not counted inadmissible: $(inadmissible)"

# --- no pile-up: the quota message of huge changed with every admission above (steady, low,
# high, low's eviction), but its InsufficientQuota Event is recorded once per time it became
# the reason: before the suspension and after the resumption.
eventually 30 has_reason $NS huge InsufficientQuota || fail "huge does not wait for quota again: $(cond $NS huge Queued)"
n=$(events_of huge | grep -c '^InsufficientQuota|')
((n <= 2)) && pass "huge has $n InsufficientQuota events over $(events_of huge | wc -l) in all" ||
  fail "huge has $n InsufficientQuota events: $(events_of huge)"
events_of low | grep -c '^CannotBePlaced|' | grep -qx 1 && pass "low has one CannotBePlaced event" ||
  fail "low's CannotBePlaced events: $(events_of low | grep '^CannotBePlaced|')"

# --- a ResourceQuota whose use leaves no room holds a gang back (Volcano's resourcequota) ---
# The namespace's jobs go; a quota of 16 GPUs: a-16 (2 pods of 8) runs and uses it all, and
# team-vision's jobs take the other 6 nodes. b-8 (1 pod) waits, pending and not Invalid, told
# the quota, its room, its use and what it needs; it is not admitted, and a-16, of a lower
# priority in the same queue, is not preempted for it, as it would be without the quota.
# a-16 deleted, the use goes down and b-8 is admitted and runs.
for j in huge steady low high self-set unreadable; do kc -n $NS delete trainingjob $j --wait=false >/dev/null; done
kc taint node "${S[1]}" example.com/gpu-xid- >/dev/null || fail "cannot untaint ${S[1]}"
ns_pods() { kc -n $NS get pods -l phalanx.dev/job -o name | wc -l; }
no_ns_pods() { [[ $(ns_pods) == 0 ]]; }
eventually 90 no_ns_pods || fail "$NS still has $(ns_pods) pods of its deleted jobs"
resource_quota $NS gpus '{requests.nvidia.com/gpu: "16"}' || fail "cannot create the ResourceQuota gpus"
gpus_used() { kc -n $NS get resourcequota gpus -o jsonpath='{.status.used.requests\.nvidia\.com/gpu}'; }
gpus_used_is() { [[ $(gpus_used) == "$1" ]]; }
eventually 60 gpus_used_is 0 || fail "ResourceQuota gpus: status.used $(gpus_used), not 0"
gang a-16 2 "  priorityClassName: training-preemptible"
eventually 60 all_running $NS a-16 2 && pass "a-16 runs under the quota" ||
  fail "a-16: $(cond $NS a-16 Queued)"
eventually 30 gpus_used_is 16 || fail "ResourceQuota gpus: status.used $(gpus_used), not 16"
job team-vision fill-4 4 "{required: $L3}" && eventually 60 all_running team-vision fill-4 4 &&
  job team-vision fill-2 2 "{required: $L3}" && eventually 60 all_running team-vision fill-2 2 ||
  fail "team-vision's jobs do not fill the other 6 nodes: $(cond team-vision fill-4 Queued); $(cond team-vision fill-2 Queued)"
gang b-8 1 "  priorityClassName: training-critical"
rq_why="ResourceQuota $NS/gpus has room for 0 more requests.nvidia.com/gpu in namespace $NS (16 of 16 used), and the gang needs 8 (1 pod of 8): it waits until the namespace uses less"
eventually 30 has_reason $NS b-8 InsufficientResourceQuota &&
  pass "b-8 waits: $(cond $NS b-8 Queued)" || fail "b-8: $(cond $NS b-8 Queued)"
[[ $(cond $NS b-8 Queued) == "True InsufficientResourceQuota: $rq_why" ]] &&
  pass "b-8's Queued message names the quota, its room and use, and the gang's need" ||
  fail "b-8's Queued condition: '$(cond $NS b-8 Queued)'"
rq_event() {
  events_of b-8 | awk -F'|' -v m="$rq_why" '$1 == "InsufficientResourceQuota" && $2 == "Normal" && $4 == m {f = 1} END {exit !f}'
}
eventually 20 rq_event && pass "b-8 has a Normal InsufficientResourceQuota event" ||
  fail "b-8's events: $(events_of b-8)"
explained=$("$BUILD/cli/phalanx" explain b-8 -n $NS --kubeconfig "$PHALANX_KUBECONFIG" --json | jq -r .reason)
[[ $explained == "$rq_why" ]] && pass "phalanx explain b-8 gives the reason" ||
  fail "phalanx explain b-8: '$explained'"
[[ -z $(jq_job $NS b-8 '.status.admission // empty') && $(npods $NS b-8) == 0 ]] &&
  pass "b-8 is not admitted and has no pods" || fail "b-8 admitted: $(jq_job $NS b-8 .status)"
all_running $NS a-16 2 && [[ -z $(events_of a-16 | grep '^Preempted|') ]] &&
  pass "a-16 still runs: nobody was preempted for b-8" || fail "a-16: $(events_of a-16)"
one_pending() { [[ $(tq_pending) == 1 ]]; }
eventually 30 one_pending && pass "TrainingQueue training counts b-8: pendingWorkloads 1" ||
  fail "pendingWorkloads $(tq_pending)"
one_inadmissible() { [[ $(inadmissible) == 1 ]]; }
eventually 30 one_inadmissible &&
  pass "phalanx_pending_workloads{cluster_queue=\"llm\",status=\"inadmissible\"} 1" ||
  fail "b-8 is not counted inadmissible: $(inadmissible)"
kc -n $NS delete trainingjob a-16 --wait=false >/dev/null
eventually 90 all_running $NS b-8 1 && pass "a-16 deleted: b-8 is admitted and runs" ||
  fail "b-8 after a-16 went: $(cond $NS b-8 Queued); quota used $(gpus_used)"
# An elastic gang is admitted at the size the room lets the API server create, not at the
# size the free nodes allow: fill-2 gone, 3 nodes are free but the quota has 8 GPUs left, so
# c-el (1 to 3 pods of 8) runs at 1, with no refused pod create.
kc -n team-vision delete trainingjob fill-2 --wait=false >/dev/null
fill_2_gone() { ! kc -n team-vision get trainingjob fill-2 >/dev/null 2>&1; }
eventually 60 fill_2_gone || fail "team-vision/fill-2 was not deleted"
eventually 30 gpus_used_is 8 || fail "ResourceQuota gpus: status.used $(gpus_used), not 8"
gang c-el 3 "  elastic: {minReplicas: 1, maxReplicas: 3}"
eventually 60 all_running $NS c-el 1 && [[ $(jq_job $NS c-el .status.admission.replicas) == 1 ]] &&
  pass "c-el is admitted at 1 of 1-3 pods, what the quota's room holds" ||
  fail "c-el: admitted $(jq_job $NS c-el .status.admission.replicas), $(cond $NS c-el Queued)"
sleep 3
[[ -z $(events_of c-el | grep '^FailedCreate|') && $(jq_job $NS c-el .status.admission.replicas) == 1 ]] &&
  pass "c-el has no FailedCreate event and does not grow past the room" ||
  fail "c-el: $(events_of c-el | grep '^FailedCreate|' | head -2); size $(jq_job $NS c-el .status.admission.replicas)"
kc -n $NS delete trainingjob b-8 --wait=false >/dev/null
grown() { [[ $(jq_job $NS c-el .status.admission.replicas) == 2 ]] && all_running $NS c-el 2; }
eventually 90 grown && pass "b-8 deleted: c-el grows to 2 pods, the room now" ||
  fail "c-el after b-8 went: $(jq_job $NS c-el .status.admission.replicas) pods; quota used $(gpus_used)"
kc -n $NS delete resourcequota gpus >/dev/null || fail "cannot delete the ResourceQuota gpus"

out=$(check_invariants) && pass "invariants hold" || fail "invariants: $out"
if ((FAILED > 0)); then for j in huge steady low high a-16 b-8 c-el; do echo "--- events of $j"; events_of $j; done; fi
finish
