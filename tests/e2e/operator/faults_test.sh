#!/usr/bin/env bash
# Node failures under running gangs (issue #11 "Faults"), on a private control plane with
# phalanx-scheduler, a real kube-scheduler and phalanx-operator (NotReady grace 5 s instead of
# 30 s). 24 kwok p5.48xlarge nodes in six layer-3 blocks of 4; five jobs, each pinned to one
# block (topology.required = layer-3), so every job has its own block:
#   a (3 pods)  a node goes NotReady (kwok stops managing it)  -> a NodeNotReady event says when
#               its rank will move; after the grace it moves to the spare of the same block; the
#               other ranks keep their pods; Running again
#   b (3 pods)  HyperPod label node-health-status=Unschedulable -> replaced the same way
#   c (2 pods)  both nodes tainted NoSchedule at once          -> both replaced in the block
#   e (elastic 2..4, the whole block)  rank 1's node UnschedulablePendingReboot, no spare in
#               the block -> shrinks to 3: rank 3 is dropped and rank 1 takes its node
#   f (4 pods, the whole block)  a NoExecute taint, no spare, not elastic -> evicted (Evicted
#               NodeFailure), re-queued and admitted again in the free sixth block
# and then, in f's old block:
#   g (2 pods)  kubectl cordon of rank 1's node -> nothing moves (a cordon keeps new pods off,
#               it does not stop running ones); kubectl drain of it -> the evicted rank 1 moves
#               to the block's spare, rank 0's pod untouched, no restart counted; no pod of
#               rank 1 is created on the cordoned node first, and no PodRecreated
# Each step is checked as a condition, an event and a metric.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PHALANX_OPERATOR_ARGS="--not-ready-grace-seconds 5"
start_cluster --nodes 0 --ttl 900
export PHALANX_KUBECONFIG
NS=team-llm
L3=topology.k8s.aws/network-node-layer-3
apply_example_queues
add_fake_nodes --count 24 --nodes-per-block 4 --blocks-per-spine 8
pass "24 fake nodes in 6 layer-3 blocks of 4"

