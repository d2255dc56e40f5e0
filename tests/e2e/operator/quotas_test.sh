#!/usr/bin/env bash
# Quotas and preemption through the real phalanx-operator on a private cluster of 8 fake
# p5.48xlarge nodes (64 GPUs, one layer-3 block), issue #11. Each case has its own
# ClusterTrainingQueues, cohort and namespaces, all on one NodeFlavor covering nvidia.com/gpu only,
# with numbers chosen so that docs/admission.md allows exactly one outcome (jobs are pods x 8
# GPUs, so "5 pods" is 40 GPUs):
#   1. borrowing: a 16-GPU queue runs 40 GPUs with the idle quota of its 32-GPU cohort peer;
#      its status.flavorsUsage says 24 borrowed, status.fairSharing.weightedShare 24/48/2 = 250;
#   2. reclaim (reclaimWithinCohort Any): the lender's 32-GPU job evicts the borrower (Evicted
#      Preempted naming the preemptor, pods deleted, Queued again) and runs;
#   3. reclaimWithinCohort Never: the lender's job waits for quota, the borrower keeps running,
#      and the lender runs once the borrower finishes;
#   4. withinClusterQueue LowerPriority: a higher-priority job evicts a lower one, an equal one
#      evicts nobody; 4b. a job without a PriorityClass has the globalDefault class's priority
#      (evicts a lower one, its pods at that class) and its scoped ResourceQuota, unsetting
#      globalDefault by a patch starts a cycle at once, and one running since before the default
#      was made keeps its pods' priority;
#   5. StrictFIFO: a head that never fits quota blocks a small follower (BlockedByStrictFIFO);
#      BestEffortFIFO: the follower runs;
#   6. kill -9 of phalanx-scheduler, down for 8 s, while jobs arrive: the jobs whose cycles
#      failed to reach it are retried, nothing is admitted twice or in part, no node is
#      over-committed, and the scheduler holds exactly one reservation per admitted job; the
#      TrainingQueue's status.pendingJobs and `phalanx explain` give the waiting jobs' positions;
#   7. fair sharing: the same race for a cohort's last free GPUs without and with
#      phalanx-operator --fair-sharing: the older borrower wins without it, the queue with the
#      lower share wins with it;
#   9. a TrainingQueue's stopPolicy (Hold, HoldAndDrain, None again), beside another
#      TrainingQueue of the same ClusterTrainingQueue that goes on; a TrainingQueue deleted and
#      created again gets its status again;
#  10. a namespace ResourceQuota with room for one gang, two gangs submitted together: one is
#      admitted, the other waits InsufficientResourceQuota with no FailedCreate, and runs once
#      the first is deleted; limits.cpu refuses a gang without cpu limits and charges the rest;
#      a LimitRange max every pod would break refuses the gang until it is gone;
#   8. deleting a ClusterTrainingQueue whose job runs: it stays (Active False Terminating),
#      admits nothing new, goes when the job finishes; its NodeFlavor goes with the last queue
#      (last, as it deletes every queue).
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx-operator, phalanx).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PHALANX_CLI="$BUILD/cli/phalanx"
[[ -x $PHALANX_CLI ]] || die "$PHALANX_CLI is not built"

# Step 4 orders jobs by spec.priority, which phalanx-operator honours only when allowed.
export PHALANX_OPERATOR_ARGS="--allow-job-priority true"
start_cluster --nodes 8 --ttl 900
FLAVOR=q-p5
kc apply -f - >/dev/null <<YAML || die "cannot create NodeFlavor $FLAVOR"
apiVersion: phalanx.dev/v1alpha1
kind: NodeFlavor
metadata: {name: $FLAVOR}
spec:
  nodeLabels: {node.kubernetes.io/instance-type: p5.48xlarge}
YAML

# A ClusterTrainingQueue admitting every namespace, nvidia.com/gpu only, in flavor q-p5, no locality
# wait (all 8 nodes are one layer-3 block anyway).
cluster_queue() { # name cohort nominal-gpus [extra spec yaml, indented 2]
  kc apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: $1}
spec:
  cohort: "$2"
  namespaceSelector: {}
  localityWaitSeconds: 0
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: $FLAVOR
      resources:
      - {name: nvidia.com/gpu, nominalQuota: $3}
