#!/usr/bin/env bash
# spec.activeDeadlineSeconds through the real phalanx-operator on a private cluster of 8 fake
# p5.48xlarge nodes (one layer-3 block): the deadline is the run-time limit that backfill plans
# with (docs/admission.md "Backfill"), and the job controller enforces it.
#   1. `long` (4 nodes, deadline 900 s) runs; `big` (8 nodes, one layer-3 block) cannot be
#      placed and gets a start-time reservation: all 8 nodes, expected when `long` must end;
#   2. behind it, `unknown` (2 nodes, no deadline) may not use the reserved nodes and waits,
#      while `short` (2 nodes, deadline 20 s, so it ends before `big`'s start) is admitted now;
#   3. `short` runs past its deadline: Failed with reason DeadlineExceeded, its pods deleted, its
#      quota and nodes given back;
#   4. when `long` finishes, `big` (first in queue order) is admitted on the 8 nodes, and
#      `unknown` waits behind it; no node is over-committed at any point.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_cluster --nodes 8 --ttl 600

NS=backfill
one_queue $NS bf-p5 bf 128
L3="{required: topology.k8s.aws/network-node-layer-3}"
queued_msg() { jq_job $NS "$1" '.status.conditions[]? | select(.type=="Queued" and .status=="True") | .message'; }
queued_says() { queued_msg "$1" | grep -q -- "$2"; }
nodes_of() { jq_job $NS "$1" '.status.placement.nodes // [] | .[]' | sort; }

# --- 1. a start-time reservation for the blocked gang ------------------------------------
job $NS long 4 "$L3" "  activeDeadlineSeconds: 900"
eventually 90 phase_is $NS long Running || die "long not Running: $(cond $NS long Queued)"
pass "long (4 nodes, activeDeadlineSeconds 900) runs"
job $NS big 8 "$L3"
eventually 60 queued_says big "held for its expected start in" &&
  pass "big waits with a backfill reservation: $(queued_msg big)" || fail "big: $(cond $NS big Queued)"
start_in=$(queued_msg big | sed -n 's/.*backfill: 8 nodes in .* held for its expected start in \([0-9]*\)s.*/\1/p')
[[ -n $start_in && $start_in -gt 800 && $start_in -le 900 ]] &&
  pass "big's expected start is when long must end: in ${start_in}s" ||
  fail "big's expected start: '${start_in}' (want 800-900 s, long's deadline)"

# --- 2. backfill: only a job expected to end before that start may use the nodes -----------
job $NS unknown 2 "$L3"
job $NS short 2 "$L3" "  activeDeadlineSeconds: 20"
eventually 60 phase_is $NS short Running && pass "short (deadline 20 s, ends before big's start) is backfilled" ||
  fail "short not Running: $(cond $NS short Queued)"
eventually 30 queued_says unknown "ReservedForBackfill" &&
  pass "unknown (no deadline: its end is unknown) may not use the reserved nodes: $(queued_msg unknown)" ||
  fail "unknown: $(cond $NS unknown Queued)"
phase_is $NS big Queued && pass "big still waits for long" || fail "big is $(phase $NS big)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"

# --- 3. the deadline is enforced -------------------------------------------------------------
eventually 60 phase_is $NS short Failed || fail "short not Failed 60 s after its 20 s deadline: $(phase $NS short)"
failed=$(cond $NS short Failed)
[[ $failed == "True DeadlineExceeded: the gang ran past spec.activeDeadlineSeconds (20 s since it was admitted at "* ]] &&
  pass "short failed: $failed" || fail "short's Failed condition: '$failed'"
admitted_at=$(jq_job $NS short '.status.conditions[] | select(.type=="Admitted") | .lastTransitionTime')
done_at=$(jq_job $NS short '.status.completionTime')
ran=$(($(date -d "$done_at" +%s) - $(date -d "$admitted_at" +%s)))
[[ $ran -ge 20 && $ran -le 40 ]] && pass "short ended ${ran}s after its admission (deadline 20 s)" ||
  fail "short ended ${ran}s after its admission ($admitted_at -> $done_at)"
has_event $NS short DeadlineExceeded && pass "a DeadlineExceeded event on short" || fail "no DeadlineExceeded event on short"
eventually 60 npods_is $NS short 0 && pass "short's pods were deleted" || fail "short still has $(npods $NS short) pods"
[[ $(phase $NS long) == Running ]] && pass "long (deadline 900 s) keeps running" || fail "long is $(phase $NS long)"
metrics=$(curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics")
want='phalanx_jobs_finished_total{phase="Failed",reason="DeadlineExceeded"} 1'
grep -qF "$want" <<<"$metrics" && pass "/metrics: $want" ||
  fail "/metrics lacks '$want': $(grep -E 'phalanx_jobs_finished_total|phalanx_placement_calls_total' <<<"$metrics" | tr '\n' ';')"
grep -qE '^phalanx_placement_calls_total[{]method="EstimateStart"[}] [1-9]' <<<"$metrics" &&
  pass "/metrics: the cycles asked phalanx-scheduler for start estimates" ||
  fail "/metrics: no EstimateStart calls counted"

# --- 4. the holder starts when the room is there ---------------------------------------------
for r in 0 1 2 3; do set_pod_phase $NS long-$r Succeeded; done
eventually 60 phase_is $NS long Succeeded || fail "long did not succeed"
eventually 90 phase_is $NS big Running && pass "big runs once long ended" || fail "big: $(cond $NS big Queued)"
[[ $(nodes_of big | sort -u | wc -l) == 8 ]] && pass "big holds all 8 nodes" || fail "big holds: $(nodes_of big | tr '\n' ' ')"
phase_is $NS unknown Queued && pass "unknown waits behind big" || fail "unknown is $(phase $NS unknown)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"
finish