cond_is() { [[ $(cond $NS "$1" "$2") == "$3"* ]]; }
nodes_of() { jq_job $NS "$1" '.status.placement.nodes // [] | join(" ")'; }
block_of() { kc get node "$1" -o jsonpath="{.metadata.labels.topology\.k8s\.aws/network-node-layer-3}"; }
uid_of() { kc -n $NS get pod "$1" -o jsonpath='{.metadata.uid}' 2>/dev/null; }
# Exactly `count` live pods, each Running on status.placement.nodes[rank]; status.admission agrees.
runs_on_placement() { # job count
  local nodes pods r
  read -ra nodes <<<"$(nodes_of "$1")"
  [[ ${#nodes[@]} == "$2" && $(jq_job $NS "$1" '.status.admission.replicas // 0') == "$2" ]] || return 1
  pods=$(pods_of $NS "$1") || return 1
  [[ $(jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length' <<<"$pods") == "$2" ]] || return 1
  for ((r = 0; r < $2; r++)); do
    [[ $(jq -r ".items[] | select(.metadata.name==\"$1-$r\" and .metadata.deletionTimestamp == null) | \"\\(.status.phase) \\(.spec.nodeName)\"" <<<"$pods") == "Running ${nodes[$r]}" ]] || return 1
  done
}
gang() { job $NS "$1" "$2" "{required: $L3}" "${3:-}"; }

# --- five gangs, one block each ------------------------------------------------------------
gang a 3; gang b 3; gang c 2; gang f 4
gang e 4 "  elastic: {minReplicas: 2, maxReplicas: 4, step: 1}"
for j in a:3 b:3 c:2 e:4 f:4; do
  eventually 120 runs_on_placement "${j%:*}" "${j#*:}" || die "job ${j%:*} is not Running on its placement: $(cond $NS "${j%:*}" Queued)"
done
blocks=""
for j in a b c e f; do
  read -ra n <<<"$(nodes_of $j)"
  blocks+="$(for x in "${n[@]}"; do block_of "$x"; echo; done | sort -u | tr '\n' ' ')"
done
[[ $(wc -w <<<"$blocks") == 5 && $(tr ' ' '\n' <<<"$blocks" | sed '/^$/d' | sort -u | wc -l) == 5 ]] &&
  pass "a, b, c, e, f run, each inside its own layer-3 block" || die "blocks per job: $blocks"

read -ra A <<<"$(nodes_of a)"; read -ra B <<<"$(nodes_of b)"; read -ra C <<<"$(nodes_of c)"
read -ra E <<<"$(nodes_of e)"; read -ra F <<<"$(nodes_of f)"
a0_uid=$(uid_of a-0); a2_uid=$(uid_of a-2)

# --- the failures, all at once -----------------------------------------------------------
# a: NotReady. kwok would mark a node it manages Ready again, so it stops managing it first (as
# if its kubelet died); the node lifecycle controller keeps it NotReady from then on.
kc annotate node "${A[1]}" kwok.x-k8s.io/node- >/dev/null &&
  kc patch node "${A[1]}" --subresource=status --type=strategic \
    -p '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletDown","message":"e2e: kubelet stopped"}]}}' >/dev/null ||
  die "cannot make ${A[1]} NotReady"
kc label node "${B[0]}" sagemaker.amazonaws.com/node-health-status=Unschedulable --overwrite >/dev/null
kc taint node "${C[0]}" "${C[1]}" example.com/gpu-xid=79:NoSchedule >/dev/null
kc label node "${E[1]}" sagemaker.amazonaws.com/node-health-status=UnschedulablePendingReboot --overwrite >/dev/null
kc taint node "${F[2]}" example.com/gpu-xid=79:NoExecute >/dev/null
t_fault=$SECONDS
pass "failed: ${A[1]} NotReady (a rank 1), ${B[0]} Unschedulable (b rank 0), ${C[0]} ${C[1]} tainted (c), ${E[1]} UnschedulablePendingReboot (e rank 1), ${F[2]} NoExecute (f rank 2)"

# --- a: NotReady -> replaced in the same block -------------------------------------------
moved_in_block() { # job rank old-node
  local n; read -ra n <<<"$(nodes_of "$1")"
  [[ -n ${n[$2]:-} && ${n[$2]} != "$3" && $(block_of "${n[$2]}") == "$(block_of "$3")" ]]
}
eventually 60 moved_in_block a 1 "${A[1]}" && read -ra A2 <<<"$(nodes_of a)" &&
  pass "a: rank 1 moved ${A[1]} -> ${A2[1]}, same layer-3 block $(block_of "${A[1]}"), $((SECONDS - t_fault))s after the failure (grace 5s)" ||
  fail "a: placement $(nodes_of a) (was ${A[*]})"
[[ $(nodes_of a) == "${A[0]} ${A2[1]:-} ${A[2]}" ]] && pass "a: ranks 0 and 2 kept their nodes" || fail "a: placement $(nodes_of a)"
eventually 60 runs_on_placement a 3 && pass "a: Running again, rank r on placement.nodes[r]" || fail "a: not Running on its placement"
[[ $(uid_of a-0) == "$a0_uid" && $(uid_of a-2) == "$a2_uid" ]] && pass "a: the pods of ranks 0 and 2 were not touched" ||
  fail "a: pods of untouched ranks were recreated"
cond_is a NodesReplaced "True NodeNotReady:" && pass "a: condition $(cond $NS a NodesReplaced)" || fail "a: NodesReplaced '$(cond $NS a NodesReplaced)'"
has_event $NS a NodesReplaced && pass "a: a NodesReplaced event" || fail "a: no NodesReplaced event"
notready_msg() { kc -n $NS get events --field-selector "involvedObject.name=a,reason=NodeNotReady" -o jsonpath='{.items[*].message}'; }
[[ $(notready_msg) == "${A[1]} (rank 1) is NotReady: its ranks move to a spare node at "*" (NotReady grace 5 s) unless it is Ready again by then" ]] &&
  pass "a: told during the grace: $(notready_msg)" || fail "a: NodeNotReady event '$(notready_msg)'"

# --- b: HyperPod health label -> replaced ------------------------------------------------
eventually 60 moved_in_block b 0 "${B[0]}" && eventually 60 runs_on_placement b 3 &&
  pass "b: rank 0 moved off ${B[0]} inside its block; Running: $(nodes_of b)" || fail "b: placement $(nodes_of b) (was ${B[*]})"
cond_is b NodesReplaced "True NodeUnhealthy:" && pass "b: condition $(cond $NS b NodesReplaced)" || fail "b: '$(cond $NS b NodesReplaced)'"

# --- c: two nodes at once -> both replaced -----------------------------------------------
eventually 60 moved_in_block c 0 "${C[0]}" && eventually 60 moved_in_block c 1 "${C[1]}" && eventually 60 runs_on_placement c 2 &&
  pass "c: both ranks moved inside their block (${C[*]} -> $(nodes_of c)); Running" || fail "c: placement $(nodes_of c) (was ${C[*]})"
cond_is c NodesReplaced "True NodeTainted:" && pass "c: condition $(cond $NS c NodesReplaced)" || fail "c: '$(cond $NS c NodesReplaced)'"

# --- e: no spare in the block, elastic -> shrinks; ranks stay dense ----------------------
eventually 60 runs_on_placement e 3 && pass "e: shrank to 3 pods, all Running on the placement" ||
  fail "e: admission $(jq_job $NS e '.status.admission.replicas'), placement $(nodes_of e); $(cond $NS e Evicted)"
[[ $(nodes_of e) == "${E[0]} ${E[3]} ${E[2]}" ]] && pass "e: rank 3 dropped, rank 1 took its node: $(nodes_of e)" ||
  fail "e: placement $(nodes_of e) (was ${E[*]})"
cond_is e Shrunk "True NodeUnhealthy:" && pass "e: condition $(cond $NS e Shrunk)" || fail "e: Shrunk '$(cond $NS e Shrunk)'"
has_event $NS e Shrunk && pass "e: a Shrunk event" || fail "e: no Shrunk event"

# --- f: no spare, not elastic -> evicted and re-queued, admitted elsewhere ---------------
# True while f waits; once admitted again it turns False with the eviction as "Previously:",
# which may already have happened by the time this runs.
f_evicted() {
  cond_is f Evicted "True NodeFailure: evicted and re-queued after node failures" ||
    cond_is f Evicted "False Admitted: Previously: evicted and re-queued after node failures"
}
eventually 60 f_evicted && pass "f: condition $(cond $NS f Evicted)" || fail "f: Evicted '$(cond $NS f Evicted)'"
has_event $NS f Evicted && pass "f: an Evicted event" || fail "f: no Evicted event"
eventually 90 runs_on_placement f 4 && read -ra F2 <<<"$(nodes_of f)" && [[ $(block_of "${F2[0]}") != "$(block_of "${F[0]}")" ]] &&
  pass "f: admitted again in another block ($(block_of "${F2[0]}")) and Running: ${F2[*]}" ||
  fail "f: placement $(nodes_of f) (was ${F[*]}), $(cond $NS f Queued)"
cond_is f Admitted "True " && cond_is f Evicted "False Admitted: Previously: evicted and re-queued" &&
  pass "f: Admitted again; its Evicted condition is history: $(cond $NS f Evicted)" ||
  fail "f: Admitted '$(cond $NS f Admitted)', Evicted '$(cond $NS f Evicted)'"

# --- g: a cordon moves no running rank; the drain's eviction moves the rank ---------------
gang g 2
eventually 90 runs_on_placement g 2 || die "g is not Running on its placement: $(cond $NS g Queued)"
read -ra G <<<"$(nodes_of g)"
g0_uid=$(uid_of g-0); g1_uid=$(uid_of g-1)
cycles() { curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" | awk '$1 == "phalanx_admission_cycles_total" {print $2}'; }
cycles_past() { [[ $(cycles) -ge $1 ]]; }
c0=$(cycles)
kc cordon "${G[1]}" >/dev/null || die "cannot cordon ${G[1]}"
# A node update starts an admission cycle; two cycles later the cordon has been seen for sure.
eventually 30 cycles_past $((c0 + 2)) || fail "no admission cycle after the cordon ($(cycles) after $c0)"
[[ $(nodes_of g) == "${G[*]}" && $(uid_of g-0) == "$g0_uid" && $(uid_of g-1) == "$g1_uid" ]] && ! has_event $NS g NodesReplaced &&
  pass "g: cordoning ${G[1]} moved no running rank: placement $(nodes_of g), pods untouched" ||
  fail "g: after the cordon, placement $(nodes_of g) (was ${G[*]}); $(cond $NS g NodesReplaced)"
kc drain "${G[1]}" --ignore-daemonsets --delete-emptydir-data --timeout=60s >/dev/null 2>&1 ||
  fail "kubectl drain ${G[1]} did not finish"
eventually 60 moved_in_block g 1 "${G[1]}" && eventually 60 runs_on_placement g 2 &&
  pass "g: the drain evicted rank 1 and it moved inside its block: $(nodes_of g); Running" ||
  fail "g: placement $(nodes_of g) (was ${G[*]}); $(cond $NS g NodesReplaced)"
[[ $(uid_of g-0) == "$g0_uid" && $(jq_job $NS g '.status.restarts // 0') == 0 ]] &&
  pass "g: rank 0's pod untouched, no gang restart" || fail "g: rank 0 recreated or restarts $(jq_job $NS g '.status.restarts')"
cond_is g NodesReplaced "True NodeCordoned: replaced 1 node (${G[1]} is cordoned (spec.unschedulable) and rank 1 there needs a new pod)" &&
  pass "g: condition $(cond $NS g NodesReplaced)" || fail "g: NodesReplaced '$(cond $NS g NodesReplaced)'"
# The evicted rank waited for its move: no pod of it was created on the cordoned node, where it
# could not be scheduled, and no PodRecreated ("created again on the same node") contradicts
# NodesReplaced (audit session 34, D2-3: both, 20 ms before the move).
g_events() { kc -n $NS get events --field-selector "involvedObject.name=$1,reason=$2" -o jsonpath='{.items[*].message}'; }
! has_event $NS g PodRecreated && pass "g: no PodRecreated event for the moved rank" ||
  fail "g: PodRecreated for the moved rank: $(g_events g PodRecreated)"
[[ $(g_events g-1 FailedScheduling) != *unschedulable* ]] &&
  pass "g: no pod of rank 1 was created on the cordoned ${G[1]}" ||
  fail "g: a pod of rank 1 was created on the cordoned ${G[1]}: $(g_events g-1 FailedScheduling)"

# --- metrics ------------------------------------------------------------------------------
metrics=$(curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics")
for want in 'phalanx_node_replacements_total{reason="NodeNotReady"} 1' \
            'phalanx_node_replacements_total{reason="NodeUnhealthy"} 1' \
            'phalanx_node_replacements_total{reason="NodeTainted"} 2' \
            'phalanx_node_replacements_total{reason="NodeCordoned"} 1' \
            'phalanx_node_failures_total{action="shrunk",reason="NodeUnhealthy"} 1' \
            'phalanx_node_failures_total{action="evicted",reason="NodeFailure"} 1' \
            'phalanx_evicted_workloads_total{cluster_queue="llm",reason="NodeFailure"} 1'; do
  grep -qF "$want" <<<"$metrics" && pass "/metrics: $want" || fail "/metrics lacks '$want': $(grep -E 'phalanx_node_|NodeFailure' <<<"$metrics" | tr '\n' ';')"
done
out=$(check_invariants) && pass "invariants hold: every admitted job has exactly its pods on its nodes, no node over-committed" ||
  fail "invariants broken: $out"
echo "c: $(cond $NS c NodesReplaced)"
finish