${4:-}
YAML
}
# "<total> <borrowed>" of nvidia.com/gpu in flavor q-p5 from the ClusterTrainingQueue's status.
gpu_usage() {
  kc get clustertrainingqueue "$1" -o json |
    jq -r ".status.flavorsUsage[]? | select(.name==\"$FLAVOR\") | .resources[] | select(.name==\"nvidia.com/gpu\") | \"\\(.total) \\(.borrowed)\""
}
gpu_usage_is() { [[ $(gpu_usage "$1") == "$2" ]]; }
weighted_share() { kc get clustertrainingqueue "$1" -o jsonpath='{.status.fairSharing.weightedShare}'; }
weighted_share_is() { [[ $(weighted_share "$1") == "$2" ]]; }
evicted() { cond "$1" "$2" Evicted; }
# A series as phalanx-operator's /metrics shows it, exactly ("name{labels} value").
op_metrics() { curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics"; }
has_metric() { local m; m=$(op_metrics) && grep -qxF "$1" <<<"$m"; }
# Every job of these namespaces deleted and their pods gone, so the next case has all 8 nodes.
clear_jobs() {
  local ns
  for ns in "$@"; do kc -n "$ns" delete trainingjobs --all --wait=true --timeout=60s >/dev/null; done
  no_pods() { [[ $(kc get pods -A -l phalanx.dev/job -o json | jq '.items | length') == 0 ]]; }
  eventually 90 no_pods || fail "pods of $* still exist after their jobs were deleted"
}
finish_job() { # ns job replicas: every rank Succeeded
  local r
  for ((r = 0; r < $3; r++)); do set_pod_phase "$1" "$2-$r" Succeeded; done
}

# --- 1. borrowing within a cohort -----------------------------------------------------------
cluster_queue borrow-a share-a 16 "  fairSharing: {weight: 2}" || die "cannot create ClusterTrainingQueue borrow-a"
cluster_queue lend-a share-a 32 "  preemption: {reclaimWithinCohort: Any}" || die "cannot create ClusterTrainingQueue lend-a"
team qa-borrower borrow-a && team qa-lender lend-a || die "cannot create the namespaces of case 1"
active_since() { kc get clustertrainingqueue "$1" -o jsonpath='{.status.conditions[?(@.type=="Active")].lastTransitionTime}'; }
has_active_since() { [[ -n $(active_since "$1") ]]; }
eventually 30 has_active_since borrow-a || fail "borrow-a has no Active condition: $(kc get ctq borrow-a -o jsonpath='{.status}')"
borrow_a_active_since=$(active_since borrow-a)
sleep 1  # a write in a later second would show a new time
job qa-borrower big 5
eventually 90 all_running qa-borrower big 5 && pass "borrowing: 40 GPUs run in a 16-GPU queue with its peer's idle quota" ||
  fail "borrowing: qa-borrower/big not Running: phase '$(phase qa-borrower big)', $(cond qa-borrower big Queued)"
[[ $(cond qa-borrower big Admitted) == "True Admitted:"*"(borrowing cohort quota)"* ]] &&
  pass "borrowing: the Admitted condition says so: $(cond qa-borrower big Admitted)" ||
  fail "borrowing: Admitted condition '$(cond qa-borrower big Admitted)'"
eventually 30 gpu_usage_is borrow-a "40 24" && pass "borrowing: borrow-a status.flavorsUsage $FLAVOR nvidia.com/gpu total 40, borrowed 24" ||
  fail "borrowing: borrow-a flavorsUsage total/borrowed '$(gpu_usage borrow-a)', want '40 24'"
eventually 30 gpu_usage_is lend-a "0 0" || fail "borrowing: lend-a flavorsUsage '$(gpu_usage lend-a)', want '0 0'"
# Kueue's share: 24 borrowed of the cohort's 48 lendable GPUs, divided by weight 2, x1000.
eventually 30 weighted_share_is borrow-a 250 && pass "borrowing: borrow-a status.fairSharing.weightedShare 250" ||
  fail "borrowing: borrow-a weightedShare '$(weighted_share borrow-a)', want 250"
weighted_share_is lend-a 0 || fail "borrowing: lend-a weightedShare '$(weighted_share lend-a)', want 0"
# An edit phalanx-operator cannot read: a ttlSecondsAfterFinished beyond int32, which the CRD
# refuses since 2026-12-01, stored here with that bound removed for the step (an object stored
# before the bound, or any edit the decoder refuses). The job stays as it was read before,
# still charged to its queue; before, it dropped out of the queue's usage (audit 2026-12-01, F1).
TTL_MAX=/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/ttlSecondsAfterFinished/maximum
kc patch crd trainingjobs.phalanx.dev --type=json -p "[{\"op\":\"remove\",\"path\":\"$TTL_MAX\"}]" >/dev/null ||
  fail "cannot remove the ttlSecondsAfterFinished bound from the CRD"
huge_ttl() { kc -n qa-borrower patch trainingjob big --type=merge -p '{"spec":{"ttlSecondsAfterFinished":3000000000}}' >/dev/null 2>&1; }
eventually 30 huge_ttl || fail "unreadable edit: the API server still refuses ttlSecondsAfterFinished 3000000000"
eventually 30 has_event qa-borrower big InvalidSpec && sleep 3 && gpu_usage_is borrow-a "40 24" &&
  pass "unreadable edit: big keeps its quota (borrow-a $(gpu_usage borrow-a)), InvalidSpec event" ||
  fail "unreadable edit: borrow-a usage '$(gpu_usage borrow-a)', want '40 24'; events: $(kc -n qa-borrower get events --field-selector involvedObject.name=big -o jsonpath='{.items[*].reason}')"
kc -n qa-borrower patch trainingjob big --type=merge -p '{"spec":{"ttlSecondsAfterFinished":null}}' >/dev/null ||
  fail "cannot unset big's ttlSecondsAfterFinished"
kc patch crd trainingjobs.phalanx.dev --type=json -p "[{\"op\":\"add\",\"path\":\"$TTL_MAX\",\"value\":2147483647}]" >/dev/null ||
  fail "cannot restore the ttlSecondsAfterFinished bound"
[[ $(active_since borrow-a) == "$borrow_a_active_since" ]] &&
  pass "borrowing: borrow-a's Active condition kept its lastTransitionTime ($borrow_a_active_since) through the status writes" ||
  fail "borrowing: borrow-a's Active lastTransitionTime moved from $borrow_a_active_since to $(active_since borrow-a) while it stayed Active"

# --- 2. reclaim by preemption (reclaimWithinCohort Any) -------------------------------------
# lend-a can use 48 - 24 = 24 GPUs of the cohort while big borrows; claim needs its nominal 32.
job qa-lender claim 4
eventually 90 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n qa-borrower get trainingjob big -o jsonpath='{.status.conditions[?(@.type==\"Evicted\")].status}') == True ]]" ||
  fail "reclaim: qa-borrower/big was not evicted: Evicted '$(evicted qa-borrower big)', claim: $(cond qa-lender claim Queued)"
[[ $(evicted qa-borrower big) == "True Preempted: evicted to make room for qa-lender/claim: ClusterTrainingQueue lend-a reclaims"* ]] &&
  pass "reclaim: the borrower's job is Evicted: $(evicted qa-borrower big)" ||
  fail "reclaim: Evicted condition '$(evicted qa-borrower big)'"
has_event qa-borrower big Preempted && pass "reclaim: a Preempted event on the evicted job" || fail "reclaim: no Preempted event on qa-borrower/big"
eventually 10 has_metric 'phalanx_preempted_workloads_total{preempting_cluster_queue="lend-a",reason="InCohortReclamation"} 1' &&
  has_metric 'phalanx_evicted_workloads_total{cluster_queue="borrow-a",reason="Preempted"} 1' &&
  pass "reclaim: /metrics counts the preemption by the preemptor's queue and reason, the eviction by the victim's" ||
  fail "reclaim: /metrics: $(op_metrics | grep -E '^phalanx_(preempted|evicted)_workloads_total' | tr '\n' ' ')"
eventually 60 npods_is qa-borrower big 0 && pass "reclaim: the evicted job's pods are deleted" ||
  fail "reclaim: qa-borrower/big still has $(npods qa-borrower big) pods"
eventually 60 phase_is qa-borrower big Queued && [[ $(cond qa-borrower big Queued) == "True "* ]] &&
  [[ $(jq_job qa-borrower big '.status.admission // "none"') == none ]] &&
  pass "reclaim: the evicted job is queued again: $(cond qa-borrower big Queued)" ||
  fail "reclaim: evicted job phase '$(phase qa-borrower big)', $(cond qa-borrower big Queued)"
eventually 90 all_running qa-lender claim 4 && pass "reclaim: the lender's job runs: $(cond qa-lender claim Admitted)" ||
  fail "reclaim: qa-lender/claim not Running: phase '$(phase qa-lender claim)', $(cond qa-lender claim Queued)"
out=$(check_invariants) && pass "reclaim: invariants hold (no node over-committed by the preemptor)" || fail "reclaim: invariants broken: $out"
eventually 30 gpu_usage_is borrow-a "0 0" && eventually 30 gpu_usage_is lend-a "32 0" &&
  pass "reclaim: flavorsUsage borrow-a 0, lend-a 32 (nothing borrowed)" ||
  fail "reclaim: flavorsUsage borrow-a '$(gpu_usage borrow-a)', lend-a '$(gpu_usage lend-a)'"
# 16 GPUs are left to borrow-a (its 16 nominal; lend-a's 32 are all in use): 40 do not fit.
eventually 30 has_reason qa-borrower big InsufficientQuota && pass "reclaim: the borrower waits for quota: $(cond qa-borrower big Queued)" ||
  fail "reclaim: qa-borrower/big: $(cond qa-borrower big Queued)"
