#!/usr/bin/env bash
# Backfill for quota (ClusterTrainingQueue spec.backfillQuota: HoldForHead, docs/admission.md
# "Backfill for quota") through the real phalanx-operator, on 16 fake p5.48xlarge nodes and one
# queue without a cohort with 8 nodes of quota: the quota binds, not the nodes.
#   1. `a` (5 nodes, activeDeadlineSeconds 900) runs; `big` (7 nodes) does not fit the 3 nodes of
#      quota left and holds the queue's quota from a's deadline on;
#   2. behind it, `unknown` (2 nodes, no deadline) would still hold 2 of the 8 nodes then and
#      waits, saying for whom; `small` (1 node, deadline 3600 s) leaves big its 7 and is
#      admitted; `short` (2 nodes, deadline 20 s) ends before big's start and is admitted;
#   3. when `short` has failed at its deadline its quota is free, and `unknown` still waits;
#   4. when `a` finishes, `big` is admitted first; `unknown` waits for quota.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_cluster --nodes 16 --ttl 600

NS=backfill-quota
one_queue $NS bq-p5 bq 64
kc patch clustertrainingqueue bq --type merge -p '{"spec":{"backfillQuota":"HoldForHead"}}' >/dev/null ||
  die "cannot set spec.backfillQuota"
[[ $(kc get clustertrainingqueue bq -o jsonpath='{.spec.backfillQuota}') == HoldForHead ]] ||
  die "spec.backfillQuota did not stick"
queued_msg() { jq_job $NS "$1" '.status.conditions[]? | select(.type=="Queued" and .status=="True") | .message'; }
queued_says() { queued_msg "$1" | grep -q -- "$2"; }

# --- 1. the blocked head holds the queue's quota ------------------------------------------------
job $NS a 5 "{}" "  activeDeadlineSeconds: 900"
eventually 90 phase_is $NS a Running || die "a not Running: $(cond $NS a Queued)"
pass "a (5 of the 8 nodes of quota, activeDeadlineSeconds 900) runs"
job $NS big 7 "{}"
eventually 60 queued_says big "quota held for its expected start in" &&
  pass "big waits for quota, holding it: $(queued_msg big)" || fail "big: $(cond $NS big Queued)"
has_reason $NS big InsufficientQuota && pass "big's reason is InsufficientQuota" || fail "big: $(cond $NS big Queued)"
start_in=$(queued_msg big | sed -n "s/.*ClusterTrainingQueue bq's quota held for its expected start in \([0-9]*\)s.*/\1/p")
[[ -n $start_in && $start_in -gt 800 && $start_in -le 900 ]] &&
  pass "big's expected start is when a must end: in ${start_in}s" ||
  fail "big's expected start: '${start_in}' (want 800-900 s, a's deadline)"

# --- 2. behind it: only jobs that end by then, or leave it enough ------------------------------
job $NS unknown 2 "{}"
eventually 60 queued_says unknown "holds its quota for $NS/big" &&
  pass "unknown (no deadline) waits: $(queued_msg unknown)" || fail "unknown: $(cond $NS unknown Queued)"
queued_says unknown "this job has no expected run time to show it ends by then" ||
  fail "unknown's message does not say why: $(queued_msg unknown)"
job $NS small 1 "{}" "  activeDeadlineSeconds: 3600"
eventually 60 phase_is $NS small Running &&
  pass "small (1 node until after big's start: 1 + 7 = 8) is admitted" || fail "small: $(cond $NS small Queued)"
job $NS short 2 "{}" "  activeDeadlineSeconds: 20"
eventually 60 phase_is $NS short Running &&
  pass "short (deadline 20 s, ends before big's start) is admitted" || fail "short: $(cond $NS short Queued)"
phase_is $NS unknown Queued && pass "unknown still waits" || fail "unknown is $(phase $NS unknown)"
phase_is $NS big Queued && pass "big still waits for a" || fail "big is $(phase $NS big)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"

# --- 3. short's quota, freed at its deadline, is still held for big -------------------------------
eventually 60 phase_is $NS short Failed || fail "short not Failed 60 s after its 20 s deadline: $(phase $NS short)"
eventually 60 npods_is $NS short 0 || fail "short still has $(npods $NS short) pods"
sleep 15  # a few admission cycles with 2 nodes of quota free
phase_is $NS unknown Queued && queued_says unknown "holds its quota for $NS/big" &&
  pass "unknown still waits with 2 nodes of quota free: $(queued_msg unknown)" ||
  fail "unknown: $(cond $NS unknown Queued)"

# --- 4. the holder goes first when its quota is there ---------------------------------------------
for r in 0 1 2 3 4; do set_pod_phase $NS a-$r Succeeded; done
eventually 60 phase_is $NS a Succeeded || fail "a did not succeed"
eventually 90 phase_is $NS big Running && pass "big runs once a ended" || fail "big: $(cond $NS big Queued)"
eventually 30 has_reason $NS unknown InsufficientQuota &&
  pass "unknown waits for quota: $(queued_msg unknown)" || fail "unknown: $(cond $NS unknown Queued)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"
finish