clear_jobs qa-borrower qa-lender

# --- 3. reclaimWithinCohort Never ------------------------------------------------------------
cluster_queue borrow-b share-b 16 || die "cannot create ClusterTrainingQueue borrow-b"
cluster_queue lend-b share-b 32 "  preemption: {reclaimWithinCohort: Never, withinClusterQueue: LowerPriority}" ||
  die "cannot create ClusterTrainingQueue lend-b"
team qb-borrower borrow-b && team qb-lender lend-b || die "cannot create the namespaces of case 3"
job qb-borrower big 5
eventually 90 all_running qb-borrower big 5 || fail "never: qb-borrower/big not Running: $(cond qb-borrower big Queued)"
job qb-lender claim 4
# The pending reason is written by the cycle that would have preempted.
eventually 60 has_reason qb-lender claim InsufficientQuota && pass "never: the lender's job waits: $(cond qb-lender claim Queued)" ||
  fail "never: qb-lender/claim: '$(cond qb-lender claim Queued)', phase '$(phase qb-lender claim)'"
[[ -z $(evicted qb-borrower big) ]] && all_running qb-borrower big 5 && npods_is qb-lender claim 0 &&
  pass "never: the borrower keeps running, not evicted" ||
  fail "never: borrower Evicted '$(evicted qb-borrower big)', $(npods qb-borrower big) pods; lender $(npods qb-lender claim) pods"
finish_job qb-borrower big 5
eventually 60 phase_is qb-borrower big Succeeded || fail "never: qb-borrower/big did not succeed: phase '$(phase qb-borrower big)'"
eventually 90 all_running qb-lender claim 4 && pass "never: the lender's job runs once the borrower finished" ||
  fail "never: qb-lender/claim not Running after the borrower finished: $(cond qb-lender claim Queued)"
clear_jobs qb-borrower qb-lender

# --- 4. priority preemption within a ClusterTrainingQueue ---------------------------------
cluster_queue prio "" 32 "  preemption: {withinClusterQueue: LowerPriority}" || die "cannot create ClusterTrainingQueue prio"
team qc prio || die "cannot create namespace qc"
job qc low 4 "" "  priority: 1"
eventually 90 all_running qc low 4 || fail "priority: qc/low not Running: $(cond qc low Queued)"
job qc high 2 "" "  priority: 100"
eventually 90 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n qc get trainingjob low -o jsonpath='{.status.conditions[?(@.type==\"Evicted\")].status}') == True ]]" ||
  fail "priority: qc/low was not evicted: $(cond qc high Queued)"
[[ $(evicted qc low) == "True Preempted: evicted to make room for qc/high: lower priority than qc/high in ClusterTrainingQueue prio"* ]] &&
  pass "priority: the lower-priority job is Evicted: $(evicted qc low)" || fail "priority: Evicted condition '$(evicted qc low)'"
eventually 10 has_metric 'phalanx_preempted_workloads_total{preempting_cluster_queue="prio",reason="InClusterQueue"} 1' &&
  pass "priority: /metrics counts it as InClusterQueue" ||
  fail "priority: /metrics: $(op_metrics | grep -E '^phalanx_preempted_workloads_total' | tr '\n' ' ')"
eventually 60 npods_is qc low 0 && eventually 90 all_running qc high 2 &&
  pass "priority: its pods are gone and the higher-priority job runs" ||
  fail "priority: qc/low has $(npods qc low) pods, qc/high phase '$(phase qc high)'"
eventually 30 has_reason qc low InsufficientQuota && pass "priority: the evicted job is queued again: $(cond qc low Queued)" ||
  fail "priority: qc/low: '$(cond qc low Queued)'"
# Equal priority is not lower: the 32-GPU peer may not evict qc/high (16 of 32 in use).
job qc peer 4 "" "  priority: 100"
eventually 60 has_reason qc peer InsufficientQuota && [[ -z $(evicted qc high) ]] && all_running qc high 2 &&
  pass "priority: an equal-priority job evicts nobody: $(cond qc peer Queued)" ||
  fail "priority: qc/peer '$(cond qc peer Queued)', qc/high Evicted '$(evicted qc high)'"
clear_jobs qc

# --- 4b. a job that names no PriorityClass has the globalDefault one's ---------------------
# The API server gives its pods the globalDefault class (name and value), so phalanx-operator
# admits and preempts at that class too: at 1000 it evicts a class-10 job; at priority 0, as
# before, it would wait. The classes are deleted at the end, so later steps see none.
priority_classes() {
  kc apply -f - >/dev/null <<YAML || die "cannot create PriorityClasses e2e-batch, e2e-default"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-batch}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-default}
value: 1000
globalDefault: true
YAML
}
was_evicted() { [[ $(evicted "$1" "$2") == "True "* ]]; }
priority_classes
cluster_queue prio-default "" 32 "  preemption: {withinClusterQueue: LowerPriority}" ||
  die "cannot create ClusterTrainingQueue prio-default"
team qd prio-default || die "cannot create namespace qd"
job qd batch 4 "" "  priorityClassName: e2e-batch"
eventually 90 all_running qd batch 4 || fail "default class: qd/batch not Running: $(cond qd batch Queued)"
job qd nameless 2
eventually 90 was_evicted qd batch || fail "default class: qd/batch was not evicted: qd/nameless $(cond qd nameless Queued)"
[[ $(evicted qd batch) == "True Preempted: evicted to make room for qd/nameless: lower priority than qd/nameless in ClusterTrainingQueue prio-default"* ]] &&
  pass "default class: the job without a class evicts a class-10 job: $(evicted qd batch)" ||
  fail "default class: Evicted condition '$(evicted qd batch)'"
pod_classes() { pods_of qd "$1" | jq -r '[.items[] | "\(.spec.priorityClassName // "") \(.spec.priority)"] | unique | join(",")'; }
eventually 90 all_running qd nameless 2 && [[ $(pod_classes nameless) == "e2e-default 1000" ]] &&
  pass "default class: it runs, its pods at the class it was admitted at ($(pod_classes nameless))" ||
  fail "default class: qd/nameless phase '$(phase qd nameless)', pods '$(pod_classes nameless)'"
explained=$("$PHALANX_CLI" explain nameless -n qd --kubeconfig "$PHALANX_KUBECONFIG")
grep -qx "Priority: *e2e-default (1000, the cluster's globalDefault PriorityClass)" <<<"$explained" &&
  pass "default class: phalanx explain shows the priority it was admitted at: $(grep '^Priority:' <<<"$explained")" ||
  fail "default class: phalanx explain: $(grep '^Priority:' <<<"$explained" || echo 'no Priority line')"
clear_jobs qd
# The API server charges those pods to a quota scoped to the default class: not admitted.
class_forbidden_quota qd no-default e2e-default || die "cannot create ResourceQuota qd/no-default"
job qd refused 1
eventually 60 has_reason qd refused Invalid &&
  [[ $(cond qd refused Queued) == "True Invalid: ResourceQuota qd/no-default (scope PriorityClass In [e2e-default]) allows at most 0 pods"* ]] &&
  pass "default class: a quota scoped to it refuses the job without a class: $(cond qd refused Queued)" ||
  fail "default class: qd/refused '$(cond qd refused Queued)'"
# Without a default its pods have no class: the quota no longer applies. Unsetting globalDefault
# is a patch the API server makes without bumping metadata.generation, and nothing else is
# waiting in the cluster now: only the PriorityClass's own update starts the cycle that admits
# the job. 20 s is well under the 30-s recheck of placement-refused jobs, which would hide a
# missing trigger (audit 2026-11-30, F5).
kc patch priorityclass e2e-default --type=merge -p '{"globalDefault":false}' >/dev/null ||
  fail "default class: cannot patch e2e-default"
admitted() { [[ $(jq_job "$1" "$2" '.status.admission // "none"') != none ]]; }
eventually 20 admitted qd refused &&
  pass "default class: globalDefault unset by a patch, a cycle admits the job at once" ||
  fail "default class: globalDefault unset, qd/refused still '$(cond qd refused Queued)'"
kc delete priorityclass e2e-default e2e-batch >/dev/null || fail "default class: cannot delete the PriorityClasses"
eventually 60 all_running qd refused 1 && [[ $(pod_classes refused) == " 0" ]] &&
  pass "default class: with no default, the job has no class and runs (its pod at priority 0)" ||
  fail "default class: qd/refused '$(cond qd refused Queued)', pods '$(pod_classes refused)'"
# The Kubernetes pod rule: a default made now changes neither its running pod nor the job, which
# stays at 0, so a class-10 job evicts it (ranked at the new default's 1000 it would not).
priority_classes
explained=$("$PHALANX_CLI" explain refused -n qd --kubeconfig "$PHALANX_KUBECONFIG")
grep -qx "Priority: *0 (its pods', as created; the cluster's globalDefault PriorityClass is now e2e-default)" <<<"$explained" &&
  pass "default class: made after admission, phalanx explain shows the pods' priority: $(grep '^Priority:' <<<"$explained")" ||
  fail "default class: made after admission, phalanx explain: $(grep '^Priority:' <<<"$explained" || echo 'no Priority line')"
job qd batch 4 "" "  priorityClassName: e2e-batch"
eventually 90 was_evicted qd refused &&
  [[ $(evicted qd refused) == "True Preempted: evicted to make room for qd/batch: lower priority than qd/batch in ClusterTrainingQueue prio-default"* ]] &&
  pass "default class: made after admission, the job keeps its pods' priority 0: $(evicted qd refused)" ||
  fail "default class: qd/refused Evicted '$(evicted qd refused)', qd/batch '$(cond qd batch Queued)'"
clear_jobs qd
kc delete priorityclass e2e-default e2e-batch >/dev/null || fail "default class: cannot delete the PriorityClasses"

# --- 5. StrictFIFO and BestEffortFIFO -------------------------------------------------------
# Each queue has 16 GPUs: the 24-GPU head never fits, the 8-GPU follower always would.
cluster_queue strict "" 16 "  queueingStrategy: StrictFIFO" || die "cannot create ClusterTrainingQueue strict"
cluster_queue besteffort "" 16 "  queueingStrategy: BestEffortFIFO" || die "cannot create ClusterTrainingQueue besteffort"
team qd-strict strict && team qd-besteffort besteffort || die "cannot create the namespaces of case 5"
job qd-strict a-head 3
job qd-besteffort a-head 3
sleep 1.1  # the follower is created a second later: FIFO order is by creation time
job qd-strict b-small 1
job qd-besteffort b-small 1
eventually 90 all_running qd-besteffort b-small 1 && pass "BestEffortFIFO: the small follower runs past the head" ||
  fail "BestEffortFIFO: qd-besteffort/b-small: phase '$(phase qd-besteffort b-small)', $(cond qd-besteffort b-small Queued)"
eventually 60 has_reason qd-besteffort a-head InsufficientQuota || fail "BestEffortFIFO: head '$(cond qd-besteffort a-head Queued)'"
eventually 60 has_reason qd-strict b-small BlockedByStrictFIFO && [[ $(cond qd-strict b-small Queued) == *qd-strict/a-head* ]] &&
  pass "StrictFIFO: the follower is blocked by the head: $(cond qd-strict b-small Queued)" ||
  fail "StrictFIFO: qd-strict/b-small: '$(cond qd-strict b-small Queued)'"
has_reason qd-strict a-head InsufficientQuota && npods_is qd-strict b-small 0 &&
  pass "StrictFIFO: the head waits for quota, the follower has no pods" ||
  fail "StrictFIFO: head '$(cond qd-strict a-head Queued)', follower $(npods qd-strict b-small) pods"
clear_jobs qd-strict qd-besteffort

# --- 6. kill -9 of phalanx-scheduler during admissions --------------------------------------
# 10 one-pod jobs into a 48-GPU queue, exactly 6 can be admitted: 3 applied just before the
# crash, 4 while the scheduler is down (their cycles fail to reach it), 3 after it is back.
cluster_queue burst "" 48 || die "cannot create ClusterTrainingQueue burst"
team qe burst || die "cannot create namespace qe"
for i in 1 2 3; do job qe burst-$i 1; done
"$REPO_ROOT/hack/cluster/restart.sh" phalanx-scheduler --kill --down-for 8 >"$PHALANX_CLUSTER_DIR/restart.log" 2>&1 &
restart_pid=$!
scheduler_down() { ! curl -sf --max-time 1 "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/healthz"; }
eventually 30 scheduler_down || fail "phalanx-scheduler did not go down: $(cat "$PHALANX_CLUSTER_DIR/restart.log")"
for i in 4 5 6 7; do job qe burst-$i 1; done
# The operator's gauge of the outage: set by the first unanswered Placement call, 0 once one is
# answered. Read while the scheduler is down (the restart script is still running).
unanswered_since() { op_metrics | awk '$1 == "phalanx_placement_unanswered_since_timestamp_seconds" {print $2}'; }
seen_unanswered=""
while kill -0 "$restart_pid" 2>/dev/null && [[ -z $seen_unanswered ]]; do
  v=$(unanswered_since)
  [[ -n $v && $v != 0 ]] && seen_unanswered=$v
  sleep 0.2
done
wait "$restart_pid" && pass "phalanx-scheduler killed with SIGKILL during a burst of jobs, restarted 8 s later" ||
  fail "phalanx-scheduler did not come back: $(tail -5 "$PHALANX_CLUSTER_DIR/restart.log")"
back_at=$(date +%s.%N)
any_admitted_during() { for i in 4 5 6 7; do [[ $(jq_job qe burst-$i '.status.admission // "none"') != none ]] && return 0; done; return 1; }
eventually 60 any_admitted_during &&
  pass "a job applied during the outage was admitted $(python3 -c "import time; print(round(time.time() - $back_at, 1))") s after phalanx-scheduler was ready again (the operator retries at least every 5 s, its channel reconnects at least every 2 s)" ||
  fail "no job applied during the outage was admitted within 60 s of the restart"
[[ -n $seen_unanswered ]] &&
  pass "during the outage /metrics showed phalanx_placement_unanswered_since_timestamp_seconds $seen_unanswered" ||
  fail "phalanx_placement_unanswered_since_timestamp_seconds stayed '$(unanswered_since)' while phalanx-scheduler was down"
unanswered_cleared() { [[ $(unanswered_since) == 0 ]]; }
eventually 30 unanswered_cleared && pass "an answered call set it back to 0" ||
  fail "phalanx_placement_unanswered_since_timestamp_seconds is '$(unanswered_since)' after a job was admitted"
for i in 8 9 10; do job qe burst-$i 1; done
saw_error=0
for i in 4 5 6 7; do has_event qe burst-$i PlacementError && saw_error=1; done
[[ $saw_error == 1 ]] && pass "jobs applied during the outage were told the Placement service failed (PlacementError event)" ||
  fail "no PlacementError event on the jobs applied while phalanx-scheduler was down"
running_jobs() { kc -n qe get trainingjobs -o json | jq '[.items[] | select(.status.phase=="Running")] | length'; }
running_jobs_is() { [[ $(running_jobs) == "$1" ]]; }
eventually 120 running_jobs_is 6 && pass "6 of the 10 jobs run after the restart" ||
  fail "$(running_jobs) of 10 jobs Running after the restart, want 6: $(kc -n qe get trainingjobs -o json | jq -c '[.items[] | .status.conditions[]? | select(.type=="Queued" and .status=="True") | .reason] | group_by(.) | map({(.[0]): length}) | add')"
queued_reasons() {
  kc -n qe get trainingjobs -o json |
    jq -r '[.items[] | select(.status.admission == null) | .status.conditions[]? | select(.type=="Queued" and .status=="True") | .reason] | join(" ")'
}
queued_reasons_are() { [[ $(queued_reasons) == "$1" ]]; }
eventually 30 queued_reasons_are "InsufficientQuota InsufficientQuota InsufficientQuota InsufficientQuota" &&
  pass "the other 4 wait for quota (InsufficientQuota)" ||
  fail "the jobs not admitted wait with reasons '$(queued_reasons)', want 4 x InsufficientQuota"
# Where each waits, as a tenant reads it (TrainingQueue status.pendingJobs): the four, oldest
# first (equal priorities), at positions 1-4 of their queue and of ClusterTrainingQueue burst.
waiting_in_order() {
  kc -n qe get trainingjobs -o json |
    jq -r '[.items[] | select(.status.admission == null)] | sort_by(.metadata.creationTimestamp, .metadata.name) | [.[].metadata.name] | join(" ")'
}
listed() { kc -n qe get trainingqueue training -o json | jq -r '[.status.pendingJobs[]? | "\(.name)@\(.positionInQueue)/\(.positionInClusterQueue)"] | join(" ")'; }
want_listed() { local n=0 out=""; for j in $(waiting_in_order); do n=$((n + 1)); out+="${out:+ }$j@$n/$n"; done; echo "$out"; }
listed_ok() { [[ -n $(listed) && $(listed) == "$(want_listed)" ]]; }
eventually 30 listed_ok && pass "TrainingQueue qe/training lists the waiting jobs with their positions: $(listed)" ||
  fail "TrainingQueue qe/training status.pendingJobs '$(listed)', want '$(want_listed)'"
last=$(waiting_in_order | awk '{print $NF}')
explained=$("$PHALANX_CLI" explain "$last" -n qe --kubeconfig "$PHALANX_KUBECONFIG")
grep -qx "Position: *4 in ClusterTrainingQueue burst, 4 in TrainingQueue qe/training" <<<"$explained" &&
  pass "phalanx explain $last shows its position: $(grep '^Position:' <<<"$explained")" ||
  fail "phalanx explain $last: $(grep '^Position:' <<<"$explained" || echo 'no Position line')"
out=$(check_invariants) && pass "invariants hold: every admitted job has exactly its pods on its placement nodes, no node over-committed" ||
  fail "invariants broken after the scheduler restart: $out"
snapshot_json() { "$PHALANX_CLI" placement snapshot --server "$PHALANX_SCHEDULER_GRPC" --json; }
reservations_are() { [[ $(snapshot_json | jq -c '[.reservations, .free_gpus]') == "$1" ]]; }
eventually 30 reservations_are '[6,16]' && pass "phalanx-scheduler holds exactly 6 reservations, 16 of 64 GPUs free" ||
  fail "phalanx-scheduler snapshot after the restart: $(snapshot_json | jq -c '{reservations, free_gpus}')"
clear_jobs qe

# --- 7. fair sharing: who gets the cohort's last free GPUs -----------------------------------
# Cohort of $1-a (8 GPUs), $1-b (8) and $1-lend (32), nobody reclaims. $1-a already borrows 16
# (a1, 24 GPUs) and $1-lend's blocker fills the rest; a2 (16) then b1 (16) wait for the blocker,
# and when it finishes only one of them fits in the 24 GPUs freed. Without fair sharing both
# borrow and the older a2 goes first; with it, $1-b's share with b1 (8/48) is below $1-a's with
# a2 (32/48), so b1 goes first. Prints the job that runs.
fair_sharing_race() { # prefix
  local p=$1
  cluster_queue "$p-a" "$p" 8 && cluster_queue "$p-b" "$p" 8 && cluster_queue "$p-lend" "$p" 32 &&
    team "$p-a" "$p-a" && team "$p-b" "$p-b" && team "$p-lend" "$p-lend" || { echo "cannot create the queues"; return 1; }
  job "$p-a" a1 3
  eventually 90 all_running "$p-a" a1 3 || { echo "$p-a/a1 not Running: $(cond "$p-a" a1 Queued)"; return 1; }
  job "$p-lend" blocker 3
  eventually 90 all_running "$p-lend" blocker 3 || { echo "$p-lend/blocker not Running: $(cond "$p-lend" blocker Queued)"; return 1; }
  job "$p-a" a2 2
  job "$p-b" b1 2
  eventually 60 has_reason "$p-a" a2 InsufficientQuota && eventually 60 has_reason "$p-b" b1 InsufficientQuota ||
    { echo "a2 and b1 should wait: $(cond "$p-a" a2 Queued); $(cond "$p-b" b1 Queued)"; return 1; }
  finish_job "$p-lend" blocker 3
  one_runs() { all_running "$p-a" a2 2 || all_running "$p-b" b1 2; }
  eventually 90 one_runs || { echo "neither a2 nor b1 runs: $(cond "$p-a" a2 Queued); $(cond "$p-b" b1 Queued)"; return 1; }
  if all_running "$p-a" a2 2; then
    has_reason "$p-b" b1 InsufficientQuota && npods_is "$p-b" b1 0 && echo a2 || echo "both: $(cond "$p-b" b1 Queued)"
  else
    has_reason "$p-a" a2 InsufficientQuota && npods_is "$p-a" a2 0 && echo b1 || echo "both: $(cond "$p-a" a2 Queued)"
  fi
}
# The race, its winner, and the shares Kueue's formula gives: 24 + 16 = 40 GPUs of fso-a, 32
# borrowed of 48 lendable = 666 with fso-b at 0; 16 and 8 borrowed = 333 and 166.
fair_sharing_case() { # prefix mode winner a-share b-share
  local winner
  winner=$(fair_sharing_race "$1")
  [[ $winner == "$3" ]] && pass "fair sharing $2: $3 takes the freed GPUs, the other waits" ||
    fail "fair sharing $2: want $3 admitted, got: $winner"
  eventually 30 weighted_share_is "$1-a" "$4" && weighted_share_is "$1-b" "$5" &&
    pass "fair sharing $2: weightedShare $1-a $4, $1-b $5" ||
    fail "fair sharing $2: weightedShare $1-a '$(weighted_share "$1-a")', $1-b '$(weighted_share "$1-b")', want $4 and $5"
  clear_jobs "$1-a" "$1-b" "$1-lend"
}
fair_sharing_case fso off a2 666 0
# The same on this cluster with phalanx-operator --fair-sharing true (a graceful restart hands
# the Lease over at once).
sed -i '$ s/$/ --fair-sharing true/' "$PHALANX_CLUSTER_DIR/run/phalanx-operator.sh"
"$REPO_ROOT/hack/cluster/restart.sh" phalanx-operator >"$PHALANX_CLUSTER_DIR/restart.log" 2>&1 ||
  die "phalanx-operator --fair-sharing true did not start: $(tail -5 "$OPLOG")"
fair_sharing_case fsn on b1 333 166

# --- 9. a TrainingQueue's stopPolicy: Hold keeps its jobs waiting, HoldAndDrain evicts its
# running ones; the other TrainingQueue of the same ClusterTrainingQueue goes on --------------
lq_active() { kc -n "$1" get trainingqueue training -o json | jq -r '.status.conditions[]? | select(.type=="Active") | "\(.status) \(.reason): \(.message)"'; }
cluster_queue stop-q "" 64 && team qs-held stop-q && team qs-open stop-q || die "cannot create the queues of case 9"
job qs-held running 2
eventually 90 all_running qs-held running 2 || fail "stopPolicy: qs-held/running not Running: $(cond qs-held running Queued)"
kc -n qs-held patch trainingqueue training --type=merge -p '{"spec":{"stopPolicy":"Hold"}}' >/dev/null ||
  fail "stopPolicy: cannot set Hold"
lq_stopped() { [[ $(lq_active qs-held) == "False Stopped: TrainingQueue qs-held/training is stopped (stopPolicy $1)" ]]; }
eventually 30 lq_stopped Hold && pass "stopPolicy Hold: the TrainingQueue says so: $(lq_active qs-held)" ||
  fail "stopPolicy Hold: Active '$(lq_active qs-held)'"
job qs-held waits 1
job qs-open runs 1
eventually 90 all_running qs-open runs 1 && eventually 30 has_reason qs-held waits TrainingQueueStopped &&
  all_running qs-held running 2 &&
  pass "stopPolicy Hold: a new job of the held queue waits ($(cond qs-held waits Queued)), its running job runs on, the other TrainingQueue's job runs" ||
  fail "stopPolicy Hold: waits: $(cond qs-held waits Queued); runs: $(cond qs-open runs Queued); running: $(npods qs-held running) pods"
kc -n qs-held patch trainingqueue training --type=merge -p '{"spec":{"stopPolicy":"HoldAndDrain"}}' >/dev/null ||
  fail "stopPolicy: cannot set HoldAndDrain"
eventually 60 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n qs-held get trainingjob running -o jsonpath='{.status.conditions[?(@.type==\"Evicted\")].status}') == True ]]" &&
  [[ $(evicted qs-held running) == "True TrainingQueueStopped: TrainingQueue qs-held/training has stopPolicy HoldAndDrain"* ]] &&
  eventually 60 npods_is qs-held running 0 &&
  pass "stopPolicy HoldAndDrain: the running job is evicted ($(evicted qs-held running)) and its pods deleted" ||
  fail "stopPolicy HoldAndDrain: Evicted '$(evicted qs-held running)', $(npods qs-held running) pods"
has_event qs-held running TrainingQueueStopped &&
  eventually 10 has_metric 'phalanx_evicted_workloads_total{cluster_queue="stop-q",reason="TrainingQueueStopped"} 1' &&
  pass "stopPolicy HoldAndDrain: a TrainingQueueStopped event, and /metrics counts the eviction under that reason, not as a preemption" ||
  fail "stopPolicy HoldAndDrain: events '$(kc -n qs-held get events --field-selector involvedObject.name=running -o jsonpath='{.items[*].reason}')', /metrics: $(op_metrics | grep -E '^phalanx_evicted_workloads_total' | tr '\n' ' ')"
kc -n qs-held patch trainingqueue training --type=merge -p '{"spec":{"stopPolicy":"None"}}' >/dev/null ||
  fail "stopPolicy: cannot set None"
eventually 90 all_running qs-held running 2 && eventually 90 all_running qs-held waits 1 &&
  pass "stopPolicy None: both jobs of the queue run again" ||
  fail "stopPolicy None: running: $(cond qs-held running Queued); waits: $(cond qs-held waits Queued)"
# As Kueue does when a workload reserves quota again: the eviction is history, not state.
[[ $(evicted qs-held running) == "False Admitted: Previously: TrainingQueue qs-held/training has stopPolicy HoldAndDrain"* ]] &&
  pass "stopPolicy None: the re-admitted job's Evicted condition is False: $(evicted qs-held running)" ||
  fail "stopPolicy None: the re-admitted job's Evicted condition: '$(evicted qs-held running)'"
clear_jobs qs-held qs-open
# A TrainingQueue deleted and created again is a new object: it gets its status again.
lq_is_active() { [[ $(lq_active qs-open) == "True "* ]]; }
eventually 30 lq_is_active || fail "stopPolicy: qs-open/training is not Active: '$(lq_active qs-open)'"
kc -n qs-open delete trainingqueue training >/dev/null || fail "cannot delete qs-open/training"
sleep 2  # at least one admission cycle sees it gone
team qs-open stop-q || fail "cannot create qs-open/training again"
eventually 30 lq_is_active && pass "a TrainingQueue created again under its old name gets its status: $(lq_active qs-open)" ||
  fail "qs-open/training created again has Active '$(lq_active qs-open)'"

# --- 10. a namespace ResourceQuota with room for exactly one gang -----------------------------
# requests.nvidia.com/gpu 16 holds one gang of 2 pods x 8 GPUs; the queue and the nodes hold
# four. Two gangs submitted together: exactly one is admitted (in one admission cycle the core's
# budget counts the first; in the next, the pods it is owed count as used before they exist),
# the other waits InsufficientResourceQuota, and no pod create is refused (FailedCreate), then
# it is admitted once the first is deleted. Before 2026-11-30 both were admitted and the second
# one's pods were refused until the pods-ready timeout.
# The queue covers cpu too: the limits step's pods request it (requests default to limits).
kc apply -f - >/dev/null <<YAML || die "cannot create ClusterTrainingQueue rq-q"
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: rq-q}
spec:
  namespaceSelector: {}
  localityWaitSeconds: 0
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: $FLAVOR
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 64}
      - {name: cpu, nominalQuota: 1000}
YAML
team qrq rq-q || die "cannot create namespace qrq and its TrainingQueue"
resource_quota qrq gpus '{requests.nvidia.com/gpu: "16"}' || die "cannot create ResourceQuota qrq/gpus"
rq_used() { kc -n qrq get resourcequota gpus -o jsonpath='{.status.used.requests\.nvidia\.com/gpu}'; }
rq_used_is() { [[ $(rq_used) == "$1" ]]; }
eventually 60 rq_used_is 0 || fail "resourcequota: qrq/gpus status.used '$(rq_used)', not 0"
job qrq rq-a 2 & job qrq rq-b 2 & wait
admitted_jobs() { local j; for j in rq-a rq-b; do [[ -n $(jq_job qrq $j '.status.admission // empty') ]] && echo $j; done; }
one_admitted() { [[ $(admitted_jobs | wc -l) == 1 ]]; }
failed_creates() { kc -n qrq get events --field-selector reason=FailedCreate -o name | wc -l; }
eventually 60 one_admitted || fail "resourcequota: admitted: '$(admitted_jobs | tr '\n' ' ')'"
first=$(admitted_jobs | head -1)
second=$([[ $first == rq-a ]] && echo rq-b || echo rq-a)
eventually 60 all_running qrq "$first" 2 && eventually 30 rq_used_is 16 ||
  fail "resourcequota: $first not running: $(cond qrq "$first" Queued), used '$(rq_used)'"
eventually 30 has_reason qrq "$second" InsufficientResourceQuota &&
  [[ $(cond qrq "$second" Queued) == *"ResourceQuota qrq/gpus has room for 0 more requests.nvidia.com/gpu"* ]] &&
  pass "resourcequota: of two gangs submitted together, $first runs and $second waits: $(cond qrq "$second" Queued)" ||
  fail "resourcequota: $second: $(cond qrq "$second" Queued)"
sleep 3  # cycles come and go; none admits the second gang into the used room
one_admitted && [[ $(npods qrq "$second") == 0 && $(failed_creates) == 0 ]] &&
  pass "resourcequota: $second stays unadmitted, no pods, no FailedCreate event in qrq" ||
  fail "resourcequota: admitted '$(admitted_jobs | tr '\n' ' ')', $second pods $(npods qrq "$second"), FailedCreate events $(failed_creates)"
kc -n qrq delete trainingjob "$first" --wait=false >/dev/null
eventually 90 all_running qrq "$second" 2 && [[ $(failed_creates) == 0 ]] &&
  pass "resourcequota: $first deleted, $second is admitted and runs, no FailedCreate" ||
  fail "resourcequota: $second: $(cond qrq "$second" Queued); FailedCreate events $(failed_creates)"
# The room a suspension frees goes to the next gang; resumed, the suspended one waits, and its
# Admitted condition no longer says it is suspended (audit session 35, F7).
kc -n qrq patch trainingjob "$second" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null ||
  fail "cannot suspend $second"
eventually 60 rq_used_is 0 || fail "resourcequota: $second suspended, used '$(rq_used)'"
job qrq rq-c 2
eventually 60 all_running qrq rq-c 2 || fail "resourcequota: rq-c: $(cond qrq rq-c Queued)"
kc -n qrq patch trainingjob "$second" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null ||
  fail "cannot resume $second"
admitted_cond() { jq_job qrq "$second" '[.status.conditions[]? | select(.type=="Admitted") | .status + " " + .reason] | join("")'; }
resumed_waiting() { has_reason qrq "$second" InsufficientResourceQuota && [[ $(admitted_cond) == "False Resumed" ]]; }
eventually 30 resumed_waiting &&
  pass "resourcequota: $second resumed into a full room waits (InsufficientResourceQuota), Admitted False Resumed" ||
  fail "resourcequota: $second resumed: Queued '$(cond qrq "$second" Queued)', Admitted '$(admitted_cond)'"
clear_jobs qrq

# limits.cpu: a gang whose containers set no cpu limit is refused (the API server would say
# "must specify limits.cpu"), until a LimitRange gives containers a default cpu limit (the API
# server's LimitRanger fills it in first): then it is admitted and its pods are created, and
# charged the default, so a second such gang beyond the room waits. One that sets it is charged
# it, and a second one beyond the room waits.
resource_quota qrq cpu-limits '{limits.cpu: "12"}' || die "cannot create ResourceQuota qrq/cpu-limits"
cpu_limits_seen() { [[ -n $(kc -n qrq get resourcequota cpu-limits -o jsonpath='{.status.hard.limits\.cpu}') ]]; }
eventually 60 cpu_limits_seen || fail "resourcequota: qrq/cpu-limits has no status"
job qrq no-limit 1
eventually 30 has_reason qrq no-limit Invalid &&
  [[ $(cond qrq no-limit Queued) == *"tracks limits.cpu in namespace qrq, and a container of the gang's pods sets no cpu limit"* ]] &&
  pass "limits: a gang without cpu limits is refused: $(cond qrq no-limit Queued)" ||
  fail "limits: qrq/no-limit: $(cond qrq no-limit Queued)"
kc -n qrq apply -f - >/dev/null <<'YAML' || die "cannot create LimitRange qrq/defaults"
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec: {limits: [{type: Container, default: {cpu: "8"}}]}
YAML
eventually 60 all_running qrq no-limit 1 && [[ $(failed_creates) == 0 ]] &&
  pass "limits: with a LimitRange defaulting the cpu limit the same gang is admitted and runs, no FailedCreate" ||
  fail "limits: qrq/no-limit under a LimitRange: phase '$(phase qrq no-limit)', $(cond qrq no-limit Queued); FailedCreate events $(failed_creates)"
# What the default adds is charged: its pod holds 8 of the 12, so another such gang waits
# (before, it was charged nothing, admitted, and its pod create refused).
job qrq no-limit-b 1
eventually 30 has_reason qrq no-limit-b InsufficientResourceQuota &&
  [[ $(cond qrq no-limit-b Queued) == *"has room for 4 more limits.cpu in namespace qrq (8 of 12 used), and the gang needs 8 (1 pod of 8)"* ]] &&
  [[ $(failed_creates) == 0 ]] &&
  pass "limits: the LimitRange's default is charged: no-limit-b waits: $(cond qrq no-limit-b Queued)" ||
  fail "limits: qrq/no-limit-b: $(cond qrq no-limit-b Queued); FailedCreate events $(failed_creates)"
kc -n qrq delete trainingjob no-limit no-limit-b >/dev/null
kc -n qrq delete limitrange defaults >/dev/null
no_pods_left() { [[ -z $(kc -n qrq get pods -o name) ]]; }
eventually 60 no_pods_left || fail "limits: qrq still has pods: $(kc -n qrq get pods -o name | tr '\n' ' ')"
cpu_job() { # name: 2 pods, a cpu limit of 4 each
  kc -n qrq apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: $1}
spec:
  queueName: training
  replicas: 2
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources: {limits: {nvidia.com/gpu: 8, cpu: "4"}}
YAML
}
cpu_job lim-a && eventually 60 all_running qrq lim-a 2 ||
  fail "limits: qrq/lim-a does not run: $(cond qrq lim-a Queued)"
cpu_job lim-b
eventually 30 has_reason qrq lim-b InsufficientResourceQuota &&
  [[ $(cond qrq lim-b Queued) == *"has room for 4 more limits.cpu in namespace qrq"*"needs 8 (2 pods of 4)"* ]] &&
  [[ $(failed_creates) == 0 ]] &&
  pass "limits: limits.cpu is charged: lim-b waits: $(cond qrq lim-b Queued)" ||
  fail "limits: qrq/lim-b: $(cond qrq lim-b Queued); FailedCreate events $(failed_creates)"
clear_jobs qrq
# A LimitRange max that every pod of the gang breaks: refused, naming it, and no pod create is
# tried (Kueue's rule, pkg/util/limitrange); admitted once the LimitRange is gone.
kc -n qrq apply -f - >/dev/null <<'YAML' || die "cannot create LimitRange qrq/gpu-max"
apiVersion: v1
kind: LimitRange
metadata: {name: gpu-max}
spec: {limits: [{type: Container, max: {nvidia.com/gpu: "4"}}]}
YAML
cpu_job capped
eventually 30 has_reason qrq capped Invalid &&
  [[ $(cond qrq capped Queued) == *"spec.template.spec.containers[0]: nvidia.com/gpu 8 is above the maximum per Container (4) of LimitRange qrq/gpu-max"* ]] &&
  npods_is qrq capped 0 && [[ $(failed_creates) == 0 ]] &&
  pass "limitrange: a gang over a LimitRange max is refused: $(cond qrq capped Queued)" ||
  fail "limitrange: qrq/capped: $(cond qrq capped Queued); pods $(npods qrq capped); FailedCreate events $(failed_creates)"
kc -n qrq delete limitrange gpu-max >/dev/null
eventually 60 all_running qrq capped 2 && pass "limitrange: admitted and running once the LimitRange is gone" ||
  fail "limitrange: qrq/capped after the LimitRange went: $(cond qrq capped Queued)"
clear_jobs qrq
kc -n qrq delete resourcequota gpus cpu-limits >/dev/null
kc delete clustertrainingqueue rq-q --wait=false >/dev/null

# --- 8. deleting a queue and a flavor still in use (Kueue's resource-in-use finalizer) -------
finalizers() { kc get "$1" -o jsonpath='{.metadata.finalizers}'; }
active() { kc get clustertrainingqueue "$1" -o json | jq -r '.status.conditions[]? | select(.type=="Active") | "\(.status) \(.reason): \(.message)"'; }
gone() { ! kc get "$1" >/dev/null 2>&1; }
cluster_queue del-q "" 32 && team qdel del-q || die "cannot create the queue of case 8"
job qdel running 2
eventually 90 all_running qdel running 2 || fail "delete: qdel/running not Running: $(cond qdel running Queued)"
both_held() { [[ $(finalizers ctq/del-q) == *resource-in-use* && $(finalizers "nodeflavor/$FLAVOR") == *resource-in-use* ]]; }
eventually 30 both_held &&
  pass "delete: the queue and the flavor carry phalanx.dev/resource-in-use ($(finalizers ctq/del-q))" ||
  fail "delete: finalizers: del-q '$(finalizers ctq/del-q)', $FLAVOR '$(finalizers nodeflavor/$FLAVOR)'"
kc delete clustertrainingqueue del-q --wait=false >/dev/null || fail "delete: kubectl delete ctq del-q"
terminating() { [[ $(active del-q) == "False Terminating: "* ]]; }
eventually 30 terminating && pass "delete: del-q stays while qdel/running runs, Active: $(active del-q)" ||
  fail "delete: del-q Active '$(active del-q)' (exists: $(kc get ctq del-q -o name 2>&1))"
job qdel late 1
eventually 60 has_reason qdel late ClusterTrainingQueueInactive &&
  [[ $(cond qdel late Queued) == *"del-q is being deleted"* ]] &&
  pass "delete: a new job waits: $(cond qdel late Queued)" || fail "delete: qdel/late: $(cond qdel late Queued)"
all_running qdel running 2 && gpu_usage_is del-q "16 0" &&
  pass "delete: the running job keeps running and counting (flavorsUsage 16)" ||
  fail "delete: qdel/running phase '$(phase qdel running)', del-q usage '$(gpu_usage del-q)'"
eventually 30 has_metric 'phalanx_cluster_queue_status{cluster_queue="del-q",status="terminating"} 1' &&
  has_metric 'phalanx_cluster_queue_status{cluster_queue="del-q",status="active"} 0' &&
  pass "delete: /metrics shows del-q terminating" ||
  fail "delete: /metrics: $(op_metrics | grep -E '^phalanx_cluster_queue_status\{cluster_queue="del-q"' | tr '\n' ' ')"
finish_job qdel running 2
eventually 60 gone ctq/del-q && pass "delete: del-q is gone once its last admitted job finished" ||
  fail "delete: del-q still there: $(finalizers ctq/del-q), $(active del-q)"
no_status_series() { local m; m=$(op_metrics) && ! grep -q '^phalanx_cluster_queue_status{cluster_queue="del-q"' <<<"$m"; }
eventually 30 no_status_series && pass "delete: del-q's status series left /metrics with it" ||
  fail "delete: /metrics still has del-q's phalanx_cluster_queue_status"
missing() { [[ $(cond qdel late Queued) == *'points to ClusterTrainingQueue "del-q", which does not exist'* ]]; }
eventually 30 missing && pass "delete: the waiting job names the missing queue: $(cond qdel late Queued)" ||
  fail "delete: qdel/late: $(cond qdel late Queued)"
# The flavor stays while any ClusterTrainingQueue names it, and goes with the last of them.
kc delete nodeflavor "$FLAVOR" --wait=false >/dev/null || fail "delete: kubectl delete nodeflavor $FLAVOR"
sleep 3
[[ -n $(kc get nodeflavor "$FLAVOR" -o jsonpath='{.metadata.deletionTimestamp}') ]] &&
  pass "delete: NodeFlavor $FLAVOR stays while queues name it" || fail "delete: NodeFlavor $FLAVOR: $(kc get nodeflavor "$FLAVOR" -o name 2>&1)"
kc delete clustertrainingqueues --all --wait=true --timeout=60s >/dev/null &&
  eventually 60 gone "nodeflavor/$FLAVOR" && pass "delete: unused queues go at once, and the flavor with the last of them" ||
  fail "delete: queues left: $(kc get ctq -o name | tr '\n' ' '), flavor: $(finalizers nodeflavor/$FLAVOR)"
finish
